"""Checks a claim declares once and the engine applies to every row of it: gates, read in every cell (arm) the
claim's statistic reads, and preconditions, read on the model's whole table.

A **gate** asks whether a cell's measurement can be trusted: enough answers mapped to an option
(:func:`mapped`), no positional answering (:func:`positional`: the most frequent first-token letter), off the
floor and below the ceiling (:func:`floor`, :func:`ceiling`: on every arm of a comparison, so a floor on one arm
cannot decide the row), few answers cut at the token cap (:func:`truncated`). Each gate prints its figure per
cell, never pooled over cells. A **precondition** asks whether the claim speaks to the model at all (a model at
chance cannot show that a follow-up flips its correct answers). Both declare which way their failure biases the
statistic (:data:`wobble.report.rules.BIASES`), which :func:`wobble.report.rules.resolve` reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import pandas as pd

from wobble.report.rules import BIASES, Bias

Test = Literal["share at least", "share at most", "mode at most", "mean above", "mean below", "distinct at least"]


@dataclass(frozen=True)
class Gate:
    """A per-cell check: ``figure`` of ``column`` in a cell (share of true values, share of the most frequent
    value, or mean) against ``threshold``; ``bias`` is which way a failure pushes the statistic."""

    name: str
    column: str
    test: Test
    threshold: float
    bias: Bias = "unknown"

    def __post_init__(self) -> None:
        if self.bias not in BIASES:
            raise ValueError(f"gate {self.name}: bias must be one of {BIASES}, got {self.bias!r}")
        if self.test not in ("share at least", "share at most", "mode at most", "mean above", "mean below",
                             "distinct at least"):
            raise ValueError(f"gate {self.name}: unknown test {self.test!r}")

    def figure(self, cell: pd.DataFrame) -> float:
        col = cell[self.column].dropna()
        if col.empty:
            return math.nan
        if self.test == "mode at most":
            return float(col.value_counts(normalize=True).iloc[0])
        if self.test == "distinct at least":
            return float(col.nunique())
        return float(col.astype(float).mean())

    def passes(self, figure: float) -> bool:
        if figure != figure:
            return False
        return {"share at least": figure >= self.threshold, "share at most": figure <= self.threshold,
                "mode at most": figure <= self.threshold, "mean above": figure > self.threshold,
                "mean below": figure < self.threshold, "distinct at least": figure >= self.threshold}[self.test]

    def describe(self) -> str:
        return f"{self.name}: {self.column} {self.test} {self.threshold:g} per cell (failure biases {self.bias})"


def mapped(min_share: float = 0.5, column: str = "mapped") -> Gate:
    """Degeneracy: at least ``min_share`` of a cell's answers map to an option (or are extractable)."""
    return Gate("degenerate", column, "share at least", min_share)


def positional(max_share: float = 0.95, column: str = "first_letter") -> Gate:
    """Positional answering: the most frequent value of ``column`` (the first-token letter) takes at most
    ``max_share`` of a cell: a model above it answers the position, not the question."""
    return Gate("positional", column, "mode at most", max_share)


def floor(level: float, column: str = "value", bias: Bias = "toward the null") -> Gate:
    """Off the floor: a cell's mean of ``column`` lies above ``level`` (read on every arm)."""
    return Gate("floor", column, "mean above", level, bias)


def ceiling(level: float, column: str = "value", bias: Bias = "toward the null") -> Gate:
    """Below the ceiling: a cell's mean of ``column`` lies below ``level`` (read on every arm)."""
    return Gate("ceiling", column, "mean below", level, bias)


def enough_units(min_units: int, column: str) -> Gate:
    """Enough units in every cell: at least ``min_units`` distinct values of ``column`` (the claim's unit column;
    an arm of 3 initially correct items cannot carry a rate)."""
    return Gate("thin", column, "distinct at least", min_units)


def truncated(max_share: float = 0.1, column: str = "truncated") -> Gate:
    """Answers cut at the token cap: at most ``max_share`` of a cell's answers stopped at the limit."""
    return Gate("truncated", column, "share at most", max_share)


@dataclass(frozen=True)
class Precondition:
    """What must hold in a model for the claim to speak to it: ``check`` reads the model's table (every cell)
    and returns (holds, the figure it read); ``bias`` is which way a failure pushes the statistic."""

    name: str
    text: str
    bias: Bias
    check: Callable[[pd.DataFrame], tuple[bool, str]]

    def __post_init__(self) -> None:
        if self.bias not in BIASES:
            raise ValueError(f"precondition {self.name}: bias must be one of {BIASES}, got {self.bias!r}")

    def describe(self) -> str:
        return f"{self.name}: {self.text} (failure biases {self.bias})"


@dataclass(frozen=True)
class GateReading:
    gate: Gate
    cell: str
    figure: float

    @property
    def passes(self) -> bool:
        return self.gate.passes(self.figure)


def read_gates(gates: Sequence[Gate], frame: pd.DataFrame, cells: Sequence[str]) -> list[GateReading]:
    """Every gate in every cell (a cell with no rows reads NaN and fails)."""
    return [GateReading(g, c, g.figure(frame[frame["cell"] == c])) for g in gates for c in cells]


def gate_figures(readings: Sequence[GateReading]) -> str:
    """Per cell: ``"High: degenerate 0.98, positional 0.41; Example: degenerate 0.45 ✗"``."""
    cells = list(dict.fromkeys(r.cell for r in readings))
    parts = []
    for c in cells:
        figs = [f"{r.gate.name} {r.figure:.2f}" + ("" if r.passes else " ✗") for r in readings if r.cell == c]
        parts.append(f"{c}: " + ", ".join(figs))
    return "; ".join(parts)


def failed_gates(readings: Sequence[GateReading]) -> list[tuple[str, Bias, str]]:
    """(name with the cells it failed in, bias, "gate") per failed gate."""
    out = []
    for g in dict.fromkeys(r.gate for r in readings):
        bad = [r.cell for r in readings if r.gate == g and not r.passes]
        if bad:
            out.append((f"{g.name} in {', '.join(bad)}", g.bias, "gate"))
    return out
