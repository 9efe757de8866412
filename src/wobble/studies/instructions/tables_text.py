"""The text tables of Gu et al. 2023, ours beside the paper's: Table 1 (a SuperNI task sample), Table 2 (the
12 test categories and their metric), Table 3 (every perturbation of task1557's definition) and Table 6 (a
Para-Instructions example). "Ours" is our prepared data and our perturbation code; each row says whether it
matches the paper's text.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.metrics.superni import CATEGORY_METRIC, CATEGORY_NAMES
from wobble.report.cells import DASH
from wobble.report.spec import Table
from wobble.studies.instructions.conditions import PAPER_CONDITIONS
from wobble.studies.instructions.table_parts import (
    METRIC_NAMES, PAPER_METRICS, abbr, common_notes, json_object, missing_reasons, norm, paper_frame, paper_note,
    records, tidy_frame, unique, yes_no,
)

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def _typo_norm(text: Any) -> str:
    return norm(str(text).translate(_QUOTES))


def find_task(recs: Sequence[Mapping[str, Any]], paper_task: str) -> Mapping[str, Any] | None:
    """The record of ``paper_task``, matched by name or by its number prefix (``task1557_...``)."""
    for r in recs:
        if r.get("task") == paper_task:
            return r
    prefix = paper_task.split("_", 1)[0] + "_"
    return next((r for r in recs if str(r.get("task", "")).startswith(prefix)), None)


def _task_instances(path_or_records: Any, task: str) -> list[dict]:
    if path_or_records is None:
        return []
    if isinstance(path_or_records, (str, Path)):
        out, needle = [], f'"{task}"'
        with open(path_or_records, encoding="utf-8") as f:
            for line in f:
                if needle in line:
                    obj = json.loads(line)
                    if obj.get("task") == task:
                        out.append(obj)
        return out
    return [dict(r) for r in path_or_records if r.get("task") == task]


# -------------------------------------------------------------------------------------------- Table 1

def build_table1(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 1: the task sample (task1557) from our prepared data beside the paper's text."""
    pdf, paper_file = paper_frame(inputs, "table1")
    instances = inputs.get("instances")
    paper_task = unique(pdf["task"])[0]
    rec = find_task(records(inputs.get("tasks")), paper_task)
    notes: list[str] = []
    inst_note = None
    instance = None
    if rec is not None:
        insts = _task_instances(instances, rec["task"])
        paper_in = pdf[(pdf["component"] == "Instance") & (pdf["field"] == "input")]["text"]
        want = norm(paper_in.iloc[0]) if len(paper_in) else None
        match = next((i for i in insts if want is not None and norm(i.get("input", "")) == want), None)
        instance = match or (insts[0] if insts else None)
        if instance is not None:
            pos = insts.index(instance)
            why = ("chosen because its input equals the paper's" if match
                   else "the first one (no instance of ours has the paper's input)")
            inst_note = (f"Instance: our instance {instance.get('id')} (position {pos + 1} of {len(insts)} in our "
                         f"prepared data), {why}.")
        elif instances is None:
            notes.append(f"{DASH} Instance: no instances file was given to the renderer.")
        else:
            notes.append(f"{DASH} Instance: task {rec['task']} has no instances in our prepared data.")

    def ours_text(component: str, field: str) -> str | None:
        if rec is None:
            return None
        if component == "Definition":
            return rec.get("definition")
        if component in ("Positive example", "Negative example"):
            exs = rec.get("pos_examples" if component.startswith("Positive") else "neg_examples") or []
            return exs[0].get(field) if exs else None
        if component == "Instance" and instance is not None:
            if field == "input":
                return instance.get("input")
            if field == "output":
                outs = instance.get("outputs") or []
                paper_out = pdf[(pdf["component"] == "Instance") & (pdf["field"] == "output")]["text"]
                want = norm(paper_out.iloc[0]) if len(paper_out) else None
                return next((o for o in outs if norm(o) == want), outs[0] if outs else None)
        return None

    display, tidy, typo_only = [], [], []
    for r in pdf.itertuples(index=False):
        ours = ours_text(r.component, r.field)
        same = None if ours is None else (str(ours).strip() == str(r.text).strip())
        if same is False and _typo_norm(ours) == _typo_norm(r.text):
            typo_only.append(f"{r.component} {r.field}")
        display.append({"Component": r.component, "Field": r.field, "Ours": DASH if ours is None else ours,
                        "Paper": r.text, "Matches paper": yes_no(same)})
        tidy.append({"table": 1, "task_paper": r.task, "task_ours": rec["task"] if rec else None,
                     "component": r.component, "field": r.field, "ours": ours, "paper": r.text,
                     "matches_paper": same})
    if rec is None:
        notes.insert(0, f"{DASH}: task {paper_task} (or any task with its number) is not in our prepared data.")
    else:
        notes.insert(0, f"Ours: task {rec['task']} from our prepared superni_tasks data "
                        f"(data status: {rec.get('data_status', '?')}); the paper names it {paper_task}. "
                        f"Examples: the first positive and the first negative example of the task file.")
    if inst_note:
        notes.append(inst_note + " Its output: the reference equal to the paper's output if there is one, else "
                     "the first reference.")
    notes.append("Matches paper: exact string comparison after stripping leading/trailing whitespace.")
    if typo_only:
        notes.append(f"Differs from the paper only in quote characters (’ vs '): {', '.join(typo_only)}.")
    notes.append(paper_note(1, paper_file))
    notes += common_notes(context, [])
    return Table(f"Table 1: a SuperNI task sample ({paper_task}) — ours beside the paper", pd.DataFrame(display),
                 tidy_frame(tidy), tuple(notes))


# -------------------------------------------------------------------------------------------- Table 2

def build_table2(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 2: the 12 categories and their metric, with the number of test tasks per category in our data."""
    pdf, paper_file = paper_frame(inputs, "table2")
    recs = records(inputs.get("tasks"))
    sel = json_object(inputs.get("selection"))
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in recs:
        if r.get("split") not in ("default", "xlingual") or not r.get("category_abbrev"):
            continue
        c = counts[(r["split"], abbr(r["category_abbrev"]))]
        c[0] += 1
        c[1] += int(r.get("data_status") != "missing" and r.get("n_instances", 0) > 0)
    split_of = {r["task"]: r.get("split") for r in recs}
    cat_of = {r["task"]: abbr(r["category_abbrev"]) for r in recs if r.get("category_abbrev")}
    used: dict[str | None, int] = defaultdict(int)
    for t in sel.get("english") or []:
        if split_of.get(t) == "default":
            used[cat_of.get(t)] += 1

    cats = unique(list(pdf["abbr"]) + [c for c in CATEGORY_NAMES if c not in set(pdf["abbr"])])
    paper_rows = {r.abbr: r for r in pdf.itertuples(index=False)}
    display, tidy = [], []
    for cat in cats:
        p = paper_rows.get(cat)
        metric = CATEGORY_METRIC.get(cat)
        ours_metric = METRIC_NAMES.get(metric, DASH)
        en, xl = counts.get(("default", cat), [0, 0]), counts.get(("xlingual", cat), [0, 0])
        same = None if p is None else (CATEGORY_NAMES.get(cat) == p.category and ours_metric == p.metric)
        row = {"Abbr": cat, "Category (ours)": CATEGORY_NAMES.get(cat, DASH),
               "Category (paper)": p.category if p is not None else DASH, "Metric (ours)": ours_metric,
               "Metric (paper)": p.metric if p is not None else DASH, "Matches paper": yes_no(same),
               "English test tasks (with data / all)": f"{en[1]} / {en[0]}",
               "non-English test tasks (with data / all)": f"{xl[1]} / {xl[0]}" if xl[0] else DASH}
        if sel:
            row["English tasks in our run"] = str(used.get(cat, 0))
        display.append(row)
        tidy.append({"table": 2, "abbr": cat, "category_ours": CATEGORY_NAMES.get(cat),
                     "category_paper": p.category if p is not None else None, "metric_ours": metric,
                     "metric_paper": PAPER_METRICS.get(p.metric) if p is not None else None,
                     "matches_paper": same, "english_tasks": en[0], "english_tasks_with_data": en[1],
                     "xlingual_tasks": xl[0], "xlingual_tasks_with_data": xl[1],
                     "english_tasks_in_run": used.get(cat, 0) if sel else None})
    n_en, d_en = (sum(v[i] for (s, _), v in counts.items() if s == "default") for i in (0, 1))
    n_xl, d_xl = (sum(v[i] for (s, _), v in counts.items() if s == "xlingual") for i in (0, 1))
    notes = [f"Ours: category names and metrics from wobble.metrics.superni (CATEGORY_NAMES, CATEGORY_METRIC); "
             f"task counts from our prepared superni_tasks data: {n_en} English test tasks ({d_en} with data in "
             f"the mirror), {n_xl} non-English ({d_xl} with data); the paper uses 119 English and 35 non-English.",
             paper_note(2, paper_file)]
    if sel:
        notes.append("English tasks in our run: tasks per category chosen by the study's selection.")
        cat_missing, _ = missing_reasons(sel, "english")
        notes += [f"{cat}: no English task usable in our run ({why})." for cat, why in sorted(cat_missing.items())]
    notes += common_notes(context, [])
    return Table("Table 2: SuperNI test categories and their metrics — ours beside the paper", pd.DataFrame(display),
                 tidy_frame(tidy), tuple(notes))


# -------------------------------------------------------------------------------------------- Table 3

_TAG_DEL = re.compile(r"<del>.*?</del>", re.S)
_TAG_ANY = re.compile(r"</?(?:u|del)>")


def paper_result_text(example: str) -> str:
    """The perturbed text a Table 3 example describes: ``<del>…</del>`` spans removed, ``<u>`` tags dropped."""
    return norm(_TAG_ANY.sub("", _TAG_DEL.sub("", example)))


def _perturbation_key(name: str) -> str:
    name = norm(name).lower()
    return "original" if name in ("original instruction", "original") else name.replace(" ", "_")


def build_table3(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 3: every perturbation of our code applied to task1557's definition, beside the paper's example."""
    pdf, paper_file = paper_frame(inputs, "table3")
    ours_all = json_object(inputs.get("perturbations"))
    by_key = {c.key: c for c in PAPER_CONDITIONS}
    display, tidy, missing = [], [], []
    for r in pdf.itertuples(index=False):
        key = _perturbation_key(r.perturbation)
        val = ours_all.get(key)
        if isinstance(val, Mapping):
            val = val.get("text")
        ours = val if isinstance(val, str) else None
        if ours is None:
            missing.append(key)
        same = None if ours is None else (norm(ours) == paper_result_text(r.example_instruction))
        cond = by_key.get(key)
        display.append({"Level": r.perturbation_level, "Perturbation": r.perturbation,
                        "Ours (our code)": DASH if ours is None else ours, "Paper": r.example_instruction,
                        "Same text as paper": yes_no(same)})
        tidy.append({"table": 3, "perturbation_level": r.perturbation_level, "perturbation": r.perturbation,
                     "condition": key, "random": cond.is_random if cond else None, "ours": ours,
                     "paper": r.example_instruction, "paper_result": paper_result_text(r.example_instruction),
                     "same_as_paper": same})
    seeds = context.get("seeds") or []
    notes = ["Ours: each perturbation applied by wobble.studies.instructions.conditions to task1557's definition "
             f"from our prepared data{f' (run seed {seeds[0]})' if seeds else ''}.",
             "Same text as paper: our text equals the paper's perturbed text (its <del>…</del> spans removed, "
             "<u> tags dropped) after whitespace normalisation. The random perturbations (delete/insert/replace/"
             "shuffle words, repeat/shuffle sentences, shuffle instructions) are seeded draws and are not "
             "expected to reproduce the paper's draw.",
             "Paper text keeps the typeset markup: <del>…</del> = deleted words, <u>…</u> = repeated sentence."]
    if missing:
        notes.append(f"{DASH} = no text of ours: perturbation(s) {', '.join(missing)} missing from the "
                     "perturbation examples file.")
    notes.append(paper_note(3, paper_file))
    notes += common_notes(context, [])
    return Table("Table 3: perturbations of task1557's definition — ours beside the paper", pd.DataFrame(display),
                 tidy_frame(tidy), tuple(notes))


# -------------------------------------------------------------------------------------------- Table 6

def build_table6(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 6: the Para-Instructions example (original + 3 new instructions) beside the paper's."""
    pdf, paper_file = paper_frame(inputs, "table6")
    paper_task = unique(pdf["task"])[0]
    rec = find_task(records(inputs.get("para")), paper_task)
    ours_versions: dict[str, str | None] = {"Original Instruction": None}
    if rec is not None:
        ours_versions["Original Instruction"] = rec.get("original_definition")
        for i, text in enumerate(rec.get("new_definitions") or [], 1):
            ours_versions[f"New Instruction {i}"] = text
    paper_versions = {r.instruction_version: r.text for r in pdf.itertuples(index=False)}
    display, tidy, reordered = [], [], []
    for v in unique(list(paper_versions) + list(ours_versions)):
        ours, ptxt = ours_versions.get(v), paper_versions.get(v)
        same = None if ours is None or ptxt is None else str(ours).strip() == str(ptxt).strip()
        equal_to = next((pv for pv, pt in paper_versions.items()
                         if ours is not None and str(pt).strip() == str(ours).strip()), None)
        if equal_to and equal_to != v:
            reordered.append(f"our {v} = paper's {equal_to}")
        display.append({"Version": v, "Ours": DASH if ours is None else ours, "Paper": DASH if ptxt is None else ptxt,
                        "Matches paper": yes_no(same), "Equal to paper's": equal_to or DASH})
        tidy.append({"table": 6, "task_paper": paper_task, "task_ours": rec["task"] if rec else None,
                     "version": v, "ours": ours, "paper": ptxt, "matches_paper": same, "equal_to_paper": equal_to})
    if rec is None:
        notes = [f"{DASH}: task {paper_task} is not in our prepared para_instructions data."]
    else:
        notes = [f"Ours: task {rec['task']} from our prepared para_instructions data (new_definitions in "
                 f"file order); the paper names it {paper_task}."]
    notes.append("Matches paper: exact string comparison (whitespace-stripped) with the same version of the "
                 "paper; 'Equal to paper's' names the paper version with the same text, if any.")
    if reordered:
        notes.append("The new instructions are numbered differently: " + "; ".join(reordered) + ".")
    notes.append(paper_note(6, paper_file))
    notes += common_notes(context, [])
    return Table("Table 6: a Para-Instructions example — ours beside the paper", pd.DataFrame(display),
                 tidy_frame(tidy), tuple(notes))
