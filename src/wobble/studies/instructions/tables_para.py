"""Table 7 of Gu et al. 2023: Para-Instructions per category, the original instruction vs the rephrased ones.

``original`` = mean over seeds; ``rephrased`` = mean ± population std over the 3 new instructions of their
seed means (the paper's std is over the paraphrases, §3.2). The paper ran INSTRU-W-EXAM (its text); so do we.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping

import pandas as pd

from wobble.metrics.superni import CATEGORY_METRIC
from wobble.report.cells import DASH, fmt_pm
from wobble.report.spec import Table
from wobble.stats import mean_std
from wobble.studies.instructions.conditions import PARAPHRASE_CONDITIONS
from wobble.studies.instructions.table_parts import (
    METRIC_LABELS, PAPER_METRICS, PAPER_SOURCE, SETTING_LABELS, TASKSET_LABELS, Reasons, aggregate, by_category,
    common_notes, data_per_category_note, json_object, missing_reasons, model_text, models_with_runs, paper_float,
    paper_frame, paper_pm, pick_setting, score_list, seed_text, seed_values, seeds_of, tidy_frame, unique,
)


def build_table7(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """Table 7: Para-Instructions per category, original vs rephrased (mean ± std over the 3 paraphrases)."""
    scores = score_list(inputs)
    sel = json_object(inputs.get("selection"))
    pdf, paper_file = paper_frame(inputs, "table7")
    models = models_with_runs(scores, context, "para")
    cat_missing, task_missing = missing_reasons(sel, "para")
    paper_models = unique(pdf["model"])
    ours_cats = sorted({c for s in scores if s["taskset"] == "para" for c in by_category(s)})
    categories = unique(list(pdf["category"]) + [c for c in ours_cats if c not in set(pdf["category"])])
    paper_cells = {(r.model, r.instruction, r.category): r for r in pdf.itertuples(index=False)}
    para_keys = [c.key for c in PARAPHRASE_CONDITIONS]

    reasons = Reasons()
    partial_para = False
    per_model: dict[str, dict] = {}
    settings_used = {}
    for m in models:
        runs_m = [s for s in scores if s["model"] == m and s["taskset"] == "para"]
        setting = pick_setting(runs_m)
        settings_used[m] = setting
        runs_m = [s for s in runs_m if s["setting"] == setting]
        per_model[m] = {"runs": runs_m, "by_cond": defaultdict(list)}
        for s in runs_m:
            per_model[m]["by_cond"][s["condition"]].append(s)
        if not runs_m:
            reasons.add(f"no Para-Instructions runs of model {m}")
        for key in ["original"] + para_keys:
            if runs_m and not per_model[m]["by_cond"].get(key):
                reasons.add(f"condition not run{f' (model {m})' if len(models) > 1 else ''}", key)

    display, tidy = [], []
    for cat in categories:
        metric = CATEGORY_METRIC.get(cat)
        row = {"Category": cat, "Metric": METRIC_LABELS.get(metric, DASH)}
        for m in models:
            by_cond = per_model[m]["by_cond"]
            col = f" ({m})" if len(models) > 1 else ""
            vals, ns = seed_values(by_cond.get("original", []), cat)
            if vals:
                mean, std = aggregate(vals)
                row[f"Ours original{col}"] = fmt_pm(mean, std)
                tidy.append({"table": 7, "model": m, "source": "ours", "instruction": "original", "category": cat,
                             "metric": metric, "mean": mean, "std": std, "n_seeds": len(vals),
                             "n_paraphrases": None, "n_instances": ns[0] if ns else None})
            else:
                row[f"Ours original{col}"] = DASH
                if per_model[m]["runs"]:
                    reasons.add_category(cat, cat_missing)
            para_means = []
            for key in para_keys:
                pv, pn = seed_values(by_cond.get(key, []), cat)
                if pv:
                    pm, pstd = aggregate(pv)
                    para_means.append(pm)
                    tidy.append({"table": 7, "model": m, "source": "ours", "instruction": key, "category": cat,
                                 "metric": metric, "mean": pm, "std": pstd, "n_seeds": len(pv),
                                 "n_paraphrases": None, "n_instances": pn[0] if pn else None})
            if para_means:
                mean, std = mean_std(para_means, ddof=0)
                std = std if len(para_means) > 1 else None
                txt = fmt_pm(mean, std)
                if len(para_means) < len(para_keys):
                    txt += f" [{len(para_means)} of {len(para_keys)}]"
                    partial_para = True
                row[f"Ours rephrased{col}"] = txt
                tidy.append({"table": 7, "model": m, "source": "ours", "instruction": "rephrased", "category": cat,
                             "metric": metric, "mean": mean, "std": std, "n_seeds": None,
                             "n_paraphrases": len(para_means), "n_instances": None})
            else:
                row[f"Ours rephrased{col}"] = DASH
                if per_model[m]["runs"]:
                    reasons.add_category(cat, cat_missing)
        for pm_name in paper_models:
            for instr in ("original", "rephrased"):
                p = paper_cells.get((pm_name, instr, cat))
                row[f"Paper {pm_name} {instr}"] = paper_pm(p.mean, p.std) if p is not None else DASH
                if p is not None:
                    tidy.append({"table": 7, "model": pm_name, "source": "paper", "instruction": instr,
                                 "category": cat, "metric": PAPER_METRICS.get(p.metric, metric),
                                 "mean": paper_float(p.mean), "std": paper_float(p.std), "n_seeds": None,
                                 "n_paraphrases": 3 if instr == "rephrased" else None, "n_instances": None})
        display.append(row)

    all_runs = [s for m in models for s in per_model[m]["runs"]]
    notes = [f"Ours{f' ({m})' if len(models) > 1 else ''} = {model_text(m, context, scores)}, "
             f"{TASKSET_LABELS['para']}, {SETTING_LABELS.get(settings_used[m], 'no runs')}, "
             f"{seed_text(seeds_of(per_model[m]['runs']))}." for m in models]
    notes += ["Original: mean over seeds (± population std over seeds when there are several). Rephrased: each "
              "new instruction's seed mean, then mean ± population std (ddof=0) over the 3 new instructions, as "
              "the paper's std is over the 3 paraphrases (per-paraphrase numbers in the CSV).",
              f"Paper: T5-3B and T5-11B, INSTRU-W-EXAM (setting from the paper's text), {PAPER_SOURCE} Table 7 "
              f"({paper_file}).",
              data_per_category_note(all_runs, categories)]
    if partial_para:
        notes.append("[k of 3] = only k of the 3 new instructions have a number for this category.")
    if task_missing:
        notes.append("Para-Instructions tasks without data in the mirror (left out): "
                     + "; ".join(f"{t} ({why})" for t, why in sorted(task_missing.items())) + ".")
    notes += reasons.notes() + common_notes(context, all_runs)
    return Table("Table 7: Para-Instructions, original vs rephrased instructions — ours beside the paper",
                 pd.DataFrame(display), tidy_frame(tidy), tuple(notes))
