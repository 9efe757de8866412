"""Figure 4 of the ``first_token`` study (Wang et al. 2024, §4.3 "Temperature"): answer consistency (entropy),
refusal and mismatch as the decoding temperature rises, on the sweep's constraint levels — the plot and the table
of its numbers (see :mod:`.tables` for the inputs and how cells read)."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from wobble.report.cells import with_ci
from wobble.report.spec import Figure, Table
from wobble.studies.first_token.layout import temp_tag
from wobble.studies.first_token.table_parts import (
    constraint_name,
    constraint_order,
    footnotes,
    load_rows,
    metric_index,
    used_classifier,
)


FIG4_METRICS = ("entropy_first_token", "entropy_text", "refusal_rate_text", "mismatch_rate")


def _sweep(inputs: Mapping[str, Any], context: Mapping) -> tuple[list[dict], dict]:
    """The metrics rows of the sweep's constraint levels, and their index by (model, constraint, temp, metric)."""
    sel = [r for r in load_rows(inputs, "metrics") if r["constraint"] in list(context["sweep_constraints"])]
    return sel, metric_index(sel)


def _series_order(context: Mapping, model: str, constraint: str) -> tuple:
    """Configured models first, in config order, then by constraint level."""
    models = context["models"]
    return (models.index(model) if model in models else 99, model, constraint_order(constraint))


def render_figure4_table(inputs: Mapping[str, Any], context: Mapping) -> Table:
    sel, idx = _sweep(inputs, context)
    cells = sorted({(r["model"], r["constraint"], temp_tag(r["temperature"])) for r in sel},
                   key=lambda k: (*_series_order(context, k[0], k[1]), float(k[2])))
    display, tidy = [], []
    for model, c, t in cells:
        g = {m: idx.get((model, c, t, m)) for m in FIG4_METRICS}
        display.append({"Model": model, "Constraint": constraint_name(c), "Temperature": t,
                        "Entropy first token": with_ci(*_vals(g["entropy_first_token"]), percent=False),
                        "Entropy text": with_ci(*_vals(g["entropy_text"]), percent=False),
                        "Refusal % (text)": with_ci(*_vals(g["refusal_rate_text"])),
                        "Mismatch %": with_ci(*_vals(g["mismatch_rate"]))})
        for m, r in g.items():
            if r:
                tidy.append({"model": model, "constraint": c, "temperature": float(t), "metric": m, "value": r["value"],
                             "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
    notes = footnotes(context, classifier=used_classifier(sel, context), intervals=True, extra=[
        "The first-token answer does not depend on the temperature (it is computed once, at the main temperature); "
        "the text answer is sampled at each temperature (seeded per prompt).",
        "Paper: Figure 4 gives no numbers in the text.",
    ])
    return Table("Figure 4 (numbers): temperature vs consistency, refusal and mismatch", pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


def _vals(r: Mapping | None) -> tuple:
    return (None, None, None) if r is None else (r["value"], r["ci_low"], r["ci_high"])


def plot_figure4(inputs: Mapping[str, Any], context: Mapping) -> Figure:
    import matplotlib.pyplot as plt

    sel, idx = _sweep(inputs, context)
    series = sorted({(r["model"], r["constraint"]) for r in sel}, key=lambda k: _series_order(context, *k))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    plotted = []
    panels = ((axes[0], ("entropy_text", "entropy_first_token"), "(a) answer consistency (entropy, nats)", 1.0),
              (axes[1], ("refusal_rate_text",), "(b) refusal rate (text, %)", 100.0),
              (axes[2], ("mismatch_rate",), "(c) mismatch rate (%)", 100.0))
    for i, (model, c) in enumerate(series):
        temps = sorted({temp_tag(r["temperature"]) for r in sel if r["model"] == model and r["constraint"] == c}, key=float)
        xs = [float(t) for t in temps]
        col = colors[i % len(colors)]
        for ax, metrics, _, scale in panels:
            for metric in metrics:
                ys, lo, hi = [], [], []
                for t in temps:
                    r = idx.get((model, c, t, metric))
                    v = r["value"] if r and r["value"] is not None else float("nan")
                    ys.append(scale * v)
                    lo.append(scale * (r["ci_low"] if r and r["ci_low"] is not None else v))
                    hi.append(scale * (r["ci_high"] if r and r["ci_high"] is not None else v))
                    plotted.append({"model": model, "constraint": c, "temperature": float(t), "metric": metric,
                                    "value": scale * v})
                style = "--" if metric == "entropy_first_token" else "-"
                label = f"{model} / {constraint_name(c)}" + (" (first token)" if metric == "entropy_first_token" else "")
                ax.plot(xs, ys, style, marker="o", color=col, label=label)
                ax.fill_between(xs, lo, hi, color=col, alpha=0.15, linewidth=0)
    for ax, _, title, scale in panels:
        ax.set_xlabel("temperature")
        ax.set_title(title, fontsize=10)
        if scale == 100.0:
            ax.set_ylim(0, 100)
    if series:
        axes[0].legend(fontsize=7)
    else:
        for ax, *_ in panels:
            ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle("Figure 4 (ours): effect of the decoding temperature (shaded: 95% bootstrap CI)", fontsize=10)
    fig.tight_layout()
    return Figure(fig, pd.DataFrame(plotted), float_format="%.6f")
