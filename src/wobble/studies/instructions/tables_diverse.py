"""Tables 8 and 9 of Gu et al. 2023: DiversePrompt (§3.3), every prompt of a task as its definition, no
demonstrations (INSTRU-WO-EXAM).

* Table 8: per task, each prompt's mean over seeds, then mean ± population std over the task's prompts (the
  paper's std is over prompts). The metric of a task is the one the paper's Table 8 gives it.
* Table 9: ROUGE-L per prompt for four tasks, each of our prompts joined to the paper's prompt on the text
  (:func:`match_prompts`: the same text first, then ignoring case, punctuation and whitespace); prompts of
  either side without a partner are listed with "–".
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.metrics.superni import normalize_answer
from wobble.report.cells import DASH, fmt, fmt_pm
from wobble.report.spec import Table
from wobble.stats import mean_std
from wobble.studies.instructions.table_parts import (
    METRIC_LABELS, PAPER_METRICS, PAPER_SOURCE, SETTING_LABELS, Reasons, common_notes, model_text,
    models_with_runs, paper_float, paper_frame, paper_pm, pick_setting, score_list, seed_text, seeds_of,
    tidy_frame, unique,
)

def prompt_key(text: str) -> str:
    """The text a Table 9 prompt is joined on: lower case, ASCII punctuation dropped, whitespace collapsed
    (SuperNI's ``normalize_answer``), so "Write The cause sentence" meets the paper's "Write the cause
    sentence." while different wordings stay apart."""
    return normalize_answer(text)


def match_prompts(ours: Sequence[tuple[Any, str | None]], paper: Sequence[str]) -> dict[Any, int]:
    """Our prompts (key, text) -> the position of the paper prompt each one is, each paper prompt used once:
    first by the same text up to whitespace, then by :func:`prompt_key` (the paper lists some prompts in two
    spellings, e.g. "... effect. Write the cause." and "... effect, write the cause")."""
    out: dict[Any, int] = {}
    for same in (lambda t: " ".join(t.split()), prompt_key):
        free: dict[str, list[int]] = {}
        for j, text in enumerate(paper):
            if j not in out.values():
                free.setdefault(same(text), []).append(j)
        for key, text in ours:
            if key not in out and text is not None and free.get(same(text)):
                out[key] = free[same(text)].pop(0)
    return out


#: DiversePrompt task key -> the label of the paper's Table 8 where it is not ``key.replace("_", " ")``.
DIVERSE_PAPER_NAMES = {"orthography_starts_with": "orthography"}

def diverse_paper_name(task: str, meta: Mapping[str, Any] | None = None) -> str:
    """The paper's Table 8 label of a DiversePrompt task key."""
    if meta and meta.get("paper_name"):
        return str(meta["paper_name"])
    return DIVERSE_PAPER_NAMES.get(task, task.replace("_", " "))


def _prompt_values(runs: Sequence[dict]) -> dict[str, dict[int, dict[str, Any]]]:
    """task -> prompt index -> {"values": {metric: [per-seed]}, "n": [...], "text": prompt}."""
    out: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for s in runs:
        prompts = s.get("prompts") or {}
        for key, entry in (s.get("by_prompt") or {}).items():
            if "::" not in key or not isinstance(entry, Mapping):
                continue
            task, idx = key.rsplit("::", 1)
            slot = out[task].setdefault(int(idx), {"values": defaultdict(list), "n": [], "text": None})
            for metric in ("exact_match", "rougeL"):
                if entry.get(metric) is not None:
                    slot["values"][metric].append(float(entry[metric]))
            if entry.get("n") is not None:
                slot["n"].append(int(entry["n"]))
            if slot["text"] is None and key in prompts:
                slot["text"] = prompts[key]
    return out


def _task_meta(runs: Sequence[dict]) -> dict[str, dict]:
    meta: dict[str, dict] = {}
    for s in runs:
        for task, m in (s.get("tasks") or {}).items():
            meta.setdefault(task, dict(m or {}))
    return meta


def _diverse_runs(scores: Sequence[dict], models: Sequence[str]) -> tuple[dict[str, list[dict]], dict[str, str]]:
    runs, settings = {}, {}
    for m in models:
        rm = [s for s in scores if s["model"] == m and s["taskset"] == "diverse"]
        st = pick_setting(rm)
        settings[m] = st
        runs[m] = [s for s in rm if s["setting"] == st]
    return runs, settings


def build_table8(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 8: DiversePrompt per task, mean ± std over the task's prompts, beside T5-3B and T5-11B."""
    scores = score_list(inputs)
    pdf, paper_file = paper_frame(inputs, "table8")
    models = models_with_runs(scores, context, "diverse")
    runs, settings = _diverse_runs(scores, models)
    paper_models = unique(pdf["model"])
    paper_cells = {(r.model, r.task): r for r in pdf.itertuples(index=False)}
    paper_metric = {r.task: PAPER_METRICS.get(r.metric, r.metric) for r in pdf.itertuples(index=False)}

    ours: dict[str, dict[str, dict]] = {}  # model -> paper task name -> {task, values...}
    names: list[str] = []
    for m in models:
        pv, meta = _prompt_values(runs[m]), _task_meta(runs[m])
        ours[m] = {}
        for task in sorted(pv):
            name = diverse_paper_name(task, meta.get(task))
            ours[m][name] = {"task": task, "prompts": pv[task], "meta": meta.get(task, {})}
            names.append(name)
    tasks_order = unique(list(pdf["task"]) + sorted(n for n in set(names) if n not in set(pdf["task"])))

    reasons = Reasons()
    display, tidy = [], []
    for name in tasks_order:
        metric = paper_metric.get(name)
        row = {"Task": name}
        first = next((ours[m][name] for m in models if name in ours[m]), None)
        if metric is None and first is not None:
            metric = first["meta"].get("metric")
        row["Metric"] = METRIC_LABELS.get(metric, DASH)
        for m in models:
            col = f" ({m})" if len(models) > 1 else ""
            entry = ours[m].get(name)
            prompt_means, ns, n_seeds = [], [], set()
            if entry is not None and metric:
                for idx in sorted(entry["prompts"]):
                    vals = entry["prompts"][idx]["values"].get(metric) or []
                    if vals:
                        prompt_means.append(math.fsum(vals) / len(vals))
                        n_seeds.add(len(vals))
                        ns.extend(entry["prompts"][idx]["n"][:1])
            if prompt_means:
                mean, std = mean_std(prompt_means, ddof=0)
                std = std if len(prompt_means) > 1 else None
                row[f"Ours{col}"] = fmt_pm(mean, std)
                row[f"Prompts{col}"] = str(len(prompt_means))
                tidy.append({"table": 8, "model": m, "source": "ours", "task": entry["task"], "paper_task": name,
                             "metric": metric, "mean": mean, "std": std, "n_prompts": len(prompt_means),
                             "n_seeds": max(n_seeds), "n_instances_per_prompt": ns[0] if ns else None})
            else:
                row[f"Ours{col}"] = DASH
                row[f"Prompts{col}"] = DASH
                if not runs[m]:
                    reasons.add(f"no DiversePrompt runs of model {m}")
                else:
                    why = "task not run" if entry is None else f"no {metric} values"
                    reasons.add(f"{why}{f' (model {m})' if len(models) > 1 else ''}", name)
        for pm_name in paper_models:
            p = paper_cells.get((pm_name, name))
            row[f"Paper {pm_name}"] = paper_pm(p.mean, p.std) if p is not None else DASH
            if p is not None:
                tidy.append({"table": 8, "model": pm_name, "source": "paper", "task": None, "paper_task": name,
                             "metric": PAPER_METRICS.get(p.metric, metric), "mean": paper_float(p.mean), "std": paper_float(p.std),
                             "n_prompts": None, "n_seeds": None, "n_instances_per_prompt": None})
        display.append(row)

    all_runs = [s for m in models for s in runs[m]]
    notes = [f"Ours{f' ({m})' if len(models) > 1 else ''} = {model_text(m, context, scores)}, DiversePrompt, "
             f"{SETTING_LABELS.get(settings[m], 'no runs')}, {seed_text(seeds_of(runs[m]))}." for m in models]
    notes += ["Per task: each prompt's mean over seeds, then mean ± population std (ddof=0) over the task's "
              "prompts (as the paper: std over prompts). Metric per task as the paper's Table 8 (EM block / "
              "ROUGE-L block).",
              f"Paper: T5-3B and T5-11B trained on SuperNI, {PAPER_SOURCE} Table 8 ({paper_file})."]
    notes += reasons.notes() + common_notes(context, all_runs)
    return Table("Table 8: DiversePrompt, mean ± std over each task's prompts — ours beside the paper",
                 pd.DataFrame(display), tidy_frame(tidy), tuple(notes))


def build_table9(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 9: ROUGE-L per prompt for four DiversePrompt tasks, joined to the paper's prompts by text."""
    scores = score_list(inputs)
    pdf, paper_file = paper_frame(inputs, "table9")
    models = models_with_runs(scores, context, "diverse")
    runs, settings = _diverse_runs(scores, models)
    paper_model = unique(pdf["model_inferred"])[0] if len(pdf) else "paper"
    metric = PAPER_METRICS.get(unique(pdf["metric"])[0], "rougeL") if len(pdf) else "rougeL"
    values = {m: _prompt_values(runs[m]) for m in models}
    metas = {m: _task_meta(runs[m]) for m in models}

    display, tidy = [], []
    n_matched = 0
    for name in unique(pdf["task"]):
        prow = list(pdf[pdf["task"] == name].itertuples(index=False))
        # our prompts of this task: (task, index) -> {text, {model: (value, n_seeds, n)}}
        ours_rows: dict[tuple[str, int], dict] = {}
        for m in models:
            for task, prompts in values[m].items():
                if diverse_paper_name(task, metas[m].get(task)) != name:
                    continue
                for idx in sorted(prompts):
                    slot = prompts[idx]
                    r = ours_rows.setdefault((task, idx), {"task": task, "index": idx, "text": slot["text"],
                                                           "vals": {}})
                    vals = slot["values"].get(metric) or []
                    if vals:
                        r["vals"][m] = (math.fsum(vals) / len(vals), len(vals), slot["n"][0] if slot["n"] else None)
        order = sorted(ours_rows, key=lambda k: (k[1], k[0]))
        match = match_prompts([(k, ours_rows[k]["text"]) for k in order], [p.prompt for p in prow])
        for k in order:
            r = ours_rows[k]
            p = prow[match[k]] if k in match else None
            row = {"Task": name, "Prompt # (ours)": str(r["index"]), "Prompt": r["text"] if r["text"] else DASH}
            for m in models:
                v = r["vals"].get(m)
                row[f"Ours ROUGE-L{f' ({m})' if len(models) > 1 else ''}"] = fmt(v[0], 2) if v else DASH
                if v:
                    tidy.append({"table": 9, "source": "ours", "model": m, "task": r["task"], "paper_task": name,
                                 "prompt_index": r["index"], "paper_rank": int(p.prompt_rank_in_table) if p else None,
                                 "prompt": r["text"], "metric": metric, "value": v[0], "n_seeds": v[1],
                                 "n_instances": v[2]})
            row[f"Paper ({paper_model})"] = p.value if p is not None else DASH
            row["Paper rank"] = p.prompt_rank_in_table if p is not None else DASH
            display.append(row)
        used = set(match.values())
        for j, p in enumerate(prow):
            if j not in used:
                row = {"Task": name, "Prompt # (ours)": DASH, "Prompt": p.prompt}
                for m in models:
                    row[f"Ours ROUGE-L{f' ({m})' if len(models) > 1 else ''}"] = DASH
                row[f"Paper ({paper_model})"] = p.value
                row["Paper rank"] = p.prompt_rank_in_table
                display.append(row)
        for p in prow:
            tidy.append({"table": 9, "source": "paper", "model": paper_model, "task": None, "paper_task": name,
                         "prompt_index": None, "paper_rank": int(p.prompt_rank_in_table), "prompt": p.prompt,
                         "metric": metric, "value": paper_float(p.value), "n_seeds": None, "n_instances": None})
        n_matched += len(match)

    all_runs = [s for m in models for s in runs[m]]
    notes = [f"Ours{f' ({m})' if len(models) > 1 else ''} = {model_text(m, context, scores)}, DiversePrompt, "
             f"{SETTING_LABELS.get(settings[m], 'no runs')}, ROUGE-L per prompt, mean over "
             f"{seed_text(seeds_of(runs[m]))}." for m in models]
    notes += [f"Join: our prompt text and the paper's, the same text first, then ignoring case, punctuation and "
              f"whitespace; each paper prompt joined once; {n_matched} of {len(pdf)} paper prompts matched. {DASH} in a paper column = the prompt is not in the paper's table; "
              f"{DASH} in an ours column = not a prompt of our data (or not run), listed after our prompts.",
              f"Paper: model {paper_model} (inferred, see paper/README.md), {PAPER_SOURCE} Table 9 "
              f"({paper_file}); 'Paper rank' = the row order within the task in the paper."]
    if not all_runs:
        notes.append(f"{DASH} = no number of ours: no DiversePrompt runs.")
    notes += common_notes(context, all_runs)
    return Table("Table 9: ROUGE-L per prompt for four DiversePrompt tasks — ours beside the paper",
                 pd.DataFrame(display), tidy_frame(tidy), tuple(notes))


