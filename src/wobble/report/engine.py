"""One measurement engine for every claim: a study declares a claim (:class:`ClaimSpec`: quote, statistic, unit,
direction, null, scope, gates, preconditions, freeze commit), builds its tidy table (:class:`UnitTable`), and the
engine does the rest — the interval over the declared unit (:mod:`wobble.report.intervals`), the gates in every
cell, the preconditions, and the verdict (:mod:`wobble.report.rules`) — for every model of the run, a model
missing from the table included ("not measured"). Its rows feed the ledger (:mod:`wobble.report.findings`) and
carry the old ledger's columns too, so :func:`wobble.report.ledger.write_ledger` reads them as well.

A study cannot hand an interval (the table may not carry one) nor resample a finer unit than the claim declares
(:func:`check_table`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Literal, Mapping, Sequence

import pandas as pd

from wobble.report.claims import Evidence
from wobble.report.gates import Gate, Precondition, failed_gates, gate_figures, read_gates
from wobble.report.intervals import Estimate, Statistic, estimate
from wobble.report.rules import exists_verdict, interval_verdict, resolve

Scope = Literal["per_model", "pooled", "exists"]
POOLED = "all"
ANY = "any"
#: Columns that would carry an interval made by the study: the engine makes every interval itself.
INTERVAL_COLUMNS = frozenset({"ci", "ci_low", "ci_high", "low", "high", "lo", "hi", "interval", "se", "stderr"})


@dataclass(frozen=True)
class ClaimSpec:
    """A claim, declared once. ``unit``: the column (and the name) of what was sampled and is resampled;
    ``unit_attrs``: columns that describe a unit and must be constant within it; ``observation``: columns that
    identify a row within a unit and cell (unique). ``scope``: one row per model, one pooled row, or an existence
    claim decided across the models. ``freeze``: the commit at which this definition was fixed."""

    study: str
    id: str
    name: str
    quote: str
    section: str
    paper_value: str
    statistic: Statistic
    unit: str
    direction: int = 1
    null: float = 0.0
    scale: str = "share"
    min_units: int = 10
    scope: Scope = "per_model"
    gates: tuple[Gate, ...] = ()
    preconditions: tuple[Precondition, ...] = ()
    unit_attrs: tuple[str, ...] = ()
    observation: tuple[str, ...] = ()
    evidence: Evidence = "table"
    paper_effect: float | None = None
    freeze: str = ""
    #: how many units exist at all (the benchmark's): a row that could not detect the paper's effect says how
    #: many units it would take and this many exist
    population: int | None = None
    #: a 0/1 column: the statistic reads only the rows where it is 1 (the mismatched prompts), while the gates and
    #: preconditions read every row of the cells it reads
    subset: str = ""

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"claim {self.id}: direction must be +1 or -1, got {self.direction}")
        if self.scope not in ("per_model", "pooled", "exists"):
            raise ValueError(f"claim {self.id}: scope must be per_model, pooled or exists, got {self.scope!r}")
        if self.freeze and not re.fullmatch(r"[0-9a-f]{7,40}", self.freeze):
            raise ValueError(f"claim {self.id}: freeze must be a git commit (7-40 hex digits), got {self.freeze!r}")
        if self.evidence == "table" and self.paper_effect is not None:
            raise ValueError(f"claim {self.id}: a table's effect is computed from paper/, not typed")

    @property
    def effect(self) -> str:
        return self.statistic.description

    @property
    def cells(self) -> tuple[str, ...]:
        return tuple(self.statistic.cells)


@dataclass(frozen=True)
class UnitTable:
    """A claim's observations: ``frame`` has the ``unit`` column, ``model``, ``cell`` and the value columns (one
    row per observation: a prompt, a shuffle, a turn); ``unit`` names the column the study means as the unit."""

    frame: pd.DataFrame
    unit: str


def check_table(claim: ClaimSpec, table: UnitTable) -> pd.DataFrame:
    """The table, after refusing what would let a study choose its own interval: an interval column, a unit other
    than the declared one (a finer one is named as such), units with no id, a unit attribute that varies within a
    unit, duplicate observations, or a column the statistic or a gate reads that is missing."""
    f = table.frame
    made = sorted(INTERVAL_COLUMNS & set(f.columns))
    if made:
        raise ValueError(f"claim {claim.id}: the table carries an interval ({made}); hand observations, the "
                         "ledger computes the interval over the claim's unit")
    if table.unit != claim.unit:
        if table.unit in f.columns and claim.unit in f.columns and \
                (f.groupby(claim.unit)[table.unit].nunique(dropna=False) > 1).any():
            raise ValueError(f"claim {claim.id}: '{table.unit}' varies within '{claim.unit}': an interval over it "
                             f"would rest on a finer unit than the claim declares")
        raise ValueError(f"claim {claim.id}: declares unit '{claim.unit}', the table is over '{table.unit}'")
    need = {claim.unit, "model", "cell", *claim.statistic.columns, *(g.column for g in claim.gates),
            *claim.unit_attrs, *claim.observation, *([claim.subset] if claim.subset else [])}
    absent = sorted(need - set(f.columns))
    if absent:
        raise ValueError(f"claim {claim.id}: the table lacks {absent}")
    if f[claim.unit].isna().any():
        raise ValueError(f"claim {claim.id}: rows without a {claim.unit} id")
    for a in claim.unit_attrs:
        varies = f.groupby(claim.unit)[a].nunique(dropna=False) > 1
        if varies.any():
            raise ValueError(f"claim {claim.id}: '{a}' is not constant within a {claim.unit} "
                             f"(e.g. {varies[varies].index[0]!r}): the unit ids are not the declared unit")
    if claim.observation and f.duplicated([claim.unit, "model", "cell", *claim.observation]).any():
        raise ValueError(f"claim {claim.id}: repeated observations of one {claim.unit} in one cell")
    return f


def study_prefix(study: str) -> str:
    """``first_token`` -> ``ft``, ``followup`` -> ``fo``: a row id's study part."""
    words = [w for w in re.split(r"[_\W]+", study.lower()) if w]
    return "".join(w[0] for w in words) if len(words) > 1 else (words[0][:2] if words else "x")


def model_slug(model: str) -> str:
    """``Qwen2.5-0.5B-Instruct`` -> ``qwen2505binstruct``: a row id's model part (lower-case letters and digits)."""
    return re.sub(r"[^a-z0-9]", "", str(model).lower()) or "x"


def row_id(study: str, order: int, model: str) -> str:
    """``ft-03-qwen05``: study, the claim's 1-based place in the study's claims (append new claims to keep ids),
    model; stable across runs."""
    return f"{study_prefix(study)}-{order:02d}-{model_slug(model)}"


def _declared(c: ClaimSpec, order: int) -> dict:
    pre = "; ".join(p.describe() for p in c.preconditions)
    return {
        "study": c.study, "claim": c.id, "order": order, "name": c.name, "scope": c.scope, "quote": c.quote,
        "section": c.section, "evidence": c.evidence, "paper": c.paper_value, "effect_definition": c.effect,
        "unit": c.scale, "unit_name": f"{c.unit}s", "predicted_direction": c.direction, "null": c.null,
        "min_units": c.min_units, "gates": "; ".join(g.describe() for g in c.gates), "precondition": pre,
        "freeze": c.freeze, "population": c.population,
    }


def _measured(c: ClaimSpec, model: str, frame: pd.DataFrame | None, n_boot: int, seed: int,
              level: float = 0.95) -> dict:
    """One model's (or the pooled) measurement, checks and verdict."""
    out = {"model": model, "effect": None, "ci_low": None, "ci_high": None, "interval": "", "n_items": None,
           "ci_not_used": "", "gate_figures": "", "precondition_note": "", "applicable": None, "degenerate": None, "note": "",
           "diagnostics": ""}
    missing = [] if frame is None or frame.empty else [x for x in c.cells if not (frame["cell"] == x).any()]
    if frame is None or frame.empty or missing:
        why = "not measured in this run" + (f": cells {', '.join(missing)} not run" if missing else "")
        return {**out, "verdict": "inconclusive", "would_be": "inconclusive", "reason": why, "measured": False}
    pre = [(p, *p.check(frame)) for p in c.preconditions]
    cells = list(c.cells) or list(dict.fromkeys(frame["cell"]))
    sub = frame[frame["cell"].isin(cells)]
    stat = c.statistic
    if c.scale != "share" and getattr(stat, "share", False) is None:
        stat = replace(stat, share=False)  # points are never read as shares, even where a cell is all 0 or 1
    est: Estimate = estimate(sub[sub[c.subset] == 1] if c.subset else sub, c.unit, stat, n_boot=n_boot,
                             seed=seed, level=level)
    if level != 0.95:
        est = replace(est, method=f"{est.method}; {level:.2%} interval (Bonferroni over the models)")
    readings = read_gates(c.gates, sub, cells)
    failed = [(p.name, p.bias, "precondition") for p, ok, _ in pre if not ok] + failed_gates(readings)
    if est.point != est.point:
        alone, why = "inconclusive", "statistic undefined"
    elif est.n_units < c.min_units:
        alone, why = "inconclusive", f"{est.n_units} {c.unit}s < {c.min_units} required"
    elif est.undecidable:
        alone, why = "inconclusive", est.undecidable
    else:
        alone = interval_verdict(est.low, est.high, c.null, c.direction)
        why = {"reproduced": "95% CI excludes the null on the predicted side",
               "contradicted": "95% CI excludes the null on the opposite side"}.get(
            alone, f"95% CI [{est.low:.3g}, {est.high:.3g}] contains {c.null:g}")
    final, would, because = resolve(alone, failed)
    return {**out, "effect": est.point, "ci_low": est.low, "ci_high": est.high, "interval": est.method,
            "n_items": est.n_units, "ci_not_used": not_used(est, c), "gate_figures": gate_figures(readings),
            "precondition_note": "; ".join(f"{p.name}: {'met' if ok else 'not met'} ({fig})" for p, ok, fig in pre),
            "applicable": all(ok for _, ok, _ in pre), "degenerate": any(not r.passes for r in readings),
            "verdict": final, "would_be": would, "reason": f"{because}; {why}" if because else why,
            "measured": True}


def not_used(est: Estimate, c: ClaimSpec) -> str:
    """Why the row's interval cannot decide it, in a few words for the short table ("" where it can): no spread
    (a [0, 0] claims certainty), a bootstrap the engine does not trust (a statistic without an exact interval on
    too few units), or fewer units than the claim's minimum. The rule reads such a row as inconclusive."""
    if est.point != est.point or not est.n_units:
        return ""
    few = est.n_units < c.min_units
    n = f"{est.n_units} < {c.min_units} {c.unit}s" if few else f"{est.n_units} {c.unit}s"
    if not (math.isfinite(est.low) and math.isfinite(est.high)):
        return f"no interval; {n}"
    if est.low == est.high:
        return f"no spread; {n}" if few else "no spread"
    if est.undecidable:
        return f"bootstrap over {n}, not used"
    return f"{n}, not used" if few else ""


def _paper(claim: ClaimSpec, value) -> dict:
    """The paper's effect and the verdict its own number gets (a point) for one row."""
    peff = claim.paper_effect if claim.evidence != "table" else value
    pv = None
    if claim.evidence == "table" and peff is not None and not math.isnan(peff):
        pv = interval_verdict(peff, peff, claim.null, claim.direction)
    return {"paper_effect": peff, "paper_verdict": pv}


def measure_claim(claim: ClaimSpec, order: int, table: UnitTable | None, models: Sequence[str], *,
                  n_boot: int = 1000, seed: int = 0,
                  paper_effect: float | Mapping[str, float] | None = None) -> list[dict]:
    """The claim's rows: one per model of the run (``per_model``; a model the table lacks is "not measured"), one
    pooled row, or one existence row across the models with a member row per model (``counted`` False).

    ``paper_effect``: the paper's effect on the cells the run measures, or one per model where the cells a model's
    row reads differ (an existence row takes the one furthest on the predicted side). An existence claim's members
    are measured at 95 % jointly (Bonferroni: each at 1 − 0.05/m), since any one of them decides it."""
    frame = None if table is None else check_table(claim, table)
    base = _declared(claim, order)
    per_model = isinstance(paper_effect, Mapping)

    def paper_of(model: str | None) -> dict:
        if not per_model:
            return _paper(claim, paper_effect)
        if model is not None:
            return _paper(claim, paper_effect.get(model))
        known = [v for v in paper_effect.values() if v is not None and not math.isnan(v)]
        return _paper(claim, max(known, key=lambda v: claim.direction * v) if known else None)

    def of(model: str) -> pd.DataFrame | None:
        return None if frame is None else frame[frame["model"] == model]

    level = 1 - 0.05 / max(len(models), 1) if claim.scope == "exists" else 0.95
    if claim.scope == "pooled":
        rows = [{**base, **paper_of(None), "row_id": row_id(claim.study, order, POOLED), "counted": True,
                 **_measured(claim, POOLED, frame, n_boot, seed)}]
    else:
        members = [{**base, **paper_of(m), "row_id": row_id(claim.study, order, m),
                    "counted": claim.scope == "per_model", **_measured(claim, m, of(m), n_boot, seed, level)}
                   for m in models]
        members = [_untestable(r) for r in members]
        if claim.scope == "per_model":
            rows = members or [{**base, **paper_of(None), "row_id": row_id(claim.study, order, "none"),
                                "counted": True, **_measured(claim, "–", None, n_boot, seed)}]
        else:
            rows = [_exists_row(claim, {**base, **paper_of(None)}, order, members), *members]
    return [_power(_untestable(r)) for r in rows]


def _power(row: dict) -> dict:
    """What the row's sample could detect: 2.8 standard errors (about 80 % power at the 5 % level), the standard
    error read off its 95 % interval as (high − low) / 3.92; whether an effect as large as the paper's would be
    detected; and if not, about how many units it would take (n · (detectable / |paper effect − null|)²) and,
    where the claim declares its population, whether that many exist. An interval with no spread says nothing of
    what the sample could detect."""
    lo, hi, n, peff = row.get("ci_low"), row.get("ci_high"), row.get("n_items"), row.get("paper_effect")
    none = {"detects_paper_effect": None, "items_needed": None, "items_attainable": None}
    if lo is None or hi is None or lo != lo or hi != hi or not n or lo == hi:
        return {**row, "detectable_effect": None, **none}
    det = 2.8 * (hi - lo) / 3.92
    if peff is None or peff != peff:
        return {**row, "detectable_effect": det, **none}
    gap = abs(peff - row["null"])
    can = det <= gap
    needed = None if can or gap == 0 else math.ceil(n * (det / gap) ** 2)
    pop = row.get("population")
    return {**row, "detectable_effect": det, "detects_paper_effect": can, "items_needed": needed,
            "items_attainable": None if needed is None or pop is None else needed <= pop}


def _untestable(row: dict) -> dict:
    """A row on cells where the paper's own effect, put through the same statistic and rule, does not pass: it
    cannot test the claim there, whatever our interval says (it keeps its would-be verdict)."""
    pv = row.get("paper_verdict")
    if pv in (None, "reproduced") or row["verdict"] not in ("reproduced", "contradicted"):
        return row
    why = f"not testable here: the paper's own effect on these cells, {row['paper_effect']:.3g}, gives {pv}"
    return {**row, "verdict": "inconclusive", "reason": f"{why}; {row['reason']}"}


def _exists_row(claim: ClaimSpec, base: dict, order: int, members: list[dict]) -> dict:
    """The existence row: its verdict across the members, its number the member that goes furthest on the
    predicted side."""
    verdict, why = exists_verdict([m["verdict"] for m in members])
    would, _ = exists_verdict([m["would_be"] for m in members])
    run = [m for m in members if m["measured"]]

    def side(v) -> float:
        return -math.inf if v is None or v != v else claim.direction * v

    def reach(m: dict) -> tuple[float, float]:
        """The bound on the predicted side, then (bounds tied, e.g. both at 0) the point."""
        return side(m["ci_low"] if claim.direction > 0 else m["ci_high"]), side(m["effect"])

    best = max(run, key=reach, default=None)
    keys = ("effect", "ci_low", "ci_high", "interval", "n_items", "ci_not_used")
    picked = {k: best[k] for k in keys} if best else {
        "effect": None, "ci_low": None, "ci_high": None, "interval": "", "n_items": None, "ci_not_used": ""}
    note = f"the figures are {best['model']}'s, the model furthest on the predicted side" if best else ""
    return {**base, "row_id": row_id(claim.study, order, ANY), "counted": True, "model": f"any of {len(members)}",
            **picked, "gate_figures": "", "precondition_note": "", "applicable": None, "degenerate": None,
            "note": note, "diagnostics": "", "verdict": verdict, "would_be": would, "reason": why,
            "measured": bool(run)}


def measure_all(claims: Sequence[ClaimSpec], tables: Mapping[str, UnitTable | None], models: Sequence[str], *,
                paper_effects: Mapping[str, float | Mapping[str, float]] | None = None, n_boot: int = 1000,
                seed: int = 0) -> list[dict]:
    """Every claim's rows in declaration order (a claim's place in ``claims`` is its row ids' number)."""
    rows = []
    for i, c in enumerate(claims, 1):
        rows += measure_claim(c, i, tables.get(c.id), models, n_boot=n_boot, seed=seed,
                              paper_effect=(paper_effects or {}).get(c.id))
    return rows
