"""The tables of Si et al. (2023), ours beside the paper's. Each ``build_tableN(inputs, context)`` is
declared in :mod:`.spec` and called by the one renderer.

* Table 1: datasets and features, with what this mirror gives each pair (split source, test size, or
  why it is unavailable);
* Table 2: average intervention effect, steer towards h1 / h2, per model;
* Table 3: MNLI per feature, steer towards h2: baseline h2-accuracy and the change per intervention;
* Tables 4-5: every dataset / feature row x intervention, "h1 / h2" accuracy, for the model standing
  in for Davinci (Table 4) and for Text-Davinci-002 (Table 5).
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from wobble.report.cells import DASH, printed
from wobble.report.spec import Table
from wobble.studies.icl_bias.pairs import PAIRS, TASKS
from wobble.studies.icl_bias.table_parts import (
    LABELS_23, LABELS_45, Cells, common_notes, gap_notes, h_pair, load_splits, load_summary, missing_cell,
    paper, paper_pairs, pair_status, pm, printed_change, tidy, value,
)

IV_ORDER_45 = ("baseline", "disambig", "verbalizer", "instruction", "explanation")
IV_ORDER_23 = ("baseline", "verbalizer", "instruction", "explanation", "disambig")


def _condition(iv: str, target: str) -> str:
    return "baseline" if iv == "baseline" else f"{iv}-{target}"


# -------------------------------------------------------------------------------------------- Table 1

def build_table1(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 1: the paper's datasets and features; per feature our pairs and what this run had for them."""
    splits = load_splits(inputs)
    rows, disp = [], []
    for r in paper(inputs, "table1").itertuples(index=False):
        task = r.task
        if r.feature_role.startswith("h1"):
            keys, here = [], "the dataset's label: h1 of every pair of this task"
        else:
            keys = [p.key for p in PAIRS.values() if p.task.lower() == task.lower() and r.feature.startswith(p.feature_name)]
            here = "; ".join(f"{k}: {pair_status(k, splits)}" for k in keys) or DASH
        disp.append({"Task": task, "Dataset": r.dataset, "Role": r.feature_role, "Feature (paper)": printed(r.feature),
                     "Pairs": ", ".join(keys) or DASH, "Here": here})
        for k in keys or [None]:
            s = splits.get(k, {}) if k else {}
            rows.append({"task": task, "dataset": r.dataset, "feature_role": r.feature_role, "feature": r.feature,
                         "pair": k, "status": pair_status(k, splits) if k else "h1",
                         "source": s.get("source"), "available": s.get("available"),
                         "test_per_cell": s.get("counts", {}).get("test_1_0") if s.get("available") else None})
    notes = common_notes(context, splits) + [
        "Table 1 of the paper lists 'Race (Black vs. White; Asian vs. White)'; the authors' run script has only the "
        "Black vs. White pair, so 22 pairs.",
        "Feature definitions (src/wobble/studies/icl_bias/features.py) reproduce the released h2 of 5 of the authors' "
        "7 splits exactly; BoolQ overlap uses content words (the authors' exact rule is not released).",
    ]
    cols = ["task", "dataset", "feature_role", "feature", "pair", "status", "source", "available", "test_per_cell"]
    return Table("Table 1: datasets and features (h1 = dataset label, h2 = alternative feature), and what this "
                 "mirror gives each pair", pd.DataFrame(disp), tidy(rows, cols), tuple(notes))


# -------------------------------------------------------------------------------------------- Table 2

def build_table2(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 2: average intended-feature accuracy change per intervention (all available pairs)."""
    cells, splits, pap = Cells(load_summary(inputs)), load_splits(inputs), paper(inputs, "table2")
    printed_val = {(r.steer_towards, r.model, r.intervention): r.value for r in pap.itertuples(index=False)}
    disp, rows = [], []
    for iv in IV_ORDER_23:
        line = {"Intervention": LABELS_23[iv]}
        for target in ("h1", "h2"):
            for paper_model, ours in paper_pairs(context):
                measure = target if iv == "baseline" else "effect"
                got = cells.get(ours, "all", "all", _condition(iv, target), measure) if ours else None
                if ours:
                    line[f"{target}: {ours} (ours)"] = pm(got, sign=iv != "baseline")
                if paper_model:
                    p = printed_val.get((target, paper_model, LABELS_23[iv]), "")
                    line[f"{target}: {paper_model} (paper)"] = printed_change(p, iv != "baseline")
                rows.append({"steer_towards": target, "intervention": LABELS_23[iv], "model": ours,
                             "paper_model": paper_model or None, "value": value(got),
                             "ci_low": got[1] if got else None, "ci_high": got[2] if got else None,
                             "paper": printed_val.get((target, paper_model, LABELS_23[iv]))})
        disp.append(line)
    notes = [
        "Baseline: accuracy of the intended feature (h1 when steering towards h1, h2 towards h2) without "
        "intervention; other rows: its change in points. Ours: mean over every pair with numbers here."
    ] + common_notes(context, splits) + gap_notes("all", "all", splits, "Not in our average")
    cols = ["steer_towards", "intervention", "model", "paper_model", "value", "ci_low", "ci_high", "paper"]
    return Table("Table 2: effect of each intervention on the intended feature's accuracy, averaged over datasets "
                 "and features", pd.DataFrame(disp), tidy(rows, cols), tuple(notes))


# -------------------------------------------------------------------------------------------- Table 3

def build_table3(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 3: MNLI per feature, steer towards h2: baseline h2-accuracy and change per intervention."""
    cells, splits, pap = Cells(load_summary(inputs)), load_splits(inputs), paper(inputs, "table3")
    printed_val = {(r.model, r.feature, r.intervention): r.value for r in pap.itertuples(index=False)}
    nli = [p for p in PAIRS.values() if p.table3]
    disp, rows, notes = [], [], []
    for paper_model, ours in paper_pairs(context):
        for iv in IV_ORDER_23:
            line = {"Model": f"{ours or DASH} / {paper_model or DASH}",
                    "Intervention": LABELS_23[iv]}
            for p in nli:
                measure = "h2" if iv == "baseline" else "effect"
                got = cells.get(ours, "pair", p.key, _condition(iv, "h2"), measure) if ours else None
                pv = printed_val.get((paper_model, p.table3, LABELS_23[iv]), "")
                gap = missing_cell("pair", p.key, splits)
                line[f"{p.table3} (ours)"] = gap or (pm(got, sign=iv != "baseline") if ours else DASH)
                line[f"{p.table3} (paper)"] = printed_change(pv, iv != "baseline")
                rows.append({"model": ours, "paper_model": paper_model or None, "feature": p.table3, "pair": p.key,
                             "intervention": LABELS_23[iv], "value": value(got), "ci_low": got[1] if got else None,
                             "ci_high": got[2] if got else None, "paper": pv or None})
            disp.append(line)
    for p in nli:
        notes += gap_notes("pair", p.key, splits, p.table3)
    notes = ["Baseline: h2-accuracy (%); other rows: change in h2-accuracy (points) when steering towards h2."] + \
        notes + common_notes(context, splits)
    cols = ["model", "paper_model", "feature", "pair", "intervention", "value", "ci_low", "ci_high", "paper"]
    return Table("Table 3: MNLI, steering towards each alternative feature", pd.DataFrame(disp), tidy(rows, cols),
                 tuple(notes))


# ---------------------------------------------------------------------------------------- Tables 4-5

def _row_order(pap: pd.DataFrame, target: str) -> list[tuple[str, str]]:
    """(dataset code, row) in the paper's order for this block, then our rows it lacks (e.g. SA towards h1)."""
    order = list(dict.fromkeys((r.dataset, r.feature) for r in pap.itertuples(index=False)
                               if r.steer_towards == target and r.feature != "Aggregate"))
    codes = list(dict.fromkeys([c for c, _ in order] + [p.code for t in TASKS for p in PAIRS.values() if p.task == t]))
    ours = list(dict.fromkeys((p.code, p.row) for p in PAIRS.values()))
    out = []
    for code in codes:
        out += [r for r in order if r[0] == code] + [r for r in ours if r[0] == code and r not in order]
        out.append((code, "Aggregate"))
    return out


def _full_table(inputs: Mapping[str, Any], context: Mapping[str, Any], paper_model: str, stem: str) -> Table:
    cells, splits, pap = Cells(load_summary(inputs)), load_splits(inputs), paper(inputs, stem)
    ours = next((m for pm_, m in paper_pairs(context) if pm_ == paper_model), None)
    printed_val = {(r.steer_towards, r.dataset, r.feature, r.intervention): (r.h1_acc, r.h2_acc)
                   for r in pap.itertuples(index=False)}
    disp, rows, notes = [], [], []
    for target in ("h1", "h2"):
        for code, row in _row_order(pap, target):
            level, group = ("dataset", code) if row == "Aggregate" else ("row", f"{code}/{row}")
            line = {"Steer towards": target, "Dataset": code, "Feature": row}
            gap = missing_cell(level, group, splits)
            for iv in IV_ORDER_45:
                cond = _condition(iv, target)
                got = {m: cells.get(ours, level, group, cond, m) if ours else None for m in ("h1", "h2", "neither")}
                p1, p2 = printed_val.get((target, code, row, LABELS_45[iv]), ("", ""))
                line[f"{LABELS_45[iv]} (ours)"] = gap or h_pair(got["h1"], got["h2"], got["neither"])
                line[f"{LABELS_45[iv]} (paper)"] = f"{p1} / {p2}" if p1 or p2 else DASH
                rows.append({"model": ours, "paper_model": paper_model, "steer_towards": target, "dataset": code,
                             "feature": row, "intervention": LABELS_45[iv],
                             **{f"{m}_{k}": (got[m][i] if got[m] else None) for m in ("h1", "h2", "neither")
                                for i, k in enumerate(("acc", "ci_low", "ci_high"))},
                             "paper_h1_acc": p1 or None, "paper_h2_acc": p2 or None})
            disp.append(line)
            if target == "h1" and row != "Aggregate":
                notes += gap_notes(level, group, splits, f"{code}/{row}")
    head = [f"Ours: {ours} beside the paper's {paper_model}." if ours else
            f"No model of this run stands in for {paper_model} (icl_bias.paper_models): only the paper's numbers."]
    notes = head + ["Cells: h1-accuracy / h2-accuracy (%), mean over prompt sets; their 95% intervals and the "
                    "neither share are in the .csv. Aggregate: mean over the dataset's available pairs."] + \
        sorted(set(notes)) + common_notes(context, splits)
    cols = ["model", "paper_model", "steer_towards", "dataset", "feature", "intervention",
            *[f"{m}_{k}" for m in ("h1", "h2", "neither") for k in ("acc", "ci_low", "ci_high")],
            "paper_h1_acc", "paper_h2_acc"]
    return Table(f"Table {stem[-1]}: full intervention results, {paper_model} and ours", pd.DataFrame(disp),
                 tidy(rows, cols), tuple(notes))


def build_table4(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 4: full results for the model standing in for Davinci (the base model)."""
    return _full_table(inputs, context, "Davinci", "table4")


def build_table5(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 5: full results for the model standing in for Text-Davinci-002 (the instruction-tuned model)."""
    return _full_table(inputs, context, "Text-Davinci-002", "table5")
