"""The claims ledger's definitions and its verdict rule (the old path; :mod:`wobble.report.engine` is the new one).

A study declares its claims (:class:`Claim`: the quote, its section, the statistic that operationalizes it,
which direction the claim predicts, the null the interval must exclude, the precondition under which the claim
applies to a model, and where the paper's own evidence is) and measures each one (:class:`Measurement`: effect,
95 % interval over the claim's unit, sample size, and whether the precondition held). :func:`verdict` applies
the rule, in this order:

1. **inconclusive** when the measurement is missing;
2. **not applicable** when the claim's precondition fails for this model (e.g. a model at chance cannot show
   that a follow-up flips its correct answers): the claim does not speak to it, which is not a contradiction;
3. **inconclusive** when it rests on fewer than ``Claim.min_items`` units, has no interval, or is degenerate;
4. **inconclusive** when the 95 % interval contains the null value (``Claim.null``, 0 for a difference);
5. **reproduced** when the interval lies entirely on the side the claim predicts (``direction`` +1: above the
   null, -1: below), **contradicted** when it lies entirely on the other side.

**The paper passes its own row.** Where the claim's evidence is a published table (``evidence="table"``), the
study computes the paper's effect from ``paper/`` with the same statistic function as ours (restricted to the
cells the run measures where the claim is about those cells) and :func:`paper_verdict` applies the same rule to
it as a point (the paper's numbers carry no interval). A row the paper itself would not pass measures something
other than the claim. Claims whose evidence is the paper's prose or a plot (``evidence="text"``/``"figure"``)
carry the number read there, if any, and get no paper verdict.

Beside the verdict the ledger says what effect the sample could detect (:func:`detectable_effect`) and, where
that is larger than the paper's effect, about how many units would be needed — capped by how many exist
(:func:`sample_vs_paper`: "not attainable" when more tasks would be needed than the benchmark has).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Mapping

from wobble.report.cells import is_missing as missing

Verdict = Literal["reproduced", "contradicted", "inconclusive", "not applicable"]
VERDICTS: tuple[Verdict, ...] = ("reproduced", "contradicted", "not applicable", "inconclusive")
Evidence = Literal["table", "text", "figure"]

VERDICT_RULE = (
    "Verdict rule (wobble.report.claims): inconclusive if the measurement is missing; "
    "not applicable if the claim's precondition fails for the model; "
    "otherwise inconclusive if it rests on fewer units than the claim's minimum, has no interval or is "
    "degenerate, or if its 95% interval (bootstrap over the claim's unit; exact binomial where a share has no "
    "spread) contains the null value; reproduced if the interval lies entirely on the side the claim predicts; "
    "contradicted if entirely on the other side. The paper's own verdict applies the same rule to the paper's "
    "effect computed from its published table by the same statistic (a point: the paper gives no interval). "
    "The rule, thresholds and preconditions are those of the commit that made this ledger; these claims carry no "
    "freeze commit, so the ledger does not say which runs preceded them."
)


@dataclass(frozen=True)
class Claim:
    """A headline claim of a paper, declared by its study before the run.

    ``effect`` names our statistic; ``precondition`` what must hold in a model (or run) for the claim to speak
    to it, measured by the study and reported in :attr:`Measurement.applicable`; ``unit_name`` the unit the
    claim is about and the interval resamples (items, questions, tasks, pairs); ``per_model``: one row per
    model (a claim about a model's behaviour), else one pooled row. ``evidence``: "table" — the paper's
    effect is computed from ``paper/`` (:attr:`Findings.paper_effects`); "text"/"figure" — read from the prose
    or a plot, ``paper_effect`` holds that number (None: the paper prints none comparable).
    """

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
    evidence: Evidence = "table"
    paper_effect: float | None = None
    precondition: str = ""
    unit_name: str = "items"
    per_model: bool = False

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"claim {self.id}: direction must be +1 or -1, got {self.direction}")
        if self.evidence not in ("table", "text", "figure"):
            raise ValueError(f"claim {self.id}: evidence must be table, text or figure, got {self.evidence!r}")
        if self.evidence == "table" and self.paper_effect is not None:
            raise ValueError(f"claim {self.id}: a table's effect is computed from paper/, not typed "
                             "(Findings.paper_effects)")


@dataclass(frozen=True)
class Measurement:
    """Our measured effect for one claim (and one model, for a per-model claim).

    ``applicable``: whether the claim's precondition held, with ``precondition_note`` saying what was measured
    (e.g. "initial accuracy 3/15, exact binomial p = 0.98 against chance 50 %"); ``interval`` how the 95 %
    interval was made; ``population`` how many units exist at all (caps the items-needed estimate);
    ``diagnostics`` what a reader needs to trust the number (cut generations, unextractable answers).
    """

    effect: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    degenerate: bool = False
    note: str = ""
    applicable: bool = True
    precondition_note: str = ""
    interval: str = "bootstrap over items"
    population: int | None = None
    diagnostics: str = ""


#: What a study measures per claim: one measurement, one per model (``Claim.per_model``), or None (not run).
Measured = Mapping[str, "Measurement | None | Mapping[str, Measurement | None]"]


@dataclass(frozen=True)
class Findings:
    """What a study's ``measure`` returns: its claims, their measurements (None = not measured in this run;
    a ``{model: Measurement}`` dict for per-model claims), the paper's effect per table-backed claim computed
    from ``paper/`` (``paper_effects``) with the text shown for it (``paper_values``, overrides
    ``Claim.paper_value``), and footnotes (models, sample, controls)."""

    title: str
    claims: tuple
    measured: dict
    paper_values: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    paper_effects: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        from wobble.report.ledger import ledger_rows

        return ledger_rows(self.claims, self.measured, self.paper_values, self.paper_effects)

    def paper_failures(self) -> list[str]:
        """Table-backed claims whose paper effect is missing or does not pass the rule (should be none)."""
        bad = []
        for c in self.claims:
            if c.evidence != "table":
                continue
            v = paper_verdict(c, self.paper_effects.get(c.id))
            if v != "reproduced":
                bad.append(f"{c.id}: paper effect {self.paper_effects.get(c.id)!r} -> {v}")
        return bad


def verdict(claim: Claim, m: Measurement | None) -> tuple[Verdict, str]:
    """The rule (module docstring) -> (verdict, reason)."""
    if m is None:
        return "inconclusive", "not measured in this run"
    if not m.applicable:
        return "not applicable", "precondition not met" + (f": {m.precondition_note}" if m.precondition_note else "")
    if missing(m.effect):
        return "inconclusive", "not measured in this run" + (f": {m.note}" if m.note else "")
    if m.degenerate:
        return "inconclusive", "degenerate cells" + (f": {m.note}" if m.note else "")
    if m.n_items < claim.min_items:
        return "inconclusive", f"{m.n_items} {claim.unit_name} < {claim.min_items} required"
    if missing(m.ci_low) or missing(m.ci_high):
        return "inconclusive", "no interval"
    lo, hi = float(m.ci_low), float(m.ci_high)
    if lo <= claim.null <= hi:
        return "inconclusive", f"95% CI [{lo:.3g}, {hi:.3g}] contains {claim.null:g}"
    above = lo > claim.null
    if above == (claim.direction > 0):
        return "reproduced", "95% CI excludes the null on the predicted side"
    return "contradicted", "95% CI excludes the null on the opposite side"


def paper_verdict(claim: Claim, effect: float | None) -> Verdict | None:
    """The verdict the paper's own effect gets under :func:`verdict` (a point: its interval is the point and
    its sample the claim's minimum); None where the claim's evidence is not a table or no effect is known."""
    if claim.evidence != "table" or missing(effect):
        return None
    point = float(effect)
    return verdict(claim, Measurement(point, point, point, claim.min_items))[0]


def detectable_effect(m: Measurement | None) -> float | None:
    """The smallest true effect this sample detects with ~80 % power at the 5 % level: 2.8 standard errors,
    the standard error read off the 95 % interval as (high − low) / 3.92."""
    if m is None or missing(m.ci_low) or missing(m.ci_high):
        return None
    return 2.8 * (float(m.ci_high) - float(m.ci_low)) / 3.92


def paper_effect(claim: Claim, computed: float | None = None) -> float | None:
    """The paper's effect in the claim's unit: the value computed from its table (``evidence="table"``), else
    the number read from its text or figure (``Claim.paper_effect``)."""
    if claim.evidence == "table":
        return None if missing(computed) else float(computed)
    return None if claim.paper_effect is None else float(claim.paper_effect)


def sample_vs_paper(claim: Claim, m: Measurement | None, effect: float | None
                    ) -> tuple[bool | None, float | None]:
    """(could this sample detect an effect as large as the paper's, units needed if not): the paper's distance
    from the null, |effect − null|, against :func:`detectable_effect`; units needed = n · (detectable /
    distance)², the usual 1/√n scaling of an interval's width; ``inf`` for a zero distance (None where either
    number is missing)."""
    det = detectable_effect(m)
    if det is None or effect is None or m is None or not m.n_items:
        return None, None
    gap = abs(effect - claim.null)
    if det <= gap:
        return True, None
    return False, (math.inf if gap == 0 else math.ceil(m.n_items * (det / gap) ** 2))
