"""The verdict rule of claims declared with :mod:`wobble.report.engine`, as pure functions.

1. :func:`interval_verdict`: the interval alone — reproduced when the 95 % interval lies entirely on the side the
   claim predicts, contradicted when entirely on the other side, inconclusive when it contains the null (or the
   measurement cannot decide: not measured, too few units, an interval the bootstrap cannot give).
2. :func:`resolve`: the checks that failed for this row. Each check (a precondition: does the claim speak to this
   model; a gate: can the measurement be trusted in every cell it reads) declares beforehand which way its failure
   biases the statistic (:data:`BIASES`). A decided interval that no failed check can explain stays decided and
   says so ("contradicted despite room to fall"); otherwise the row is not applicable (a precondition failed) or
   inconclusive (only gates failed), and keeps the verdict the interval alone would give (its would-be verdict).
3. :func:`exists_verdict`: an existence claim ("reaching over 60 %", "some models") is decided across the models
   run: reproduced when some model is; never contradicted, since models that do not reach it say nothing of the
   models that do (the paper's): "not reached by the models run" is inconclusive.
"""

from __future__ import annotations

from typing import Literal, Sequence

from wobble.report.intervals import MIN_CLUSTERS

Verdict = Literal["reproduced", "contradicted", "inconclusive", "not applicable"]
Bias = Literal["toward the null", "toward the claim", "against the claim", "unknown"]
Kind = Literal["precondition", "gate"]
#: Which way a failed check pushes the statistic: toward the null (shrinks an effect, never past the null: it can
#: explain an undecided interval only), toward the claim (can explain "reproduced"), against the claim (can
#: explain "contradicted"), unknown (can explain anything).
BIASES: tuple[Bias, ...] = ("toward the null", "toward the claim", "against the claim", "unknown")
_EXPLAINS: dict[Bias, tuple[str, ...]] = {
    "toward the null": (), "toward the claim": ("reproduced",), "against the claim": ("contradicted",),
    "unknown": ("reproduced", "contradicted"),
}

VERDICT_RULE = (
    "Verdict rule (wobble.report.rules, one engine for every claim): the 95% interval is computed by the ledger "
    "over the claim's declared unit (cluster bootstrap; an exact interval over the units where the bootstrap has "
    f"no spread or rests on fewer than {MIN_CLUSTERS} units; none for a statistic without one, which leaves the row "
    "inconclusive). Alone, the interval says reproduced if it lies entirely on the side the claim predicts, "
    "contradicted if entirely on the other side, else inconclusive (also when not measured or on fewer units than "
    "the claim's minimum). Each precondition and gate states which way its failure biases the statistic: a decided "
    "interval that no failed check can explain stays decided ('despite'); otherwise the row is not applicable (a "
    "precondition failed) or inconclusive (a gate failed), and prints the verdict the interval alone would give. "
    "Gates are read in every cell the claim reads. An existence claim is reproduced when some model run is "
    "(each measured at 95% jointly over the models) and never contradicted by models that do not reach it. A row on cells where the paper's own effect, through the same "
    "statistic and rule, does not pass is inconclusive: it cannot test the claim there. Each claim's definition is the one of the freeze commit printed "
    "in its section; the paper's own verdict applies the same rule to the paper's effect as a point."
)

#: Every ledger's note on multiple comparisons (docs/ledger.md, "Family-wise error").
FAMILY_WISE = ("Family-wise error: each row is a 95% test; no correction runs across the claims of a study or "
               "across models, except within an existence claim (its models jointly at 95%) and within a claim that "
               "corrects over its own parts (a largest or smallest of k parts, each at 1 − 0.05/k).")


def interval_verdict(low: float | None, high: float | None, null: float, direction: int) -> Verdict:
    """The interval alone: reproduced / contradicted when it lies entirely on the predicted / other side of
    ``null`` (``direction`` +1: above), inconclusive when it contains the null or is missing."""
    if low is None or high is None or low != low or high != high:
        return "inconclusive"
    if low <= null <= high:
        return "inconclusive"
    return "reproduced" if (low > null) == (direction > 0) else "contradicted"


def explains(bias: Bias, verdict: Verdict) -> bool:
    """Whether a failure biased this way could have produced ``verdict`` (an undecided row: always)."""
    if bias not in _EXPLAINS:
        raise ValueError(f"bias must be one of {BIASES}, got {bias!r}")
    return verdict not in ("reproduced", "contradicted") or verdict in _EXPLAINS[bias]


def resolve(alone: Verdict, failed: Sequence[tuple[str, Bias, Kind]]) -> tuple[Verdict, Verdict, str]:
    """(verdict, would-be verdict, why) from the interval's verdict ``alone`` and the failed checks as
    (name, bias, kind). Decided despite failures that cannot explain it; else not applicable if a precondition
    explains it, inconclusive if only gates do."""
    if not failed:
        return alone, alone, ""
    explaining = [f for f in failed if explains(f[1], alone)]
    names = ", ".join(f[0] for f in failed)
    if not explaining:
        return alone, alone, f"{alone} despite {names}"
    blocked: Verdict = "not applicable" if any(k == "precondition" for _, _, k in explaining) else "inconclusive"
    label = "not applicable" if blocked == "not applicable" else "gated"
    who = ", ".join(f"{n} ({b})" for n, b, _ in explaining)
    return blocked, alone, f"{label} — the interval alone would say {alone}; failed: {who}"


def exists_verdict(per_model: Sequence[Verdict]) -> tuple[Verdict, str]:
    """An existence claim across the models run, from each model's resolved verdict: reproduced when some model
    is (one model reaching it is what the claim states); inconclusive, "not reached by the models run", when every
    model is contradicted — other models not reaching it cannot contradict that some model does; not applicable
    when no model is applicable; inconclusive otherwise (one undecided model leaves the claim open)."""
    vs = list(per_model)
    if not vs:
        return "inconclusive", "not measured in this run"
    k = sum(v == "reproduced" for v in vs)
    if k:
        return "reproduced", f"{k} of {len(vs)} models reach it"
    if all(v == "contradicted" for v in vs):
        return "inconclusive", (f"not reached by the {len(vs)} models run: an existence claim is not contradicted by "
                                "models that do not reach it")
    if all(v == "not applicable" for v in vs):
        return "not applicable", f"the claim applies to none of the {len(vs)} models"
    return "inconclusive", f"no model reaches it; {sum(v != 'contradicted' for v in vs)} of {len(vs)} undecided"
