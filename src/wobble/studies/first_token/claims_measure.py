"""How each first_token claim is measured, per model (:mod:`.claims` declares the claims and what is
pre-registered; :mod:`.claims_counts` reduces the answers to per-question counts).

Each function takes one model's :class:`~.claims_counts.Table` and the main temperature's tag and returns a
:class:`~wobble.report.claims.Measurement`: the statistic at the point and its 95 % percentile bootstrap
interval over questions, whether the claim's precondition holds (with what was measured), and diagnostics
(texts naming no option, generations cut at ``max_new_tokens``, wobble's position-bias control). Where the
bootstrap has no spread at a share of 0 or 1, the interval is the exact binomial one of that share's count.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from wobble.report.claims import Measurement
from wobble.stats import exact_binomial_interval, percentile_interval
from wobble.studies.first_token.claims_counts import (LEVEL_NAMES, LEVELS, MIN_MAPPED, N_QUESTIONS, PINNED, REFUSES, Sums,
                                                      Table, can_disagree, cell, diagnostics, difference,
                                                      largest_cell, letter_entropy, model_tables, not_opening,
                                                      opening_note, persisting, position_control, share,
                                                      steady_decrease, top_letter)

INTERVAL = "bootstrap over questions"


def estimate(t: Table, stat: Callable[[Sums], float], cells: Sequence[str], *, applicable: bool = True,
             precondition_note: str = "", diagnostics_text: str = "", note: str = "", degenerate: bool = False,
             exact: Callable[[Sums], tuple[int, int]] | None = None) -> Measurement:
    """``stat`` at the point and over the bootstrap replicates. Every cell in ``cells`` must have been run
    (else: not measured, whatever the precondition). ``exact(sums) -> (k, n)`` names the share's count and
    prompts for the exact binomial interval where the bootstrap has no spread at 0 or 1."""
    common = dict(precondition_note=precondition_note, diagnostics=diagnostics_text, population=N_QUESTIONS,
                  interval=INTERVAL)
    not_run = [c for c in cells if not t.total[f"n|{c}"]]
    n_q = t.questions_with(cells)
    if not_run:
        names = ", ".join(f"{LEVEL_NAMES.get(c.partition('@')[0], c)} at T={c.partition('@')[2]}" for c in not_run)
        return Measurement(None, None, None, n_q, note=f"not run: {names}", **common)
    point = stat(t.total)
    if point is None or math.isnan(point):
        return Measurement(None, None, None, n_q, note=note or "statistic undefined", applicable=applicable,
                           **common)
    lo, hi = percentile_interval(np.array([stat(s) for s in t.replicates], dtype=float))
    if exact is not None and lo == hi == point and point in (0.0, 1.0):
        k, n = exact(t.total)
        lo, hi = exact_binomial_interval(k, n)
        common["interval"] = (f"exact binomial (Clopper-Pearson), {k} of {n} prompts: the bootstrap over "
                              "questions has no spread")
    return Measurement(float(point), lo, hi, n_q, degenerate=degenerate, note=note, applicable=applicable,
                       **common)


def witness(what: str, cells: Sequence[str], pick: Callable[[Iterable[float]], float]
            ) -> Callable[[Sums], tuple[int, int]]:
    """The exact-interval witness of ``pick`` (max or min) over the cells' rates of ``what``: that cell's count
    and prompts (ties: the cell with the fewest prompts, the widest interval)."""
    def w(s: Sums) -> tuple[int, int]:
        best = pick(s.rate(what, [c]) for c in cells)
        c = min((c for c in cells if s.rate(what, [c]) == best), key=lambda c: s[f"n|{c}"])
        return int(s[f"{what}|{c}"]), int(s[f"n|{c}"])
    return w


def _main(main: str, levels: Sequence[str] = LEVELS) -> list[str]:
    return [cell(level, main) for level in levels]


def _run(t: Table, main: str) -> list[str]:
    """The paper's four levels this run has (all four when it has none: then "not run")."""
    return [c for c in _main(main) if t.total[f"n|{c}"]] or _main(main)


def _disagree(t: Table, main: str, pre: Sequence[str]) -> tuple[bool, str]:
    shares = not_opening(t, pre)
    return can_disagree(shares), opening_note(shares, main)


def _diag(t: Table, main: str, cells: Sequence[str]) -> str:
    return diagnostics(t, cells) + "; " + position_control(t, _main(main))


def _mismatch_claim(t: Table, main: str, cells: Sequence[str], pre: Sequence[str], stat, exact=None) -> Measurement:
    ok, note = _disagree(t, main, pre)
    return estimate(t, stat, cells, applicable=ok, precondition_note=note, diagnostics_text=_diag(t, main, cells),
                    exact=exact)


def mismatch_over_60(t: Table, main: str) -> Measurement:
    cells = _run(t, main)
    return _mismatch_claim(t, main, cells, cells, lambda s: largest_cell({c: s.rate("mis", [c]) for c in cells}),
                           witness("mis", cells, max))


def mismatch_persists(t: Table, main: str) -> Measurement:
    high, example = _main(main, ("high", "example"))
    return _mismatch_claim(t, main, [high, example], _main(main),
                           lambda s: persisting(s.rate("mis", [high]), s.rate("mis", [example])),
                           witness("mis", [high, example], min))


def mismatch_decreases(t: Table, main: str) -> Measurement:
    low, medium, high = _main(main, ("low", "medium", "high"))
    return _mismatch_claim(t, main, [low, medium, high], [low], lambda s: steady_decrease(
        s.rate("mis", [low]), s.rate("mis", [medium]), s.rate("mis", [high])))


def example_above_high(t: Table, main: str) -> Measurement:
    example, high = _main(main, ("example", "high"))
    return _mismatch_claim(t, main, [example, high], [example],
                           lambda s: difference(s.rate("mis", [example]), s.rate("mis", [high])))


def refusal_share(t: Table, main: str) -> Measurement:
    cells = _run(t, main)

    def stat(s: Sums) -> float:
        return share(sum(s[f"refmis|{c}"] for c in cells), sum(s[f"mis|{c}"] for c in cells))

    ok, pre = _disagree(t, main, cells)
    mis = int(sum(t.total[f"mis|{c}"] for c in cells))
    return estimate(t, stat, cells, applicable=ok, precondition_note=pre, diagnostics_text=_diag(t, main, cells),
                    note="" if mis else "no mismatch to attribute",
                    exact=lambda s: (int(sum(s[f"refmis|{c}"] for c in cells)), mis))


def pull_to_c(t: Table, main: str) -> Measurement:
    example, high = _main(main, ("example", "high"))

    def c_share(s: Sums, c: str) -> float:
        return share(s[f"ft:C|{c}"], s[f"n|{c}"])

    (lh, sh), (le, se) = top_letter(t.total, [high]), top_letter(t.total, [example])
    pinned = lh is not None and lh == le and sh >= PINNED and se >= PINNED
    note = (f"most frequent first-token letter: High '{lh}' {sh:.0%}, Example '{le}' {se:.0%} (needed: not the "
            f"same letter on >= {PINNED:.0%} of both)") if lh and le else ""
    return estimate(t, lambda s: difference(c_share(s, example), c_share(s, high)), [example, high],
                    applicable=not pinned, precondition_note=note, diagnostics_text=_diag(t, main, [example, high]))


def text_more_even(t: Table, main: str) -> Measurement:
    (example,) = _main(main, ("example",))
    ok, pre = _disagree(t, main, [example])
    mapped = 1 - t.total.rate("none", [example])
    return estimate(t, lambda s: difference(letter_entropy(s.letters("tx", [example])),
                                            letter_entropy(s.letters("ft", [example]))), [example],
                    applicable=ok, precondition_note=pre, diagnostics_text=_diag(t, main, [example]),
                    degenerate=mapped < MIN_MAPPED,
                    note=f"{mapped:.0%} of text answers name an option" if mapped < MIN_MAPPED else "")


def text_more_consistent(t: Table, main: str) -> Measurement:
    cells = _run(t, main)
    ok, pre = _disagree(t, main, cells)
    mapped = 1 - t.total.rate("none", cells) if t.questions_with(cells) else 1.0
    return estimate(t, lambda s: share(sum(s[f"hgap|{c}"] for c in cells), sum(s[f"hgapn|{c}"] for c in cells)),
                    cells, applicable=ok, precondition_note=pre,
                    diagnostics_text=_diag(t, main, cells), degenerate=mapped < MIN_MAPPED,
                    note=f"{mapped:.0%} of text answers name an option" if mapped < MIN_MAPPED else "")


def sweep(t: Table) -> tuple[list[str], list[str]]:
    """(temperature tags, lowest first; the levels run at every one of them)."""
    cells = [name[2:].partition("@") for name in t.names if name.startswith("n|")]
    tags = sorted({tag for _, _, tag in cells}, key=float)
    levels = [lv for lv in LEVELS if all(f"n|{cell(lv, tag)}" in t.names for tag in tags)]
    return tags, levels


def temperature(t: Table, what: str) -> Measurement:
    """Highest minus lowest temperature on the sweep's levels: ``what`` "mis" (mismatch), "reftx" (text
    refusal) or "htx" (text answer entropy)."""
    tags, levels = sweep(t)
    if len(tags) < 2 or not levels:
        return Measurement(None, None, None, 0, note="the run has one temperature", interval=INTERVAL)
    lo, hi = ([cell(lv, tag) for lv in levels] for tag in (tags[0], tags[-1]))

    def value(s: Sums, cells: Sequence[str]) -> float:
        if what == "htx":
            return share(sum(s[f"htx|{c}"] for c in cells), sum(s[f"htxn|{c}"] for c in cells))
        return s.rate(what, cells)

    ok, pre = True, f"temperatures {tags[0]} and {tags[-1]} on {', '.join(levels)}"
    if what == "mis":
        ok, pre = _disagree(t, tags[0], lo)
        pre = f"at T={tags[0]}: {pre}"
    elif what == "reftx":
        refusing = t.total.rate("reftx", lo)
        ok = refusing >= REFUSES
        pre = f"text refusal at T={tags[0]}: {refusing:.0%} (needed: >= {REFUSES:.0%})"
    mapped = min(1 - t.total.rate("none", lo), 1 - t.total.rate("none", hi))
    degenerate = what == "htx" and mapped < MIN_MAPPED
    return estimate(t, lambda s: difference(value(s, hi), value(s, lo)), [*lo, *hi], applicable=ok,
                    precondition_note=pre, diagnostics_text=diagnostics(t, [*lo, *hi]), degenerate=degenerate,
                    note=f"T={tags[0]} -> T={tags[-1]}" + (f"; {mapped:.0%} of text answers name an option"
                                                          if degenerate else ""))


MEASURES: dict[str, Callable[[Table, str], Measurement]] = {
    "mismatch_over_60_percent": mismatch_over_60,
    "mismatch_persists_when_constrained": mismatch_persists,
    "mismatch_decreases_low_to_high": mismatch_decreases,
    "example_more_mismatch_than_high": example_above_high,
    "refusal_major_reason_for_mismatch": refusal_share,
    "example_pulls_first_token_to_C": pull_to_c,
    "example_text_more_evenly_distributed": text_more_even,
    "text_more_consistent": text_more_consistent,
    "temperature_lowers_mismatch": lambda t, main: temperature(t, "mis"),
    "temperature_lowers_refusal": lambda t, main: temperature(t, "reftx"),
    "temperature_worsens_consistency": lambda t, main: temperature(t, "htx"),
}


def measure(records: Iterable[Mapping], main: str, *, n_boot: int = 1000, seed: int = 0
            ) -> dict[str, dict[str, Measurement]]:
    """Every claim, per model: ``{claim id: {model: Measurement}}`` from the labelled predictions of every
    model and temperature (``main``: the main temperature's tag; the four levels are read there)."""
    tables = model_tables(records, main, n_boot=n_boot, seed=seed)
    return {cid: {m: f(t, main) for m, t in tables.items()} for cid, f in MEASURES.items()}
