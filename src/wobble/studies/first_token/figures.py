"""Figures 2, 3, 4 and 7 of the ``first_token`` study (Wang et al. 2024, "My Answer is C"), each with the
table of its numbers beside the paper's (see :mod:`.tables` for the inputs and how cells read); Figure 4's plot
and table live in :mod:`.figure_temperature`."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.studies.first_token.figure_temperature import plot_figure4, render_figure4_table
from wobble.studies.first_token.layout import PAPER_MODELS, temp_tag
from wobble.studies.first_token.prompts import CONSTRAINTS, PAPER_OUTPUT_DIRS
from wobble.report.cells import DASH, pct, read_paper, with_ci
from wobble.report.spec import Figure, Table
from wobble.studies.first_token.table_parts import (
    constraint_name,
    constraint_order,
    context_main_temperature,
    footnotes,
    load_rows,
    metric_index,
    paper_float,
    paper_id,
    tick_label,
    used_classifier,
)


# ------------------------------------------------------------------------------------------ figure 2


def paper_mapping_means(rows: Sequence[Mapping]) -> dict[tuple[str, str], dict[str, float]]:
    """(paper model name, constraint key) -> mean over shuffles of the released rates."""
    by: dict[tuple[str, str], list[Mapping]] = defaultdict(list)
    dirs = {v: k for k, v in PAPER_OUTPUT_DIRS.items()}
    for r in rows:
        c = dirs.get(r["constraint"])
        if c:
            by[(r["model"], c)].append(r)
    out = {}
    for key, rs in by.items():
        n = len(rs)
        out[key] = {"mismatch": sum(r["total_mis_rate"] for r in rs) / n, "refusal": sum(r["refuse_rate"] for r in rs) / n,
                    "not_first": sum(r["total_first_token_mismatch"] / r["total"] for r in rs) / n, "shuffles": n}
    return out


def _our_mapping_means(rows: Sequence[Mapping], t: str) -> dict[tuple[str, str], dict[str, float]]:
    by: dict[tuple[str, str], list[Mapping]] = defaultdict(list)
    for r in rows:
        if temp_tag(r["temperature"]) == t:
            by[(r["model"], r["constraint"])].append(r)
    return {k: {"not_first": sum(r["total_first_token_mismatch"] / r["total"] for r in rs) / len(rs),
                "shuffles": len(rs)} for k, rs in by.items()}


def render_figure2_table(inputs: Mapping[str, Any], context: Mapping) -> Table:
    rows = load_rows(inputs, "metrics")
    idx = metric_index(rows)
    t = temp_tag(context_main_temperature(context))
    paper_means = paper_mapping_means(load_rows(inputs, "paper_mapping"))
    ours_map = _our_mapping_means(load_rows(inputs, "mapping"), t)
    display, tidy, used = [], [], set()
    for model, c in _cells(rows, t, context):
        g = {m: idx.get((model, c, t, m)) for m in ("mismatch_rate", "refusal_mismatch_rate", "unmapped_rate",
                                                    "different_option_rate", "refusal_rate_text",
                                                    "refusal_rate_first_token", "letter_mass", "top_letter_share",
                                                    "cut_rate")}
        pid = paper_id(context, model)
        pname = PAPER_MODELS[pid]["mapping"] if pid else None
        p = paper_means.get((pname, c)) if pname else None
        if p:
            used.add((pname, c))
        display.append({
            "Model": model, "Constraint": constraint_name(c),
            "Mismatch % (ours)": _ci(g["mismatch_rate"]), "of which refusal %": _ci(g["refusal_mismatch_rate"]),
            "of which no option %": _ci(g["unmapped_rate"]), "of which another option %": _ci(g["different_option_rate"]),
            "Refusal % text (ours)": _ci(g["refusal_rate_text"]), "Refusal % first token": _ci(g["refusal_rate_first_token"]),
            "Letter mass (first token)": _mass(g["letter_mass"]), "Top first-token letter %": _top(g["top_letter_share"]),
            "Cut at max_new_tokens %": pct(g["cut_rate"]["value"]) if g["cut_rate"] else DASH,
            "Not opening with the letter %": pct(ours_map.get((model, c), {}).get("not_first")),
            "Paper model": pname or DASH, "Mismatch % (paper)": pct(p["mismatch"]) if p else DASH,
            "Refusal % (paper)": pct(p["refusal"]) if p else DASH,
            "Not opening with the letter % (paper)": pct(p["not_first"]) if p else DASH})
        for m, r in g.items():
            if r:
                tidy.append({"source": "ours", "model": model, "constraint": c, "quantity": m, "value": r["value"],
                             "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
    for (pname, c), p in sorted(paper_means.items(), key=lambda kv: (kv[0][0], constraint_order(kv[0][1]))):
        if (pname, c) not in used:
            display.append({"Model": DASH, "Constraint": constraint_name(c), "Mismatch % (ours)": DASH,
                            "of which refusal %": DASH, "of which no option %": DASH, "of which another option %": DASH,
                            "Refusal % text (ours)": DASH, "Refusal % first token": DASH,
                            "Letter mass (first token)": DASH, "Top first-token letter %": DASH,
                            "Cut at max_new_tokens %": DASH,
                            "Not opening with the letter %": DASH, "Paper model": pname,
                            "Mismatch % (paper)": pct(p["mismatch"]), "Refusal % (paper)": pct(p["refusal"]),
                            "Not opening with the letter % (paper)": pct(p["not_first"])})
        for q, key in (("mismatch_rate", "mismatch"), ("refusal_rate_text", "refusal"), ("not_first", "not_first")):
            tidy.append({"source": "paper mapping_result.json", "model": pname, "constraint": c, "quantity": q,
                         "value": p[key], "ci_low": None, "ci_high": None})
    quotes = read_paper(inputs["paper_figure2"]).to_dict("records")
    for q in quotes:
        tidy.append({"source": "paper text", "model": q["model"], "constraint": q["constraint"],
                     "quantity": q["quantity"], "value": paper_float(q["value_pct"], 0.01), "ci_low": None,
                     "ci_high": None})
    stated = "; ".join(f"{q['model']} {q['quantity']} {q['qualifier']} {q['value_pct']}%" for q in quotes)
    notes = footnotes(context, classifier=used_classifier(rows, context), intervals=True, paper_file="figure2.csv", extra=[
        "Mismatch = first-token option differs from the text option, in three parts that add up to it: 'of which "
        "refusal' = the text refuses while the first token does not; 'of which no option' = the text names no single "
        "option; 'of which another option' = the text names a different (non-refusal) option. 'Letter mass' = mean "
        "first-token probability on the shown letters (near 0: the first-token answer is an argmax over letters the "
        "model would rarely start with). 'Top first-token letter' = share of prompts on the most frequent first-token "
        "letter; 100% is flagged DEGENERATE: one letter wins every prompt, so the first-token numbers of that cell "
        "measure the shuffle design, not the model. 'Cut at max_new_tokens' = text answers that ran into the cap "
        "(their option may be missing because the answer was cut). 'Not opening with the "
        "letter' = the generated text does not start with the first-token letter (paper: total_first_token_mismatch).",
        "Paper columns: mean over the 10 shuffles of the released mapping_result.json (prepared dataset "
        "opinionqa_paper_mapping; the paper's own classifier, not human labels).",
        f"Stated in the paper's text (constraint not stated): {stated}.",
    ])
    return Table("Figure 2 (numbers): mismatch rate (refusal part) and refusal rate per model x constraint", pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


def _mass(r: Mapping | None) -> str:
    return with_ci(r["value"], r["ci_low"], r["ci_high"], percent=False) if r else DASH


def _top(r: Mapping | None) -> str:
    if not r or r["value"] is None:
        return DASH
    return pct(r["value"]) + (" DEGENERATE" if r["value"] >= 1.0 else "")


def _ci(r: Mapping | None) -> str:
    return with_ci(r["value"], r["ci_low"], r["ci_high"]) if r else DASH


def _cells(rows: Sequence[Mapping], t: str, context: Mapping, constraints: Sequence[str] | None = None) -> list[tuple]:
    cells = {(r["model"], r["constraint"]) for r in rows if temp_tag(r["temperature"]) == t
             and (constraints is None or r["constraint"] in constraints)}
    return sorted(cells, key=lambda mc: (context["models"].index(mc[0]) if mc[0] in context["models"] else 99,
                                         mc[0], constraint_order(mc[1])))


def _figure_models(rows: Sequence[Mapping], context: Mapping) -> list[str]:
    present = {r["model"] for r in rows}
    return [m for m in context["models"] if m in present] + sorted(present - set(context["models"]))


def plot_figure2(inputs: Mapping[str, Any], context: Mapping) -> Figure:
    import matplotlib.pyplot as plt
    import numpy as np

    rows = load_rows(inputs, "metrics")
    idx = metric_index(rows)
    t = temp_tag(context_main_temperature(context))
    models = _figure_models([r for r in rows if temp_tag(r["temperature"]) == t], context)
    constraints = [c for c in CONSTRAINTS if any(r["constraint"] == c and temp_tag(r["temperature"]) == t for r in rows)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    width = 0.8 / max(1, len(models))
    x = np.arange(len(constraints))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    plotted = []
    for i, m in enumerate(models):
        def val(metric, c):
            r = idx.get((m, c, t, metric))
            return (np.nan, np.nan, np.nan) if r is None or r["value"] is None else \
                (100 * r["value"], 100 * (r["ci_low"] if r["ci_low"] is not None else r["value"]),
                 100 * (r["ci_high"] if r["ci_high"] is not None else r["value"]))
        mis = np.array([val("mismatch_rate", c) for c in constraints]).reshape(-1, 3)
        ref = np.array([val("refusal_mismatch_rate", c) for c in constraints]).reshape(-1, 3)
        rr = np.array([val("refusal_rate_text", c) for c in constraints]).reshape(-1, 3)
        pos = x - 0.4 + width * (i + 0.5)
        col = colors[i % len(colors)]
        axes[0].bar(pos, mis[:, 0] - ref[:, 0], width, bottom=ref[:, 0], color=col, label=m)
        axes[0].bar(pos, ref[:, 0], width, color=col, alpha=0.45, hatch="//", edgecolor="black", linewidth=0.3)
        axes[0].errorbar(pos, mis[:, 0], yerr=_yerr(mis), fmt="none", ecolor="black", capsize=2, linewidth=0.8)
        axes[1].bar(pos, rr[:, 0], width, color=col, label=m)
        axes[1].errorbar(pos, rr[:, 0], yerr=_yerr(rr), fmt="none", ecolor="black", capsize=2, linewidth=0.8)
        for j, c in enumerate(constraints):
            plotted.append({"model": m, "constraint": c, "mismatch_pct": mis[j, 0], "mismatch_lo": mis[j, 1],
                            "mismatch_hi": mis[j, 2], "refusal_part_pct": ref[j, 0], "refusal_rate_pct": rr[j, 0],
                            "refusal_rate_lo": rr[j, 1], "refusal_rate_hi": rr[j, 2]})
    for ax, title in zip(axes, ("(a) mismatch rate (hatched: due to refusal)", "(b) refusal rate (text answer)")):
        ax.set_xticks(x, [tick_label(c) for c in constraints])
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
        ax.set_title(title, fontsize=10)
    if models:
        axes[1].legend(fontsize=8, loc="upper right")
    fig.suptitle(f"Figure 2 (ours; temperature {t}; bars: 95% bootstrap CI)", fontsize=10)
    return Figure(fig, pd.DataFrame(plotted), float_format="%.6f")


def _yerr(a):
    import numpy as np

    lo = np.clip(a[:, 0] - a[:, 1], 0, None)
    hi = np.clip(a[:, 2] - a[:, 0], 0, None)
    return np.nan_to_num(np.vstack([lo, hi]))


# ------------------------------------------------------------------------------------ figures 3 and 7


def _choice_index(rows: Sequence[Mapping]) -> dict[tuple, dict[str, Mapping]]:
    out: dict[tuple, dict[str, Mapping]] = defaultdict(dict)
    for r in rows:
        out[(r["model"], r["constraint"], temp_tag(r["temperature"]), r["answer_by"])][r["letter"]] = r
    return out


def _choice_letters(rows: Sequence[Mapping]) -> list[str]:
    letters = sorted({r["letter"] for r in rows if r["letter"] != "none"})
    return letters + (["none"] if any(r["letter"] == "none" for r in rows) else [])


def _main_choices(inputs: Mapping[str, Any], context: Mapping, constraints: Sequence[str]) -> tuple:
    """All choice rows, the main temperature's tag, its rows for ``constraints`` and their index."""
    rows = load_rows(inputs, "choices")
    t = temp_tag(context_main_temperature(context))
    sel = [r for r in rows if temp_tag(r["temperature"]) == t and r["constraint"] in constraints]
    return rows, t, sel, _choice_index(sel)


def render_choice_table(inputs: Mapping[str, Any], context: Mapping, *, figure: str,
                        constraints: Sequence[str]) -> Table:
    rows, t, sel, idx = _main_choices(inputs, context, constraints)
    letters = _choice_letters(sel) or ["A", "B", "C"]
    display, tidy = [], []
    for model, c in _cells(sel, t, context, constraints):
        for by in ("first_token", "text"):
            d = idx.get((model, c, t, by), {})
            if not d:
                continue
            row = {"Model": model, "Constraint": constraint_name(c), "Answer by": by.replace("_", " ")}
            for lt in letters:
                r = d.get(lt)
                row[lt] = with_ci(r["share"], r["ci_low"], r["ci_high"]) if r else DASH
            row["Prompts"] = str(next(iter(d.values()))["n_prompts"])
            display.append(row)
            for lt, r in sorted(d.items()):
                tidy.append({"source": "ours", "model": model, "constraint": c, "answer_by": by, "letter": lt,
                             "share": r["share"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "count": r["count"]})
    paper = read_paper(inputs[f"paper_{figure}"]).to_dict("records")
    for p in paper:
        row = {"Model": f"{p['model']} (paper)", "Constraint": p["constraint"], "Answer by": "first token"}
        for lt in letters:
            row[lt] = f"{p['qualifier']} {p['value_pct']}".replace("= ", "") if lt == "C" else DASH
        row["Prompts"] = DASH
        display.append(row)
        tidy.append({"source": "paper text", "model": p["model"], "constraint": p["constraint"],
                     "answer_by": "first_token", "letter": "C", "share": paper_float(p["value_pct"], 0.01),
                     "ci_low": None, "ci_high": None, "count": None})
    title = {"figure3": "Figure 3 (numbers): choice distribution, first token vs text, Example template "
                        "(answer 'C' vs 'A/B/C')",
             "figure7": "Figure 7 (numbers): choice distribution, first token vs text: (a) Example 'C', (b) Example "
             "'A/B/C', (c) High constraint"}[figure]
    notes = footnotes(context, classifier=used_classifier(rows, context), intervals=True, paper_file=f"{figure}.csv",
                      extra=["Share (%) of prompts whose answer is each letter; 'none' = the text names no single "
                             "option. Letters are positions: each shuffle puts different options under them.",
                             "Paper: the share of 'C' stated in the text for Llama2-70b-Chat."])
    return Table(title, pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


def plot_choices(inputs: Mapping[str, Any], context: Mapping, *, figure: str,
                 constraints: Sequence[str]) -> Figure:
    import matplotlib.pyplot as plt
    import numpy as np

    _, t, sel, idx = _main_choices(inputs, context, constraints)
    models = _figure_models(sel, context) or ["(no model ran)"]
    letters = _choice_letters(sel) or ["A", "B", "C"]
    fig, axes = plt.subplots(len(models), len(constraints), figsize=(4.6 * len(constraints), 2.8 * len(models)),
                             squeeze=False)
    x = np.arange(len(letters))
    plotted = []
    for i, m in enumerate(models):
        for j, c in enumerate(constraints):
            ax = axes[i][j]
            for k, by in enumerate(("first_token", "text")):
                d = idx.get((m, c, t, by), {})
                vals = np.array([100 * d[lt]["share"] if lt in d and d[lt]["share"] is not None else 0.0 for lt in letters])
                ax.bar(x + (k - 0.5) * 0.4, vals, 0.4, label=by.replace("_", " "))
                for lt, v in zip(letters, vals):
                    if lt in d:
                        plotted.append({"model": m, "constraint": c, "answer_by": by, "letter": lt, "share_pct": v})
            if not any(idx.get((m, c, t, by)) for by in ("first_token", "text")):
                ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks(x, letters)
            ax.set_ylim(0, 100)
            ax.set_ylabel("% of prompts")
            ax.set_title(f"{m} — {constraint_name(c)}", fontsize=9)
    axes[0][0].legend(fontsize=8)
    fig.suptitle({"figure3": "Figure 3 (ours): choices under the Example template, answer 'C' vs 'A/B/C'",
                  "figure7": "Figure 7 (ours): (a) Example 'C', (b) Example 'A/B/C', (c) High constraint"}[figure],
                 fontsize=10)
    fig.tight_layout()
    return Figure(fig, pd.DataFrame(plotted), float_format="%.6f")


# ------------------------------------------------------------------------------ declared build functions
# Each is an OutputSpec's ``build`` (wobble.studies.first_token.spec): named input paths + footnote context
# -> Table, or Figure with the table of its numbers beside the paper's.


def build_figure2(inputs: Mapping[str, Any], context: Mapping) -> Figure:
    return _with_table(plot_figure2(inputs, context), render_figure2_table(inputs, context))


def build_figure3(inputs: Mapping[str, Any], context: Mapping) -> Figure:
    kw = {"figure": "figure3", "constraints": ("example", "example_abc")}
    return _with_table(plot_choices(inputs, context, **kw), render_choice_table(inputs, context, **kw))


def build_figure4(inputs: Mapping[str, Any], context: Mapping) -> Figure:
    return _with_table(plot_figure4(inputs, context), render_figure4_table(inputs, context))


def build_figure7(inputs: Mapping[str, Any], context: Mapping) -> Figure:
    """Figure 7's three panels (appendix): (a) Example template with the single answer "C", (b) with the
    multiple answers "A/B/C", (c) the High constraint."""
    kw = {"figure": "figure7", "constraints": ("example", "example_abc", "high")}
    return _with_table(plot_choices(inputs, context, **kw), render_choice_table(inputs, context, **kw))


def _with_table(figure: Figure, table: Table) -> Figure:
    return Figure(figure.figure, figure.data, table=table, float_format=figure.float_format)
