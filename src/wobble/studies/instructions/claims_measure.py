"""What the instructions claims are measured on (:mod:`wobble.studies.instructions.claims` declares them): the
unit table, the statistics over tasks, and the floor, ceiling and cut-answer checks of every arm.

* **Unit table** (:func:`unit_frame`): one row per generation — ``task`` (the unit: SuperNI and DiversePrompt
  tasks are what the run samples and what the claims are about; instances nest in tasks), ``model``, ``cell``
  (``original/WO``, ``shuffle_words/W``, ``para/paraphrase_1``, ``diverse``), ``version`` (the instruction or
  prompt), ``instance``, ``seed``, ``score`` (the category's official metric ×100, EM or ROUGE-L), and the gate
  columns ``answered`` (a non-empty output), ``truncated`` (a ROUGE-L answer cut at ``max_new_tokens``; NaN for an
  exact-match answer, which is wrong at the cap whether cut or not, and for a ROUGE-L answer whose stop was not
  recorded) and ``rouge_l`` (1 for a ROUGE-L answer): the cut gate (:class:`CutGate`) reads the share of a cell's
  ROUGE-L answers cut.
* **A task's value in a cell** is the mean over its versions (instructions, prompts) of each version's mean over
  instances, an instance's score first averaged over seeds.
* **Statistics** (:class:`Linear`, :class:`Smallest`, :class:`TwoSets`): the ledger resamples tasks (a cluster
  bootstrap, :mod:`wobble.report.intervals`); with fewer than 30 tasks it takes the exact interval over tasks:
  Student's t over the tasks' contrasts (Welch's for two task sets). The smallest of k contrasts takes, on both
  routes, the smallest 95 % low bound and the smallest high bound at 1 − 0.05/k (Bonferroni). Two task sets are
  resampled each on its own (stratified) and decide the route on the smaller set.
* **Arms** (:class:`Arm`): each cell the statistic reads is on one side of it. A cell whose mean over tasks is
  at most :data:`FLOOR` points (no room for a drop) is at the floor, at least :data:`CEILING` at the ceiling. Which
  way that biases the statistic follows from the kind of contrast, declared with the arm (:func:`arm_checks`): on
  the same tasks a bound censors every arm's scores alike, so it can tie two arms, never reverse them — a paired
  difference shrinks toward the null, a drop predicted small ("close") shrinks toward the claim. Between two task
  sets (or for a spread, which either bound pins low) the side follows from the arm's sign (:func:`bound_bias`).
  An arm may instead carry a premise (the original instruction off the floor: a drop presupposes a working
  instruction), whose failure's bias is unknown.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.metrics.superni import score_instance
from wobble.report.gates import Gate, Precondition
from wobble.report.intervals import Statistic, t_interval, welch_interval
from wobble.report.rules import Bias
from wobble.stats import bootstrap_indices, percentile_interval

Column = tuple[str, str]  # (condition, setting)
SETTING_SHORT = {"wo_exam": "WO", "w_exam": "W"}
COLUMNS = ["task", "model", "cell", "version", "instance", "seed", "score", "answered", "truncated", "rouge_l"]
#: A cell at most this far from 0 (100) has no room for a drop (a rise): its mean over tasks, in points.
FLOOR, CEILING = 5.0, 95.0


def instance_score(record: Mapping[str, Any]) -> float:
    """One prediction's score ×100 under its category's official metric (EM or ROUGE-L)."""
    return 100.0 * score_instance(record["output"], record["references"], record.get("language"))[record["metric"]]


def seed_mean_scores(records: Iterable[Mapping[str, Any]], key: Callable[[Mapping], Any]) -> dict[Any, float]:
    """Mean score over seeds (and duplicate records) per ``key(record)``."""
    acc: dict[Any, list[float]] = defaultdict(list)
    for r in records:
        acc[key(r)].append(instance_score(r))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def score_matrix(runs: Mapping[Column, Iterable[Mapping]], columns: Sequence[Column]) -> tuple[np.ndarray, int]:
    """Instances x columns of seed-mean scores (instances present under every column) and how many instances
    lacked a column: the scorecard's input."""
    per_col = [seed_mean_scores(runs.get(c, ()), lambda r: (r["task"], r["instance_id"])) for c in columns]
    every = set.intersection(*(set(p) for p in per_col)) if per_col else set()
    items = sorted(every)
    matrix = np.array([[p[i] for p in per_col] for i in items], dtype=float).reshape(len(items), len(columns))
    return matrix, len(set().union(*per_col) if per_col else set()) - len(items)


# ------------------------------------------------------------------------------------------ the unit table


def cell_name(taskset: str, condition: str, setting: str) -> str:
    """``original/WO`` (English), ``para/paraphrase_1`` (Para-Instructions), ``diverse`` (DiversePrompt)."""
    if taskset == "diverse":
        return "diverse"
    if taskset == "para":
        return f"para/{condition}"
    return f"{condition}/{SETTING_SHORT.get(setting, setting)}"


def _truncated(r: Mapping[str, Any]) -> float:
    if r["metric"] != "rougeL" or r.get("finish_reason") is None:
        return math.nan  # an EM answer (not read) or a stop not recorded (the gate cannot pass on it)
    return float(r["finish_reason"] == "length")


def unit_frame(runs: Mapping[Column, Sequence[Mapping]], model: str, taskset: str) -> pd.DataFrame:
    """The tidy rows of one model's predictions of one task set, ``runs[(condition, setting)]``."""
    rows = []
    for (cond, setting), recs in runs.items():
        cell = cell_name(taskset, cond, setting)
        for r in recs:
            rows.append((r["task"], model, cell, str(r["prompt_index"]) if taskset == "diverse" else cond,
                         r["instance_id"], r.get("seed"), instance_score(r), float(bool(str(r["output"]).strip())),
                         _truncated(r), float(r["metric"] == "rougeL")))
    return pd.DataFrame(rows, columns=COLUMNS)


def _units(frame: pd.DataFrame, unit: str) -> pd.Index:
    """The units in order of appearance: the order the engine's resamples index."""
    return pd.Index(pd.unique(frame[unit]))


def version_values(frame: pd.DataFrame, unit: str, cells: Sequence[str]) -> pd.Series:
    """Per (unit, cell, version): the mean over instances of each instance's mean over seeds."""
    f = frame[frame["cell"].isin(cells)]
    per_instance = f.groupby([unit, "cell", "version", "instance"], sort=False)["score"].mean()
    return per_instance.groupby(level=[0, 1, 2], sort=False).mean()


def cell_values(frame: pd.DataFrame, unit: str, cells: Sequence[str]) -> pd.DataFrame:
    """units x cells: a unit's value in each cell (mean over versions), NaN where it has none."""
    v = version_values(frame, unit, cells).groupby(level=[0, 1], sort=False).mean().unstack("cell")
    return v.reindex(index=_units(frame, unit), columns=list(cells))


# ------------------------------------------------------------------------------------------ statistics


def _nanmean(x: np.ndarray, axis: int | None = None):
    """numpy's nanmean without its warning for an empty slice (NaN: an arm no task of a resample has)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=axis)


@dataclass(frozen=True)
class Linear(Statistic):
    """Mean over tasks of a task's Σ weight · (its value in the cell). Zero weights name cells the claim reads
    without their score entering (the original instruction of a contrast between perturbations); a task lacking
    a weighted cell is left out."""

    weights: tuple[tuple[str, float], ...]
    description: str = ""

    @property
    def cells(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.weights)

    @property
    def columns(self) -> tuple[str, ...]:
        return ("score",)

    def values(self, frame: pd.DataFrame, unit: str) -> np.ndarray:
        used = [(c, w) for c, w in self.weights if w]
        m = cell_values(frame, unit, [c for c, _ in used]).to_numpy(dtype=float)
        return m @ np.array([w for _, w in used], dtype=float)

    def point(self, frame, unit):
        v = self.values(frame, unit)
        return float(np.nanmean(v)) if np.isfinite(v).any() else math.nan

    def replicates(self, frame, unit, draws):
        return _nanmean(self.values(frame, unit)[draws], axis=1)

    def exact(self, frame, unit, level):
        return t_interval(self.values(frame, unit), level), "Student t over tasks"


@dataclass(frozen=True)
class Smallest(Statistic):
    """The smallest of several contrasts ("worse than every other perturbation"). Its interval, on both routes:
    the smallest of the contrasts' 95 % low bounds (intersection–union: above 0 only if every contrast is) and the
    smallest of their high bounds at 1 − 0.05/k (Bonferroni: below 0 when some contrast is, at 5 % over the k).
    Exact: Student's t per contrast; bootstrap: each contrast's percentile bounds over the same resamples."""

    parts: tuple[Linear, ...]
    description: str = ""

    @property
    def cells(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for p in self.parts for c in p.cells))

    @property
    def columns(self) -> tuple[str, ...]:
        return ("score",)

    def _high_level(self, level: float) -> float:
        return 1 - (1 - level) / len(self.parts)

    def point(self, frame, unit):
        return float(min(p.point(frame, unit) for p in self.parts))

    def replicates(self, frame, unit, draws):
        return np.min(np.vstack([p.replicates(frame, unit, draws) for p in self.parts]), axis=0)

    def bootstrap_interval(self, frame, unit, draws, level):
        reps = [p.replicates(frame, unit, draws) for p in self.parts]
        lows = [percentile_interval(r, level)[0] for r in reps]
        highs = [percentile_interval(r, self._high_level(level))[1] for r in reps]
        return float(min(lows)), float(min(highs))

    def exact(self, frame, unit, level):
        k = len(self.parts)
        lows = [t_interval(p.values(frame, unit), level)[0] for p in self.parts]
        highs = [t_interval(p.values(frame, unit), self._high_level(level))[1] for p in self.parts]
        return (min(lows), min(highs)), f"Student t over tasks per contrast; smallest low, smallest Bonferroni high (k = {k})"


def _stratum_draws(draws: np.ndarray, size: int, salt: bytes) -> np.ndarray:
    """Resamples of one task set's ``size`` tasks, as many as ``draws`` has rows, from a seed derived from the
    engine's draws (so from the run's bootstrap seed) and the set's ``salt``: deterministic, and each set's own."""
    digest = hashlib.sha256(np.ascontiguousarray(draws).tobytes() + salt).digest()
    return bootstrap_indices(size, len(draws), int.from_bytes(digest[:8], "little"))


@dataclass(frozen=True)
class TwoSets(Statistic):
    """Mean over the tasks of arm ``a`` minus that over the tasks of arm ``b`` (two task sets: DiversePrompt,
    Para-Instructions) of a task's mean over its versions in the arm, or with ``spread`` its standard deviation
    over them (n − 1 in the denominator, so that sets with different numbers of versions compare on equal
    footing; a task with one version left out). The two sets were sampled separately, so the bootstrap resamples
    each set's tasks on its own (stratified), and the route (bootstrap or exact) is decided on the smaller set.
    Exact interval: Welch's t over the two sets' tasks."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    spread: bool = False
    description: str = ""

    @property
    def cells(self) -> tuple[str, ...]:
        return (*self.a, *self.b)

    @property
    def columns(self) -> tuple[str, ...]:
        return ("score",)

    def arm(self, frame: pd.DataFrame, unit: str, cells: Sequence[str]) -> np.ndarray:
        g = version_values(frame, unit, cells).groupby(level=0, sort=False)
        v = g.agg(lambda x: float(np.std(x, ddof=1)) if len(x) > 1 else math.nan) if self.spread else g.mean()
        return v.reindex(_units(frame, unit)).to_numpy(dtype=float)

    def _sets(self, frame: pd.DataFrame, unit: str) -> tuple[np.ndarray, np.ndarray]:
        va, vb = self.arm(frame, unit, self.a), self.arm(frame, unit, self.b)
        return va[np.isfinite(va)], vb[np.isfinite(vb)]

    def point(self, frame, unit):
        return float(_nanmean(self.arm(frame, unit, self.a)) - _nanmean(self.arm(frame, unit, self.b)))

    def decision_units(self, frame, unit):
        return int(min(len(x) for x in self._sets(frame, unit)))

    def replicates(self, frame, unit, draws):
        """Each set's tasks resampled on their own (:func:`_stratum_draws`); ``draws`` (over every task of the
        table) only seeds them."""
        va, vb = self._sets(frame, unit)
        if not (va.size and vb.size and len(draws)):
            return np.full(len(draws), math.nan)
        return (va[_stratum_draws(draws, va.size, b"a")].mean(axis=1)
                - vb[_stratum_draws(draws, vb.size, b"b")].mean(axis=1))

    def exact(self, frame, unit, level):
        return welch_interval(self.arm(frame, unit, self.a), self.arm(frame, unit, self.b), level), \
            "Welch t over the two task sets"


def instances_per_version(frame: pd.DataFrame, cells: Sequence[str]) -> float:
    """The mean over (task, cell, version) of how many instances a version's mean rests on."""
    f = frame[frame["cell"].isin(cells)]
    n = f.groupby(["task", "cell", "version"], sort=False)["instance"].nunique()
    return float(n.mean()) if len(n) else math.nan


def no_fewer_instances(label: str, cells: Sequence[str], other_label: str, other: Sequence[str],
                       bias: Bias) -> Precondition:
    """``label``'s versions rest on no fewer instances each than ``other_label``'s: a version mean over fewer
    instances varies more, so its spread over versions is larger for that alone."""

    def check(frame: pd.DataFrame) -> tuple[bool, str]:
        x, y = instances_per_version(frame, cells), instances_per_version(frame, other)
        ok = x == x and y == y and x >= y
        return ok, f"instances per version: {label} {x:.3g}, {other_label} {y:.3g}" + ("" if ok else " ✗")

    return Precondition(f"instances per version in {label}",
                        f"{label}'s versions rest on no fewer instances each than {other_label}'s", bias, check)


def trained_on(data: str, trained: Mapping[str, str | None] | None) -> Precondition:
    """The model was finetuned on ``data`` (its model spec's ``finetune.data``, handed as ``trained``: model →
    data); a model the mapping lacks fails. Bias unknown: what another training does to the contrast is not
    known."""

    def check(frame: pd.DataFrame) -> tuple[bool, str]:
        model = str(frame["model"].iloc[0]) if len(frame) else ""
        got = (trained or {}).get(model)
        return got == data, f"finetune data: {got or 'none declared'}" + ("" if got == data else " ✗")

    return Precondition(f"trained on {data}", f"the model was finetuned on {data} (its model spec's finetune data)",
                        "unknown", check)


# ------------------------------------------------------------------------------------------ floors and ceilings


@dataclass(frozen=True)
class Arm:
    """Cells on one side of a statistic: ``sign`` +1 where the statistic rises with them, −1 where it falls, 0
    for the common base of contrasts between other cells (the original instruction under perturbations);
    ``spread``: the statistic reads their spread, which either bound pins low. ``bias``: both bounds' bias where
    the kind of contrast fixes it (:func:`arm_checks`); ``premise``: the arm's floor is the claim's premise (a
    drop presupposes a working instruction), of unknown bias."""

    label: str
    cells: tuple[str, ...]
    sign: int
    spread: bool = False
    bias: Bias | None = None
    premise: bool = False


def bound_bias(sign: int, pinned: int, direction: int) -> Bias:
    """Which way an arm pinned low (``pinned`` −1) or high (+1) pushes a statistic that rises with it by
    ``sign`` and that the claim predicts ``direction``, where nothing else pins the other arms (two task sets, a
    spread): a pinned arm can only make itself the low (high) one."""
    push = sign * pinned
    if push == 0:
        return "toward the null"
    return "toward the claim" if push * direction > 0 else "against the claim"


def _bound_check(cells: Sequence[str], bound: float) -> Callable[[pd.DataFrame], tuple[bool, str]]:
    word = "above" if bound == FLOOR else "below"

    def check(frame: pd.DataFrame) -> tuple[bool, str]:
        values = cell_values(frame, "task", cells)
        parts, ok = [], True
        for c in cells:
            v = values[c].dropna()
            mean = float(v.mean()) if len(v) else math.nan
            good = mean == mean and (mean > bound if bound == FLOOR else mean < bound)
            ok &= good
            parts.append(f"{c} {mean:.1f}" + ("" if good else " ✗"))
        return ok, f"mean over tasks {word} {bound:g}: " + ", ".join(parts)

    return check


def arm_checks(arms: Sequence[Arm], direction: int) -> tuple[Precondition, ...]:
    """A floor and a ceiling check per arm (its mean over tasks in each of its cells), each with the arm's
    declared bias or, where it declares none, the one :func:`bound_bias` derives from its side; an arm whose
    floor is the premise gets a premise check of unknown bias in its place."""
    out = []
    for a in arms:
        for name, bound, pinned in (("floor", FLOOR, -1), ("ceiling", CEILING, 1)):
            word = f"above {bound:g}" if bound == FLOOR else f"below {bound:g}"
            if a.premise and bound == FLOOR:
                out.append(Precondition(f"premise: {a.label} off the floor",
                                        f"a drop presupposes a working instruction (§3.1): {a.label}'s mean over "
                                        f"tasks lies {word}", "unknown", _bound_check(a.cells, bound)))
                continue
            bias = a.bias or bound_bias(a.sign, -1 if a.spread else pinned, direction)
            text = f"the mean over tasks lies {word} in each of {a.label}'s cells"
            out.append(Precondition(f"{name} in {a.label}", text, bias, _bound_check(a.cells, bound)))
    return tuple(out)


def off_floor(name: str, text: str, cells: Sequence[str], bias: Bias) -> Precondition:
    """A floor check on cells the statistic does not read (a control)."""
    return Precondition(name, text, bias, _bound_check(cells, FLOOR))


@dataclass(frozen=True)
class CutGate(Gate):
    """Answers cut at the token cap, among a cell's ROUGE-L answers (an exact-match answer at the cap is wrong
    whether cut or not): the share of the cut ones, 0 where the cell has no ROUGE-L answer, NaN (fails) where it
    has some but none recorded its stop."""

    def figure(self, cell: pd.DataFrame) -> float:
        if "rouge_l" in cell and len(cell) and not (cell["rouge_l"] == 1).any():
            return 0.0
        return super().figure(cell)

    def describe(self) -> str:
        return (f"{self.name}: share of a cell's ROUGE-L answers cut at the token cap at most {self.threshold:g} "
                f"(failure biases {self.bias})")


def cut(max_share: float = 0.1) -> CutGate:
    """The cut gate over ROUGE-L answers (:class:`CutGate`), in every cell."""
    return CutGate("truncated", "truncated", "share at most", max_share)
