"""The icl_bias claims ledger: the engine's rows for the claims of :mod:`.claims` on the run's stored answers
(labelled by how they were calibrated), the paper's effect by the same statistic on the pairs the run measured
(each model's row its paper model's where a claim has a row per stand-in), the rows under the other calibrations
of :mod:`.calibration` (does the verdict survive? shown, not counted), the notes each row needs (the
demonstration draws, the words of the claim it does not test, the count's classification of the changes, the
precondition arms that are constant classifiers, the paper's number first in its cell), and the ledger's notes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.report.engine import ClaimSpec, measure_claim
from wobble.report.findings import Ledger
from wobble.studies.icl_bias import calibration as K
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims import (CAVEATS, CLAIMS, COUNT, NOT_MEASURED, READS, row_models,
                                           run_interventions, unit_tables, with_interventions)
from wobble.studies.icl_bias.claims_changes import change_frame, paper_changes, run_changes
from wobble.studies.icl_bias.claims_checks import MIN_DRAWS, bind, unmeasured
from wobble.studies.icl_bias.claims_measure import BASE, INTERVENTIONS, TUNED, UNIT
from wobble.studies.icl_bias.pairs import PAIRS, split_source

STUDY = "icl_bias"
PAPER_TABLES = ("table4", "table5")


def measured_pairs(frame: pd.DataFrame) -> list[str]:
    """The pairs with answers in the run, in the registry's order (a configured pair without data is not one)."""
    got = set(frame["pair"])
    return [p for p in PAIRS if p in got]


def paper_effects(claims: Sequence[ClaimSpec], tables: Mapping[str, pd.DataFrame], pairs: Sequence[str],
                  interventions: Sequence[str], paper_models: Mapping[str, str] | None = None
                  ) -> dict[str, float | dict[str, float]]:
    """Each claim's statistic's point on the paper's cells of ``pairs`` (Tables 4-5; the count on the changes
    recomputed from them for ``interventions``). A per-model claim about both models gives each of
    ``paper_models`` (our model -> paper model) its paper model's effect; without ``paper_models``, the weaker
    of the two. None where no cell is there."""
    cells = M.paper_frame({t: tables[t] for t in ("table4", "table5")})
    cells = cells[cells["pair"].isin(pairs)]
    ivs = tuple(iv for iv in INTERVENTIONS if iv in interventions)
    out: dict[str, float | dict[str, float]] = {}
    for c in claims:
        if c.id == COUNT:
            changes = change_frame(paper_changes(cells, ivs)) if len(cells) else change_frame({})
            value = c.statistic.point(changes, "change") if len(changes) else math.nan
            if not math.isnan(value):
                out[c.id] = value
            continue
        sub = cells[cells["pair"].map(READS[c.id].pairs)] if len(cells) else cells
        who = READS[c.id].who
        models = (BASE, TUNED) if who == "both" else (who,) if who in (BASE, TUNED) else (None,)
        vals = {m: c.statistic.point(sub if m is None else sub[sub["model"] == m], UNIT) if len(sub) else math.nan
                for m in models}
        if who == "both" and paper_models is not None:
            mine = {ours: vals.get(theirs, math.nan) for ours, theirs in paper_models.items()}
            mine = {k: v for k, v in mine.items() if not math.isnan(v)}
            if mine:
                out[c.id] = mine
            continue
        value = math.nan if any(math.isnan(v) for v in vals.values()) else (min if c.direction > 0 else max)(
            vals.values())
        if not math.isnan(value):
            out[c.id] = value
    return out


def _row_frame(row: Mapping, table: Any) -> pd.DataFrame | None:
    """The part of the claim's table a measured row reads (a per-model row: its model's)."""
    if table is None or not len(table.frame) or not row.get("measured"):
        return None
    f = table.frame if row["model"] in ("all", "–") or row["scope"] != "per_model" else \
        table.frame[table.frame["model"] == row["model"]]
    return f if len(f) else None


def _draws_note(row: Mapping, table: Any) -> str:
    """How the row's interval treats the demonstration draws (prompt sets)."""
    f = _row_frame(row, table)
    if f is None:
        return ""
    n = int(f["draws"].min()) if "draws" in f else 1
    draws = f"{n} demonstration draw{'s' if n != 1 else ''} (prompt sets)"
    if row["claim"] == COUNT:
        return f"each change's sign from its own item-level interval, conditional on {draws} where one per cell"\
            if n < 2 else f"each change's sign from its own item-level interval, the {draws} resampled with the items"
    if n >= 2 and str(row.get("interval", "")).startswith("cluster bootstrap"):
        return f"{draws}, resampled with the items (crossed)"
    return f"conditional on {draws}: the variance between draws is in no interval"


def _count_note(changes: Sequence[Mapping]) -> str:
    by = {s: [c for c in changes if c["sign"] == s] for s in ("up", "down", "undecided")}
    return (f"{len(by['up'])} up, {len(by['down'])} down, {len(by['undecided'])} undecided of {len(changes)} changes "
            "(each by its own 95% interval over the items; undecided ones are counted neither way)")


def paper_cell(row: Mapping, paper_models: Mapping[str, str]) -> str:
    """The paper's cell of a row: the effect its paper verdict uses (on the run's pairs; a per-model row its paper
    model's, named) first, then the claim's ``paper_value`` (where it comes from, the all-pairs figure in
    brackets)."""
    eff = row.get("paper_effect")
    if eff is None or eff != eff:
        return row["paper"]
    num = f"{eff:+.3g}" if row.get("unit") == "points" else f"{eff:.3g}"
    who = paper_models.get(row["model"]) if row.get("scope") == "per_model" else None
    return f"{num}{f' ({who})' if who else ''}: {row['paper']}"


def _unmeasured(r: dict, claim: ClaimSpec, table: Any) -> None:
    """A precondition whose arm is a constant classifier in some of the row's cells: its status says it is
    unmeasured there (the engine writes "met", judged on the other cells) and the reason names what the arm
    predicts."""
    f = _row_frame(r, table)
    for name, (text, n, total) in (unmeasured(claim, f) if f is not None else {}).items():
        for status in ("met", "not met"):
            new = "unmeasured" if n == total else f"{status} where measured"
            r["precondition_note"] = r["precondition_note"].replace(f"{name}: {status} (", f"{name}: {new} (")
        r["reason"] = f"{r['reason']}; {name} unmeasured: {text}"


def _annotate(rows: list[dict], claims: Sequence[ClaimSpec], tables: Mapping[str, Any], changes: Sequence[Mapping],
              pairs: Sequence[str], paper_models: Mapping[str, str]) -> list[dict]:
    """Each row with the notes the engine does not write: how its interval treats the draws, what its claim's
    words it does not test, the count's classification, why a claim without the pairs it needs is not measured,
    the precondition arms that are constant classifiers, and the paper's number first in its cell."""
    by_id = {c.id: c for c in claims}
    out = []
    for r in rows:
        r = dict(r)
        c = by_id[r["claim"]]
        r["paper"] = paper_cell(r, paper_models)
        _unmeasured(r, c, tables.get(c.id))
        bits = [_draws_note(r, tables.get(c.id))]
        bits.append(CAVEATS.get(c.id, ""))
        if c.id == "sentiment_bias" and sum(PAIRS[p].code == "SA" for p in pairs) == 1:
            bits.append("one sentiment pair: the row cannot speak for 'rather than other features' generally")
        if c.id == COUNT and changes:
            bits.append(_count_note(changes))
        if c.id in NOT_MEASURED and not r["measured"]:
            r["reason"] = NOT_MEASURED[c.id]
        if c.id == COUNT and changes and not r["measured"]:
            r["reason"] = "no change decided: every change's own interval contains 0"
        r["note"] = "; ".join(b for b in (r.get("note"), *bits) if b)
        out.append(r)
    return out


def measure(frame: pd.DataFrame, paper_models: Mapping[str, str], interventions: Sequence[str], *,
            paper: Mapping[str, Any] | None = None, n: int = 1000, seed: int = 0) -> list[dict]:
    """The engine's rows of every claim on the answer table ``frame`` (:func:`~.claims_measure.item_frame`),
    each claim with a row per model standing in for its paper model (or one pooled row), its preconditions
    reading the whole run."""
    claims = bind(with_interventions(CLAIMS, interventions), frame)
    changes = run_changes(frame, run_interventions(claims), n_boot=n, seed=seed) if len(frame) else []
    tables = unit_tables(claims, frame, paper_models, n_boot=n, seed=seed, changes=changes)
    rows = []
    for i, c in enumerate(claims, 1):
        rows += measure_claim(c, i, tables.get(c.id), row_models(c, paper_models), n_boot=n, seed=seed,
                              paper_effect=(paper or {}).get(c.id))
    return _annotate(rows, claims, tables, changes, measured_pairs(frame) if len(frame) else [], paper_models)


def _short(r: Mapping) -> str:
    if r.get("effect") is None or r["effect"] != r["effect"]:
        return f"{r['verdict']} ({r['reason']})"
    ci = "" if r["ci_low"] is None else f" [{r['ci_low']:.3g}, {r['ci_high']:.3g}]"
    alone = "" if r["would_be"] == r["verdict"] else f", the interval alone: {r['would_be']}"
    return f"{r['effect']:+.3g}{ci} {r['verdict']}{alone}"


def with_sensitivity(rows: list[dict], others: Mapping[str, list[dict]]) -> list[dict]:
    """``rows`` (the stored answers) with each row's verdict under the other calibrations: in columns
    ``verdict_<method>`` and a ``calibration`` note saying whether the verdict survives (shown, not counted)."""
    out = []
    for r in rows:
        r = dict(r)
        bits = []
        for method, alt in others.items():
            a = next((x for x in alt if x["row_id"] == r["row_id"]), None)
            if a is None:
                continue
            key = method.replace(" ", "_")
            r[f"verdict_{key}"], r[f"would_be_{key}"] = a["verdict"], a["would_be"]
            same = "survives" if (a["verdict"], a["would_be"]) == (r["verdict"], r["would_be"]) else "changes"
            bits.append(f"{method}: {_short(a)} ({same})")
        r["calibration"] = "; ".join(bits)
        if bits:
            r["note"] = "; ".join(x for x in (r.get("note"), "wobble's calibration check — " + r["calibration"]) if x)
        out.append(r)
    return out


def kept(rows: Sequence[Mapping], others: Mapping[str, Sequence[Mapping]]) -> list[str]:
    """Per alternative calibration: how many rows keep their verdict (and would-be verdict)."""
    out = []
    for method, alt in others.items():
        by = {x["row_id"]: x for x in alt}
        same = sum((by[r["row_id"]]["verdict"], by[r["row_id"]]["would_be"]) == (r["verdict"], r["would_be"])
                   for r in rows if r["row_id"] in by)
        out.append(f"{method}: {same} of {len(rows)} rows keep their verdict")
    return out


CALIBRATION_TEXT = {
    "content-free": "the paper's content-free calibration (§2.2, Zhao et al. 2021)",
    "none": "uncalibrated answers (icl_bias.calibrate off, or no content-free prompt with finite scores): not the "
            "paper's method",
    "mixed": "the stored answers, content-free calibrated where the content-free prompts had finite scores and "
             "uncalibrated elsewhere: only in part the paper's method",
    "": "no label-word answers",
}


def draws_note(n_sets: int | None) -> tuple[str, ...]:
    """One line where the run's prompt sets (``icl_bias.splits.n_sets``) are fewer than the draws gate needs: no
    row can be decided, by construction."""
    if n_sets is None or n_sets >= MIN_DRAWS:
        return ()
    return (f"No row of this run can be reproduced or contradicted: it draws {n_sets} prompt set"
            f"{'s' if n_sets != 1 else ''} per cell (icl_bias.splits.n_sets), fewer than the {MIN_DRAWS} the "
            "'demonstration draws' gate needs, so that gate (bias unknown) fails in every cell by construction; "
            "each measured row is inconclusive or not applicable and prints what its interval alone would say.",)


def notes(paper_models: Mapping[str, str], pairs: Sequence[str], interventions: Sequence[str],
          sens: pd.DataFrame, *, stored: str = "content-free", kept_lines: Sequence[str] = (),
          cf: pd.DataFrame | None = None, n_sets: int | None = None) -> tuple[str, ...]:
    """The ledger's footnotes: whether the run's draws let any row be decided (:func:`draws_note`), stand-ins,
    pairs (of the paper, the mirror, the run), interventions, the draws, and what calibration does to the cells
    (computed from the run's probabilities)."""
    stand_ins = ", ".join(f"{m} for {p}" for m, p in paper_models.items()) or "none (icl_bias.paper_models is empty)"
    raw = sum(1 for p in PAIRS.values() if split_source(p)[0] is not None)
    return (
        *draws_note(n_sets),
        f"Models standing in for the paper's: {stand_ins}. A claim about one model's behaviour has a row per model "
        "standing in for it; a comparison one pooled row (the first stand-in of each).",
        f"Pairs: the paper has {len(PAIRS)} (Table 1); this mirror has raw data for {raw} (the four CivilComments "
        f"identity pairs have no annotations here); this run measured {len(pairs)}: {', '.join(pairs) or 'none'}. "
        "A row speaks of these pairs (test items resampled, pairs fixed); the paper's effect is the same statistic "
        "on the same pairs and interventions (Tables 4-5).",
        f"Interventions run: {', '.join(interventions)} (paper: {', '.join(INTERVENTIONS)}).",
        "Demonstration draws: the paper averages 3 prompt sets per cell (§4.1); each row says on how many draws it "
        "rests and whether its interval resamples them (crossed with the items) or is conditional on them.",
        f"Calibration: the rows use {CALIBRATION_TEXT.get(stored, stored)}. wobble's check, not the paper's: each "
        "row shows its verdict under the other calibrations, which were defined after the constant cells had been "
        "seen; their verdicts are shown, not counted (" + "; ".join(kept_lines or ["none run"]) + "). The batch "
        "mean thresholds each batch at its own mean P('1'), so it is nearly never constant by construction. "
        + " ".join(K.summary(sens)) + (" " + " ".join(K.content_free_summary(cf)) if cf is not None else ""),
        "Table 5 prints 85.4 / 15.6 for the sentiment/punctuation pair with instructions towards h2 (sums to 101); "
        "the h2 value is used as printed.",
    )


def read_scores(paths: Sequence[str]) -> dict[str, list]:
    """Score records per model (a path's folder is its model), each checked for the fields the claims read."""
    from wobble.io import read_jsonl

    by_model: dict[str, list] = {}
    for path in paths:
        records = list(read_jsonl(path))
        M.check_records(path, records)
        by_model.setdefault(Path(path).parent.name, []).extend(records)
    return by_model


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]) -> Ledger:
    """The study's claims ledger (``StudySpec.findings.measure``): the engine's rows on the stored answers
    (labelled by how they were calibrated: :func:`~.calibration.stored_method`), each with its verdict under the
    other calibrations, the paper's effects from Tables 4 and 5."""
    from wobble.report.cells import read_paper

    sec = config[STUDY]
    paper_models, boot = dict(sec["paper_models"]), dict(sec.get("bootstrap", {"n": 1000, "seed": 0}))
    records = read_scores(inputs["scores"])
    records = {m: records.get(m, []) for m in paper_models}
    stored = K.stored_method([r for rs in records.values() for r in rs])
    ivs = [iv for iv in INTERVENTIONS if iv in sec["interventions"]]
    # the stored answers as stored (recalibrate's "content-free" keeps them, labelling each answer's calibration)
    methods = {"stored": "content-free", **{m: m for m in K.METHODS[1:] if m != stored}}
    frames = {k: M.item_frame({mm: K.recalibrate(v, m) for mm, v in records.items()}, paper_models)
              for k, m in methods.items()}
    pairs = measured_pairs(frames["stored"])
    tables = {t: read_paper(inputs[f"paper_{t}"]) for t in PAPER_TABLES}
    paper = paper_effects(CLAIMS, tables, pairs, ivs, paper_models)
    rows = {m: measure(f, paper_models, ivs, paper=paper, n=boot["n"], seed=boot["seed"])
            for m, f in frames.items()}
    others = {m: rows[m] for m in methods if m != "stored"}
    main = with_sensitivity(rows["stored"], others)
    cf = K.content_free_table(K.read_predictions(inputs["predictions"])) if "predictions" in inputs else None
    return Ledger(f"Claims ledger: {STUDY} (Si et al. 2023)", main,
                  notes(paper_models, pairs, ivs, K.sensitivity(records), stored=stored,
                        kept_lines=kept(main, others), cf=cf, n_sets=sec.get("splits", {}).get("n_sets")))
