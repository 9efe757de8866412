"""The claims ledger as a person reads it: the verdict counts first (a row that is not applicable or gated counted
with the verdict its interval alone would give), then one short table with a line per row — stable id, short
claim name, model, ours [95 % CI], the paper's number, n, verdict — and then one section per claim that states
once its quote, section, statistic, unit, gates, preconditions with the way their failure biases it, freeze
commit, and the paper's effect and the paper's own verdict (labelled as the paper's), with a line per model giving
its per-cell figures and the reason for its verdict. The CSV keeps every field of every row.

It reads the engine's rows (:mod:`wobble.report.engine`) and the old ones (:func:`wobble.report.ledger.ledger_rows`)
alike (:func:`normalize`), so the studies move to the engine one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from wobble.io import atomic_write
from wobble.paths import with_ext
from wobble.report.cells import DASH, is_missing
from wobble.report.counts import flag, paper_and_power_lines, read_rows
from wobble.report.engine import model_slug, study_prefix
from wobble.report.formats import to_latex
from wobble.report.rules import FAMILY_WISE, VERDICT_RULE, interval_verdict

#: No cell of the short table is longer (characters); longer text is cut with "…" (the section has it whole).
MAX_CELL = 120
ORDER = ("reproduced", "contradicted", "not applicable", "inconclusive")
COLUMNS = ["id", "claim", "model", "ours [95% CI]", "paper", "n", "verdict"]


@dataclass(frozen=True)
class Ledger:
    """What a migrated study's ``measure(inputs, config)`` returns: the engine's rows
    (:func:`wobble.report.engine.measure_all`), the ledger's title and its footnotes (models, sample, controls)."""

    title: str
    engine_rows: list = field(default_factory=list)
    notes: tuple[str, ...] = ()

    def rows(self) -> list[dict]:
        return list(self.engine_rows)


def _get(row: dict, key: str, default=None):
    v = row.get(key, default)
    return default if is_missing(v) else v


def normalize(rows: Sequence[dict]) -> list[dict]:
    """Rows with the engine's fields, filled for old rows: the id from the study, the claim's place among the
    study's claims and the model; the short name from the claim id; the would-be verdict from the interval."""
    out, order = [], {}
    for r in rows:
        r = dict(r)
        r.setdefault("claim", "")
        key = (r["study"], r["claim"])
        order.setdefault(key, sum(1 for k in order if k[0] == r["study"]) + 1)
        if is_missing(r.get("row_id")):
            model = str(_get(r, "model", DASH))
            r["row_id"] = (f"{study_prefix(r['study'])}-{order[key]:02d}-"
                           f"{'none' if model == DASH else model_slug(model)}")
            r["name"] = _get(r, "name") or r["claim"]
            r["order"] = order[key]
            r["counted"] = True
        if is_missing(r.get("would_be")):
            lo, hi = _get(r, "ci_low"), _get(r, "ci_high")
            r["would_be"] = (interval_verdict(float(lo), float(hi), float(_get(r, "null", 0.0)),
                                              int(_get(r, "predicted_direction", 1)))
                             if r["verdict"] == "not applicable" and lo is not None and hi is not None
                             else r["verdict"] if r["verdict"] != "not applicable" else "inconclusive")
        out.append(r)
    return out


def _counted(rows: Sequence[dict]) -> list[dict]:
    return [r for r in rows if str(_get(r, "counted", True)) != "False"]


def _despite(r: dict) -> bool:
    return str(_get(r, "reason", "")).startswith(f"{r['verdict']} despite")


def summary_lines(rows: Sequence[dict]) -> list[str]:
    """The counts: each verdict; how many decided rows stand despite a failed check; the would-be verdicts of
    the not-applicable and gated rows; how many rows were not measured."""
    rows = _counted(normalize(rows))
    n = {v: [r for r in rows if r["verdict"] == v] for v in ORDER}

    def would(rs: list[dict]) -> str:
        return ", ".join(f"{sum(r['would_be'] == v for r in rs)} {v}" for v in ORDER[:2] + ORDER[3:])

    gated = [r for r in n["inconclusive"] if str(_get(r, "reason", "")).startswith("gated")]
    unmeasured = [r for r in n["inconclusive"] if str(_get(r, "reason", "")).startswith("not measured")]
    parts = [f"{len(n[v])} {v}" + (f" ({sum(map(_despite, n[v]))} despite a failed check)"
                                  if v in ORDER[:2] and any(map(_despite, n[v])) else "") for v in ORDER]
    return [f"{len(rows)} rows: " + ", ".join(parts) + ".",
            f"Not applicable, by the verdict the interval alone would give: {would(n['not applicable'])}.",
            f"Inconclusive: {len(unmeasured)} not measured in this run; {len(gated)} gated, whose intervals alone "
            f"would say: {would(gated)}.", *paper_and_power_lines(rows)]


def _num(v) -> str:
    return DASH if v is None or is_missing(v) else f"{float(v):.3g}"


def _ours(r: dict, short: bool = False) -> str:
    """``value [low, high]``; in the short table (``short``) an interval the engine does not let decide the row
    is not printed as if it did: ``0.112 (bootstrap over 16 questions, not used)``, ``0 (no spread)``."""
    e = _get(r, "effect")
    if e is None:
        return DASH
    lo, hi = _get(r, "ci_low"), _get(r, "ci_high")
    if short and _get(r, "ci_not_used"):
        return f"{_num(e)} ({r['ci_not_used']})"
    return _num(e) + ("" if lo is None or hi is None else f" [{_num(lo)}, {_num(hi)}]")


def _needed(r: dict) -> str:
    """What the row's sample would need to detect the paper's effect, where it could not."""
    n = _get(r, "items_needed")
    if n is None or flag(_get(r, "detects_paper_effect")) is not False:
        return ""
    pop = _get(r, "population")
    return (f"to detect the paper's effect: needed about {int(n):,} {_get(r, 'unit_name', 'items')}"
            + ("" if pop is None else f" (the population has {int(pop):,})"))


def _verdict_cell(r: dict) -> str:
    v, why = r["verdict"], str(_get(r, "reason", ""))
    if _despite(r):
        return why.split("; ")[0]
    if v == "not applicable":
        return f"not applicable — the interval alone would say {r['would_be']}"
    if why.startswith("gated"):
        return f"inconclusive (gated) — the interval alone would say {r['would_be']}"
    if why.startswith("not measured"):
        return "not measured"
    return v


def _clip(s: str) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= MAX_CELL else s[:MAX_CELL - 1] + "…"


def table_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """The short table, one line per counted row, no cell over :data:`MAX_CELL` characters."""
    out = []
    for r in _counted(normalize(rows)):
        n = _get(r, "n_items")
        out.append([r["row_id"], r["name"], _get(r, "model", DASH), _ours(r, short=True), _get(r, "paper", DASH),
                    DASH if n is None else f"{int(n)} {_get(r, 'unit_name', 'items')}", _verdict_cell(r)])
    return pd.DataFrame([[_clip(c) for c in row] for row in out], columns=COLUMNS)


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _section(rs: list[dict]) -> list[str]:
    """One claim: its declaration once, then a line per model."""
    c = rs[0]
    head = f"{study_prefix(c['study'])}-{int(c['order']):02d}"
    side = "above" if int(_get(c, "predicted_direction", 1)) > 0 else "below"
    paper = f"{_get(c, 'paper', DASH)} (from the paper's {_get(c, 'evidence', 'text')})"
    if _get(c, "paper_effect") is not None:
        paper += f"; as a number {_num(c['paper_effect'])}"
    pv = _get(c, "paper_verdict")
    paper += f"; the paper's own verdict under this rule: {pv}" if pv else "; no verdict for the paper's own number"
    freeze = _get(c, "freeze")
    lines = [f"### {head} {c['name']}", "", f"> “{c['quote']}” ({c['section']})", "",
             f"* Statistic: {c['effect_definition']} ({_get(c, 'unit', '')}); null {_num(_get(c, 'null', 0.0))}, "
             f"the claim predicts {side}.",
             f"* Unit: {_get(c, 'unit_name', 'items')}"
             + (f", at least {int(c['min_units'])}" if _get(c, "min_units") is not None else "")
             + f"; scope: {_get(c, 'scope', 'per model')}.",
             f"* Gates: {_get(c, 'gates') or 'none'}.",
             f"* Preconditions: {_get(c, 'precondition') or 'none'}.",
             f"* Definition frozen at commit {freeze}." if freeze else "* Definition: no freeze commit recorded.",
             f"* Paper: {paper}.", ""]
    for r in rs:
        bits = [f"`{r['row_id']}` {_get(r, 'model', DASH)}: {_ours(r)}"]
        if _get(r, "n_items") is not None:
            bits.append(str(_get(r, "interval", "")) or f"{int(r['n_items'])} {_get(r, 'unit_name', 'items')}")
        for key in ("gate_figures", "precondition_note", "note", "diagnostics"):
            if _get(r, key):
                bits.append(str(r[key]))
        if _needed(r):
            bits.append(_needed(r))
        lines.append("* " + "; ".join(bits) + f" → **{r['verdict']}**: {_get(r, 'reason', '')}")
    return lines + [""]


def render_findings(rows: Sequence[dict], title: str, notes: Sequence[str] = (),
                    study_notes: Mapping[str, Sequence[str]] | None = None) -> str:
    """``findings.md``: counts, the short table, a section per claim, the rule and the notes; ``study_notes``
    (the merged ledger) each study's own notes under a heading of its own."""
    rows = normalize(rows)
    table = table_frame(rows)
    lines = [f"# {title}", "", *(f"* {s}" for s in summary_lines(rows)), "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(_md(v) for v in row) + " |" for row in table.itertuples(index=False)]
    lines += ["", "## Claims", ""]
    for key in dict.fromkeys((r["study"], r["claim"]) for r in rows):
        lines += _section([r for r in rows if (r["study"], r["claim"]) == key])
    lines += ["## Rule and notes", "", f"* {VERDICT_RULE}", f"* {FAMILY_WISE}", *(f"* {n}" for n in notes)]
    for study, own in (study_notes or {}).items():
        lines += ["", f"### Notes of {study}", "", *(f"* {n}" for n in own)]
    return "\n".join(lines) + "\n"


def write_findings(rows: Sequence[dict], stem: str | Path, title: str, notes: Sequence[str] = (),
                   study_notes: Mapping[str, Sequence[str]] | None = None) -> list[Path]:
    """``stem.md`` (:func:`render_findings`), ``stem.csv`` (every field of every row, numbers at full precision,
    so a ledger merged from it prints the digits the study's own ledger prints) and ``stem.tex`` (the short
    table), written atomically."""
    stem = Path(stem)
    rows = normalize(rows)
    paths = [with_ext(stem, ".md"), with_ext(stem, ".csv"), with_ext(stem, ".tex")]
    with atomic_write(paths[0]) as f:
        f.write(render_findings(rows, title, notes, study_notes))
    with atomic_write(paths[1]) as f:
        pd.DataFrame(rows).to_csv(f, index=False, lineterminator="\n")
    flat = [f"{s}: {n}" for s, own in (study_notes or {}).items() for n in own]
    with atomic_write(paths[2]) as f:
        f.write(to_latex(table_frame(rows), title, [*summary_lines(rows), FAMILY_WISE, *notes, *flat]))
    return paths


def ledger_notes(csv_path: str | Path) -> list[str]:
    """A study ledger's own notes (models, samples, controls), from the ``findings.md`` its step writes beside
    its ``findings.csv``: the bullets of "Rule and notes" but the rule and the family-wise note every ledger
    prints; none for a ledger without that part."""
    md = with_ext(Path(csv_path).with_suffix(""), ".md")
    if not md.is_file():
        return []
    part = md.read_text(encoding="utf-8").partition("\n## Rule and notes\n")[2].partition("\n### ")[0]
    notes: list[str] = []
    for ln in part.splitlines():
        if ln.startswith("* "):
            notes.append(ln[2:])
        elif ln.strip() and notes:
            notes[-1] += " " + ln.strip()
    return [n for n in notes if not n.startswith("Verdict rule") and n != FAMILY_WISE]


def merge_ledgers(paths: Sequence[str | Path], stem: str | Path) -> list[Path]:
    """One ledger across studies (``<root>/findings.*``) from the studies' ``findings.csv`` files, with the
    verdict counts per study and each study's own notes (:func:`ledger_notes`) under a heading per study."""
    read = [(p, read_rows(p)) for p in paths]
    rows = [r for _, rs in read for r in rs]
    studies = list(dict.fromkeys(r["study"] for r in rows))
    counted = [r for r in rows if str(r.get("counted", True)) != "False"]
    per_study = ["Per study: " + "; ".join(
        f"{s} " + ", ".join(f"{sum(1 for r in counted if r['study'] == s and r['verdict'] == v)} {v}" for v in ORDER)
        for s in studies) + "."] if len(studies) > 1 else []
    own = {rs[0]["study"]: ledger_notes(p) for p, rs in read if rs}
    return write_findings(rows, stem, "Claims ledger: every study", per_study, {s: n for s, n in own.items() if n})
