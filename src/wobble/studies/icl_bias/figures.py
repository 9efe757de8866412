"""The figures of Si et al. (2023), ours, with a table of their numbers beside the paper's (the paper's
figures print no numbers; the same quantities are in its Tables 4-5, which the tables quote).

* Figure 2: baseline h1- vs h2-accuracy per dataset / feature pair and model (one panel per dataset);
* Figure 3: the intended feature's accuracy per intervention, aggregated per dataset, steering towards
  h1 (top row) and towards h2 (bottom row), one column per model.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from wobble.report.cells import DASH, printed
from wobble.report.spec import Figure, Table
from wobble.studies.icl_bias.pairs import CODE, PAIRS, TASKS
from wobble.studies.icl_bias.table_parts import (
    LABELS_45, Cells, common_notes, load_splits, load_summary, paper, pair_status, pm, tidy, value,
)

IV_ORDER = ("baseline", "disambig", "verbalizer", "instruction", "explanation")


def _paper_h(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> dict:
    """``(our model, target, dataset, feature, intervention label) -> (h1, h2)`` from Tables 4-5."""
    out = {}
    for stem, paper_model in (("table4", "Davinci"), ("table5", "Text-Davinci-002")):
        ours = [m for m, p in context.get("paper_models", {}).items() if p == paper_model]
        for r in paper(inputs, stem).itertuples(index=False):
            for m in ours:
                out[(m, r.steer_towards, r.dataset, r.feature, r.intervention)] = (r.h1_acc, r.h2_acc)
    return out


def _bars(ax, labels, series: list[tuple[str, list, list, list]]):
    x = np.arange(len(labels))
    width = 0.8 / max(1, len(series))
    for i, (name, vals, los, his) in enumerate(series):
        v = np.array([np.nan if a is None else a for a in vals], dtype=float)
        err = np.array([[a - lo if lo is not None and a is not None else 0 for a, lo in zip(vals, los)],
                        [hi - a if hi is not None and a is not None else 0 for a, hi in zip(vals, his)]], dtype=float)
        ax.bar(x + (i - (len(series) - 1) / 2) * width, np.nan_to_num(v), width, yerr=err, label=name, capsize=2)
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 100)


def build_figure2(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    """Figure 2: baseline h1- and h2-accuracy per pair, per model."""
    import matplotlib.pyplot as plt

    cells, splits, paper_h = Cells(load_summary(inputs)), load_splits(inputs), _paper_h(inputs, context)
    models = list(context.get("models", []))
    fig, axes = plt.subplots(1, len(TASKS), figsize=(4.2 * len(TASKS), 3.6), squeeze=False)
    data, disp = [], []
    for ax, task in zip(axes[0], TASKS):
        keys = [p.key for p in PAIRS.values() if p.task == task]
        series = []
        for m in models:
            for h in ("h1", "h2"):
                got = [cells.get(m, "pair", k, "baseline", h) for k in keys]
                series.append((f"{m} {h}", [value(g) for g in got],
                               [g[1] if g else None for g in got], [g[2] if g else None for g in got]))
                data += [{"model": m, "pair": k, "dataset": CODE[task], "measure": h, "value": value(g),
                          "ci_low": g[1] if g else None, "ci_high": g[2] if g else None} for k, g in zip(keys, got)]
        _bars(ax, [k.split("_", 2)[-1] for k in keys], series)
        ax.set_title(f"{CODE[task]} ({task})", fontsize=9)
        ax.set_ylabel("baseline accuracy (%)")
        for k in keys:
            p = PAIRS[k]
            line = {"Dataset": p.code, "Pair": k, "Here": pair_status(k, splits) if not splits.get(k, {}).get(
                "available") else "yes"}
            for m in models:
                line[f"{m} h1 / h2 (ours)"] = (
                    f"{pm(cells.get(m, 'pair', k, 'baseline', 'h1'))} / {pm(cells.get(m, 'pair', k, 'baseline', 'h2'))}")
                pv = paper_h.get((m, "h2", p.code, p.row, "Baseline"))
                line[f"{m} row {p.row} (paper)"] = printed(" / ".join(pv)) if pv else DASH
            disp.append(line)
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    notes = ["Paper column: the baseline h1 / h2 of the pair's row in Table 4 (Davinci) or 5 (Text-Davinci-002), "
             "for the model standing in for it (a row may average two pairs)."] + common_notes(context, splits)
    table = Table("Figure 2: baseline h1- vs h2-accuracy per dataset / feature pair", pd.DataFrame(disp),
                  tidy(data, ["model", "pair", "dataset", "measure", "value", "ci_low", "ci_high"]), tuple(notes))
    return Figure(fig, tidy(data, ["model", "pair", "dataset", "measure", "value", "ci_low", "ci_high"]), table)


def build_figure3(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    """Figure 3: intended-feature accuracy per intervention and dataset, per model and steering target."""
    import matplotlib.pyplot as plt

    cells, splits, paper_h = Cells(load_summary(inputs)), load_splits(inputs), _paper_h(inputs, context)
    models = list(context.get("models", [])) or [None]
    codes = [CODE[t] for t in TASKS]
    fig, axes = plt.subplots(2, len(models), figsize=(4.6 * len(models), 6.4), squeeze=False)
    data, disp = [], []
    for col, m in enumerate(models):
        for row, target in enumerate(("h1", "h2")):
            series = []
            for iv in IV_ORDER:
                cond = "baseline" if iv == "baseline" else f"{iv}-{target}"
                got = [cells.get(m, "dataset", c, cond, target) if m else None for c in codes]
                series.append((LABELS_45[iv], [value(g) for g in got], [g[1] if g else None for g in got],
                               [g[2] if g else None for g in got]))
                for c, g in zip(codes, got):
                    pv = paper_h.get((m, target, c, "Aggregate", LABELS_45[iv]))
                    paper_val = (pv[0] if target == "h1" else pv[1]) if pv else ""
                    data.append({"model": m, "steer_towards": target, "dataset": c, "intervention": LABELS_45[iv],
                                 "value": value(g), "ci_low": g[1] if g else None, "ci_high": g[2] if g else None,
                                 "paper": paper_val or None})
                    disp.append({"Model": m or DASH, "Steer towards": target,
                                 "Dataset": c, "Intervention": LABELS_45[iv], "Intended accuracy (ours)": pm(g),
                                 "Paper (Aggregate row of Table 4/5)": printed(paper_val)})
            ax = axes[row][col]
            _bars(ax, codes, series)
            ax.set_title(f"{m or DASH}: steer towards {target}", fontsize=9)
            ax.set_ylabel(f"{target}-accuracy (%)")
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    notes = ["Intended accuracy: h1-accuracy when steering towards h1, h2-accuracy towards h2, mean over the "
             "dataset's available pairs."] + common_notes(context, splits)
    cols = ["model", "steer_towards", "dataset", "intervention", "value", "ci_low", "ci_high", "paper"]
    table = Table("Figure 3: interventions per dataset", pd.DataFrame(disp), tidy(data, cols), tuple(notes))
    return Figure(fig, tidy(data, cols), table)
