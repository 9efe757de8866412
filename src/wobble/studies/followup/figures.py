"""The followup figures, ours, each with the table of its numbers beside the paper's:

* Figure 3: Direct Form, accuracy before and after the closed-ended, open-ended and leading question
  (prompt A), one panel per dataset, per model; the paper prints M. on each bar;
* Figure 4: Progressive Form, M. Rate after rounds 1-3 per dataset, per model. The paper's figure shows
  its "Max" prompt set for seven datasets and prompt A for MMLU (paper/README.md); ours shows the same
  set per dataset (prompt A where Max was not run) and names it in its table;
* figure_prompts (the paper's prompt-variant figure, numbered 4 or 5 in its drafts): M. of prompts A, B,
  C per dataset and question type, per model; the paper's values are those of Tables 8 / 10 / 12;
* Figure 5: the share of each error type (§3.3) among the judged error examples per dataset and model;
  the paper's figure prints no numbers, so its table has ours only.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from wobble.report.spec import Figure, Table
from wobble.io import read_jsonl
from wobble.studies.followup.judge import (ERROR_TYPES, UNLABELLED, agreement, one_label_groups, proportions,
                                           read_hand_labels)
from wobble.studies.followup.layout import FOCUS
from wobble.studies.followup.prompts import BENCHMARKS, QUESTION_TYPES
from wobble.studies.followup.table_parts import QTYPE_LABELS, common_notes, comparison_table, pairs, paper, paths
from wobble.studies.followup.tables import main_rows

PAPER_MODELS = ("ChatGPT", "PaLM2-Bison", "Vicuna-13B")


def _pick(df: pd.DataFrame, measure: str, **match) -> float:
    sel = df
    for k, v in match.items():
        sel = sel[sel[k] == v]
    return float(sel.iloc[0][measure]) if len(sel) else np.nan


def _models(context):
    return list(context.get("models", [])) or [None]


def _datasets(context) -> list[str]:
    """The paper names of the run's datasets, in the paper's order."""
    run = set(context.get("datasets", BENCHMARKS))
    return [b.name for k, b in BENCHMARKS.items() if k in run]


def build_figure3(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    df = main_rows(inputs, context, "direct")
    df = df[df["prompt"] == "A"]
    models, datasets = _models(context), _datasets(context)
    fig, axes = plt.subplots(len(models), len(datasets), figsize=(2.2 * len(datasets), 2.6 * len(models)),
                             squeeze=False, sharey=True)
    data = []
    for row, m in zip(axes, models):
        for ax, name in zip(row, datasets):
            sub = df[(df["model"] == m) & (df["dataset"] == name)]
            before = [_pick(sub, "before", question_type=q) for q in QUESTION_TYPES]
            after = [_pick(sub, "after", question_type=q) for q in QUESTION_TYPES]
            x = np.arange(len(QUESTION_TYPES))
            ax.bar(x - 0.2, np.nan_to_num(before), 0.4, label="Before", color="#9ecae1")
            ax.bar(x + 0.2, np.nan_to_num(after), 0.4, label="After", color="#de2d26")
            for xi, b, a in zip(x, before, after):
                if not (np.isnan(b) or np.isnan(a)):
                    ax.text(xi, max(a, b) + 2, f"{a - b:.2f}", ha="center", fontsize=6)
            ax.set_xticks(x, ["C", "O", "L"])
            ax.set_ylim(0, 110)
            ax.set_title(name if m is None else f"{name}\n{m}", fontsize=8)
            data += [{"model": m, "dataset": name, "question_type": q, "before": b, "after": a, "modification": b - a}
                     for q, b, a in zip(QUESTION_TYPES, before, after)]
        row[0].set_ylabel("accuracy (%)")
    axes[0][-1].legend(fontsize=6)
    fig.suptitle("Direct Form, prompt A: accuracy before and after each follow-up question", fontsize=9, y=1.04)
    table = comparison_table("Figure 3: Direct Form, Modification per question type (prompt A) — ours beside the paper",
                             df, paper(inputs, "figure3"), [("dataset", "Dataset"), ("question_type", "Question")],
                             ("before", "modification"), pairs(context, ["ChatGPT"]),
                             common_notes(context))
    return Figure(fig, pd.DataFrame(data), table)


def _figure4_set(dataset: str) -> str:
    return "A" if dataset == "MMLU" else "Max"


def build_figure4(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    df = main_rows(inputs, context, "progressive")
    chosen = []
    for (m, d), sub in df.groupby(["model", "dataset"], sort=False):
        want = _figure4_set(d) if (sub["prompt"] == _figure4_set(d)).any() else "A"
        chosen.append(sub[sub["prompt"] == want])
    df = pd.concat(chosen, ignore_index=True) if chosen else df
    models, datasets = _models(context), _datasets(context)
    fig, axes = plt.subplots(len(models), 1, figsize=(9, 2.8 * len(models)), squeeze=False)
    data = []
    for (ax,), m in zip(axes, models):
        x = np.arange(len(datasets))
        for i, q in enumerate(QUESTION_TYPES):
            vals = [_pick(df[df["model"] == m], "modification_rate_pct", dataset=d, question_type=q) for d in datasets]
            ax.bar(x + (i - 1) * 0.27, np.nan_to_num(vals), 0.27, label=f"Round {i + 1}: {QTYPE_LABELS[q]}")
            data += [{"model": m, "dataset": d, "round": i + 1, "question_type": q, "modification_rate_pct": v}
                     for d, v in zip(datasets, vals)]
        ax.set_xticks(x, datasets, fontsize=7)
        ax.set_ylim(0, 105)
        ax.set_ylabel("M. Rate (%)")
        ax.set_title(f"Progressive Form{'' if m is None else ' — ' + m}", fontsize=8)
    axes[0][0].legend(fontsize=6)
    keys = [("dataset", "Dataset"), ("prompt", "Prompt set"), ("round", "Round"), ("question_type", "Question")]
    theirs = paper(inputs, "figure4")
    theirs["prompt"] = theirs["dataset"].map(_figure4_set)
    note = ("Prompt set: the paper's figure shows its Max set for seven datasets and prompt A for MMLU "
            "(paper/README.md); ours uses the same set per dataset, prompt A where Max was not run.")
    table = comparison_table("Figure 4: Progressive Form, M. Rate per round — ours beside the paper", df, theirs, keys,
                             ("modification_rate_pct",), pairs(context, ["ChatGPT"]), common_notes(context) + [note])
    return Figure(fig, pd.DataFrame(data), table)


def build_figure_prompts(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    df = main_rows(inputs, context, "direct")
    models, datasets = _models(context), _datasets(context)
    fig, axes = plt.subplots(len(models), len(QUESTION_TYPES), figsize=(11, 2.8 * len(models)), squeeze=False,
                             sharey=True)
    data = []
    for row, m in zip(axes, models):
        for ax, q in zip(row, QUESTION_TYPES):
            for i, d in enumerate(datasets):
                vals = [_pick(df[df["model"] == m], "modification", dataset=d, question_type=q, prompt=v)
                        for v in ("A", "B", "C")]
                ax.scatter([i - 0.15, i, i + 0.15], np.nan_to_num(vals), s=18, alpha=0.7)
                data += [{"model": m, "dataset": d, "question_type": q, "prompt": v, "modification": val}
                         for v, val in zip(("A", "B", "C"), vals)]
            ax.set_xticks(range(len(datasets)), datasets, rotation=40, ha="right", fontsize=6)
            ax.set_title(f"{QTYPE_LABELS[q]}{'' if m is None else ' — ' + m}", fontsize=8)
        row[0].set_ylabel("Modification")
    fig.suptitle("Direct Form: M. with the prompts of annotators A, B, C (three points per dataset)", fontsize=9,
                 y=1.04)
    theirs = pd.concat([paper(inputs, s) for s in ("table8", "table10", "table12")], ignore_index=True)
    keys = [("dataset", "Dataset"), ("question_type", "Question"), ("prompt", "Prompt")]
    table = comparison_table("Prompt variants (A/B/C), Direct Form: Modification — ours beside the paper", df, theirs,
                             keys, ("modification",), pairs(context, PAPER_MODELS), common_notes(context))
    return Figure(fig, pd.DataFrame(data), table)


def _agreement_note(judged: list[dict], hand_paths: list[str]) -> str:
    """Figure 5's sentence on the judge against the hand-labelled sample (its agreement, or that none was given)."""
    if not hand_paths:
        return "No hand-labelled sample in this run (followup.judge_hand_labels is null): the judge is unchecked."
    a = agreement(judged, read_hand_labels(hand_paths[0]))
    where = f"{a['n_hand']} hand-labelled error examples ({hand_paths[0]})"
    if not a["n"]:
        return (f"Judge agreement not measured: none of the {where} is among this run's judged examples (a label "
                "counts only for the identical dialogue).")
    kappa = "undefined (one label throughout)" if a["kappa"] is None else f"{a['kappa']:.2f}"
    return (f"Judge agreement with a hand-labelled sample: {a['agree']}/{a['n']} ({a['pct']:.0f}%) of this run's judged "
            f"examples that are among the {where}; Cohen's kappa {kappa}.")


def _prompts(context: Mapping[str, Any]) -> str:
    """The annotators whose dialogues Figure 5's examples come from (layout.judge_runs): "prompts A and B"."""
    v = list(context.get("variants") or ["A"])
    return f"prompt {v[0]}" if len(v) == 1 else f"prompts {', '.join(v[:-1])} and {v[-1]}"


def build_figure5(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    judged = [r for p in paths(inputs, "judged") for r in read_jsonl(p)]
    rows = proportions(judged)
    data = pd.DataFrame(rows, columns=["model", "dataset", "error_type", "count", "n", "share_pct"])
    labels = [*ERROR_TYPES, UNLABELLED]
    names = [BENCHMARKS[d].name for d in FOCUS if d in context.get("datasets", FOCUS)]
    models = _models(context)
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3.2), squeeze=False, sharey=True)
    for ax, d, name in zip(axes[0], [d for d in FOCUS if BENCHMARKS[d].name in names], names):
        bottom = np.zeros(len(models))
        for label in labels:
            vals = np.array([_pick(data[data["model"] == m], "share_pct", dataset=d, error_type=label)
                             for m in models], dtype=float)
            vals = np.nan_to_num(vals)
            ax.bar(range(len(models)), vals, bottom=bottom, label=f"Error#{label}" if label != UNLABELLED else label)
            bottom += vals
        ax.set_xticks(range(len(models)), [str(m) for m in models], fontsize=7)
        ax.set_ylim(0, 100)
        ax.set_title(name, fontsize=8)
    axes[0][0].set_ylabel("share of error examples (%)")
    axes[0][-1].legend(fontsize=6)
    display = pd.DataFrame([{"Model (ours)": r["model"], "Dataset": BENCHMARKS[r["dataset"]].name,
                             "Error type": (f"Error#{r['error_type']} {ERROR_TYPES[r['error_type']][0]}"
                                            if r["error_type"] in ERROR_TYPES else UNLABELLED),
                             "Share (%)": f"{r['share_pct']:.1f}", "Count": str(r["count"]), "Judged": str(r["n"])}
                            for r in rows], columns=["Model (ours)", "Dataset", "Error type", "Share (%)", "Count",
                                                     "Judged"])
    judge = context.get("judge_model")
    note = (f"Judge: {context.get('judge_label', judge)}, greedy, with the paper's definitions of the four types (§3.3) "
            f"and the whole dialogue; up to {context.get('n_judge_examples', 50)} error examples (correct first, wrong "
            "after the follow-up) per model and dataset, seeded; StrategyQA closed-ended, CoinFlip open-ended, "
            f"MultiArith leading, {_prompts(context)}. The paper labelled by hand; its Figure 5 prints no numbers. "
            "'unlabelled' = a judge reply naming no type."
            if judge else "No judge model in this run (followup.judge_model is null): no error analysis.")
    if judge and not rows:
        note += " This run has no error examples (no answer changed from right to wrong), so nothing was judged."
    same = one_label_groups(rows)
    if same:
        note += (" Degenerate: the judge gave one label to every example of " + "; ".join(
            f"{g['model']} on {BENCHMARKS[g['dataset']].name} ({g['n']} × "
            f"{'Error#' + str(g['error_type']) if g['error_type'] in ERROR_TYPES else g['error_type']})"
            for g in same) + ": these shares may show the judge's bias rather than the model's errors.")
    if judge:
        note += " " + _agreement_note(judged, paths(inputs, "hand_labels"))
    table = Table("Figure 5: Error types of the answers changed under the mechanism (ours)", display, data,
                  tuple(common_notes(context) + [note]))
    return Figure(fig, data, table)
