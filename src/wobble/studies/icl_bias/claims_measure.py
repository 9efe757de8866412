"""How the icl_bias claims are measured: the cells they read, the statistics (one function per claim, applied
to our cells and to the paper's alike), the bootstrap over test items within pairs, the constant-classifier
check and the count of positive intervention changes.

A **cell** is one model's answers on one pair under one condition (``"baseline"`` or
``"<intervention>-<target>"``); its h1- / h2-accuracy (%) is the mean over prompt sets of the share of test
items whose answer equals h1 / h2 (:mod:`.metrics`). Ours come from the score records
(:class:`ItemCells`, items aligned across models and conditions by uid), the paper's from Tables 4-5
(:func:`paper_cells`: a row shared by two pairs, e.g. the two genre pairs, gives both the row's value; the
"Aggregate" rows are not cells). A statistic is ``stat(cells, models, pairs, interventions) -> float`` with
``models`` the claim's roles (``{"model": ...}`` for a claim about one model, ``{"base": ..., "tuned": ...}``
for a comparison); missing cells are NaN and drop out of the means (a pair counts where every term of it
has answers).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.errors import DataError
from wobble.seeding import derive_seed
from wobble.stats import bootstrap_indices, percentile_interval
from wobble.studies.icl_bias.pairs import PAIRS

TARGETS = ("h1", "h2")
#: A cell whose most frequent answer covers more than this share of its answers is a constant classifier (on
#: the balanced disambiguating test set it scores about 50 / 50 whatever the model prefers).
CONSTANT_SHARE = 0.95
#: Tables 4-5's intervention names -> ours; Table 2's.
TABLE45_CONDITION = {"Baseline": "baseline", "DisAmbig": "disambig", "Verbalizers": "verbalizer",
                     "Instruction": "instruction", "Explanation": "explanation"}
TABLE2_INTERVENTION = {"Verbalizer": "verbalizer", "Instruction": "instruction", "Explanation": "explanation",
                       "Disambig": "disambig"}
RECORD_FIELDS = ("pair", "condition", "set", "uid", "h1", "h2", "pred")
#: The interventions of the paper (§5), in its order.
INTERVENTIONS = ("verbalizer", "instruction", "explanation", "disambig")
#: The paper's two models: the base model and the instruction-tuned one.
BASE, TUNED = "Davinci", "Text-Davinci-002"

Stat = Callable[["Cells", Mapping[str, str], Sequence[str], Sequence[str]], float]


def nanmean(values: Iterable[float]) -> float:
    """Mean of the finite values; NaN when there is none."""
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return float(np.mean(vals)) if vals else math.nan


class Cells:
    """Accuracy (%) of ``measure`` ("h1" / "h2") in a cell; NaN where it has no answers."""

    def acc(self, model: str, pair: str, condition: str, measure: str) -> float:  # pragma: no cover - interface
        raise NotImplementedError


class DictCells(Cells):
    """Cells from a table ``{(model, pair, condition, measure): accuracy %}`` (the paper's)."""

    def __init__(self, values: Mapping[tuple[str, str, str, str], float]):
        self.values = dict(values)

    def acc(self, model, pair, condition, measure):
        return float(self.values.get((model, pair, condition, measure), math.nan))


class Recorder(Cells):
    """Passes reads through and records which ``(model, pair, condition, measure)`` a statistic read."""

    def __init__(self, cells: Cells):
        self.cells, self.read = cells, []

    def acc(self, model, pair, condition, measure):
        value = self.cells.acc(model, pair, condition, measure)
        if not math.isnan(value):
            self.read.append((model, pair, condition, measure))
        return value


class ItemCells(Cells):
    """Our cells from score records ``{model: [record, ...]}``: per pair an items x prompt-sets matrix of 0/1
    outcomes per (model, condition, measure), the items in one order for every model and condition; ``rows``
    (``{pair: item indices}``) reads a resample of each pair's items (None: all of them)."""

    def __init__(self, records_by_model: Mapping[str, Sequence[Mapping]], rows: Mapping[str, np.ndarray] | None = None,
                 _data: tuple | None = None):
        if _data is None:
            _data = self._build(records_by_model)
        self._data, self.rows, self._memo = _data, rows, {}
        self.uids, self.sets, self.mats, self.answers, self.uncalibrated = _data

    @staticmethod
    def _build(records_by_model):
        uids: dict[str, list[str]] = {}
        sets: dict[str, list] = {}
        by_cell: dict[tuple[str, str, str], list[Mapping]] = defaultdict(list)
        for model, records in records_by_model.items():
            for r in records:
                by_cell[(model, r["pair"], r["condition"])].append(r)
                uids.setdefault(r["pair"], [])
                sets.setdefault(r["pair"], [])
        seen_uid = {p: set() for p in uids}
        seen_set = {p: set() for p in sets}
        for (model, pair, cond), recs in by_cell.items():
            for r in recs:
                if r["uid"] not in seen_uid[pair]:
                    seen_uid[pair].add(r["uid"])
                    uids[pair].append(r["uid"])
                if r["set"] not in seen_set[pair]:
                    seen_set[pair].add(r["set"])
                    sets[pair].append(r["set"])
        sets = {p: sorted(s) for p, s in sets.items()}
        mats: dict[tuple[str, str, str, str], np.ndarray] = {}
        answers: dict[tuple[str, str, str], list] = {}
        uncalibrated: dict[tuple[str, str, str], list[int]] = {}
        for (model, pair, cond), recs in by_cell.items():
            row = {u: i for i, u in enumerate(uids[pair])}
            col = {s: j for j, s in enumerate(sets[pair])}
            grid = {m: np.full((len(row), len(col)), np.nan) for m in TARGETS}
            for r in recs:
                for m in TARGETS:
                    grid[m][row[r["uid"]], col[r["set"]]] = float(r["pred"] is not None and r["pred"] == r[m])
            for m in TARGETS:
                mats[(model, pair, cond, m)] = grid[m]
            answers[(model, pair, cond)] = [r["pred"] for r in recs]
            probs = [r.get("probs") for r in recs]
            if all(p for p in probs):  # the label before calibration (label-word answers only)
                uncalibrated[(model, pair, cond)] = [int(np.argmax(p)) for p in probs]
        return uids, sets, mats, answers, uncalibrated

    @property
    def pairs(self) -> list[str]:
        return [p for p in PAIRS if p in self.uids]

    def resampled(self, rows: Mapping[str, np.ndarray]) -> "ItemCells":
        return ItemCells({}, rows, self._data)

    def n_items(self, pair: str) -> int:
        return len(self.uids.get(pair, []))

    def matrix(self, model, pair, condition, measure) -> np.ndarray | None:
        m = self.mats.get((model, pair, condition, measure))
        if m is None:
            return None
        return m if self.rows is None else m[self.rows[pair]]

    def acc(self, model, pair, condition, measure):
        key = (model, pair, condition, measure)
        if key not in self._memo:
            m = self.matrix(*key)
            if m is None or not np.isfinite(m).any():
                self._memo[key] = math.nan
            else:
                cols = np.isfinite(m).any(axis=0)
                self._memo[key] = 100.0 * float(np.mean(np.nanmean(m[:, cols], axis=0)))
        return self._memo[key]

    def pooled_share(self, keys: Iterable[tuple[str, str, str, str]]) -> tuple[int, int]:
        """``(k, n)``: answers equal to the measure and all answers over the cells ``keys`` (all items)."""
        k = n = 0
        for key in dict.fromkeys(keys):
            m = self.mats.get(key)
            if m is None:
                continue
            k += int(np.nansum(m))
            n += int(np.isfinite(m).sum())
        return k, n

    def constant(self, model: str, pair: str, condition: str) -> tuple[object, int, int] | None:
        """``(label, count, answers)`` when the cell's most frequent answer (None = no label) covers more than
        :data:`CONSTANT_SHARE` of its answers, else None."""
        preds = self.answers.get((model, pair, condition), [])
        if not preds:
            return None
        counts: dict = defaultdict(int)
        for p in preds:
            counts[p] += 1
        label, top = max(counts.items(), key=lambda kv: (kv[1], str(kv[0])))
        return (label, top, len(preds)) if top / len(preds) > CONSTANT_SHARE else None


def check_records(path, records: Sequence[Mapping]) -> None:
    """One clear error for a score record without the fields a claim reads."""
    for i, r in enumerate(records, start=1):
        missing = [f for f in RECORD_FIELDS if f not in r]
        if missing:
            raise DataError(path, f"line {i}", f"an icl_bias score record with fields {list(RECORD_FIELDS)}; "
                            f"missing {missing}")


# ------------------------------------------------------------------------------------------- the paper's cells

def paper_cells(tables: Mapping[str, pd.DataFrame]) -> DictCells:
    """``{(paper model, pair, condition, measure): %}`` from Tables 4-5 (``tables`` = {"table4": df, ...}).

    The baseline is printed in both halves (steer towards h1 / h2) with the same numbers; the h1 half has no
    sentiment rows, so the baseline is read wherever it is printed.
    """
    values: dict[tuple[str, str, str, str], float] = {}
    rows_of: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, p in PAIRS.items():
        rows_of[(p.code, p.row)].append(key)
    need = {"model", "steer_towards", "dataset", "feature", "intervention", "h1_acc", "h2_acc"}
    for name, df in tables.items():
        if not need.issubset(df.columns):
            raise DataError(f"paper/icl_bias/{name}.csv", "header", f"columns {sorted(need)}")
        for i, r in enumerate(df.to_dict(orient="records"), start=2):
            pairs = rows_of.get((r["dataset"], r["feature"]), [])
            if not pairs:
                continue  # the "Aggregate" rows
            iv = TABLE45_CONDITION.get(r["intervention"])
            if iv is None or r["steer_towards"] not in TARGETS:
                raise DataError(f"paper/icl_bias/{name}.csv", f"line {i}", "an intervention of "
                                f"{sorted(TABLE45_CONDITION)} and steer_towards h1 / h2")
            cond = "baseline" if iv == "baseline" else f"{iv}-{r['steer_towards']}"
            for measure in TARGETS:
                text = str(r[f"{measure}_acc"]).strip()
                if not text:
                    continue
                try:
                    value = float(text)
                except ValueError:
                    raise DataError(f"paper/icl_bias/{name}.csv", f"line {i}",
                                    f"a number in {measure}_acc, got {text!r}") from None
                for pair in pairs:
                    values.setdefault((r["model"], pair, cond, measure), value)
    return DictCells(values)


def table2_changes(table2: pd.DataFrame, interventions: Sequence[str]) -> dict[tuple[str, str, str], float]:
    """Table 2's changes vs the baseline, ``{(paper model, intervention, target): points}``, of ``interventions``."""
    need = {"steer_towards", "model", "intervention", "value"}
    if not need.issubset(table2.columns):
        raise DataError("paper/icl_bias/table2.csv", "header", f"columns {sorted(need)}")
    out = {}
    for i, r in enumerate(table2.to_dict(orient="records"), start=2):
        iv = TABLE2_INTERVENTION.get(r["intervention"])
        if iv is None or iv not in interventions:
            continue
        try:
            out[(r["model"], iv, r["steer_towards"])] = float(r["value"])
        except ValueError:
            raise DataError("paper/icl_bias/table2.csv", f"line {i}", f"a number in value, got {r['value']!r}") from None
    return out


# ---------------------------------------------------------------------------------------------- statistics

def change(cells: Cells, model: str, pair: str, intervention: str, target: str) -> float:
    """Intended-feature accuracy with the intervention steering towards ``target`` minus the baseline's."""
    return (cells.acc(model, pair, f"{intervention}-{target}", target)
            - cells.acc(model, pair, "baseline", target))


def target_change(cells: Cells, model: str, intervention: str, target: str, pairs: Sequence[str]) -> float:
    """One Table 2 cell: the change of the intended accuracy, mean over the pairs that have it."""
    return nanmean(change(cells, model, p, intervention, target) for p in pairs)


def effect(cells: Cells, model: str, intervention: str, pairs: Sequence[str]) -> float:
    """An intervention's effect: mean over both targets of :func:`target_change`."""
    return nanmean(target_change(cells, model, intervention, t, pairs) for t in TARGETS)


def baseline_minus_50(measure: str) -> Stat:
    """Mean over pairs of the baseline ``measure``-accuracy, minus 50 (no preference on a balanced set)."""
    def stat(cells, models, pairs, interventions):
        return nanmean(cells.acc(models["model"], p, "baseline", measure) for p in pairs) - 50.0
    return stat


def tuned_minus_base_h1(cells, models, pairs, interventions) -> float:
    """Mean over pairs of (tuned − base) baseline h1-accuracy."""
    return nanmean(cells.acc(models["tuned"], p, "baseline", "h1") - cells.acc(models["base"], p, "baseline", "h1")
                   for p in pairs)


def instruction_gap(cells, models, pairs, interventions) -> float:
    """Instruction effect of the tuned model minus the base model's."""
    return effect(cells, models["tuned"], "instruction", pairs) - effect(cells, models["base"], "instruction", pairs)


def disambig_minus_instruction(cells, models, pairs, interventions) -> float:
    """One model's disambiguation effect minus its instruction effect."""
    return effect(cells, models["model"], "disambig", pairs) - effect(cells, models["model"], "instruction", pairs)


PRIOR_INTERVENTIONS = ("instruction", "disambig")


def prior_resists(cells, models, pairs, interventions) -> float:
    """Steering towards h2 with instructions and disambiguating examples: h2-accuracy − 50, mean over those
    interventions (of the run) and pairs."""
    ivs = [iv for iv in PRIOR_INTERVENTIONS if iv in interventions]
    return nanmean(nanmean(cells.acc(models["model"], p, f"{iv}-h2", "h2") for p in pairs) for iv in ivs) - 50.0


#: The paper's two classes of features in "features not related to semantics, such as sentence lengths or
#: overlap" (§5.2) vs "the genre features, where the label words are semantically similar to the input" (Table 3
#: discussion; the sentiment domain, movie vs restaurant, is the same kind). Other features are in neither class.
SEMANTIC = ("nli_entailment_genre_gov_fic", "nli_entailment_genre_gov_tele", "sa_sentiment_domain")
NOT_SEMANTIC = ("nli_entailment_length", "nli_entailment_overlap", "sa_sentiment_length", "comments_toxicity_length",
                "boolq_answer_length", "boolq_answer_overlap")


def steer_h2(cells: Cells, model: str, pairs: Sequence[str], interventions: Sequence[str]) -> float:
    """Change of h2-accuracy steering towards h2, mean over the interventions of the mean over ``pairs``."""
    return nanmean(target_change(cells, model, iv, "h2", pairs) for iv in interventions)


def non_semantic_gap(cells, models, pairs, interventions) -> float:
    """:func:`steer_h2` on the features not related to semantics minus on the semantic (genre/domain) ones, mean
    over ``models`` (every model of the run: the claim is about all conditions)."""
    ns, se = [p for p in pairs if p in NOT_SEMANTIC], [p for p in pairs if p in SEMANTIC]
    return nanmean(steer_h2(cells, m, ns, interventions) - steer_h2(cells, m, se, interventions)
                   for m in models.values())


@dataclass(frozen=True)
class Spec:
    """How a claim is measured: its statistic, whose behaviour (``who``: a paper model's stand-ins, "both"
    models, "compare" the first stand-in of each, "all" the models together), which pairs, whether it is an
    accuracy share (exact binomial where the bootstrap has no spread), and an extra precondition."""

    stat: Stat
    who: str
    pairs: Callable[[str], bool] = lambda key: True
    share: bool = False
    prior: bool = False


def intervention_changes(cells: Cells, models: Sequence[str], pairs: Sequence[str],
                         interventions: Sequence[str]) -> dict[tuple[str, str, str], float]:
    """Every Table 2 change ``{(model, intervention, target): points}`` (NaN where no pair has it)."""
    return {(m, iv, t): target_change(cells, m, iv, t, pairs) for m in models for iv in interventions for t in TARGETS}


def share_positive(changes: Iterable[float]) -> tuple[int, int]:
    """``(k, n)``: how many of the measured changes are above 0, of how many (NaN changes left out)."""
    vals = [c for c in changes if not math.isnan(c)]
    return sum(1 for c in vals if c > 0), len(vals)


# ---------------------------------------------------------------------------------------------- bootstrap

def bootstrap_cells(cells: ItemCells, pairs: Sequence[str], n: int, seed: int) -> list[ItemCells]:
    """``n`` resamples: each pair's test items drawn with replacement on their own (an item brings its answers
    under every condition, prompt set and model)."""
    idx = {p: bootstrap_indices(cells.n_items(p), n, derive_seed(seed, p)) for p in pairs}
    return [cells.resampled({p: idx[p][b] for p in pairs}) for b in range(n)]


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Percentile 95 % interval of bootstrap replicates."""
    return percentile_interval(np.asarray(values, dtype=float))


def constant_cells(cells: ItemCells, read: Iterable[tuple[str, str, str, str]]) -> list[str]:
    """The constant classifiers among the cells a statistic read, as text ("m disambig-h1 on pair: 80/80 answers
    '1'; before calibration 17/80"): where the uncalibrated labels vary, contextual calibration made the cell
    constant (every item's label-word probabilities on the same side of the content-free prompts')."""
    out = []
    for model, pair, cond in dict.fromkeys((m, p, c) for m, p, c, _ in read):
        got = cells.constant(model, pair, cond)
        if got is not None:
            label, top, total = got
            shown = "no label" if label is None else f"'{label}'"
            raw = cells.uncalibrated.get((model, pair, cond))
            before = "" if raw is None or label is None else f" ({raw.count(label)}/{len(raw)} before calibration)"
            out.append(f"{model} {cond} on {pair}: {top}/{total} answers {shown}{before}")
    return out


def constant_note(constant: Sequence[str], n_cells: int, shown: int = 6) -> str:
    """The precondition's note: how many of the cells read are constant, the first ``shown`` of them."""
    if not constant:
        return f"none of the {n_cells} cells read is constant"
    more = f"; and {len(constant) - shown} more" if len(constant) > shown else ""
    return f"constant classifier in {len(constant)} of {n_cells} cells: " + "; ".join(constant[:shown]) + more
