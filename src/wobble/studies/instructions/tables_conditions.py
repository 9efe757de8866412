"""Tables 4, 5, 10 and 11 of Gu et al. 2023: every instruction condition x SuperNI category, ours (mean ±
std over seeds) beside the paper's, per setting.

* Table 4: main model, English test tasks, INSTRU-WO-EXAM and INSTRU-W-EXAM (paper: T5-3B, §3.1).
* Table 5: second model, English test tasks, INSTRU-W-EXAM only (paper: T5-11B).
* Table 10: main model, non-English test tasks (AC, CEC, TE, TG), both settings (Appendix).
* Table 11: second model, non-English test tasks, INSTRU-W-EXAM only (Appendix).

Each cell reads ``ours (paper)``; a cell we have no number for shows "–" and a footnote says why.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.metrics.superni import CATEGORY_METRIC
from wobble.report.cells import DASH, fmt_pm
from wobble.report.spec import Table
from wobble.studies.instructions.conditions import PAPER_CONDITIONS
from wobble.studies.instructions.table_parts import (
    METRIC_LABELS, PAPER_METRICS, PAPER_SETTINGS, PAPER_SOURCE, SETTINGS, SETTING_LABELS, TASKSET_LABELS, Reasons,
    aggregate, by_category, common_notes, data_per_category_note, json_object, missing_reasons, model_text,
    paper_float, paper_frame, paper_pm, pick_model, score_list, seed_text, seed_values, seeds_of, tidy_frame,
    unique,
)

TIDY_COLUMNS = ["table", "model", "taskset", "setting", "level", "condition", "condition_label", "category",
                "metric", "source", "mean", "std", "n_seeds", "n_instances"]


def _tidy_row(table_no, model, taskset, setting, cond, cat, metric, source, mean, std, n_seeds, n_instances):
    return {"table": table_no, "model": model, "taskset": taskset, "setting": setting, "level": cond.paper_level,
            "condition": cond.key, "condition_label": cond.label, "category": cat, "metric": metric,
            "source": source, "mean": mean, "std": std, "n_seeds": n_seeds, "n_instances": n_instances}


def condition_table(table_no: int, inputs: Mapping[str, Any], context: Mapping[str, Any], *, taskset: str,
                    rank: int, settings: Sequence[str]) -> Table:
    """One condition x category table: ``rank`` 0 = the main model, 1 = the second model."""
    scores = score_list(inputs)
    sel = json_object(inputs.get("selection"))
    pdf, paper_file = paper_frame(inputs, f"table{table_no}")
    model = pick_model(scores, context, rank)
    runs = [s for s in scores if s["model"] == model and s["taskset"] == taskset and s["setting"] in settings]
    cat_missing, _ = missing_reasons(sel, taskset)

    ours_cats = sorted({c for s in runs for c in by_category(s)})
    categories = unique(list(pdf["category"]) + [c for c in ours_cats if c not in set(pdf["category"])])
    paper_cells = {(PAPER_SETTINGS.get(r.setting, r.setting), r.condition, r.category): r
                   for r in pdf.itertuples(index=False)}
    paper_model = unique(pdf["model"])[0] if len(pdf) else "paper"
    paper_subset = unique(pdf["language_subset"])[0] if "language_subset" in pdf and len(pdf) else ""

    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for s in runs:
        by_cell[(s["setting"], s["condition"])].append(s)
    extra_conditions = sorted({s["condition"] for s in runs} - {c.key for c in PAPER_CONDITIONS})

    reasons = Reasons()
    display, tidy = [], []
    for setting in settings:
        for cond in PAPER_CONDITIONS:
            cell_runs = by_cell.get((setting, cond.key), [])
            row = {"Setting": SETTING_LABELS[setting], "Level": cond.paper_level, "Condition": cond.label}
            if not cell_runs:
                reasons.add(f"condition not run in {SETTING_LABELS[setting]}", cond.key)
            for cat in categories:
                metric = CATEGORY_METRIC.get(cat)
                vals, ns = seed_values(cell_runs, cat)
                if vals:
                    mean, std = aggregate(vals)
                    ours = fmt_pm(mean, std)
                    tidy.append(_tidy_row(table_no, model, taskset, setting, cond, cat, metric, "ours", mean, std,
                                          len(vals), ns[0] if ns and ns[0] is not None else None))
                else:
                    ours = DASH
                    if cell_runs or cat in cat_missing:
                        reasons.add_category(cat, cat_missing)
                p = paper_cells.get((setting, cond.key, cat))
                if p is not None:
                    paper_txt = paper_pm(p.mean, p.std)
                    pstd = paper_float(p.std)
                    tidy.append(_tidy_row(table_no, p.model, taskset, setting, cond, cat,
                                          PAPER_METRICS.get(p.metric, metric), "paper", paper_float(p.mean), pstd,
                                          3 if not math.isnan(pstd) else None, None))
                else:
                    paper_txt = DASH
                row[f"{cat} ({METRIC_LABELS.get(metric, '?')})"] = f"{ours} ({paper_txt})"
            display.append(row)

    settings_txt = " and ".join(SETTING_LABELS[s] for s in settings)
    notes = [f"Each cell: ours (paper). Ours = {model_text(model, context, scores)}, {TASKSET_LABELS[taskset]}, "
             f"{settings_txt}; mean ± population std (ddof=0) over {seed_text(seeds_of(runs))}; the std is omitted "
             f"where a cell has one seed (n_seeds per cell in the CSV).",
             f"Paper = {paper_model}{f', {paper_subset}' if paper_subset else ''}, {PAPER_SOURCE} Table "
             f"{table_no} ({paper_file}), mean ± std over 3 runs where printed.",
             "Metric: EM for TE, CEC, CR, DAR, AC, WA; ROUGE-L for OE, KT, QR, TG, DTT, GEC (Table 2).",
             data_per_category_note(runs, categories)]
    if model is None:
        reasons.add("no model is configured for this table (context 'models' has no "
                    f"{'second' if rank else 'main'} model)")
    if extra_conditions:
        notes.append(f"Conditions of ours not in the paper's table, left out: {', '.join(extra_conditions)}.")
    notes += reasons.notes() + common_notes(context, runs, [model] if model else [])
    lang = "English" if taskset == "english" else "non-English"
    title = (f"Table {table_no}: {lang} SuperNI test tasks, instruction conditions x categories, {settings_txt} "
             f"— ours ({model or DASH}) beside the paper ({paper_model})")
    return Table(title, pd.DataFrame(display), tidy_frame(tidy, TIDY_COLUMNS), tuple(notes))


def build_table4(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 4: main model, English test tasks, 9 conditions x 12 categories, both settings."""
    return condition_table(4, inputs, context, taskset="english", rank=0, settings=SETTINGS)


def build_table5(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 5: second model, English test tasks, INSTRU-W-EXAM only."""
    return condition_table(5, inputs, context, taskset="english", rank=1, settings=("w_exam",))


def build_table10(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 10: main model, non-English test tasks (AC, CEC, TE, TG), both settings."""
    return condition_table(10, inputs, context, taskset="xlingual", rank=0, settings=SETTINGS)


def build_table11(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 11: second model, non-English test tasks, INSTRU-W-EXAM only."""
    return condition_table(11, inputs, context, taskset="xlingual", rank=1, settings=("w_exam",))
