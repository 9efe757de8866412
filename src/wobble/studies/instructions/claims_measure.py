"""How the instructions claims are measured (:mod:`wobble.studies.instructions.claims` declares them).

* **Scores.** An instance's score is its category's official metric (EM or ROUGE-L, ×100,
  ``wobble.metrics.superni``) averaged over seeds; a condition's mean pools the instances.
* **Unit: tasks.** Every claim is about tasks, and the run samples tasks (a few instances each), so the 95 %
  interval is a cluster bootstrap over tasks (:func:`wobble.stats.cluster_bootstrap_indices`): a resampled task
  brings all its instances with their scores under every condition. Two independent task sets (DiversePrompt
  vs Para-Instructions) are resampled separately, a task being one value.
* **Every contrast** (:attr:`Contrast.every`): a claim that one perturbation is worse than *each* of the others
  is an intersection–union test: the row's effect is the smallest contrast, its interval [smallest low
  bound, smallest high bound] of the contrasts' intervals from the same resamples, so it clears the null only
  if every contrast does.
* **Collapse.** An interval of zero width (every resample gives the same value: e.g. every task scores the
  same under both conditions) claims a certainty the sample does not give: the measurement is flagged
  degenerate (the verdict is then inconclusive) and its note says why.
* **Floor** (the claims' precondition): the original instruction scores above 0 on at least half of the
  tasks, in every setting the claim compares (:func:`off_floor`); otherwise drops sit at a floor and the claim
  does not apply to the model ("not applicable").
* **Diagnostics**: how many generations of each condition were cut at ``max_new_tokens`` (``finish_reason``
  "length", :func:`cut_text`).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from wobble.metrics.superni import score_instance
from wobble.report.claims import Measurement
from wobble.stats import cluster_bootstrap_indices, mean_std, percentile_interval, two_sample_difference_ci

Column = tuple[str, str]  # (condition, setting)
SETTING_SHORT = {"wo_exam": "WO", "w_exam": "W"}
SETTING_LABELS = {"wo_exam": "INSTRU-WO-EXAM", "w_exam": "INSTRU-W-EXAM"}
CLUSTER = "cluster bootstrap over tasks (a task's instances resampled together)"
EVERY = CLUSTER + "; intersection–union: the smallest of the contrasts' bounds"
TWO_SAMPLE = "bootstrap over tasks, the two task sets resampled separately"


def instance_score(record: Mapping[str, Any]) -> float:
    """One prediction's score ×100 under its category's official metric (EM or ROUGE-L)."""
    return 100.0 * score_instance(record["output"], record["references"], record.get("language"))[record["metric"]]


def seed_mean_scores(records: Iterable[Mapping[str, Any]], key: Callable[[Mapping], Any]) -> dict[Any, float]:
    """Mean score over seeds (and duplicate records) per ``key(record)``."""
    acc: dict[Any, list[float]] = defaultdict(list)
    for r in records:
        acc[key(r)].append(instance_score(r))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def instance_key(r: Mapping[str, Any]) -> tuple[str, str]:
    return (r["task"], r["instance_id"])


@dataclass(frozen=True)
class ScoreTable:
    """Instances x columns of seed-mean scores (instances present under every column), the task of each row,
    and how many instances were left out for lacking a column."""

    matrix: np.ndarray
    tasks: tuple[str, ...]
    columns: tuple[Column, ...]
    dropped: int

    def task_means(self, column: Column) -> dict[str, float]:
        """Per task, the mean over its instances of one column."""
        j = self.columns.index(column)
        acc: dict[str, list[float]] = defaultdict(list)
        for t, v in zip(self.tasks, self.matrix[:, j]):
            acc[t].append(float(v))
        return {t: float(np.mean(v)) for t, v in acc.items()}


def score_table(runs: Mapping[Column, Iterable[Mapping]], columns: Sequence[Column]) -> ScoreTable:
    """The :class:`ScoreTable` of ``runs[(condition, setting)]`` (prediction records, all seeds)."""
    per_col = [seed_mean_scores(runs.get(c, ()), instance_key) for c in columns]
    all_items = set().union(*per_col) if per_col else set()
    items = sorted(set.intersection(*(set(p) for p in per_col))) if per_col else []
    matrix = np.array([[p[i] for p in per_col] for i in items], dtype=float).reshape(len(items), len(columns))
    return ScoreTable(matrix, tuple(i[0] for i in items), tuple(columns), len(all_items) - len(items))


def score_matrix(runs: Mapping[Column, Iterable[Mapping]], columns: Sequence[Column]) -> tuple[np.ndarray, int]:
    """Items x columns of seed-mean scores and how many instances lacked a column (:func:`score_table`)."""
    t = score_table(runs, columns)
    return t.matrix, t.dropped


# ------------------------------------------------------------------------------------------ statistics


@dataclass(frozen=True)
class Contrast:
    """A claim's statistic as a function of per-condition means (``{(condition, setting): mean}``), the same
    function for our instance means and for the paper's category means. ``fn`` returns one value, or one per
    compared condition when ``every`` (intersection–union: the smallest is the row's effect)."""

    columns: tuple[Column, ...]
    fn: Callable[[Mapping[Column, float]], Sequence[float] | float]
    every: bool = False

    def values(self, means: Mapping[Column, float]) -> np.ndarray:
        return np.atleast_1d(np.asarray(self.fn(means), dtype=float))

    def point(self, means: Mapping[Column, float]) -> float:
        """The statistic on one set of means (the paper's, or ours)."""
        v = self.values(means)
        return float(np.min(v)) if self.every else float(v[0])


def _col_means(x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=0)


def contrast_interval(table: ScoreTable, contrast: Contrast, *, n_boot: int, seed: int
                      ) -> tuple[float, float, float]:
    """(point, low, high) of a :class:`Contrast` on ``table``, by a cluster bootstrap over tasks."""
    cols = table.columns

    def stat(rows: np.ndarray | slice) -> np.ndarray:
        return contrast.values(dict(zip(cols, _col_means(table.matrix[rows]))))

    point_vec = stat(slice(None))
    reps = np.array([stat(idx) for idx in cluster_bootstrap_indices(table.tasks, n_boot, seed)], dtype=float)
    reps = reps.reshape(len(reps), len(point_vec))
    bounds = [percentile_interval(reps[:, j]) for j in range(len(point_vec))]
    if contrast.every:
        return float(point_vec.min()), min(b[0] for b in bounds), min(b[1] for b in bounds)
    return float(point_vec[0]), bounds[0][0], bounds[0][1]


def off_floor(task_scores: Mapping[str, float]) -> tuple[int, int, bool]:
    """(tasks scoring above 0, tasks, whether that is at least half of them)."""
    n = len(task_scores)
    k = sum(1 for v in task_scores.values() if v > 0)
    return k, n, n > 0 and 2 * k >= n


def floor_note(parts: Sequence[tuple[str, Mapping[str, float]]]) -> tuple[bool, str]:
    """The floor precondition over labelled per-task scores: (holds everywhere, what was measured)."""
    ok, texts = True, []
    for label, scores in parts:
        k, n, good = off_floor(scores)
        ok &= good
        texts.append(f"{label}: above 0 on {k} of {n} tasks")
    return ok, "; ".join(texts)


def _collapsed(lo: float | None, hi: float | None) -> bool:
    return lo is not None and hi is not None and not (np.isnan(lo) or np.isnan(hi)) and abs(hi - lo) < 1e-9


def measurement(effect: float, lo: float | None, hi: float | None, n_tasks: int, *, interval: str, population: int,
                floor: tuple[bool, str], note: str, diagnostics: str) -> Measurement:
    """A task-level measurement, flagged degenerate when it has no tasks or its interval collapsed (then it
    carries no interval, so no "detectable" size is read off a zero width)."""
    degenerate = n_tasks == 0 or _collapsed(lo, hi)
    if n_tasks and _collapsed(lo, hi):
        note = (f"no spread over tasks: every resample gives {lo:.3g}, and an interval [{lo:.3g}, {hi:.3g}] would "
                f"claim a certainty the sample does not give; {note}")
        lo = hi = None
    return Measurement(effect if n_tasks else None, lo, hi, n_tasks, degenerate=degenerate, note=note,
                       applicable=floor[0], precondition_note=floor[1], interval=interval, population=population,
                       diagnostics=diagnostics)


def measure_contrast(runs: Mapping[Column, Sequence[Mapping]], contrast: Contrast, *, population: int,
                     n_boot: int, seed: int, cap: int | None, where: str = "") -> Measurement:
    """One English or Para-Instructions claim: the contrast with its cluster-bootstrap interval, the floor
    precondition on the original instruction of every setting it uses (``where`` names the task set in its
    note), and the cut generations."""
    table = score_table(runs, contrast.columns)
    n_tasks = len(set(table.tasks))
    originals = [c for c in contrast.columns if c[0] == "original"]
    floor = floor_note([(f"{where}original, {SETTING_LABELS.get(c[1], c[1])}", table.task_means(c)) for c in originals])
    note = f"{table.matrix.shape[0]} instance(s) of {n_tasks} task(s)"
    if table.dropped:
        note += f" ({table.dropped} lacking a condition left out)"
    diag = cut_text(runs, contrast.columns, cap)
    if not n_tasks:
        return Measurement(None, None, None, 0, degenerate=True, note="no instance has every condition",
                           applicable=floor[0], precondition_note=floor[1], interval=CLUSTER,
                           population=population, diagnostics=diag)
    point, lo, hi = contrast_interval(table, contrast, n_boot=n_boot, seed=seed)
    return measurement(point, lo, hi, n_tasks, interval=EVERY if contrast.every else CLUSTER,
                       population=population, floor=floor, note=note, diagnostics=diag)


def measure_two_sample(a: Mapping[str, float], b: Mapping[str, float], fn: Callable[[Sequence[float],
                       Sequence[float]], float], *, floor: tuple[bool, str], population: int, n_boot: int,
                       seed: int, note: str, diagnostics: str) -> Measurement:
    """``fn(a, b)`` (a difference of means) of two independent task sets, each resampled by task."""
    xa, xb = [a[t] for t in sorted(a)], [b[t] for t in sorted(b)]
    _, lo, hi = two_sample_difference_ci(xa, xb, n=n_boot, seed=seed)
    n = min(len(xa), len(xb))
    effect = fn(xa, xb) if n else float("nan")
    return measurement(effect, lo, hi, n, interval=TWO_SAMPLE, population=population, floor=floor,
                       note=note, diagnostics=diagnostics)


def mean_gap(a: Sequence[float], b: Sequence[float]) -> float:
    """mean(a) − mean(b): the two-sample statistics' function (ours over tasks, the paper's over its rows)."""
    return float(np.mean(a) - np.mean(b))


# ------------------------------------------------------------------------------------------ per-task values


def task_values(scores: Mapping[tuple[str, Any], float], spread: bool) -> dict[str, float]:
    """Per task, over its versions (prompts or instructions; each one's score first averaged): the population
    std when ``spread`` (tasks with one version left out), else the mean."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for (task, _), v in sorted(scores.items()):
        by_task[task].append(v)
    if spread:
        return {t: float(mean_std(v)[1]) for t, v in by_task.items() if len(v) > 1}
    return {t: float(np.mean(v)) for t, v in by_task.items()}


def version_scores(runs: Mapping[str, Sequence[Mapping]], versions: Sequence[str]) -> dict[tuple[str, str], float]:
    """``{(task, version): mean score}`` of Para-Instructions conditions (a task's instances and seeds pooled)."""
    out = {}
    for v in versions:
        acc: dict[str, list[float]] = defaultdict(list)
        for (task, _), s in seed_mean_scores(runs.get(v, ()), instance_key).items():
            acc[task].append(s)
        out.update({(task, v): float(np.mean(s)) for task, s in acc.items()})
    return out


def prompt_scores(records: Sequence[Mapping]) -> dict[tuple[str, Any], float]:
    """``{(task, prompt_index): mean score}`` of DiversePrompt records (examples and seeds pooled)."""
    return seed_mean_scores(records, lambda r: (r["task"], r["prompt_index"]))


# ------------------------------------------------------------------------------------------ diagnostics


def _label(col: Column) -> str:
    return f"{col[0]}/{SETTING_SHORT.get(col[1], col[1])}" if col[1] else col[0]


def cut_text(runs: Mapping[Column, Sequence[Mapping]], columns: Sequence[Column], cap: int | None) -> str:
    """How many generations of each column were cut at ``max_new_tokens`` (``finish_reason`` "length"):
    the total, then every condition with a cut one (the others: none)."""
    cut, total, per = 0, 0, []
    recorded = False
    for col in columns:
        recs = [r for r in runs.get(col, ()) if r.get("finish_reason") is not None]
        recorded |= bool(recs)
        k = sum(1 for r in recs if r["finish_reason"] == "length")
        cut, total = cut + k, total + len(recs)
        if k:
            per.append(f"{_label(col)} {k}/{len(recs)}")
    if not recorded:
        return "cut generations unknown (the predictions carry no finish_reason)"
    at = f"at the {cap}-token cap" if cap else "at max_new_tokens"
    head = f"generations cut {at}: {cut} of {total} ({100 * cut / total:.0f}%)"
    return head + (f"; per condition: {', '.join(per)}; none in the others" if per else "; none in any condition")
