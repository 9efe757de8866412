"""The pieces of the icl_bias claims ledger's rows: one claim's measurement for one row's models
(:func:`measure_one`, the count :func:`measure_count`), one claim's effect on the paper's cells by the same
statistic (:func:`paper_one`), and the ledger's notes; :mod:`.claims` puts them together."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from wobble.report.claims import Claim, Measurement
from wobble.stats import binomial_p_above, exact_binomial_interval
from wobble.studies.icl_bias import claims_measure as M
from wobble.studies.icl_bias.claims_measure import BASE, INTERVENTIONS, TUNED, Spec
from wobble.studies.icl_bias.pairs import PAIRS, split_source

BOOT = "bootstrap over test items within each pair (pairs fixed)"
EXACT = "exact binomial (Clopper-Pearson) over the pooled answers (the bootstrap has no spread)"


def ordered_pairs(pairs) -> list[str]:
    """``pairs`` once each, in the registry's order."""
    chosen = set(pairs)
    return [p for p in PAIRS if p in chosen]


def _neither(cells: M.ItemCells, read) -> str:
    keys = dict.fromkeys((m, p, c) for m, p, c, _ in read)
    preds = [x for k in keys for x in cells.answers.get(k, [])]
    none = sum(1 for x in preds if x is None)
    return f"{none} of {len(preds)} answers carry no label (neither h1 nor h2)" if none else ""


def measure_one(spec: Spec, cells: M.ItemCells, boots: Sequence[M.ItemCells], models: Mapping[str, str],
                pairs: Sequence[str], interventions: Sequence[str]) -> Measurement:
    """One claim for one row's models: the statistic on every item, its bootstrap interval, the preconditions."""
    rec = M.Recorder(cells)
    point = spec.stat(rec, models, pairs, interventions)
    if math.isnan(point):
        return Measurement(None, None, None, 0, note="the run has no pair with every cell the claim reads "
                           f"(pairs with answers: {', '.join(pairs) or 'none of the claim'})",
                           precondition_note="not checked: no cell measured")
    used = ordered_pairs(p for _, p, _, _ in rec.read)
    reps = [spec.stat(b, models, pairs, interventions) for b in boots]
    lo, hi = M.interval(reps)
    how = BOOT
    if spec.share and lo == hi:
        k, n = cells.pooled_share(rec.read)
        a, b = exact_binomial_interval(k, n)
        lo, hi, how = 100 * a - 50, 100 * b - 50, EXACT
    constant = M.constant_cells(cells, rec.read)
    applicable = not constant
    pre = M.constant_note(constant, len(dict.fromkeys((m, p, c) for m, p, c, _ in rec.read)))
    if spec.prior and applicable:
        k, n = cells.pooled_share([(models["model"], p, "baseline", "h1") for p in used])
        pv = binomial_p_above(k, n, 0.5)
        applicable = pv < 0.05
        pre += (f"; baseline h1-accuracy {k}/{n} = {100 * k / max(n, 1):.1f}%, one-sided exact binomial p = {pv:.3g} "
                "against 50%")
    return Measurement(point, lo, hi, sum(cells.n_items(p) for p in used), note=f"{len(used)} pair(s): "
                       f"{', '.join(used)}", applicable=applicable, precondition_note=pre, interval=how,
                       diagnostics=_neither(cells, rec.read))


def measure_count(cells: M.ItemCells, boots: Sequence[M.ItemCells], models: Sequence[str],
                  interventions: Sequence[str]) -> Measurement | None:
    """The share of the changes (model x intervention x target) above 0, Clopper-Pearson over the changes; each
    change's own bootstrap interval in the diagnostics."""
    if not models:
        return None
    rec = M.Recorder(cells)
    changes = M.intervention_changes(rec, models, cells.pairs, interventions)
    k, n = M.share_positive(changes.values())
    if n == 0:
        return Measurement(None, None, None, 0, note="no intervention change measured in this run")
    lo, hi = exact_binomial_interval(k, n)
    boot = [M.intervention_changes(b, models, cells.pairs, interventions) for b in boots]
    above, parts = 0, []
    for key, value in changes.items():
        if math.isnan(value):
            continue
        a, b = M.interval([r[key] for r in boot])
        above += a > 0
        parts.append(f"{key[0]} {key[1]}→{key[2]} {value:+.1f} [{a:.1f}, {b:.1f}]")
    constant = M.constant_cells(cells, rec.read)
    pre = M.constant_note(constant, len(dict.fromkeys((m, p, c) for m, p, c, _ in rec.read)))
    return Measurement(k / n, lo, hi, n, note=f"{k} of {n} changes above 0", applicable=not constant,
                       precondition_note=pre, interval="exact binomial (Clopper-Pearson) over the changes",
                       population=2 * len(INTERVENTIONS) * len(models),
                       diagnostics=f"{above} of {n} changes have their own 95% interval ({BOOT}) above 0; "
                                   + "; ".join(parts))


# ------------------------------------------------------------------------------------------ the paper's effect

def _paper_roles(spec: Spec) -> list[dict[str, str]]:
    if spec.who == "compare":
        return [{"base": BASE, "tuned": TUNED}]
    if spec.who == "all":
        return [{BASE: BASE, TUNED: TUNED}]
    return [{"model": m} for m in ((BASE, TUNED) if spec.who == "both" else (spec.who,))]


def paper_one(claim: Claim, spec: Spec, cells: M.DictCells, pairs: Sequence[str],
               interventions: Sequence[str]) -> tuple[float, str]:
    """``(value, text)``: ``claim``'s statistic on the paper's cells of ``pairs`` (the weaker of its two models
    where it is about both; NaN when a cell is missing) and the cells or per-model values it read."""
    values, shown = [], []
    for models in _paper_roles(spec):
        rec = M.Recorder(cells)
        v = spec.stat(rec, models, pairs, interventions)
        values.append(v)
        if len(_paper_roles(spec)) > 1:
            shown.append(f"{models['model']} {v:+.2f}")
        elif len(rec.read) <= 4:
            shown += [f"{m} {c} {ms} {p} {cells.acc(m, p, c, ms):g}" for m, p, c, ms in rec.read]
    if any(math.isnan(v) for v in values):
        return math.nan, ""
    value = min(values) if claim.direction > 0 else max(values)
    if len(values) > 1:
        shown.append("the weaker counts")
    return value, "; ".join(shown)


# ---------------------------------------------------------------------------------------------- the ledger

def notes(paper_models: Mapping[str, str], pairs: Sequence[str], interventions: Sequence[str]) -> tuple[str, ...]:
    """The ledger's footnotes: stand-ins, pairs (of the paper, the mirror, the run), interventions, precondition."""
    stand_ins = ", ".join(f"{m} for {p}" for m, p in paper_models.items()) or "none (icl_bias.paper_models is empty)"
    raw = sum(1 for p in PAIRS.values() if split_source(p)[0] is not None)
    return (
        f"Models standing in for the paper's: {stand_ins}. A claim about one model's behaviour has a row per model "
        "standing in for it; a comparison one row (first stand-in of each).",
        f"Pairs: the paper has {len(PAIRS)} (Table 1); this mirror has raw data for {raw} (the four CivilComments "
        f"identity pairs have no annotations here); this run measures {len(pairs)}: {', '.join(pairs)}. A row speaks "
        "of the run's pairs (test items resampled within each pair, pairs fixed); the paper's effect is its own "
        "statistic on the same pairs and interventions (Tables 4-5), where the claim has cells there.",
        f"Interventions run: {', '.join(interventions)} (paper: {', '.join(INTERVENTIONS)}).",
        "Constant classifiers (wobble's precondition, not the paper's): a cell where one label covers more than "
        "95% of the answers scores 50/50 on the balanced test set whatever the model prefers, so a claim reading "
        "it does not apply; the row names each such cell with its labels before calibration. With a small model "
        "this is mostly contextual calibration's doing (§2.2, as the authors apply it): the test items' label-word "
        "probabilities vary little and all lie on one side of the content-free prompts' ('[MASK]', 'N/A', ''), "
        "so dividing by the latter gives every item the same label. Such cells are flagged, not changed: "
        "calibration is the paper's method.",
        "Table 5 prints 85.4 / 15.6 for the sentiment/punctuation pair with instructions towards h2 (sums to 101); "
        "the h2 value is used as printed.",
    )


#END
