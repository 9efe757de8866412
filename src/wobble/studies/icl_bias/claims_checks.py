"""The icl_bias claims' checks (:mod:`.claims` declares which claim reads which).

* **Gates**, read in every cell (model x pair x condition) a claim's statistic reads: a constant classifier, labels
  mapped, :data:`~.claims.MIN_DRAWS` demonstration draws, a ceiling on the baseline arms of a change statistic;
  for "most interventions help" the same on every change the count classifies (:data:`COUNT_GATES`).
* **Preconditions**, read on the model's cells of the claim's pairs in the whole run (:func:`bind`): "the model can
  use h1" (disambig→h1) and "the sentiment prior" (the baseline).
* **A precondition's own arm** (:class:`ArmConstant`): a precondition that reads a constant classifier reads
  nothing (one answer on the balanced test set scores 50 / 50 whatever the model can do). Its cells are then
  unmeasured, not failed: the precondition is judged on its other cells, and a gate of unknown bias fails in the
  claim's cells of that model and pair, so the row is gated, never "not applicable" for a precondition no one
  could read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import pandas as pd

from wobble.report.engine import ClaimSpec
from wobble.report.gates import Gate, Precondition, mapped
from wobble.studies.icl_bias import claims_measure as M

#: The paper averages three prompt sets (§4.1); fewer leave the variance between demonstration draws unmeasured.
MIN_DRAWS = 3


def constant(bias) -> Gate:
    """Degenerate: the cell's most frequent answer covers at most :data:`~.claims_measure.CONSTANT_SHARE`."""
    return Gate("constant classifier", "answer", "mode at most", M.CONSTANT_SHARE, bias)


@dataclass(frozen=True)
class Draws(Gate):
    """At least ``threshold`` demonstration draws (prompt sets) in a cell: the fewest of ``column`` (a cell's
    distinct prompt sets, or for a change the fewest of the cells behind it)."""

    def figure(self, cell: pd.DataFrame) -> float:
        col = cell[self.column].dropna()
        return float(col.min()) if len(col) else math.nan

    def describe(self) -> str:
        return (f"{self.name}: at least {self.threshold:g} demonstration draws (prompt sets) per cell (failure "
                f"biases {self.bias})")


DRAWS = Draws("demonstration draws", "draws", "share at least", MIN_DRAWS, "unknown")


class _NotRead(float):
    """The figure of a gate in a cell it does not read (a non-baseline arm of a ceiling): prints as "–"."""

    def __new__(cls):
        return super().__new__(cls, math.nan)

    def __format__(self, spec: str) -> str:
        return "–"


@dataclass(frozen=True)
class BaselineCeiling(Gate):
    """The ceiling of a change statistic, read on its baseline arms only (of ``pairs``, all if empty): the
    baseline's accuracy of ``measures`` (the intended ones; the highest of them) below ``threshold``. Other arms
    print "–" and pass: an intervention arm at the ceiling is a change that worked."""

    pairs: tuple[str, ...] = ()
    measures: tuple[str, ...] = M.TARGETS
    arm: str = ""

    def figure(self, cell: pd.DataFrame) -> float:
        if not len(cell) or (cell["condition"] != "baseline").any() or \
                (self.pairs and cell["pair"].iloc[0] not in self.pairs):
            return _NotRead()
        return float(max(cell[m].mean() for m in self.measures))

    def passes(self, figure: float) -> bool:
        return isinstance(figure, _NotRead) or (figure == figure and figure < self.threshold)

    def describe(self) -> str:
        what = "/".join(self.measures)
        return (f"{self.name}: baseline {what}-accuracy below {self.threshold:.0%} on every baseline arm"
                f"{' of ' + self.arm if self.arm else ''} (failure biases {self.bias})")


@dataclass(frozen=True)
class NoneBehind(Gate):
    """A gate of "most interventions help", read on each change it classifies: ``column`` is the share of the
    cells behind the change (``of``: its arms on each of the run's pairs, or its baseline arms) that fail a cell
    check, and none may."""

    what: str = ""
    of: str = "cells"

    def describe(self) -> str:
        return (f"{self.name}: no {self.what} behind any change the count classifies, decided or not (the figure: "
                f"the share of its {self.of} that are; failure biases {self.bias})")


@dataclass(frozen=True)
class ArmConstant(Gate):
    """The constant check on the arm (``condition``) a precondition reads, read in each cell of the claim for that
    cell's model and pair: the arm's most frequent answer covers at most ``threshold`` of its answers. A constant
    arm leaves the precondition unmeasured there (failure biases unknown). ``shares`` (:func:`bind`): the run's
    ``(model, pair, mode share, what it predicts)`` per arm; unbound, or where the run has no such arm (the
    precondition says it cannot be checked), it prints "–" and passes."""

    precondition: str = ""
    condition: str = ""
    shares: tuple[tuple[str, str, float, str], ...] = ()

    def arm(self, model: str, pair: str) -> tuple[float, str] | None:
        return next(((s, t) for m, p, s, t in self.shares if (m, p) == (model, pair)), None)

    def figure(self, cell: pd.DataFrame) -> float:
        got = self.arm(cell["model"].iloc[0], cell["pair"].iloc[0]) if len(cell) else None
        return _NotRead() if got is None else got[0]

    def passes(self, figure: float) -> bool:
        return isinstance(figure, _NotRead) or figure <= self.threshold

    def describe(self) -> str:
        return (f"{self.name}: the arm the '{self.precondition}' precondition reads ({arrow(self.condition)} of the "
                f"cell's model and pair) answers one label on at most {self.threshold:.0%} of its answers; a constant "
                f"arm scores 50 / 50 whatever the model can do, so the precondition is unmeasured there (failure "
                f"biases {self.bias})")


def arrow(condition: str) -> str:
    """``disambig-h1`` -> ``disambig→h1``."""
    return condition.replace("-", "→")


def arm_constant(precondition: str, condition: str) -> ArmConstant:
    return ArmConstant(f"{precondition} arm constant", "answer", "mode at most", M.CONSTANT_SHARE, "unknown",
                       precondition=precondition, condition=condition)


def predicts(cell: pd.DataFrame) -> tuple[float, str]:
    """A cell's mode share and what it says: ``"predicts '1' on 64/64 items"`` (answers, where an item has
    several)."""
    counts = cell["answer"].value_counts()
    what = "items" if cell[M.UNIT].is_unique else "answers"
    return float(counts.iloc[0] / counts.sum()), f"predicts '{counts.index[0]}' on {counts.iloc[0]}/{counts.sum()} {what}"


CEILING = BaselineCeiling("ceiling", "h1", "mean below", M.CEILING, "unknown")
NULL_WARD = (constant("toward the null"), mapped(0.5), DRAWS)
EITHER_WAY = (constant("unknown"), mapped(0.5), DRAWS)
CHANGE = (*EITHER_WAY, CEILING)
NON_SEMANTIC = (*EITHER_WAY,
                BaselineCeiling("ceiling (genre/domain)", "h2", "mean below", M.CEILING, "against the claim",
                                pairs=M.SEMANTIC, measures=("h2",), arm="a genre / domain pair"),
                BaselineCeiling("ceiling (shallow)", "h2", "mean below", M.CEILING, "toward the claim",
                                pairs=M.SHALLOW, measures=("h2",), arm="a shallow-feature pair"))
COUNT_GATES = (
    NoneBehind("constant classifier", "constant", "share at most", 0.0, "unknown",
               what=f"constant classifier (one answer on more than {M.CONSTANT_SHARE:.0%} of a cell's answers)"),
    NoneBehind("ceiling", "at_ceiling", "share at most", 0.0, "against the claim",
               what=f"baseline arm at the ceiling (intended accuracy {M.CEILING:.0%} or more)", of="baseline arms"),
    DRAWS)
H1_ARM = arm_constant("can use h1", "disambig-h1")
PRIOR_ARM = arm_constant("sentiment prior", "baseline")


# ------------------------------------------------------------------------------------------ preconditions

#: A precondition's test of the model's cells: ``fn(run frame, claim table) -> (holds, figure)``; the run frame
#: is where it reads (:func:`bind`: the whole run, so the cells it alone reads are not in the claim's table and
#: not gate arms), the claim table says which models and pairs.
PreTest = Callable[[pd.DataFrame, pd.DataFrame], tuple[bool, str]]


def item_binomial(frame: pd.DataFrame, model: str, pair: str, condition: str, measure: str) -> tuple[int, int, float]:
    """(k, n, p): of a cell's n test items, k answered by ``measure`` on more than half their prompt sets (an
    item, not an answer, is the unit: its draws are not independent trials), and the one-sided exact binomial
    p-value against 50 %."""
    from wobble.stats import binomial_p_above

    c = frame[(frame["model"] == model) & (frame["pair"] == pair) & (frame["condition"] == condition)]
    share = c.groupby(M.UNIT, sort=False)[measure].mean()
    k, n = int((share > 0.5).sum()), int(len(share))
    return k, n, binomial_p_above(k, n, 0.5)


def _binomial_text(pair: str, k: int, n: int, p: float) -> str:
    return f"{pair} {k}/{n} items, p = {p:.3g}" + ("" if p < 0.05 else " ✗")


def _cell(run: pd.DataFrame, model: str, pair: str, condition: str) -> pd.DataFrame:
    return run[(run["model"] == model) & (run["pair"] == pair) & (run["condition"] == condition)]


def _calibrated(cell: pd.DataFrame) -> str:
    return ", ".join(sorted(set(cell["calibration"]))) if "calibration" in cell else "the stored"


def _above_half(condition: str, head: str, needs_all: bool) -> PreTest:
    """Per model and pair of the claim's table: the ``condition`` cell's h1-accuracy above 50 % over items
    (one-sided exact binomial, p < 0.05); a constant cell is unmeasured (:func:`predicts`) and left out of the
    verdict. ``needs_all``: a cell without answers fails the whole test at once (it cannot be checked)."""
    def test(run: pd.DataFrame, table: pd.DataFrame) -> tuple[bool, str]:
        figs, ok = [], True
        several = table["model"].nunique() > 1
        for m in dict.fromkeys(table["model"]):
            for pair in dict.fromkeys(table["pair"]):
                k, n, p = item_binomial(run, m, pair, condition, "h1")
                if not n and needs_all:
                    return False, f"{m} {pair}: no {condition} answers (cannot be checked)"
                label = f"{m} {pair}" if several else pair
                cell = _cell(run, m, pair, condition)
                share, what = predicts(cell) if n else (0.0, "")
                if share > M.CONSTANT_SHARE:
                    figs.append(f"{label} unmeasured ({arrow(condition)} {what} after {_calibrated(cell)} "
                                "calibration: a constant classifier)")
                    continue
                ok &= bool(n) and p < 0.05
                figs.append(_binomial_text(label, k, n, p))
        return ok, head + "; ".join(figs)
    return test


TESTS: dict[str, PreTest] = {
    "can use h1": _above_half("disambig-h1", "disambig→h1 h1-accuracy: ", True),
    "sentiment prior": _above_half("baseline", "baseline h1-accuracy, one-sided exact binomial over items against "
                                   "50%: ", False),
}
#: Each precondition's arm and its constant check (:class:`ArmConstant`).
ARMS: dict[str, ArmConstant] = {"can use h1": H1_ARM, "sentiment prior": PRIOR_ARM}


def _pre(name: str, text: str, bias) -> Precondition:
    test = TESTS[name]
    return Precondition(name, text, bias, lambda table: test(table, table))


def can_use_h1(bias) -> Precondition:
    return _pre("can use h1", "with disambiguating examples towards h1, the model answers by h1 on more than half "
                "the items of each of the claim's pairs (an item by the majority of its prompt sets; one-sided exact "
                "binomial over items, p < 0.05 per pair): it can use the label at all; a pair whose disambig→h1 arm "
                "is a constant classifier is unmeasured, not failed", bias)


PRIOR = _pre("sentiment prior", "baseline h1-accuracy above 50% on each of the claim's pairs (an item by the "
             "majority of its prompt sets; one-sided exact binomial over items, p < 0.05): the prior the claim says "
             "resists; a pair whose baseline is a constant classifier is unmeasured, not failed", "against the claim")


def arm_shares(run: pd.DataFrame, condition: str) -> tuple[tuple[str, str, float, str], ...]:
    """``(model, pair, mode share, what it predicts)`` of every ``condition`` cell of the run."""
    cells = run[run["condition"] == condition]
    return tuple((m, p, *predicts(g)) for (m, p), g in cells.groupby(["model", "pair"], sort=False))


def bind(claims: Sequence[ClaimSpec], run: pd.DataFrame) -> tuple[ClaimSpec, ...]:
    """The claims with their preconditions, and the constant checks of the preconditions' arms, reading the whole
    run ``run`` (the model's and pairs' cells the claim's table names), not only the cells of the claim's table."""
    def bound(p: Precondition) -> Precondition:
        test = TESTS[p.name]
        return replace(p, check=lambda table: test(run, table))

    shares = {c: arm_shares(run, c) for c in dict.fromkeys(a.condition for a in ARMS.values())} if len(run) else {}

    def gate(g: Gate) -> Gate:
        return replace(g, shares=shares.get(g.condition, ())) if isinstance(g, ArmConstant) else g

    return tuple(replace(c, preconditions=tuple(bound(p) for p in c.preconditions),
                         gates=tuple(gate(g) for g in c.gates)) for c in claims)


def unmeasured(claim: ClaimSpec, frame: pd.DataFrame) -> dict[str, tuple[str, int, int]]:
    """Per precondition of ``claim`` with a constant arm among the (model, pair) cells of ``frame`` (a row's
    table): what the arms predict, where ("disambig→h1 predicts '1' on 64/64 items in gemma-270m
    sa_sentiment_punctuation, ..."), how many are constant and how many (model, pair) cells it reads there."""
    arms = [g for g in claim.gates if isinstance(g, ArmConstant)]
    keys = list(dict.fromkeys(zip(frame["model"], frame["pair"]))) if arms and len(frame) else []
    out = {}
    for g in arms:
        bad: dict[str, list[str]] = {}
        for m, p in keys:
            if (got := g.arm(m, p)) is not None and not g.passes(got[0]):
                bad.setdefault(got[1], []).append(f"{m} {p}")
        if bad:
            text = "; ".join(f"{arrow(g.condition)} {what} in {', '.join(where)}" for what, where in bad.items())
            out[g.precondition] = (text, sum(map(len, bad.values())), len(keys))
    return out
