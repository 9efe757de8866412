"""The claims ledger: one row per headline claim of a paper, its measured effect with a 95 % bootstrap
interval over items, and a verdict from a rule fixed in code before any number is seen.

A study declares its claims (:class:`Claim`: the quote, its section, the paper's number, which direction the
claim predicts for the effect, and the null value the interval must exclude) and measures each one
(:class:`Measurement`: effect, interval, number of items, and whether the cells it rests on are degenerate).
:func:`verdict` applies the pre-registered rule:

1. **inconclusive** when the measurement is missing, rests on fewer than ``Claim.min_items`` items, has no
   interval, or is flagged degenerate (e.g. one answer wins every prompt, both scores at the floor);
2. **inconclusive** when the 95 % interval contains the null value (``Claim.null``, 0 for a difference);
3. **reproduced** when the interval lies entirely on the side the claim predicts (``direction`` +1: above the
   null, -1: below);
4. **contradicted** when it lies entirely on the other side.

Nothing is hand-written: the verdict column is :func:`verdict` applied to the measurement, and the ledger
says for each row what effect size its sample could detect (:func:`detectable_effect`) and whether that is
enough to show the paper's own effect (:func:`sample_vs_paper`: the paper's effect, read from the claim, is
compared with the detectable size; where it is smaller, the row says about how many items would be needed).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Sequence

import pandas as pd

from wobble.report.cells import DASH, fmt
from wobble.report.formats import write_table

Verdict = Literal["reproduced", "contradicted", "inconclusive"]

VERDICT_RULE = (
    "Verdict rule (fixed in wobble.report.claims before any run): inconclusive if the measurement is missing, "
    "rests on fewer items than the claim's minimum, or is degenerate; otherwise inconclusive if the 95% "
    "bootstrap interval over items contains the null value; reproduced if it lies entirely on the side the "
    "claim predicts; contradicted if entirely on the other side."
)


@dataclass(frozen=True)
class Claim:
    """A headline claim of a paper, declared by its study before the run."""

    study: str
    id: str
    quote: str
    section: str
    paper_value: str
    effect: str
    direction: int = 1
    null: float = 0.0
    unit: str = "points"
    min_items: int = 10
    #: The paper's effect in our effect's unit and scale, when ``paper_value`` does not start with it (e.g. a
    #: share printed as a percentage); None: read the leading number of the paper value, if ``paper_in_value``.
    paper_effect: float | None = None
    #: Whether the paper value's leading number is the paper's effect (False: the paper prints no comparable
    #: number, e.g. "mismatch at High > 0 for all six models").
    paper_in_value: bool = True

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"claim {self.id}: direction must be +1 or -1, got {self.direction}")


@dataclass(frozen=True)
class Measurement:
    """Our measured effect for one claim: point estimate, 95 % interval over items, sample size."""

    effect: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    degenerate: bool = False
    note: str = ""


@dataclass(frozen=True)
class Findings:
    """What a study's ``measure`` returns: its claims, their measurements (None = not measured in this
    run), the paper's value per claim where it is computed from the paper's tables (overrides
    ``Claim.paper_value``), and footnotes (models, sample)."""

    title: str
    claims: tuple[Claim, ...]
    measured: dict
    paper_values: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def rows(self) -> list[dict]:
        return ledger_rows(self.claims, self.measured, self.paper_values)


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def verdict(claim: Claim, m: Measurement | None) -> tuple[Verdict, str]:
    """The pre-registered rule (module docstring) -> (verdict, reason)."""
    if m is None or _missing(m.effect):
        return "inconclusive", "not measured in this run"
    if m.degenerate:
        return "inconclusive", "degenerate cells" + (f": {m.note}" if m.note else "")
    if m.n_items < claim.min_items:
        return "inconclusive", f"{m.n_items} items < {claim.min_items} required"
    if _missing(m.ci_low) or _missing(m.ci_high):
        return "inconclusive", "no interval"
    lo, hi = float(m.ci_low), float(m.ci_high)
    if lo <= claim.null <= hi:
        return "inconclusive", f"95% CI [{lo:.3g}, {hi:.3g}] contains {claim.null:g}"
    above = lo > claim.null
    if above == (claim.direction > 0):
        return "reproduced", "95% CI excludes the null on the predicted side"
    return "contradicted", "95% CI excludes the null on the opposite side"


def detectable_effect(m: Measurement | None) -> float | None:
    """The smallest true effect this sample detects with ~80 % power at the 5 % level: 2.8 standard errors,
    the standard error read off the 95 % interval as (high − low) / 3.92."""
    if m is None or _missing(m.ci_low) or _missing(m.ci_high):
        return None
    return 2.8 * (float(m.ci_high) - float(m.ci_low)) / 3.92


_LEADING_NUMBER = re.compile(r"^\s*([+\-−]?\d+(?:\.\d+)?)")


def paper_effect(claim: Claim, paper_value: str | None = None) -> float | None:
    """The paper's effect in the claim's unit: ``claim.paper_effect``, else the leading number of the paper
    value ("+19.6 (59.1 − 39.5)" -> 19.6) when ``claim.paper_in_value``, else None."""
    if claim.paper_effect is not None:
        return float(claim.paper_effect)
    if not claim.paper_in_value:
        return None
    m = _LEADING_NUMBER.match(paper_value if paper_value is not None else claim.paper_value)
    return float(m.group(1).replace("−", "-")) if m else None


def sample_vs_paper(claim: Claim, m: Measurement | None, effect: float | None) -> tuple[bool | None, int | None]:
    """(could this sample detect an effect as large as the paper's, items needed if not): the paper's distance
    from the null, |effect − null|, against :func:`detectable_effect`; items needed = n · (detectable /
    distance)², the usual 1/√n scaling of an interval's width (None where either number is missing)."""
    det = detectable_effect(m)
    if det is None or effect is None or m is None or not m.n_items:
        return None, None
    gap = abs(effect - claim.null)
    if det <= gap:
        return True, None
    return False, (math.inf if gap == 0 else math.ceil(m.n_items * (det / gap) ** 2))


def ledger_rows(claims: Sequence[Claim], measured: dict[str, Measurement | None],
                paper_values: dict | None = None) -> list[dict]:
    """One tidy row per claim with its measurement, detectable effect, the paper's effect and whether this
    sample could show it, and the verdict."""
    rows = []
    for c in claims:
        m = measured.get(c.id)
        v, why = verdict(c, m)
        paper_text = (paper_values or {}).get(c.id) or c.paper_value
        peff = paper_effect(c, paper_text)
        can, needed = sample_vs_paper(c, m, peff)
        rows.append({
            "study": c.study, "claim": c.id, "quote": c.quote, "section": c.section, "paper": paper_text,
            "paper_effect": peff, "detects_paper_effect": can,
            "items_needed": None if needed is None or math.isinf(needed) else needed,
            "effect_definition": c.effect, "unit": c.unit, "predicted_direction": c.direction, "null": c.null,
            "effect": None if m is None else m.effect, "ci_low": None if m is None else m.ci_low,
            "ci_high": None if m is None else m.ci_high, "n_items": None if m is None else m.n_items,
            "detectable_effect": detectable_effect(m), "degenerate": None if m is None else m.degenerate,
            "verdict": v, "reason": why, "note": "" if m is None else m.note,
        })
    return rows


def _cell(row: dict, key: str) -> str:
    v = row.get(key)
    return DASH if _missing(v) else fmt(float(v), 2)


def _vs_paper(row: dict) -> str:
    can = row.get("detects_paper_effect")
    if _missing(can) or can is None or can == "":
        return DASH
    if bool(can) and str(can) != "False":
        return "yes"
    needed = row.get("items_needed")
    return f"no: ≈ {int(needed)} items" if not _missing(needed) else "no"


def display_frame(rows: Iterable[dict]) -> pd.DataFrame:
    """The ledger as read: claim (quoted, with section), paper's number, ours [95 % CI], detectable (and whether
    the sample could show an effect as large as the paper's), verdict."""
    out = []
    for r in rows:
        ours = _cell(r, "effect")
        if not _missing(r.get("ci_low")):
            ours += f" [{_cell(r, 'ci_low')}, {_cell(r, 'ci_high')}]"
        out.append({
            "study": r["study"], "claim": f"“{r['quote']}” ({r['section']})", "paper": r["paper"],
            "our effect": f"{r['effect_definition']}: {ours} {r['unit']}",
            "items": DASH if _missing(r["n_items"]) else str(int(r["n_items"])), "detectable": _cell(r, "detectable_effect"),
            "paper's effect detectable": _vs_paper(r),
            "verdict": f"**{r['verdict']}** ({r['reason']})",
        })
    return pd.DataFrame(out, columns=["study", "claim", "paper", "our effect", "items", "detectable",
                                      "paper's effect detectable", "verdict"])


def write_ledger(rows: Sequence[dict], stem: str | Path, title: str, notes: Sequence[str] = ()) -> list[Path]:
    """``stem.md`` / ``.tex`` (display) and ``stem.csv`` (tidy rows), written atomically."""
    tidy = pd.DataFrame(list(rows))
    return write_table(display_frame(rows), tidy, stem, title, [VERDICT_RULE, *notes])


def read_ledger(path: str | Path) -> list[dict]:
    """Rows of a study's ``findings.csv`` (as written by :func:`write_ledger`), NaN cells as None."""
    df = pd.read_csv(path, keep_default_na=True)
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in df.to_dict(orient="records")]


def merge_ledgers(paths: Sequence[str | Path], stem: str | Path) -> list[Path]:
    """One ledger across studies (``results/findings.md``) from the studies' ``findings.csv`` files."""
    rows = [r for p in paths for r in read_ledger(p)]
    counts = pd.Series([r["verdict"] for r in rows]).value_counts().to_dict() if rows else {}
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("reproduced", "contradicted", "inconclusive"))
    decidable = [r for r in rows if r.get("detects_paper_effect") is not None and not _missing(r.get("detects_paper_effect"))]
    could = sum(1 for r in decidable if str(r["detects_paper_effect"]) == "True")
    return write_ledger(rows, stem, "Claims ledger: every study", [
        f"{len(rows)} claims: {summary}.",
        f"{could} of the {len(decidable)} measured claims with a comparable paper number had a sample that could "
        "detect an effect as large as the paper's ('paper's effect detectable'); for the others the row says about "
        "how many items it would take (n · (detectable / |paper effect − null|)²)."])
