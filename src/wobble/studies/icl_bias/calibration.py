"""wobble's calibration sensitivity (not in the paper): the answers under three calibrations, recomputed from the
stored label-word probabilities without running a model, and what the content-free inputs themselves say.

* **content-free** (the paper's, §2.2 following Zhao et al. 2021; the stored answers where ``calibrated`` is
  true): the label with the higher ``p / p_cf``, ``p_cf`` the label-word probabilities the prompt set's prefix
  gives the content-free inputs "[MASK]", "N/A" and "". With two labels this answers '1' exactly when an item's
  P('1') exceeds ``p_cf('1')``: within one prompt set, ``p_cf('1')`` lies in [the largest P('1') of the items
  answered '0', the smallest P('1') of the items answered '1'), and where the content-free inputs give '1' less
  probability than every item of the set, every item of the set answers '1'. Stored answers with ``calibrated``
  false (``icl_bias.calibrate`` off, or no content-free prompt with finite scores) are uncalibrated and labelled
  so (:func:`stored_method`), never as the paper's method.
* **none**: the label with the higher probability.
* **batch mean**: ``p_cf`` replaced by the mean over the batch's real test items (same condition and prompt set):
  '1' when an item's P('1') exceeds the batch's mean. It thresholds each batch at its own mean, so it is nearly
  never constant by construction: a cell that escapes being constant under it is no evidence of a feature used.
* **the content-free inputs** (:func:`content_free_table`): each input's ``p_cf('1')`` per prompt set, from the
  stored ``next_token_logprobs`` of the predictions (mass on the two label words), beside the items' P('1') of the
  same set, for the "0"/"1" label words and the verbalizers' words alike: does an input give '1' less probability
  than every real item (it is then not neutral for these label words)?

Both alternatives were defined after the constant cells of earlier runs had been seen: the ledger shows their
verdicts beside its rows and counts none of them. Generated answers (explanations) carry no probabilities and are
the same under every calibration.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.spec import Table
from wobble.studies.icl_bias.claims_measure import CONSTANT_SHARE
from wobble.studies.icl_bias.prompts import CONTENT_FREE

METHODS = ("content-free", "none", "batch mean")


def _p1(r: Mapping) -> float | None:
    probs = r.get("probs")
    return None if not probs else float(probs[1]) / float(sum(probs))


def stored_method(records: Sequence[Mapping]) -> str:
    """How the stored label-word answers were calibrated: "content-free" (every one calibrated), "none" (none),
    "mixed", or "" (no label-word answer)."""
    flags = {bool(r.get("calibrated")) for r in records if _p1(r) is not None}
    return "" if not flags else "mixed" if len(flags) == 2 else "content-free" if flags == {True} else "none"


def recalibrate(records: Sequence[Mapping], method: str) -> list[dict]:
    """``records`` with ``pred`` as ``method`` calibrates it (:data:`METHODS`; ties to label 0 as numpy's
    argmax) and ``calibration`` saying how each answer was calibrated; records without probabilities keep their
    answer ("generated"). "content-free" keeps the stored answers: an uncalibrated one says "none"."""
    if method not in METHODS:
        raise ValueError(f"calibration must be one of {METHODS}, got {method!r}")
    if method == "content-free":
        return [{**r, "calibration": ("generated" if _p1(r) is None else
                                      "content-free" if r.get("calibrated") else "none")} for r in records]
    mean: dict[tuple, float] = {}
    if method == "batch mean":
        batch = defaultdict(list)
        for r in records:
            if _p1(r) is not None:
                batch[(r["pair"], r["condition"], r["set"])].append(_p1(r))
        mean = {k: float(np.mean(v)) for k, v in batch.items()}
    out = []
    for r in records:
        p1 = _p1(r)
        if p1 is None:
            out.append({**r, "calibration": "generated"})
            continue
        ref = mean.get((r["pair"], r["condition"], r["set"]), 0.5)
        out.append({**r, "pred": int(p1 / ref > (1 - p1) / (1 - ref)) if 0 < ref < 1 else int(p1 > 0.5),
                    "calibration": method})
    return out


def _share(x: Sequence[float]) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def sensitivity(records_by_model: Mapping[str, Sequence[Mapping]]) -> pd.DataFrame:
    """A row per model x pair x condition (prompt sets pooled for the answers): answers, share answering '1',
    h1-accuracy and whether the cell is a constant classifier under each calibration; the items' P('1') (min,
    mean, max); and per prompt set the bracket the stored content-free answers put on ``p_cf('1')``
    (:func:`cf_brackets`), with ``every_item_1``: every calibrated item of every set answered '1'."""
    rows = []
    for model, recs in records_by_model.items():
        by = {m: recalibrate(recs, m) for m in METHODS}
        cells: dict[tuple, list[int]] = defaultdict(list)
        for i, r in enumerate(recs):
            cells[(r["pair"], r["condition"])].append(i)
        for (pair, cond), idx in cells.items():
            row: dict[str, Any] = {"model": model, "pair": pair, "condition": cond, "answers": len(idx)}
            for m in METHODS:
                preds = [by[m][i]["pred"] for i in idx]
                ones = [float(p == 1) for p in preds]
                top = max(ones.count(1.0), ones.count(0.0), sum(p is None for p in preds)) / len(preds)
                row[f"share_1 {m}"] = _share(ones)
                row[f"h1 {m}"] = 100 * _share([float(by[m][i]["pred"] == recs[i]["h1"]) for i in idx])
                row[f"constant {m}"] = top > CONSTANT_SHARE
            p1 = [_p1(recs[i]) for i in idx]
            p1 = [p for p in p1 if p is not None]
            br = cf_brackets([recs[i] for i in idx])
            row.update({"p1_min": min(p1) if p1 else math.nan, "p1_mean": _share(p1),
                        "p1_max": max(p1) if p1 else math.nan, "p_cf1_sets": _brackets_text(br),
                        "every_item_1": bool(br) and all(lo is None and hi is not None for lo, hi in br.values())})
            rows.append(row)
    return pd.DataFrame(rows)


def cf_brackets(recs: Sequence[Mapping]) -> dict[int, tuple[float | None, float | None]]:
    """Per prompt set of the calibrated answers: (the largest P('1') of the items answered '0', the smallest
    P('1') of the items answered '1'); ``p_cf('1')`` lies in [first, second) (None: no such item)."""
    sets: dict[int, list[Mapping]] = defaultdict(list)
    for r in recs:
        if r.get("calibrated") and _p1(r) is not None:
            sets[r["set"]].append(r)
    return {s: (max((_p1(r) for r in rs if r["pred"] == 0), default=None),
                min((_p1(r) for r in rs if r["pred"] == 1), default=None)) for s, rs in sorted(sets.items())}


def _brackets_text(br: Mapping[int, tuple[float | None, float | None]]) -> str:
    def f(x, missing):
        return missing if x is None else f"{x:.3f}"

    return "; ".join(f"set {s}: [{f(lo, '0')}, {f(hi, '1')})" for s, (lo, hi) in br.items())


def summary(frame: pd.DataFrame) -> list[str]:
    """Per calibration: how many cells are constant classifiers and on which side; of the content-free constant
    cells, how many were not constant without calibration and with the batch mean, and in how many every item of
    every prompt set answered '1' (only those are "every item")."""
    if frame.empty:
        return ["No label-word answers in this run."]
    out = []
    for m in METHODS:
        c = frame[frame[f"constant {m}"]]
        out.append(f"{m}: {len(c)} of {len(frame)} cells constant ({int((c[f'share_1 {m}'] > 0.5).sum())} on '1', "
                   f"{int((c[f'share_1 {m}'] < 0.5).sum())} on '0')")
    cf = frame[frame["constant content-free"]]
    every = int(cf["every_item_1"].sum())
    return [f"Constant classifiers — {'; '.join(out)}.",
            f"Of the {len(cf)} cells constant under content-free calibration, {int((~cf['constant none']).sum())} are "
            f"not constant without calibration and {int((~cf['constant batch mean']).sum())} not with the batch "
            f"mean; in {every} every item of every prompt set answered '1' (within each set, the content-free "
            f"inputs give '1' less probability than the set's least '1'-leaning item); the other {len(cf) - every} "
            "are constant on more than 95 % of their answers, not all."]


def _cf_p1(logprobs: Mapping[str, float | None], words: Sequence[str]) -> tuple[float, float] | None:
    """(raw P(word 0), raw P(word 1)) from the stored next-token log-probs; None without both finite."""
    vals = [logprobs.get(w) for w in words]
    if any(v is None or not math.isfinite(float(v)) for v in vals):
        return None
    return math.exp(float(vals[0])), math.exp(float(vals[1]))


def content_free_table(predictions_by_model: Mapping[str, Sequence[Mapping]]) -> pd.DataFrame:
    """A row per model x pair x condition x prompt set of the label-word predictions: the label words, each
    content-free input's ``p_cf('1')`` (its mass on the label words, normalized to the two), the combined
    ``p_cf('1')`` as the scorer forms it (the inputs' raw probabilities averaged, then normalized), and the
    items' P('1') (min, mean) of the same set; ``below <input>``: the input gives '1' less than every item."""
    rows = []
    for model, preds in predictions_by_model.items():
        groups: dict[tuple, list[Mapping]] = defaultdict(list)
        for r in preds:
            if r.get("generate") or r.get("next_token_logprobs") is None:
                continue
            groups[(r["pair"], r["condition"], r["set"])].append(r)
        for (pair, cond, s), rs in groups.items():
            words = list(rs[0]["candidates"])
            row: dict[str, Any] = {"model": model, "pair": pair, "condition": cond, "set": s,
                                   "label_words": "/".join(words), "zero_one": words == ["0", "1"]}
            raw = []
            for i, name in enumerate(CONTENT_FREE):
                got = [_cf_p1(r["next_token_logprobs"], words) for r in rs if r.get("content_free") == i]
                got = [g for g in got if g is not None]
                row[f"p_cf1 {name!r}"] = got[0][1] / sum(got[0]) if got and sum(got[0]) > 0 else math.nan
                raw += got
            mean = np.mean(raw, axis=0) if raw else None
            row["p_cf1 combined"] = float(mean[1] / mean.sum()) if mean is not None and mean.sum() > 0 else math.nan
            items = [_cf_p1(r["next_token_logprobs"], words) for r in rs if r.get("content_free") is None]
            p1 = [b / (a + b) for a, b in (x for x in items if x is not None) if a + b > 0]
            row.update({"items": len(p1), "items_p1_min": min(p1) if p1 else math.nan, "items_p1_mean": _share(p1)})
            for name in (*(repr(n) for n in CONTENT_FREE), "combined"):
                row[f"below {name}"] = bool(p1) and row[f"p_cf1 {name}"] < row["items_p1_min"]
            rows.append(row)
    return pd.DataFrame(rows)


def content_free_summary(frame: pd.DataFrame) -> list[str]:
    """The hypothesis that "N/A" and "" are not neutral with the "0"/"1" label words: per kind of label words,
    per content-free input, in how many prompt sets the input gives '1' less probability than every item, and the
    median of its ``p_cf('1')`` minus the items' mean P('1')."""
    if frame.empty:
        return ["No stored content-free predictions: p_cf('1') per input is not computed here."]
    out = []
    for zero_one, label in ((True, "the '0'/'1' label words"), (False, "the verbalizers' words")):
        f = frame[frame["zero_one"] == zero_one]
        if f.empty:
            out.append(f"With {label}: no prompt set in this run" + ("" if zero_one else
                       " (the hypothesis cannot be compared with other label words here)") + ".")
            continue
        parts = []
        for name in (*(repr(n) for n in CONTENT_FREE), "combined"):
            d = (f[f"p_cf1 {name}"] - f["items_p1_mean"]).dropna()
            med = f"{float(d.median()):+.3f}" if len(d) else "n/a"
            parts.append(f"{name} below every item in {int(f[f'below {name}'].sum())} of {len(f)} sets (median "
                         f"p_cf('1') − items' mean {med})")
        out.append(f"With {label}: " + "; ".join(parts) + ".")
    return ["Content-free inputs, per prompt set (wobble's check, from the stored next-token log-probs): "
            + " ".join(out)]


def read_predictions(paths: Sequence[str]) -> dict[str, list]:
    """Prediction records per model (a path's folder is its model); a path that does not exist is skipped."""
    from pathlib import Path

    from wobble.io import read_jsonl

    by_model: dict[str, list] = defaultdict(list)
    for path in paths:
        if Path(path).is_file():
            by_model[Path(path).parent.name].extend(read_jsonl(path))
    return dict(by_model)


def _inputs_text(cf: pd.DataFrame, model: str, pair: str, cond: str) -> str:
    """Per set: each content-free input's p_cf('1') and the items' least P('1')."""
    if cf.empty:
        return ""
    f = cf[(cf["model"] == model) & (cf["pair"] == pair) & (cf["condition"] == cond)]
    return "; ".join(f"set {r['set']}: " + " / ".join(f"{r[f'p_cf1 {n!r}']:.3f}" for n in CONTENT_FREE)
                     + f" (items ≥ {r['items_p1_min']:.3f})" for r in f.to_dict("records"))


def build_table_calibration(inputs: Mapping[str, Any], context: Mapping[str, Any]) -> Table:
    """wobble's calibration sensitivity table (the module docstring), from the score records and, where given,
    the predictions' content-free log-probs."""
    from pathlib import Path

    from wobble.io import read_jsonl

    by_model: dict[str, list] = defaultdict(list)
    for path in inputs["scores"]:
        by_model[Path(path).parent.name].extend(read_jsonl(path))
    tidy = sensitivity(by_model)
    cf = content_free_table(read_predictions(inputs.get("predictions", [])))
    names = " / ".join(repr(n) for n in CONTENT_FREE)
    disp = pd.DataFrame([{
        "model": r["model"], "pair": r["pair"], "condition": r["condition"], "n": r["answers"],
        **{f"'1' / h1 {m}": f"{r[f'share_1 {m}']:.2f} / {r[f'h1 {m}']:.1f}" + (" C" if r[f"constant {m}"] else "")
           for m in METHODS},
        "items' P('1') min–mean–max": f"{r['p1_min']:.3f}–{r['p1_mean']:.3f}–{r['p1_max']:.3f}",
        "p_cf('1') in, per set": r["p_cf1_sets"],
        f"p_cf('1') of {names}, per set": _inputs_text(cf, r["model"], r["pair"], r["condition"])}
        for r in tidy.to_dict("records")])
    notes = ("wobble's sensitivity analysis, not the paper's: the paper calibrates by content-free inputs (§2.2, "
             "Zhao et al. 2021); the claims ledger's rows use the stored answers (content-free calibrated where "
             "'calibrated' is true) and say whether their verdicts survive the others. Both alternatives were "
             "defined after the constant cells had been seen; the batch mean thresholds each batch at its own mean, "
             "so it is nearly never constant by construction.",
             "Per cell: the share of answers '1' and the h1-accuracy (%) under each calibration; C: a constant "
             f"classifier (one answer on more than {CONSTANT_SHARE:.0%} of the answers: 50 / 50 on the balanced set). "
             "p_cf('1') in [largest P('1') answered '0', smallest P('1') answered '1') per prompt set.",
             *summary(tidy), *content_free_summary(cf))
    return Table("wobble's calibration sensitivity: content-free (the paper's) vs none vs batch mean", disp, tidy,
                 notes)
