"""What the two "close" claims read beyond the other instructions claims (:mod:`.claims` declares them) — the
robustness with examples (§3.1, in-04) and the paraphrases keeping the performance (§3.2, in-07): a two-sided
statistic and a floor read per task; and the count of tasks at 0 that another floor prints.

* **Two-sided** (:func:`within`): "the system is pretty robust among all perturbations" (§3.1) and "can generally
  keep the performance" (§3.2) say the mean drop is small either way, so a perturbation or a paraphrase that
  RAISES the scores is no more robustness than one that lowers them. The statistic is |mean drop|, the larger of
  the mean drop and its negative, as the engine's :class:`~wobble.report.intervals.Extreme` (max) over the two
  parts with the null at 5 predicted below. Its interval takes each part's at 97.5 % (Bonferroni over the two;
  Student's t over tasks below 30 tasks, the percentile bootstrap above) and the larger of their bounds, so the
  row is **reproduced** only when the mean drop's 97.5 % interval lies inside (−5, 5) — an intersection–union
  equivalence test, each side at 1.25 % (conservative: a TOST at 5 % would read a 90 % interval) — and
  **contradicted** only when that interval lies entirely beyond −5 or beyond +5 (at 2.5 % overall). The engine
  has no TOST of its own; this is the one it offers through its one rule (an interval against one null, on one
  side). The paper's effect is the same statistic over its printed means (:mod:`.claims_paper`).
* **The floor per task** (:func:`per_task_floors`): a cell's mean over tasks can sit well above the floor while
  most of its tasks score 0 (an exact-match task run on one instance is 0 or 100); a task at 0 can only "drop"
  by zero or less, so a cell whose tasks are at 0 on more than half of them fails the floor, as does a cell whose
  mean is at most :data:`~.claims_measure.FLOOR`; the failure biases "close" toward the claim. Both close claims
  read it so, and so does "random instruction + examples beats the correct instruction alone" on its subtracted
  arm (a task at 0 there can only add zero or more to the difference).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

import pandas as pd

from wobble.report.engine import ClaimSpec
from wobble.report.gates import Precondition
from wobble.report.intervals import Extreme
from wobble.studies.instructions.claims_measure import FLOOR, Arm, Linear, cell_values

#: More than this share of a cell's tasks at 0 and the cell is at the floor (:func:`per_task_floors`).
MAX_AT_ZERO = 0.5


def within(weights: Sequence[tuple[str, float]], name: str, what: str, holds: str, close: float) -> Extreme:
    """|drop|: the larger of the drop (a :class:`~.claims_measure.Linear` of ``weights``, described as ``name``
    ``what``) and its negative, each part's interval at 97.5 % (module docstring); ``holds``: what the claim calls
    a drop within ±``close``."""
    drop = Linear(tuple(weights), f"{name} {what}")
    minus = Linear(tuple((c, -w) for c, w in drop.weights), f"−({drop.description})")
    return Extreme((drop, minus), "max", (
        f"|{name}| {what} (the larger of the {name} and its negative, each part's interval at 97.5 %, Bonferroni): "
        f"{holds} when the {name} lies within ±{close:g}, i.e. its interval inside (−{close:g}, {close:g}); "
        f"contradicted when it lies beyond −{close:g} or beyond {close:g}"))


def tasks_at_zero(frame: pd.DataFrame, cells: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Per cell: (tasks whose value there is 0, tasks with a value there); a task's value is its mean over
    versions, instances and seeds (:func:`~.claims_measure.cell_values`)."""
    values = cell_values(frame, "task", cells)
    return {c: (int((values[c].dropna() == 0).sum()), int(values[c].notna().sum())) for c in cells}


def task_floor(cells: Sequence[str], max_share: float | None = MAX_AT_ZERO
               ) -> Callable[[pd.DataFrame], tuple[bool, str]]:
    """A floor check: each cell's mean over tasks above :data:`~.claims_measure.FLOOR` and, unless
    ``max_share`` is None (the mean alone decides; the count is shown), at most ``max_share`` of its tasks at 0."""
    head = f"mean over tasks above {FLOOR:g}" + ("" if max_share is None else
                                                  f" and at most {max_share:.0%} of the tasks at 0")

    def check(frame: pd.DataFrame) -> tuple[bool, str]:
        values, zeros = cell_values(frame, "task", cells), tasks_at_zero(frame, cells)
        parts, ok = [], True
        for c in cells:
            v = values[c].dropna()
            mean = float(v.mean()) if len(v) else math.nan
            zero, n = zeros[c]
            good = mean == mean and mean > FLOOR and (max_share is None or zero <= max_share * n)
            ok &= good
            parts.append(f"{c} {mean:.1f}, {zero}/{n} tasks at 0" + ("" if good else " ✗"))
        return ok, f"{head}: " + ", ".join(parts)

    return check


def per_task_floors(checks: Sequence[Precondition], arms: Sequence[Arm]) -> tuple[Precondition, ...]:
    """``checks`` with each of ``arms``' floor checks read per task (:func:`task_floor`): same name and bias."""
    of = {f"floor in {a.label}": a for a in arms}
    return tuple(replace(p, check=task_floor(a.cells), text=(
        f"the mean over tasks lies above {FLOOR:g} and at most half the tasks score 0 in each cell of {a.label} "
        "(a task at 0 can only 'drop' by zero or less)")) if (a := of.get(p.name)) else p for p in checks)


def with_signed_drop(row: dict, spec: ClaimSpec, frame: pd.DataFrame, who: str = "the perturbations") -> dict:
    """A measured row of the claim ``spec`` (its statistic :func:`within`'s) with the signed mean drop in its note:
    |drop| alone does not say whether ``who`` lower or raise the scores."""
    if row.get("claim") != spec.id or not row.get("measured"):
        return row
    f = frame[(frame["model"] == row["model"]) & frame["cell"].isin(spec.cells)]
    d = spec.statistic.parts[0].point(f, "task")
    if d != d:
        return row
    how = "lower the scores" if d > 0 else "raise the scores" if d < 0 else "leave the scores unchanged"
    says = f"signed mean drop {d:.3g}: {who} {how} on average"
    return {**row, "note": f"{row['note']}; {says}" if row.get("note") else says}
