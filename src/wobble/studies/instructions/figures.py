"""The figure of the ``instructions`` study, the drop figure (``build_figure_drop``): how many points each
perturbation costs, per category.

drop = ``original`` − perturbed (each a mean over seeds), per setting, condition and English test
category; ours from the main model's runs, the paper's from its Table 4 (T5-3B). Heatmaps: one column per
setting (INSTRU-WO-EXAM, INSTRU-W-EXAM), one row per source (ours, paper); grey = no number, or a *floor*:
original and perturbed both 0, where a drop of 0 says the model scores nothing either way, not that it is
robust (column ``floor`` of the tidy data; "floor" in the cell). The same numbers
are written as a table beside the paper's (``tables/figure_drop.*``). Not a figure of the paper: it draws
the paper's Table 4 (§3.1) as differences, so the two sources can be compared at a glance.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.metrics.superni import CATEGORY_METRIC
from wobble.report.cells import DASH, fmt
from wobble.report.spec import Figure, Table
from wobble.studies.instructions.conditions import PAPER_CONDITIONS
from wobble.studies.instructions.table_parts import (
    CATEGORY_ORDER, PAPER_SETTINGS, PAPER_SOURCE, SETTINGS, SETTING_LABELS, category_value, common_notes,
    model_text, paper_float, paper_frame, pick_model, score_list, seed_text, seeds_of, tidy_frame, unique,
)

COLUMNS = ["source", "model", "setting", "level", "condition", "condition_label", "category", "metric",
           "original_mean", "perturbed_mean", "drop", "floor", "n_seeds_original", "n_seeds_perturbed"]
FLOOR = "floor"


def is_floor(original: float, perturbed: float) -> bool:
    """Both scores 0: the drop (0) is a floor, not robustness."""
    return original == 0 and perturbed == 0


def _row(source, model, setting, cond, cat, original, perturbed, n_original, n_perturbed) -> dict:
    return {"source": source, "model": model, "setting": setting, "level": cond.level, "condition": cond.key,
            "condition_label": cond.label, "category": cat, "metric": CATEGORY_METRIC.get(cat),
            "original_mean": original, "perturbed_mean": perturbed, "drop": original - perturbed,
            "floor": is_floor(original, perturbed), "n_seeds_original": n_original, "n_seeds_perturbed": n_perturbed}


def drop_frame(scores: Sequence[dict], model: str | None, taskset: str = "english",
               categories: Sequence[str] = CATEGORY_ORDER) -> pd.DataFrame:
    """Drop from ``original`` (original − perturbed, seed means) per setting, condition and category (ours)."""
    runs = [s for s in scores if s["model"] == model and s["taskset"] == taskset]
    rows = []
    for setting in SETTINGS:
        def seed_mean(cond_key, cat):
            vals = [v for v, _ in (category_value(s, cat) for s in runs
                                   if s["setting"] == setting and s["condition"] == cond_key) if v is not None]
            return (math.fsum(vals) / len(vals), len(vals)) if vals else (math.nan, 0)

        for cond in PAPER_CONDITIONS[1:]:
            for cat in categories:
                o, no = seed_mean("original", cat)
                p, npp = seed_mean(cond.key, cat)
                rows.append(_row("ours", model, setting, cond, cat, o, p, no, npp))
    return tidy_frame(rows, COLUMNS)


def paper_drop_frame(pdf: pd.DataFrame, categories: Sequence[str] = CATEGORY_ORDER) -> pd.DataFrame:
    """The same drop from the paper's Table 4 (original − perturbed means), ``pdf`` read as printed."""
    val = {(PAPER_SETTINGS.get(r.setting, r.setting), r.condition, r.category): paper_float(r.mean)
           for r in pdf.itertuples(index=False)}
    model = unique(pdf["model"])[0] if len(pdf) else "paper"
    rows = []
    for setting in SETTINGS:
        for cond in PAPER_CONDITIONS[1:]:
            for cat in categories:
                o = val.get((setting, "original", cat), math.nan)
                p = val.get((setting, cond.key, cat), math.nan)
                rows.append(_row("paper", model, setting, cond, cat, o, p, None, None))
    return tidy_frame(rows, COLUMNS)


def _heatmaps(tidy: pd.DataFrame, categories: Sequence[str], title: str, model: str | None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    sources = unique(tidy["source"])
    finite = tidy["drop"][np.isfinite(tidy["drop"].astype(float))]
    vmax = max(1.0, float(np.abs(finite).max())) if len(finite) else 1.0
    conds = list(PAPER_CONDITIONS[1:])
    fig, axes = plt.subplots(len(sources), 2, figsize=(12, 3.8 * len(sources) + 1.0), squeeze=False)
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#dddddd")
    im = None
    for i, src in enumerate(sources):
        sub = tidy[tidy["source"] == src]
        for j, setting in enumerate(SETTINGS):
            ax = axes[i][j]
            grid = np.full((len(conds), len(categories)), np.nan)
            lookup = {(r.condition, r.category): (r.drop, r.floor)
                      for r in sub[sub["setting"] == setting].itertuples(index=False)}
            floors = set()
            for a, cond in enumerate(conds):
                for b, cat in enumerate(categories):
                    v, floor = lookup.get((cond.key, cat), (None, False))
                    if floor:
                        floors.add((a, b))
                    grid[a, b] = np.nan if v is None or floor else float(v)
            im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto")
            for a in range(len(conds)):
                for b in range(len(categories)):
                    v = grid[a, b]
                    txt = FLOOR if (a, b) in floors else DASH if np.isnan(v) else f"{v:.1f}"
                    dark = not np.isnan(v) and abs(v) > 0.6 * vmax  # white text on the darkest cells
                    ax.text(b, a, txt, ha="center", va="center", fontsize=7 if txt == FLOOR else 8.5,
                            color="white" if dark else "black")
            ax.set_xticks(range(len(categories)), categories, fontsize=9)
            ax.set_yticks(range(len(conds)), [c.label for c in conds] if j == 0 else [], fontsize=9)
            who = f"ours: {model or DASH}" if src == "ours" else f"paper: {unique(sub['model'])[0]}"
            ax.set_title(f"{SETTING_LABELS[setting]} — {who}", fontsize=10)
    fig.suptitle(textwrap.fill(title, 150), fontsize=10)  # wrapped: a long title would widen the figure
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8,
                 label="drop (points); grey = no number or a floor (both 0)")
    return fig


def _drop_table(tidy: pd.DataFrame, categories: Sequence[str], model: str | None, notes: list[str]) -> Table:
    """The figure's numbers: one row per (setting, condition), ``ours (paper)`` drop per category."""
    cell = {(r.source, r.setting, r.condition, r.category): FLOOR if r.floor else r.drop
            for r in tidy.itertuples(index=False)}
    display = []
    for setting in SETTINGS:
        for cond in PAPER_CONDITIONS[1:]:
            row = {"Setting": SETTING_LABELS[setting], "Level": cond.level, "Condition": cond.label}
            for cat in categories:
                ours = cell.get(("ours", setting, cond.key, cat), math.nan)
                paper = cell.get(("paper", setting, cond.key, cat), math.nan)
                row[cat] = f"{fmt(ours, 1)} ({fmt(paper, 1)})"
            display.append(row)
    title = f"Figure (drop): drop from the original instruction per category — ours ({model or DASH}) beside the paper"
    return Table(title, pd.DataFrame(display), tidy, tuple(notes))


def build_figure_drop(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    """Heatmaps of the drop from ``original`` per perturbation and category (ours; the paper's Table 4 below)."""
    scores = score_list(inputs)
    model = pick_model(scores, context, 0)
    categories = list(CATEGORY_ORDER)
    frames = [drop_frame(scores, model, "english", categories)]
    pdf, paper_file = paper_frame(inputs, "table4")
    frames.append(paper_drop_frame(pdf, categories))
    tidy = pd.concat(frames, ignore_index=True)
    label = model_text(model, context, scores)
    title = (f"Drop from the original instruction (original − perturbed; EM or ROUGE-L points), English "
             f"test tasks; ours = {label}, scale {context.get('scale', '?')}")
    fig = _heatmaps(tidy, categories, title, model)
    runs = [s for s in scores if s["model"] == model and s["taskset"] == "english"]
    notes = [f"Each cell: ours (paper) drop = original − perturbed, in EM or ROUGE-L points (Table 2's metric per "
             f"category); positive = the perturbation costs points. Ours = {label}, English SuperNI test tasks, "
             f"mean over {seed_text(seeds_of(runs))} of each side first.",
             f"Paper: T5-3B, {PAPER_SOURCE} Table 4 ({paper_file}), original − perturbed of its printed means.",
             f"{DASH} = no number: the condition or the category has no run of ours (or the paper has no cell).",
             f"{FLOOR} = original and perturbed are both 0: a floor (the model scores nothing either way), not "
             "robustness; grey in the figure."]
    notes += common_notes(context, runs)
    return Figure(fig, tidy, table=_drop_table(tidy, categories, model, notes))
