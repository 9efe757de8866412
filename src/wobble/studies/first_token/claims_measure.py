"""The first_token claims' statistics, gates, preconditions and diagnostics (declared in :mod:`.claims`; the
engine, :mod:`wobble.report.engine`, computes every interval, gate reading and verdict), and the paper's effect
taken by the same statistic on the paper's released numbers.

* Statistics: the engine's (:class:`wobble.report.intervals.Extreme` for "the largest level", "the smaller of
  High and Example", "the smaller of two steps": each part at 1 − α/K, Bonferroni, on the bootstrap and the exact
  route alike) and two :class:`~wobble.report.intervals.Custom` ones (:func:`pooled_letter_gap`,
  :func:`refusal_share`), whose rows on fewer than 30 questions the engine leaves undecided.
* :func:`gates`: the per-cell checks a claim reads in every cell it reads — answers naming an option
  (:data:`MIN_MAPPED`), wobble's position-bias control on the TEXT (:data:`MAX_POSITIONAL`, failed only where
  the one-sided 95 % lower bound over questions lies above it), answers cut at the token cap (:data:`MAX_CUT`) —
  each with the bias its failure has for the claim; :func:`near_uniform` for the temperature rows.
* Preconditions: text and first token can disagree (:func:`can_disagree`), the text refuses (:func:`refuses`), a
  first token not pinned to one letter (:func:`not_pinned`), a lowest-temperature rate above its uniform-sampling
  level (:func:`above_uniform`), and the claim passing with unmapped texts counted as agreement
  (:func:`unmapped_as_agreement`).
* :func:`diagnostics`: per-cell figures printed beside a row and read by no rule (the first token's position
  bias, the mismatch among texts naming an option).
* :func:`paper_effect`: the statistic per paper model on the paper's table, reduced over the models the paper's
  text says the claim holds for: the least favourable of them (every one must pass), the most favourable for an
  existence claim.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import pandas as pd

from wobble.report.engine import ClaimSpec, UnitTable, measure_all
from wobble.report.gates import Gate, Precondition
from wobble.report.intervals import Custom, Statistic, estimate
from wobble.report.rules import Bias, interval_verdict
from wobble.studies.first_token.claims_counts import UNIT, pooled_letter_gap

#: Degeneracy: at least this share of a cell's text answers name an option.
MIN_MAPPED = 0.5
#: Positional answering (wobble's position-bias control, on the text): the share of a cell's questions whose text
#: keeps its letter rather than its option over the shuffles is clearly above this — its one-sided 95 % lower
#: bound over questions (``cell_text_positional``) lies above it: most questions are answered by position.
MAX_POSITIONAL = 0.5
#: At most this share of a cell's text answers stopped at ``max_new_tokens``.
MAX_CUT = 0.1
#: Text and first token can disagree where at least this share of a cell's texts do not open with the
#: first-token letter (the paper's most format-following model, Mistral-7b-Instruct-v0.1, misses the letter in
#: 13 % of Low and 16 % of Example prompts of its released answers).
CAN_DISAGREE = 0.05
#: The text refuses: in at least this share of a cell's answers.
REFUSES = 0.05
#: A first token on one letter in at least this share of a cell's prompts is pinned to it.
PINNED = 0.95
#: Near-uniform sampling: a cell's text answer entropy over the shuffles at least this fraction of ln k (k the
#: options shown), on average over its questions.
NEAR_UNIFORM = 0.8


# ------------------------------------------------------------------------------------------------ statistics


def refusal_share(frame: pd.DataFrame) -> float:
    """Figure 2a's light bar over the whole bar: of all the mismatches in ``frame`` (the claim's mismatched
    prompts, one row each), the share where the text refuses and the first token does not — a ratio of sums, so
    each question weighs by its mismatches."""
    return float(frame["refused"].sum() / len(frame)) if len(frame) else math.nan


def refusal_statistic() -> Custom:
    """On the claim's ``subset``, the mismatched prompts: the engine hands it only those."""
    return Custom(refusal_share, "refusals' share of all mismatches (the text refuses, the first token does not), "
                  "pooled over the four levels' mismatched prompts: a ratio of sums", columns=("refused",))


def letter_gap_statistic(cell: str = "Example") -> Custom:
    return Custom(pooled_letter_gap, f"under {cell}, the entropy of the text's letter counts pooled over every "
                  "prompt minus the first token's (Figure 3a; texts naming no option left out)", cells=(cell,),
                  columns=("text_letter", "first_letter"))


# ------------------------------------------------------------------------------------------------ gates


def gates(mapped: Bias | None, positional: Bias | None, cut: Bias | None) -> tuple[Gate, ...]:
    """The per-cell gates with the bias their failure has for one claim (None: the claim does not read it). Each
    reads the cell's figure copied onto its rows (:func:`.claims_counts.with_cell_figures`): the whole cell's,
    whichever of its rows the statistic reads (the refusal claim's mismatched prompts)."""
    out = []
    if mapped is not None:
        out.append(Gate("degenerate", "cell_mapped", "share at least", MIN_MAPPED, mapped))
    if positional is not None:
        out.append(Gate("positional", "cell_text_positional", "share at most", MAX_POSITIONAL, positional))
    if cut is not None:
        out.append(Gate("truncated", "cell_truncated", "share at most", MAX_CUT, cut))
    return tuple(out)


def near_uniform(bias: Bias) -> Gate:
    """The text is not sampling near uniformly: its answer entropy over the shuffles below :data:`NEAR_UNIFORM`
    of ln k, mean over the cell's questions (read in both temperatures' cells)."""
    return Gate("near uniform", "h_text_norm", "mean below", NEAR_UNIFORM, bias)


# ------------------------------------------------------------------------------------------ preconditions


def _cell_means(f: pd.DataFrame, column: str, cells: Sequence[str]) -> dict[str, float]:
    return {c: float(f.loc[f["cell"] == c, column].mean()) for c in cells if (f["cell"] == c).any()}


def _shares(means: dict[str, float]) -> str:
    return ", ".join(f"{c} {v:.0%}" for c, v in means.items()) or "no prompts"


def can_disagree(cells: Sequence[str], every: bool, bias: Bias, column: str = "notopen",
                 name: str = "can disagree") -> Precondition:
    """Text and first token can disagree: at least :data:`CAN_DISAGREE` of the texts do not open with the
    first-token letter in one of ``cells`` (``every``: in each of them, a floor on no arm)."""
    where = ("each of " if every else "one of ") + ", ".join(cells)

    def check(f: pd.DataFrame) -> tuple[bool, str]:
        means = _cell_means(f, column, cells)
        ok = [not math.isnan(v) and v >= CAN_DISAGREE for v in means.values()]
        holds = bool(ok) and (all(ok) and len(ok) == len(cells) if every else any(ok))
        return holds, f"texts not opening with the first-token letter: {_shares(means)}"

    return Precondition(name, f"at least {CAN_DISAGREE:.0%} of the texts do not open with the "
                        f"first-token letter in {where}", bias, check)


def refuses(cells: Sequence[str], bias: Bias, column: str = "refuses_text", name: str = "room to fall",
            every: bool = True) -> Precondition:
    """The text refuses in at least :data:`REFUSES` of the answers in each of ``cells`` (``every``) or in one."""
    where = ("each of " if every else "one of ") + ", ".join(cells)

    def check(f: pd.DataFrame) -> tuple[bool, str]:
        means = _cell_means(f, column, cells)
        ok = [not math.isnan(v) and v >= REFUSES for v in means.values()]
        holds = bool(ok) and (all(ok) and len(ok) == len(cells) if every else any(ok))
        return holds, f"text refusal: {_shares(means)}"

    return Precondition(name, f"the text refuses in at least {REFUSES:.0%} of the answers in {where}", bias, check)


def not_pinned(cells: Sequence[str], bias: Bias, column: str = "first_letter") -> Precondition:
    """The answer responds to the prompt: the first token's letter (``column`` "first_letter") or the text's
    ("text_letter", texts naming no option left out) not the same on >= :data:`PINNED` of every cell's prompts."""
    what = "first-token" if column == "first_letter" else "text"

    def check(f: pd.DataFrame) -> tuple[bool, str]:
        tops = {}
        for c in cells:
            counts = f.loc[f["cell"] == c, column].value_counts(normalize=True)
            if len(counts):
                tops[c] = (str(counts.index[0]), float(counts.iloc[0]))
        pinned = len(tops) == len(cells) and len({t for t, _ in tops.values()}) == 1 and \
            all(s >= PINNED for _, s in tops.values())
        return not pinned, f"most frequent {what} letter: " + ", ".join(
            f"{c} '{t}' {s:.0%}" for c, (t, s) in tops.items())

    name = "not pinned" if column == "first_letter" else "text not pinned"
    return Precondition(name, f"the {what.replace('-', ' ')} is not on the same letter in >= {PINNED:.0%} of the "
                        f"prompts of {' and '.join(cells)} (wobble's position-bias control)", bias, check)


#: The rate a text sampling uniformly over a question's k options would give, per rate column.
UNIFORM_LEVELS: dict[str, tuple[str, Callable[[float], float]]] = {
    "mismatch": ("1 − 1/k", lambda k: 1 - 1 / k), "refuses_text": ("1/k", lambda k: 1 / k)}


def above_uniform(cell: str, column: str, bias: Bias) -> Precondition:
    """In ``cell`` the rate of ``column`` (mean over questions) lies above the level a text sampling uniformly
    over each question's k options would give (:data:`UNIFORM_LEVELS`, mean over the same questions): below it,
    sampling moves the rate up toward it, whatever the model does."""
    how, level = UNIFORM_LEVELS[column]

    def check(f: pd.DataFrame) -> tuple[bool, str]:
        c = f[f["cell"] == cell]
        per_q = c.groupby(UNIT, sort=False).agg(rate=(column, "mean"), k=("n_options", "max"))
        per_q = per_q[per_q["k"] >= 2]
        if per_q.empty:
            return False, f"{cell}: options shown unknown"
        rate, uniform = float(per_q["rate"].mean()), float(per_q["k"].map(level).mean())
        return rate > uniform, f"{cell}: {column} {rate:.2f} vs {uniform:.2f} under uniform sampling"

    return Precondition("above uniform", f"at the {cell}, the {column} rate lies above a uniformly sampling text's "
                        f"({how}, k the question's options)", bias, check)


def unmapped_as_agreement(claim: ClaimSpec, variant: Statistic, *, level: float = 0.95, n_boot: int = 1000,
                          seed: int = 0) -> Precondition:
    """A row that passes must also pass with texts naming no option counted as agreement: the claim's statistic
    and ``variant`` (the same on ``mismatch_agree``) each get the engine's estimate over the claim's unit at
    ``level`` and the interval rule; the check fails only where the claim's own interval says reproduced and the
    variant's does not (elsewhere it is moot: it holds). A failure biases toward the claim (unmapped texts count
    as mismatches in the claim's own statistic), so it can only take back a "reproduced"."""
    def passes(st: Statistic, f: pd.DataFrame):
        est = estimate(f, claim.unit, st, n_boot=n_boot, seed=seed, level=level)
        ok = (est.n_units >= claim.min_units and not est.undecidable and est.point == est.point
              and interval_verdict(est.low, est.high, claim.null, claim.direction) == "reproduced")
        return ok, est

    def check(f: pd.DataFrame) -> tuple[bool, str]:
        sub = f[f["cell"].isin(variant.cells)] if variant.cells else f
        if sub.empty:
            return True, "unmapped counted as agreement: no prompts"
        ok, est = passes(variant, sub)
        fig = f"unmapped counted as agreement: {est.point:.3g} [{est.low:.3g}, {est.high:.3g}]"
        return ok or not passes(claim.statistic, sub)[0], fig

    return Precondition("unmapped as agreement", "a row that passes also passes with texts naming no option "
                        "counted as agreement (the same statistic, unit and interval)", "toward the claim", check)


# ------------------------------------------------------------------------------------------------ diagnostics


def _positional_note(f: pd.DataFrame, cells: Sequence[str]) -> str:
    """The first token's position bias per cell: share of questions keeping the letter, and its lower bound."""
    parts = []
    for c in cells:
        g = f[f["cell"] == c]
        if g.empty:
            continue
        share = g.groupby(UNIT, sort=False)["keeps_letter"].mean().mean()
        parts.append(f"{c} {share:.2f} (≥ {g['cell_first_positional'].iloc[0]:.2f})")
    return ("first token keeps its letter over the shuffles (the paper's selection bias, wobble's control; no "
            "gate): " + ", ".join(parts)) if parts else ""


def _mapped_mismatch_note(f: pd.DataFrame, cells: Sequence[str]) -> str:
    """The mismatch among the texts naming an option, per cell."""
    parts = []
    for c in cells:
        g = f[(f["cell"] == c) & (f["mapped"] == 1)]
        if len(g):
            parts.append(f"{c} {g['mismatch'].mean():.2f}")
    return ("mismatch among texts naming an option: " + ", ".join(parts)) if parts else ""


def _c_shares_note(f: pd.DataFrame, cells: Sequence[str]) -> str:
    """Figure 3b's two halves: the share of 'C' per cell (mean over questions) of the first token and of the text
    (texts naming no option left out), then the first token's position bias."""
    def share(col: str, c: str) -> str:
        v = f[f["cell"] == c].groupby(UNIT, sort=False)[col].mean().mean()
        return "–" if v != v else f"{v:.2f}"

    halves = "; ".join(f"{what} {' → '.join(share(col, c) for c in cells)}"
                       for what, col in (("first token", "ft_C"), ("text", "text_C")))
    return "; ".join(x for x in (f"share of 'C', {' → '.join(cells)}: {halves}", _positional_note(f, cells)) if x)


#: Which diagnostic each claim prints beside its rows (claim id -> function of its model's table and cells).
DIAGNOSTICS: dict[str, Callable[[pd.DataFrame, Sequence[str]], str]] = {
    "mismatch_over_60_percent": _mapped_mismatch_note,
    "mismatch_persists_when_constrained": _mapped_mismatch_note,
    "example_pulls_first_token_to_C": _positional_note,
    "example_text_more_evenly_distributed": _positional_note,
    "text_more_consistent": _positional_note,
    "example_abc_lowers_first_token_C": _c_shares_note,
}


def diagnostics(claim: ClaimSpec, frame: pd.DataFrame | None) -> str:
    """The claim's diagnostic for one model's table (empty where it has none or the model was not run)."""
    fn = DIAGNOSTICS.get(claim.id)
    if fn is None or frame is None or frame.empty:
        return ""
    return fn(frame, list(claim.cells) or list(dict.fromkeys(frame["cell"])))


def measure(claims: Sequence[ClaimSpec], tables: Mapping[str, UnitTable | None], models: Sequence[str],
            **kw) -> list[dict]:
    """:func:`wobble.report.engine.measure_all`, then each model row's :func:`diagnostics`."""
    by = {c.id: c for c in claims}
    rows = measure_all(claims, tables, models, **kw)
    for r in rows:
        t = tables.get(r["claim"])
        if t is not None and r["model"] in set(t.frame["model"]):
            r["diagnostics"] = diagnostics(by[r["claim"]], t.frame[t.frame["model"] == r["model"]])
    return rows


# ------------------------------------------------------------------------------------------- the paper's effect


def per_model(claim: ClaimSpec, frame: pd.DataFrame) -> dict[str, float]:
    """The claim's statistic, as a point, per model of a paper table."""
    return {m: claim.statistic.point(g, claim.unit) for m, g in frame.groupby("model", sort=False)}


def paper_effect(claim: ClaimSpec, frame: pd.DataFrame, covered: Sequence[str]) -> tuple[float, str]:
    """The paper's effect: :func:`per_model` over the ``covered`` models (those the paper's text says the claim
    holds for), the least favourable of them (the most favourable for an existence claim), and which model."""
    values = {m: v for m, v in per_model(claim, frame).items() if m in covered}
    missing = sorted(set(covered) - set(values))
    if missing:
        raise ValueError(f"claim {claim.id}: the paper's table lacks {missing}")
    best = claim.scope == "exists"
    side = claim.direction if best else -claim.direction
    model = max(values, key=lambda m: side * values[m])
    return values[model], model
