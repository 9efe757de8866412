"""The changes of Table 2 (model x intervention x target: the change of the intended accuracy, mean over the
run's pairs) for "most interventions help": the run's changes, each classified up, down or undecided by its own
95 % interval over the items (:func:`run_changes`), the paper's recomputed from Tables 4-5
(:func:`paper_changes`), and the count's unit table (:func:`count_frame`), which carries every change the
count classifies so the gates are read on each of them, the undecided ones included."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from wobble.studies.icl_bias.claims_measure import (BASE, CEILING, CONSTANT_SHARE, TARGETS, TUNED, UNIT,
                                                    CellStatistic, FrameCells, Recorder, target_change)
from wobble.studies.icl_bias.pairs import PAIRS

COLUMNS = ["change", "model", "cell", "sign", "points", "up", "constant", "at_ceiling", "draws"]


def constant_cells(frame: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """``{(model, pair, condition): share of the most frequent answer}`` of the cells that are constant
    classifiers (share above :data:`~.claims_measure.CONSTANT_SHARE`)."""
    top = frame.groupby(["model", "pair", "condition"], sort=False)["answer"].agg(
        lambda a: a.value_counts(normalize=True).iloc[0])
    return {k: float(v) for k, v in top.items() if v > CONSTANT_SHARE}


def change_frame(changes: Mapping[tuple[str, str, str], float],
                 constant: Mapping[tuple[str, str, str], float] | None = None,
                 ceiling: Mapping[tuple[str, str, str], float] | None = None,
                 draws: Mapping[tuple[str, str, str], int] | None = None) -> pd.DataFrame:
    """Decided changes as a unit table, a row per change (model x intervention x target: the unit of "most
    interventions help"): ``up`` (1 when above 0), ``constant`` / ``at_ceiling`` (the share of the cells /
    baseline arms behind it that are constant classifiers / at the ceiling) and ``draws`` (the fewest prompt sets
    of a cell behind it). A change of 0 is no decided sign and is left out."""
    rows = [{"change": f"{m} {iv}→{t}", "model": m, "cell": f"{m} {iv}→{t}", "sign": "up" if v > 0 else "down",
             "points": v, "up": float(v > 0),
             "constant": (constant or {}).get((m, iv, t), 0.0), "at_ceiling": (ceiling or {}).get((m, iv, t), 0.0),
             "draws": (draws or {}).get((m, iv, t), 1)}
            for (m, iv, t), v in changes.items() if not math.isnan(float(v)) and float(v) != 0]
    return pd.DataFrame(rows, columns=COLUMNS)


def paper_changes(cells: pd.DataFrame, interventions: Sequence[str]) -> dict[tuple[str, str, str], float]:
    """Table 2's changes recomputed from Tables 4-5's cells (:func:`~.claims_measure.paper_frame`) of the pairs in ``cells``:
    ``{(paper model, intervention, target): points}``, each the mean over those pairs (the paper prints no
    interval: a change's sign is its point's)."""
    pairs = [p for p in PAIRS if p in set(cells["pair"])]
    fc = FrameCells(cells)
    return {(m, iv, t): float(target_change(fc, m, iv, t, pairs))
            for m in (BASE, TUNED) if (cells["model"] == m).any() for iv in interventions for t in TARGETS}


def run_changes(frame: pd.DataFrame, interventions: Sequence[str], *, n_boot: int = 1000, seed: int = 0
                ) -> list[dict]:
    """The run's Table 2 changes, one record per (model, intervention, target): ``points`` (the change of the
    intended accuracy, mean over the run's pairs), its own 95 % interval over the items (the engine's
    :func:`~wobble.report.intervals.estimate`, the draws resampled with the items where there are two or more),
    ``sign`` ("up" / "down" when the interval excludes 0, else "undecided"), and the shares of the cells behind
    it that are constant classifiers (``constant``) and of its baseline arms at the ceiling (``at_ceiling``),
    and the fewest draws of a cell behind it (``draws``)."""
    from wobble.report.intervals import estimate

    pairs = [p for p in PAIRS if p in set(frame["pair"])]
    const = constant_cells(frame)
    out = []
    for m in dict.fromkeys(frame["model"]):
        mine = frame[frame["model"] == m]
        cells = FrameCells(mine)
        for iv in interventions:
            for t in TARGETS:
                rec = Recorder(cells)
                point = float(target_change(rec, m, iv, t, pairs))
                read = list(dict.fromkeys((mm, p, c) for mm, p, c, _ in rec.read))
                if not read or math.isnan(point):
                    continue
                sub = mine[[k in set(read) for k in zip(mine["model"], mine["pair"], mine["condition"])]]

                def stat(c, roles, ps, ivs, iv=iv, t=t):
                    return target_change(c, roles["model"], iv, t, ps)

                est = estimate(sub, UNIT, CellStatistic(stat, "model", (iv,)), n_boot=n_boot, seed=seed)
                sign = "up" if est.low > 0 else "down" if est.high < 0 else "undecided"
                base = [(p, c) for _, p, c in read if c == "baseline"]
                top = [float(mine[(mine["pair"] == p) & (mine["condition"] == c)][t].mean()) for p, c in base]
                out.append({"model": m, "intervention": iv, "target": t, "points": point, "low": est.low,
                            "high": est.high, "interval": est.method, "sign": sign,
                            "constant": sum(k in const for k in read) / len(read),
                            "at_ceiling": sum(x >= CEILING for x in top) / len(top) if top else 0.0,
                            "draws": int(sub.groupby("cell")["set"].nunique().min())})
    return out


def decided_change_frame(changes: Sequence[Mapping]) -> pd.DataFrame:
    """:func:`change_frame` of the changes whose own interval decides their sign (``sign`` up or down): a change
    whose interval contains 0 is counted neither way."""
    dec = [c for c in changes if c["sign"] in ("up", "down")]
    key = [(c["model"], c["intervention"], c["target"]) for c in dec]
    signed = {k: (abs(c["points"]) or 1e-9) * (1 if c["sign"] == "up" else -1) for k, c in zip(key, dec)}
    return change_frame(signed, {k: c["constant"] for k, c in zip(key, dec)},
                        {k: c["at_ceiling"] for k, c in zip(key, dec)}, {k: c["draws"] for k, c in zip(key, dec)})


def count_frame(changes: Sequence[Mapping]) -> pd.DataFrame:
    """The count's unit table: a row per change the count classifies. A decided change (its own interval excludes
    0) is a unit, ``up`` 1 or 0 (:func:`decided_change_frame`); an undecided one is counted neither way but its
    cells can still bias the count (a constant arm or a ceiling makes a change undecided), so it is a row of its
    own cell with ``up`` NaN, filed under the first decided change's unit id: the engine reads its gates and
    counts no unit for it (a unit's value is the mean of its rows' ``up``, NaN left out). Without a decided
    change the table is the decided ones' (empty): there is nothing to count."""
    decided = decided_change_frame(changes)
    undecided = [c for c in changes if c["sign"] not in ("up", "down")]
    if not len(decided) or not undecided:
        return decided
    host = decided["change"].iloc[0]
    rows = [{"change": host, "model": c["model"], "cell": f"{c['model']} {c['intervention']}→{c['target']}",
             "sign": "undecided", "points": c["points"], "up": math.nan, "constant": c["constant"],
             "at_ceiling": c["at_ceiling"], "draws": c["draws"]} for c in undecided]
    return pd.concat([decided, pd.DataFrame(rows, columns=COLUMNS)], ignore_index=True)
