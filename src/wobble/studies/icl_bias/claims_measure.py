"""The icl_bias claims' unit tables and statistics: one tidy table of answers (a row per model x test item x
condition x prompt set), the paper's Tables 4-5 as a table of the same shape, and the statistics of Si et al.
(2023) over them (Table 2's changes, which "most interventions help" counts: :mod:`.claims_changes`; the gates and
preconditions: :mod:`.claims_checks`).

A **cell** is one model's answers on one pair under one condition (``"baseline"`` or
``"<intervention>-<target>"``); its h1- / h2-accuracy (%) is the mean over the pair's test items of the item's
share of prompt sets answered by h1 / h2 (§2.1). A statistic is ``stat(cells, roles, pairs, interventions)``
over such accuracies (``roles``: ``{"model": m}`` for a claim about one model, ``{"base": b, "tuned": t}`` for a
comparison); a missing cell is NaN and drops out of the means. :class:`CellStatistic` makes one an engine
statistic: the unit is the test item (what the paper samples, 1,200 per pair; the run's pairs are fixed and a
row speaks of them), resampled by the engine; its exact interval is Hoeffding's over the items, since the
statistic is linear in the items' outcomes. The paper's cells enter the same statistic with the pair as the
only "item" (:func:`paper_frame`), so the paper's effect is the same function's point.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.errors import DataError
from wobble.report.intervals import Statistic
from wobble.studies.icl_bias.pairs import PAIRS

TARGETS = ("h1", "h2")
#: A cell whose most frequent answer covers more than this share of its answers is a constant classifier: on
#: the balanced disambiguating test set it scores 50 / 50 whatever the model prefers.
CONSTANT_SHARE = 0.95
#: A baseline arm whose intended accuracy is this share or more leaves an intervention at most 5 points to gain
#: (the ceiling of a change statistic).
CEILING = 0.95
#: Tables 4-5's intervention names -> ours.
TABLE45_CONDITION = {"Baseline": "baseline", "DisAmbig": "disambig", "Verbalizers": "verbalizer",
                     "Instruction": "instruction", "Explanation": "explanation"}
RECORD_FIELDS = ("pair", "condition", "set", "uid", "h1", "h2", "pred")
#: The interventions of the paper (§5), in its order.
INTERVENTIONS = ("verbalizer", "instruction", "explanation", "disambig")
#: The paper's two models: the base model and the instruction-tuned one.
BASE, TUNED = "Davinci", "Text-Davinci-002"
UNIT = "item"

Stat = Callable[["Cells", Mapping[str, str], Sequence[str], Sequence[str]], "float | np.ndarray"]


def nanmean(values: Iterable) -> float | np.ndarray:
    """Element-wise mean of the finite values (scalars or replicate arrays); NaN where there is none."""
    arrs = [np.asarray(v, dtype=float) for v in values]
    if not arrs:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(np.broadcast_arrays(*arrs)), axis=0)


class Cells:
    """Accuracy (%) of ``measure`` ("h1" / "h2") in a cell: a float, or one per bootstrap replicate."""

    def acc(self, model: str, pair: str, condition: str, measure: str):  # pragma: no cover - interface
        raise NotImplementedError


class DictCells(Cells):
    """Cells from a table ``{(model, pair, condition, measure): accuracy %}``."""

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
        if np.isfinite(value).any():
            self.read.append((model, pair, condition, measure))
        return value


def set_kind(condition: str) -> str:
    """Which kind of prompt set a condition's demonstrations are: the disambiguating sets or the plain ones (the
    baseline and every other intervention share the plain set of the same number)."""
    return "disambig" if str(condition).startswith("disambig") else "plain"


class FrameCells(Cells):
    """Cells of a unit table: each unit's mean outcome per (model, condition) over its prompt sets (demonstration
    draws); ``counts`` (replicates x units, how often each unit is drawn) gives one accuracy per replicate, and
    ``set_counts`` (replicates x draws of :attr:`draws`, how often each draw is drawn) reweights the draws within
    every unit: items and draws are crossed, so a replicate resamples both (the pigeonhole bootstrap)."""

    def __init__(self, frame: pd.DataFrame, unit: str = UNIT, counts: np.ndarray | None = None,
                 set_counts: np.ndarray | None = None):
        order = pd.Index(pd.factorize(frame[unit], sort=False)[1])
        self.draws = draw_keys(frame)
        where = {k: i for i, k in enumerate(self.draws)}
        self.index: dict[tuple[str, str, str, str], tuple[np.ndarray, np.ndarray]] = {}
        self.obs: dict[tuple[str, str, str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        cols = [unit, "model", "pair", "condition", "set", *TARGETS]
        for (m, p, c), g in frame[cols].groupby(["model", "pair", "condition"], sort=False):
            items = g[unit].map(order.get_loc).to_numpy()
            draws = np.array([where[(set_kind(c), s)] for s in g["set"]])
            for t in TARGETS:
                ok = ~g[t].isna().to_numpy()
                if not ok.any():
                    continue
                v = g[t].to_numpy(dtype=float)[ok]
                self.obs[(m, p, c, t)] = (items[ok], draws[ok], v)
                means = pd.Series(v).groupby(items[ok], sort=False).mean()
                self.index[(m, p, c, t)] = (means.index.to_numpy(), means.to_numpy(dtype=float))
        self.counts, self.set_counts = counts, set_counts

    def acc(self, model, pair, condition, measure):
        got = self.index.get((model, pair, condition, measure))
        if got is None:
            return math.nan if self.counts is None else np.full(len(self.counts), math.nan)
        idx, v = got
        if self.counts is None:
            return 100.0 * float(v.mean())
        if self.set_counts is None:
            w = self.counts[:, idx]
            with np.errstate(invalid="ignore", divide="ignore"):
                return 100.0 * (w @ v) / w.sum(axis=1)
        items, draws, x = self.obs[(model, pair, condition, measure)]
        return 100.0 * _crossed_mean(items, draws, x, self.counts, self.set_counts)


def _crossed_mean(items: np.ndarray, draws: np.ndarray, x: np.ndarray, counts: np.ndarray,
                  set_counts: np.ndarray) -> np.ndarray:
    """Per replicate: the items' mean (each weighted by its count) of each item's mean over its draws (each
    weighted by the draw's count); an item none of whose draws was drawn drops out."""
    from scipy.sparse import csr_matrix

    pos, inv = np.unique(items, return_inverse=True)
    member = csr_matrix((np.ones(len(items)), (np.arange(len(items)), inv)), shape=(len(items), len(pos)))
    ws = set_counts[:, draws]  # replicates x observations
    num = (member.T @ (ws * x).T).T
    den = (member.T @ ws.T).T
    with np.errstate(invalid="ignore", divide="ignore"):
        item_mean = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
        c = counts[:, pos] * (den > 0)
        return (c * item_mean).sum(axis=1) / c.sum(axis=1)


def draw_keys(frame: pd.DataFrame) -> list[tuple[str, int]]:
    """The demonstration draws of a table: (kind of prompt set, set number), in order of appearance."""
    if not len(frame):
        return []
    kinds = frame["condition"].map(set_kind)
    return list(dict.fromkeys(zip(kinds, frame["set"])))


def draw_counts(keys: Sequence[tuple[str, int]], n_boot: int, seed: int) -> np.ndarray | None:
    """``n_boot`` x draws: how often each draw is drawn when each kind's draws are resampled with replacement
    (scipy's resamples from ``default_rng(seed)``); None where no kind has two draws (nothing to resample)."""
    from wobble.stats import bootstrap_indices

    kinds: dict[str, list[int]] = {}
    for i, (k, _) in enumerate(keys):
        kinds.setdefault(k, []).append(i)
    if not any(len(v) >= 2 for v in kinds.values()):
        return None
    out = np.ones((n_boot, len(keys)))
    for j, (k, members) in enumerate(kinds.items()):
        if len(members) < 2:
            continue
        draws = bootstrap_indices(len(members), n_boot, seed + 7919 * (j + 1))
        for r, d in enumerate(draws):
            out[r, members] = np.bincount(d, minlength=len(members))
    return out


# ---------------------------------------------------------------------------------------------- statistics

def change(cells: Cells, model: str, pair: str, intervention: str, target: str):
    """Intended-feature accuracy with the intervention steering towards ``target`` minus the baseline's."""
    return (cells.acc(model, pair, f"{intervention}-{target}", target)
            - cells.acc(model, pair, "baseline", target))


def target_change(cells: Cells, model: str, intervention: str, target: str, pairs: Sequence[str]):
    """One Table 2 cell: the change of the intended accuracy, mean over the pairs that have it."""
    return nanmean(change(cells, model, p, intervention, target) for p in pairs)


def effect(cells: Cells, model: str, intervention: str, pairs: Sequence[str]):
    """An intervention's effect: mean over both targets of :func:`target_change` (Table 2's average)."""
    return nanmean(target_change(cells, model, intervention, t, pairs) for t in TARGETS)


def baseline_minus_50(measure: str) -> Stat:
    """Mean over pairs of the baseline ``measure``-accuracy, minus 50 (no preference on a balanced set)."""
    def stat(cells, roles, pairs, interventions):
        return nanmean(cells.acc(roles["model"], p, "baseline", measure) for p in pairs) - 50.0
    return stat


def tuned_minus_base_h1(cells, roles, pairs, interventions):
    """Mean over pairs of (tuned − base) baseline h1-accuracy."""
    return nanmean(cells.acc(roles["tuned"], p, "baseline", "h1") - cells.acc(roles["base"], p, "baseline", "h1")
                   for p in pairs)


def instruction_gap(cells, roles, pairs, interventions):
    """Instruction effect of the tuned model minus the base model's."""
    return effect(cells, roles["tuned"], "instruction", pairs) - effect(cells, roles["base"], "instruction", pairs)


def disambig_minus_instruction(cells, roles, pairs, interventions):
    """One model's disambiguation effect minus its instruction effect."""
    return effect(cells, roles["model"], "disambig", pairs) - effect(cells, roles["model"], "instruction", pairs)


PRIOR_INTERVENTIONS = ("instruction", "disambig")


def prior_resists(cells, roles, pairs, interventions):
    """Steering towards h2 with instructions and disambiguating examples: h2-accuracy − 50, mean over those
    interventions (of the run) and pairs."""
    ivs = [iv for iv in PRIOR_INTERVENTIONS if iv in interventions]
    return nanmean(nanmean(cells.acc(roles["model"], p, f"{iv}-h2", "h2") for p in pairs) for iv in ivs) - 50.0


#: One a-priori definition of the features, by Table 1's feature (a pair's ``row``), shared by every claim that
#: names them. **Semantic**: the genre / domain of the text ("the genre features, where the label words are
#: semantically similar to the input", §5.2; the sentiment domain, movie vs restaurant, is the same kind).
#: **Shallow** ("shallow distractor features, such as lexical overlap", §4.2; "features not related to
#: semantics, such as sentence lengths or overlap", §5.2): read off the surface form — length, lexical overlap,
#: negation words, terminal punctuation, capitalization, a given word, the question word, the question's
#: structure. The identity mentions (gender, race, religion) are in neither class.
SEMANTIC_ROWS = ("genre", "domain")
SHALLOW_ROWS = ("length", "overlap", "negation", "punctuation", "capitalization", "lexicon", "Q word", "structure")
SEMANTIC = tuple(k for k, p in PAIRS.items() if p.row in SEMANTIC_ROWS)
SHALLOW = tuple(k for k, p in PAIRS.items() if p.row in SHALLOW_ROWS)


def steer_h2(cells: Cells, model: str, pairs: Sequence[str], interventions: Sequence[str]):
    """Change of h2-accuracy steering towards h2, mean over the interventions of the mean over ``pairs``."""
    return nanmean(target_change(cells, model, iv, "h2", pairs) for iv in interventions)


def non_semantic_gap(cells, roles, pairs, interventions):
    """:func:`steer_h2` on the shallow features (:data:`SHALLOW`) minus on the semantic (genre / domain) ones,
    mean over the roles' models (a row per model: one model)."""
    ns, se = [p for p in pairs if p in SHALLOW], [p for p in pairs if p in SEMANTIC]
    return nanmean(steer_h2(cells, m, ns, interventions) - steer_h2(cells, m, se, interventions)
                   for m in roles.values())


def roles_of(frame: pd.DataFrame, who: str) -> dict[str, str]:
    """The statistic's roles from a table's ``model`` and ``paper_model`` columns: the one model ("model"), the
    first stand-in of each paper model ("compare") or every model ("all")."""
    stand = dict(zip(frame["model"], frame["paper_model"]))
    if who == "compare":
        base = next((m for m, p in stand.items() if p == BASE), None)
        tuned = next((m for m, p in stand.items() if p == TUNED), None)
        return {} if base is None or tuned is None else {"base": base, "tuned": tuned}
    if who == "all":
        return {m: m for m in stand}
    return {"model": next(iter(stand))} if len(stand) == 1 else {}


@dataclass(frozen=True)
class CellStatistic(Statistic):
    """A statistic of cell accuracies (points) over a table of items: ``stat`` on the table's pairs with the
    roles ``who`` (:func:`roles_of`) and the run's ``interventions``."""

    stat: Stat
    who: str
    interventions: tuple[str, ...] = INTERVENTIONS
    description: str = ""
    columns: tuple[str, ...] = TARGETS
    #: the seed of the demonstration draws' resamples (items: the engine's draws)
    draw_seed: int = 0

    def _value(self, frame: pd.DataFrame, unit: str, counts=None, cells: Cells | None = None, set_counts=None):
        roles = roles_of(frame, self.who) if len(frame) else {}
        if not roles:
            return math.nan
        pairs = [p for p in PAIRS if p in set(frame["pair"])]
        return self.stat(cells or FrameCells(frame, unit, counts, set_counts), roles, pairs, self.interventions)

    def point(self, frame, unit):
        return float(self._value(frame, unit))

    def replicates(self, frame, unit, draws):
        """Items as the engine draws them and, where a kind of prompt set has two draws or more, the draws too
        (crossed with the items: :class:`FrameCells`)."""
        n = int(frame[unit].nunique())
        counts = np.stack([np.bincount(d, minlength=n) for d in draws]).astype(float)
        sets = draw_counts(draw_keys(frame), len(draws), self.draw_seed) if "set" in frame else None
        return np.broadcast_to(np.asarray(self._value(frame, unit, counts, set_counts=sets), dtype=float),
                               (len(draws),))

    def read(self, frame: pd.DataFrame, unit: str = UNIT) -> list[tuple[str, str, str]]:
        """The (model, pair, condition) cells the statistic reads on ``frame``."""
        rec = Recorder(FrameCells(frame, unit))
        self._value(frame, unit, cells=rec)
        return list(dict.fromkeys((m, p, c) for m, p, c, _ in rec.read))

    def exact(self, frame, unit, level):
        """Hoeffding's interval over the items, conditional on the demonstration draws: the statistic is linear in
        the cell accuracies (its slopes read by moving one cell at a time), so each item moves it by at most
        Σ |slope| x 100 / (items in the cell)."""
        base = FrameCells(frame, unit)
        t0 = self._value(frame, unit, cells=base)
        if not math.isfinite(float(t0)):
            return None
        reach = np.zeros(int(frame[unit].nunique()))
        for key, (idx, v) in base.index.items():
            moved = DictCells({k: 100.0 * float(x.mean()) for k, (_, x) in base.index.items()})
            moved.values[key] += 1.0
            slope = abs(float(self._value(frame, unit, cells=moved)) - float(t0))
            reach[idx] += slope * 100.0 / len(idx)
        half = math.sqrt(math.log(2 / (1 - level)) / 2 * float((reach ** 2).sum()))
        return (float(t0) - half, float(t0) + half), "Hoeffding over items (linear in their outcomes)"


# ------------------------------------------------------------------------------------------- the tables

def check_records(path, records: Sequence[Mapping]) -> None:
    """One clear error for a score record without the fields a claim reads."""
    for i, r in enumerate(records, start=1):
        missing = [f for f in RECORD_FIELDS if f not in r]
        if missing:
            raise DataError(path, f"line {i}", f"an icl_bias score record with fields {list(RECORD_FIELDS)}; "
                            f"missing {missing}")


def item_frame(records_by_model: Mapping[str, Sequence[Mapping]], paper_models: Mapping[str, str]) -> pd.DataFrame:
    """The run's answers as a unit table: a row per model x test item x condition x prompt set; ``item`` (pair /
    uid: the unit), ``cell`` (model, pair, condition: where the gates are read), ``h1`` / ``h2`` (1 when the
    answer is that feature's label), ``answer`` ("0", "1" or "none"), ``mapped`` (the answer is a label),
    ``draws`` (the cell's demonstration draws: distinct prompt sets) and ``calibration`` (how the answer was
    calibrated: :mod:`.calibration`'s method, "none" for an uncalibrated stored answer, "generated" for an
    explanation's)."""
    rows = [{UNIT: f"{r['pair']}/{r['uid']}", "model": m, "paper_model": paper_models.get(m, ""),
             "pair": r["pair"], "condition": r["condition"], "set": r["set"],
             "cell": f"{m} {r['pair']} {r['condition']}",
             "h1": float(r["pred"] is not None and r["pred"] == r["h1"]),
             "h2": float(r["pred"] is not None and r["pred"] == r["h2"]),
             "answer": "none" if r["pred"] is None else str(r["pred"]), "mapped": float(r["pred"] is not None),
             "calibration": _calibration(r)}
            for m, recs in records_by_model.items() for r in recs]
    cols = [UNIT, "model", "paper_model", "pair", "condition", "set", "cell", "h1", "h2", "answer", "mapped",
            "calibration"]
    out = pd.DataFrame(rows, columns=cols)
    out.insert(len(cols) - 1, "draws", out.groupby("cell")["set"].transform("nunique") if len(out) else [])
    return out


def _calibration(r: Mapping) -> str:
    if "calibration" in r:
        return str(r["calibration"])
    if r.get("probs") is None and "probs" in r:
        return "generated"
    return "content-free" if r.get("calibrated", True) else "none"


def paper_frame(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Tables 4-5 as a unit table of the same shape as :func:`item_frame`'s: a row per paper model x pair x
    condition, the pair its only item, h1 / h2 the printed accuracy / 100. A row shared by two pairs (the two
    genre pairs) gives both; the baseline, printed in both halves, is read where printed first; the
    "Aggregate" rows are not pairs."""
    rows_of: dict[tuple[str, str], list[str]] = {}
    for key, p in PAIRS.items():
        rows_of.setdefault((p.code, p.row), []).append(key)
    need = {"model", "steer_towards", "dataset", "feature", "intervention", "h1_acc", "h2_acc"}
    out: dict[tuple[str, str, str], dict] = {}
    for name, df in tables.items():
        if not need.issubset(df.columns):
            raise DataError(f"paper/icl_bias/{name}.csv", "header", f"columns {sorted(need)}")
        for i, r in enumerate(df.to_dict(orient="records"), start=2):
            pairs = rows_of.get((r["dataset"], r["feature"]), [])
            iv = TABLE45_CONDITION.get(r["intervention"])
            if pairs and (iv is None or r["steer_towards"] not in TARGETS):
                raise DataError(f"paper/icl_bias/{name}.csv", f"line {i}", "an intervention of "
                                f"{sorted(TABLE45_CONDITION)} and steer_towards h1 / h2")
            cond = "baseline" if iv == "baseline" else f"{iv}-{r['steer_towards']}"
            acc = {}
            for measure in TARGETS:
                text = str(r[f"{measure}_acc"]).strip()
                try:
                    acc[measure] = float(text) / 100 if text and text != "nan" else math.nan
                except ValueError:
                    raise DataError(f"paper/icl_bias/{name}.csv", f"line {i}",
                                    f"a number in {measure}_acc, got {text!r}") from None
            for pair in pairs:
                out.setdefault((r["model"], pair, cond), {
                    UNIT: f"{pair}/paper", "model": r["model"], "paper_model": r["model"], "pair": pair,
                    "condition": cond, "set": 0, "cell": f"{r['model']} {pair} {cond}", **acc})
    return pd.DataFrame(list(out.values()))
