"""The paper's own effect for each followup claim, by the SAME statistic as ours, from its printed tables
(Tables 3, 5, 8, 10, 12, 19), on the cells a row reads: the datasets the model's row keeps (above chance; all of
the run's where the model has no table), the annotators and mitigations run (all of the paper's where the run
has none of them).

Whose cells: ChatGPT's, the paper's headline model, for the per-model claims; for the existence claims the
largest over all three of the paper's models — Table 5's for "can correct some samples", Table 3's for "can
sometimes reduce it" (PaLM2-Bison's +0.548 on StrategyQA, 60.91 % − 6.08 %, is the paper's own evidence) —,
since the paper's evidence for "some" is the model that shows it, whichever models the run's stand in for; the
row names that model (and, over datasets, the dataset). Table 3 runs Vicuna-13B at 1e-4 for "0": its lowest
temperature is its T = 0 arm.

A printed cell gives a rate as two percentages of the dataset (M. and Before; E→R: Error Rate · E→R Rate and
Error Rate). It becomes a table of pseudo-items with our columns: one item per 0.1 % of the dataset
(:data:`SCALE` · Before items of the cell's arm, SCALE · M. of them with ``flip`` 1, rounded: the rates agree
with the printed ones to about 0.1 %), each cell's items its own (the paper ran each cell separately: its
Before differs by question type). The claim's statistic on that table
is the paper's pooled rate, a ratio of sums over equally large datasets. The paper runs no control: its control
arm is items that never change (rate 0), so the paper's effect is the same function with the control at 0.
The wording ranking reads the paper's cells of M. (three models, the run's datasets and annotator pairs) with no
sampling variance (v = 0), through the same :func:`.claims_wording.ranking`; the paper states the ranking pooled
over its eight datasets and three annotators only.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.intervals import Statistic
from wobble.studies.followup.claims_measure import ARM_CLAIMS, Extremum
from wobble.studies.followup.claims_wording import ranking, wording_spread
from wobble.studies.followup.layout import FOCUS, PAPER_MODELS
from wobble.studies.followup.prompts import BENCHMARKS, MITIGATIONS, QUESTION_TYPES

#: The paper's tables the paper's effects are computed from, with the columns read from each.
PAPER_COLUMNS = {3: ("model", "dataset", "temperature_label", "temperature", "modification", "before"),
                 5: ("model", "dataset", "error_rate_pct", "e_to_r_rate_pct"),
                 **{n: ("model", "dataset", "prompt", "question_type", "modification", "before") for n in (8, 10, 12)},
                 19: ("model", "dataset", "prompt", "mitigation", "modification", "modification_rate_pct")}
PAPER_TABLES = tuple(PAPER_COLUMNS)
#: Pseudo-items per percent of a dataset (module docstring); finer makes the engine's unit grouping slow.
SCALE = 10
#: The headline model whose cells the per-model claims read.
HEADLINE = "ChatGPT"
_KEY = {b.name: k for k, b in BENCHMARKS.items()}
_MITIGATION = {m.label.lower(): k for k, m in MITIGATIONS.items()}
Arms = Mapping[str, tuple[np.ndarray, np.ndarray]]
#: claim -> ([(paper model, its pseudo-item table)], the text naming the source)
Frames = dict[str, tuple[list[tuple[str, pd.DataFrame]], str]]


def _num(x) -> np.ndarray:
    return pd.to_numeric(pd.Series(x), errors="coerce").to_numpy(dtype=float)


def _of(t: pd.DataFrame, model: str) -> pd.DataFrame:
    return t[t["model"] == model]


def _restrict(t: pd.DataFrame, column: str, keep) -> pd.DataFrame:
    """Rows whose ``column`` is in ``keep`` (the cells the run measures); all rows when the run has none."""
    sub = t[t[column].isin(list(keep))]
    return sub if len(sub) else t


def _names(datasets: Sequence[str], focus: bool = False) -> list[str]:
    """The paper's names of the run's ``datasets`` (the focus ones only with ``focus``)."""
    return [BENCHMARKS[d].name for d in datasets if not focus or d in FOCUS]


def pseudo_items(arms: Arms) -> pd.DataFrame:
    """The table of pseudo-items of printed cells (module docstring); a cell with an unreadable number ("?")
    is left out."""
    items, cells, flips, start = [], [], [], 0
    for arm, (num, den) in arms.items():
        for k, n in zip(num, den):
            if np.isnan(k) or np.isnan(n):
                continue
            n_items, n_flip = int(round(SCALE * n)), int(round(SCALE * k))
            items.append(np.arange(start, start + n_items))
            flips.append(np.arange(n_items) < n_flip)
            cells.append(np.full(n_items, arm, dtype=object))
            start += n_items
    if not items:
        return pd.DataFrame(columns=["item", "cell", "flip", "model", "dataset"])
    return pd.DataFrame({"item": np.concatenate(items), "cell": np.concatenate(cells),
                         "flip": np.concatenate(flips).astype(float), "model": "paper", "dataset": "paper"})


def direct_arms(t8: pd.DataFrame, datasets: Sequence[str], variants: Sequence[str], per_annotator: bool) -> Arms:
    rows = _restrict(_of(t8, HEADLINE), "dataset", _names(datasets))
    rows = rows[rows["prompt"] == "A"] if not per_annotator else _restrict(rows, "prompt", variants)
    arms = {}
    for v, g in rows.groupby("prompt"):
        arms["challenge:" + v if per_annotator else "challenge"] = (_num(g["modification"]), _num(g["before"]))
    before = _num(rows["before"])
    arms["control"] = (np.zeros_like(before), before)
    return arms


def temperature_arms(t3: pd.DataFrame, datasets: Sequence[str], model: str) -> Arms:
    """One paper model's T = 0 (its lowest temperature) and own-temperature arms per focus dataset."""
    rows = _restrict(_of(t3, model), "dataset", _names(datasets, focus=True))
    arms = {}
    for _, r in rows.iterrows():
        t, label = float(r["temperature"]), str(r["temperature_label"])
        arm = "t0" if t <= 1e-3 else "own" if label.startswith("default") else None
        if arm:
            arms[f"{arm}:{_KEY[r['dataset']]}"] = (_num([r["modification"]]), _num([r["before"]]))
    return arms


def corrects_arms(t5: pd.DataFrame, datasets: Sequence[str], model: str) -> Arms:
    rows = _restrict(_of(t5, model), "dataset", _names(datasets, focus=True))
    wrong = _num(rows["error_rate_pct"])
    return {"challenge": (wrong * _num(rows["e_to_r_rate_pct"]) / 100, wrong), "control": (np.zeros_like(wrong), wrong)}


def mitigation_arms(t19: pd.DataFrame, datasets: Sequence[str], variants: Sequence[str], mitigations: Sequence[str],
                    run_only: bool) -> Arms:
    rows = _restrict(_of(t19, HEADLINE), "dataset", _names(datasets, focus=True))
    rows = _restrict(rows, "prompt", variants)
    key = rows["mitigation"].str.lower().map(_MITIGATION)
    keep = key.notna() & (key.isin(["none", *mitigations]) if run_only else True)
    rows, key = rows[keep], key[keep]
    m, rate = _num(rows["modification"]), _num(rows["modification_rate_pct"])
    with np.errstate(invalid="ignore", divide="ignore"):
        before = np.where(rate > 0, 100 * m / np.where(rate > 0, rate, 1), np.nan)  # M. Rate = M. / before
    arms: dict[str, tuple[list, list]] = {}
    for k, v, num, den in zip(key, rows["prompt"], m, before):
        a = arms.setdefault(f"{k}:{v}", ([], []))
        a[0].append(num)
        a[1].append(den)
    return {a: (np.array(n, dtype=float), np.array(d, dtype=float)) for a, (n, d) in arms.items()}


def wording_effect(tables: Mapping[int, pd.DataFrame], datasets: Sequence[str] = (),
                   variants: Sequence[str] = ()) -> tuple[float, dict[str, float]]:
    """The ranking on the paper's Figure 4 cells (Tables 8/10/12: three models) of the run's ``datasets`` and
    the annotator pairs among ``variants`` (all eight datasets / A, B, C where empty), each pair's difference in
    M. with no sampling variance."""
    t = pd.concat([tables[n] for n in (8, 10, 12)], ignore_index=True)
    t = _restrict(t, "dataset", _names(datasets))
    t = _restrict(t, "prompt", variants)
    cols: dict[str, list] = {q: [] for q in QUESTION_TYPES}
    for (_, _, q), g in t.groupby(["model", "dataset", "question_type"]):
        m = dict(zip(g["prompt"], _num(g["modification"])))
        cols[q] += [(m[u] - m[v], 0.0) for u, v in itertools.combinations(sorted(m), 2) if not np.isnan(m[u] - m[v])]
    spread = {q: wording_spread(c) for q, c in cols.items()}
    return ranking(spread), spread


def largest(statistic: Statistic, direction: int, frames: Sequence[tuple[str, pd.DataFrame]]) -> tuple[float, str]:
    """The statistic on each paper model's table, the one furthest on the predicted side, and who gives it where
    several models are read: the model and, for a statistic over datasets (:class:`Extremum` parts labelled by
    dataset), the dataset ("PaLM2-Bison on StrategyQA"); "" for one model."""
    best, who = math.nan, ""
    for model, f in frames:
        v = statistic.point(f, "item") if len(f) else math.nan
        if math.isnan(v) or (not math.isnan(best) and direction * v <= direction * best):
            continue
        best, who = v, model
        if isinstance(statistic, Extremum):
            parts, labels = statistic.parts(f, "item"), [c.label for c in statistic.parts_of(f)]
            at = labels[int(np.nanargmin(np.abs(np.asarray(parts, dtype=float) - v)))]
            who += f" on {BENCHMARKS[at].name}" if at in BENCHMARKS else ""
    return best, who if len(frames) > 1 else ""


def paper_frames(tables: Mapping[int, pd.DataFrame], sec: Mapping[str, Any],
                 datasets: Sequence[str] | None = None) -> Frames:
    """Claim -> (the paper models' pseudo-item tables, the text naming their source) for every per-model and
    existence claim, on ``datasets`` (the run's where None)."""
    ds = list(sec["datasets"] if datasets is None else datasets)
    variants = sec["variants"]
    control = "; the paper runs no control (0)"
    out: dict[str, tuple[list[tuple[str, Arms]], str]] = {
        "consistency_drops": ([(HEADLINE, direct_arms(tables[8], ds, variants, False))],
                              "Table 8, ChatGPT, prompt A" + control),
        "every_prompt_declines": ([(HEADLINE, direct_arms(tables[8], ds, variants, True))],
                                  "Table 8, ChatGPT, the annotators run" + control),
        "temperature_zero_no_better": ([(m, temperature_arms(tables[3], ds, m)) for m in PAPER_MODELS],
                                       "Table 3, T = 0 vs own, the largest of its 3 models"),
        "mechanism_corrects_some": ([(m, corrects_arms(tables[5], ds, m)) for m in PAPER_MODELS],
                                    "Table 5, the largest of its 3 models; no control (0)")}
    mv = sec.get("mitigation_variants") or variants
    for cid in ("mitigation_effective", "cot_fewshot_beat_emotion", "both_positions_best", "cot_most_efficient"):
        claim = ARM_CLAIMS[cid]
        arms = mitigation_arms(tables[19], ds, mv, sec["mitigations"], run_only=True)
        ok = claim.complete(set(claim.relabel(set(arms)).values()) if claim.relabel else set(arms))
        out[cid] = ([(HEADLINE, arms if ok else mitigation_arms(tables[19], ds, mv, (), run_only=False))],
                    "Table 19, ChatGPT, " + ("the mitigations run" if ok else "every mitigation (the run lacks some)"))
    frames: Frames = {}
    for cid, (per_model, text) in out.items():
        claim = ARM_CLAIMS[cid]
        got = []
        for model, arms in per_model:
            frame = pseudo_items(arms)
            if claim.relabel is not None:
                names = claim.relabel(set(frame["cell"]))
                frame = frame[frame["cell"].isin(list(names))].assign(cell=lambda f: f["cell"].map(names))
            got.append((model, frame))
        frames[cid] = (got, text)
    return frames
