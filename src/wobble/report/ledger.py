"""The claims ledger as files: one tidy row per claim (and per model for a claim about a model's behaviour),
the displayed table, and the ledger merged across studies (``<root>/findings.*``, the run's results folder) with its
verdict counts.

The rows carry everything a reviewer checks: the claim and its section, the paper's number and the verdict the
paper's own number gets under the rule, our effect with its interval and how the interval was made, the
precondition and whether it held, what the sample could detect and how many units it would take to detect the
paper's effect (capped by how many exist), diagnostics, and the verdict with its reason.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from wobble.report.cells import DASH, fmt
from wobble.report.claims import (VERDICT_RULE, VERDICTS, Claim, Measurement, detectable_effect, missing,
                                  paper_effect, paper_verdict, sample_vs_paper, verdict)
from wobble.report.counts import flag, paper_and_power_lines, read_rows
from wobble.report.formats import write_table

POOLED = "all"


def _per_model(claim: Claim, m) -> list[tuple[str, Measurement | None]]:
    """(model, measurement) pairs of one claim: one per model for a per-model claim, else one pooled."""
    if claim.per_model and isinstance(m, dict):
        return sorted(m.items()) or [(DASH, None)]
    if isinstance(m, dict):
        raise TypeError(f"claim {claim.id}: a pooled claim takes one Measurement, got a dict")
    return [(DASH if claim.per_model else POOLED, m)]


def _row(c: Claim, model: str, m: Measurement | None, paper_text: str, peff: float | None,
         pverdict: str | None) -> dict:
    v, why = verdict(c, m)
    can, needed = sample_vs_paper(c, m, peff)
    population = None if m is None else m.population
    attainable = None if needed is None else (not math.isinf(needed) and (population is None or needed <= population))
    return {
        "study": c.study, "claim": c.id, "model": model, "quote": c.quote, "section": c.section,
        "evidence": c.evidence, "paper": paper_text, "paper_effect": peff, "paper_verdict": pverdict,
        "precondition": c.precondition, "applicable": None if m is None else m.applicable,
        "precondition_note": "" if m is None else m.precondition_note,
        "detects_paper_effect": can,
        "items_needed": None if needed is None or math.isinf(needed) else needed,
        "items_attainable": attainable, "population": population, "unit_name": c.unit_name,
        "effect_definition": c.effect, "unit": c.unit, "predicted_direction": c.direction, "null": c.null,
        "effect": None if m is None else m.effect, "ci_low": None if m is None else m.ci_low,
        "ci_high": None if m is None else m.ci_high, "interval": "" if m is None else m.interval,
        "n_items": None if m is None else m.n_items,
        "detectable_effect": detectable_effect(m), "degenerate": None if m is None else m.degenerate,
        "verdict": v, "reason": why, "note": "" if m is None else m.note,
        "diagnostics": "" if m is None else m.diagnostics,
    }


def ledger_rows(claims: Sequence[Claim], measured: dict, paper_values: dict | None = None,
                paper_effects: dict | None = None) -> list[dict]:
    """Tidy rows: per claim (per model for a per-model claim) its measurement, the paper's effect and own
    verdict, detectability, and the verdict."""
    rows = []
    for c in claims:
        paper_text = (paper_values or {}).get(c.id) or c.paper_value
        peff = paper_effect(c, (paper_effects or {}).get(c.id))
        pverdict = paper_verdict(c, peff)
        for model, m in _per_model(c, measured.get(c.id)):
            rows.append(_row(c, model, m, paper_text, peff, pverdict))
    return rows


_flag = flag


def _cell(row: dict, key: str) -> str:
    v = row.get(key)
    return DASH if missing(v) else fmt(float(v), 2)


def _vs_paper(row: dict) -> str:
    can = _flag(row.get("detects_paper_effect"))
    if can is None:
        return DASH
    if can:
        return "yes"
    needed, pop = row.get("items_needed"), row.get("population")
    if missing(needed):
        return "no (the paper's effect equals the null)"
    unit = row.get("unit_name") or "items"
    if _flag(row.get("items_attainable")) is False and not missing(pop):
        return f"no: ≈ {int(needed)} {unit} needed, not attainable ({int(pop)} {unit} exist)"
    return f"no: ≈ {int(needed)} {unit}"


def _paper_cell(row: dict) -> str:
    text = str(row.get("paper") or DASH)
    pv = row.get("paper_verdict")
    if missing(pv) or not pv:
        return f"{text} (from the paper's {row.get('evidence') or 'text'}; no verdict)"
    return f"{text}: **{pv}**"


def _precondition_cell(row: dict) -> str:
    if not row.get("precondition"):
        return DASH
    met = _flag(row.get("applicable"))
    state = DASH if met is None else ("met" if met else "not met")
    note = row.get("precondition_note")
    return f"{row['precondition']} — {state}" + (f" ({note})" if note and not missing(note) else "")


def display_frame(rows: Iterable[dict]) -> pd.DataFrame:
    """The ledger as read: claim (quoted, with section), model, the paper's number and its own verdict, ours
    [95 % CI], units, detectable (and whether the sample could show an effect as large as the paper's), the
    precondition, diagnostics, verdict."""
    out = []
    for r in rows:
        ours = _cell(r, "effect")
        if not missing(r.get("ci_low")):
            ours += f" [{_cell(r, 'ci_low')}, {_cell(r, 'ci_high')}]"
        interval = r.get("interval")
        n = DASH if missing(r.get("n_items")) else f"{int(r['n_items'])} {r.get('unit_name') or 'items'}"
        notes = "; ".join(str(x) for x in (r.get("note"), r.get("diagnostics")) if x and not missing(x))
        out.append({
            "study": r["study"], "claim": f"“{r['quote']}” ({r['section']})", "model": r.get("model") or DASH,
            "paper (own verdict)": _paper_cell(r),
            "our effect": f"{r['effect_definition']}: {ours} {r['unit']}"
                          + (f" ({interval})" if interval and not missing(interval) and ours != DASH else ""),
            "n": n, "detectable": _cell(r, "detectable_effect"), "paper's effect detectable": _vs_paper(r),
            "precondition": _precondition_cell(r), "notes": notes or DASH,
            "verdict": f"**{r['verdict']}** ({r['reason']})",
        })
    return pd.DataFrame(out, columns=["study", "claim", "model", "paper (own verdict)", "our effect", "n",
                                      "detectable", "paper's effect detectable", "precondition", "notes",
                                      "verdict"])


def summary(rows: Sequence[dict]) -> list[str]:
    """The ledger's counting footnotes: verdicts (all four outcomes), the paper's own verdicts, detectability."""
    counts = pd.Series([r["verdict"] for r in rows]).value_counts().to_dict() if rows else {}
    return [f"{len(rows)} rows: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS) + ".",
            *paper_and_power_lines(rows)]


def write_ledger(rows: Sequence[dict], stem: str | Path, title: str, notes: Sequence[str] = ()) -> list[Path]:
    """``stem.md`` / ``.tex`` (display) and ``stem.csv`` (tidy rows), written atomically."""
    tidy = pd.DataFrame(list(rows))
    return write_table(display_frame(rows), tidy, stem, title, [VERDICT_RULE, *summary(rows), *notes])


#: Rows of a study's ``findings.csv``, NaN cells as None.
read_ledger = read_rows
