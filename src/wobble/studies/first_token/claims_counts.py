"""The first_token claims' counts: each model's labelled answers reduced per QUESTION to counts per cell
(``<count>|<level>@<temperature tag>``: prompts ``n``, mismatches ``mis`` (a text naming no option counts, as in
Figure 2a), refusing texts where the first token does not refuse ``refmis``, refusing texts ``reftx``, texts
naming no option ``none``, answers not opening with the first-token letter ``notopen``, letters chosen ``ft:<L>``
/ ``tx:<L>``, generations cut at ``max_new_tokens`` ``cut`` of those with a finish reason ``fin``, per-question
answer entropies ``hgap`` (first token − text) and ``htx`` with their counts ``hgapn`` / ``htxn``, and
wobble's position-bias control ``position`` / ``content`` of ``poscells``, ``tx``-prefixed for the text).

A claim's statistic is a function of these counts summed over the (resampled) questions (:class:`Sums`), so a
rate is a ratio of sums and a question brings all its shuffles, levels and temperatures. The statistics
(:func:`largest_cell`, :func:`steady_decrease`, ...) are applied to the paper's published numbers as well
(:mod:`.claims`), so the paper's effect and ours are the same quantity.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from wobble.stats import bootstrap_indices
from wobble.studies.first_token.layout import temp_tag
from wobble.studies.first_token.metrics import answer_entropy, first_token_is_letter
from wobble.studies.first_token.prompts import is_refusal_option

#: The paper's four constraint levels (``example_abc`` is Figure 3's control, not one of them).
LEVELS = ("low", "medium", "high", "example")
LEVEL_NAMES = {"low": "Low", "medium": "Medium", "high": "High", "example": "Example"}
#: Precondition: text and first token can disagree where at least this share of a cell's text answers does not
#: open with the first-token letter (in at least one of the cells the claim needs).
CAN_DISAGREE = 0.05
#: Precondition of the temperature-refusal row: room to fall, the text refuses in at least this share at the
#: lowest temperature.
REFUSES = 0.05
#: wobble's position-bias control: a first token on the same letter in at least this share of the prompts of
#: both High and Example is pinned (it answers the position, not the prompt).
PINNED = 0.95
#: A claim resting on text answers' options is degenerate when fewer than this share of them name an option.
MIN_MAPPED = 0.5
#: Questions there are at all (the paper's OpinionQA subset): caps the questions-needed estimate.
N_QUESTIONS = 414

# ------------------------------------------------------------------------ statistics (ours and the paper's)


def largest_cell(rates: Mapping[Any, float]) -> float:
    """The largest of the cell rates (NaN cells skipped; NaN when none)."""
    vals = [float(v) for v in rates.values() if not _nan(v)]
    return max(vals) if vals else math.nan


def steady_decrease(low: float, medium: float, high: float) -> float:
    """The smaller of the two steps Low -> Medium -> High: positive only when each stronger constraint lowers
    the rate."""
    return min(low - medium, medium - high)


def persisting(high: float, example: float) -> float:
    """The smaller of the rates under the two constraining instructions (High and the Example template)."""
    return min(high, example)


def difference(a: float, b: float) -> float:
    return a - b


def share(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def letter_entropy(counts: Mapping[str, float]) -> float:
    """Entropy (nats, ``scipy.stats.entropy``) of a distribution of chosen letters given as counts; NaN for none."""
    from scipy.stats import entropy

    positive = [c for c in counts.values() if c > 0]
    return float(entropy(positive)) + 0.0 if positive else math.nan


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


# ------------------------------------------------------------------------------------- per-question counts


def cell(level: str, tag: str) -> str:
    return f"{level}@{tag}"


def record_tag(r: Mapping, main: str) -> str:
    """The record's temperature tag (records without ``gen_params`` are at the main temperature)."""
    t = (r.get("gen_params") or {}).get("temperature")
    return main if t is None else temp_tag(t)


def _modal_share(xs: Sequence) -> float:
    return max(Counter(xs).values()) / len(xs)


def _keeps(out: Counter, c: str, answers: Sequence[tuple], who: str) -> None:
    """Position-bias control over one question's shuffles: does the answer keep its letter (position) or its
    option (content) more often? Counted where there are at least two answers."""
    if len(answers) < 2:
        return
    by_letter = _modal_share([a for a, _ in answers])
    by_option = _modal_share([o for _, o in answers])
    out[f"{who}poscells|" + c] += 1
    out[f"{who}position|" + c] += by_letter > by_option
    out[f"{who}content|" + c] += by_option > by_letter


def question_counts(recs: Iterable[Mapping], main: str) -> Counter:
    """One model's counts for one question, per cell (see the module docstring for the names)."""
    out: Counter = Counter()
    by_cell: dict[str, list[Mapping]] = defaultdict(list)
    for r in recs:
        c = cell(r["constraint"], record_tag(r, main))
        by_cell[c].append(r)
        ft, tx = r["first_token_option"], r["text_option"]
        out["n|" + c] += 1
        out["mis|" + c] += tx is None or ft != tx
        out["refmis|" + c] += is_refusal_option(tx) and not is_refusal_option(ft)
        out["reftx|" + c] += is_refusal_option(tx)
        out["none|" + c] += tx is None
        out["notopen|" + c] += not first_token_is_letter(r)
        out[f"ft:{r['first_token_letter']}|" + c] += 1
        if r.get("text_letter"):
            out[f"tx:{r['text_letter']}|" + c] += 1
        if r.get("finish_reason"):
            out["fin|" + c] += 1
            out["cut|" + c] += r["finish_reason"] == "length"
    for c, rs in by_cell.items():
        h_ft = answer_entropy([r["first_token_option"] for r in rs])
        h_tx = answer_entropy([r["text_option"] for r in rs])
        if not (math.isnan(h_ft) or math.isnan(h_tx)):
            out["hgap|" + c] += h_ft - h_tx
            out["hgapn|" + c] += 1
        if not math.isnan(h_tx):
            out["htx|" + c] += h_tx
            out["htxn|" + c] += 1
        _keeps(out, c, [(r["first_token_letter"], r["first_token_option"]) for r in rs], "")
        _keeps(out, c, [(r.get("text_letter"), r["text_option"]) for r in rs if r.get("text_letter")], "tx")
    return out


class Sums(Mapping):
    """Counts summed over (resampled) questions, by name; a name no question has is 0."""

    def __init__(self, names: dict[str, int], row: np.ndarray):
        self._names, self._row = names, row

    def __getitem__(self, key: str) -> float:
        i = self._names.get(key)
        return 0.0 if i is None else float(self._row[i])

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def rate(self, what: str, cells: Iterable[str]) -> float:
        """``sum(what) / sum(n)`` over ``cells``; NaN where the cells have no prompts."""
        cells = list(cells)
        return share(sum(self[f"{what}|{c}"] for c in cells), sum(self[f"n|{c}"] for c in cells))

    def letters(self, who: str, cells: Iterable[str]) -> dict[str, float]:
        """Letter -> count of ``who`` ("ft" first token, "tx" text) answers over ``cells``."""
        cells = set(cells)
        out: dict[str, float] = defaultdict(float)
        for name in self._names:
            head, _, c = name.partition("|")
            if head.startswith(who + ":") and c in cells:
                out[head[len(who) + 1:]] += self[name]
        return dict(out)


class Table:
    """One model's per-question counts (rows: questions) and their bootstrap replicates."""

    def __init__(self, per_question: Sequence[Counter], n_boot: int, seed: int):
        names = sorted(set().union(*per_question)) if per_question else []
        self.names = {n: i for i, n in enumerate(names)}
        self.matrix = np.array([[q.get(n, 0.0) for n in names] for q in per_question], dtype=float).reshape(
            len(per_question), len(names))
        self.total = Sums(self.names, self.matrix.sum(axis=0))
        idx = bootstrap_indices(len(per_question), n_boot, seed)
        self.replicates = [Sums(self.names, row) for row in self.matrix[idx].sum(axis=1)] if idx.size else []

    def questions_with(self, cells: Iterable[str]) -> int:
        cols = [self.names[f"n|{c}"] for c in cells if f"n|{c}" in self.names]
        return int((self.matrix[:, cols].sum(axis=1) > 0).sum()) if cols else 0


def model_tables(records: Iterable[Mapping], main: str, *, n_boot: int, seed: int) -> dict[str, Table]:
    """model -> its :class:`Table` (questions sorted by uid)."""
    by: dict[str, dict[str, list[Mapping]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by[r["model"]][r["question_uid"]].append(r)
    return {m: Table([question_counts(qs[q], main) for q in sorted(qs)], n_boot, seed) for m, qs in sorted(by.items())}


# ------------------------------------------------------------------------------- preconditions and controls


def can_disagree(not_opening: Mapping[str, float], threshold: float = CAN_DISAGREE) -> bool:
    """Text and first token can disagree: in at least one cell, at least ``threshold`` of the text answers do
    not open with the first-token letter (a model that always opens with it answers the same in both)."""
    return any(not _nan(v) and v >= threshold for v in not_opening.values())


def not_opening(t: Table, cells: Sequence[str]) -> dict[str, float]:
    return {c: t.total.rate("notopen", [c]) for c in cells if t.total[f"n|{c}"]}


def _cell_name(c: str, main: str) -> str:
    level, _, tag = c.partition("@")
    name = LEVEL_NAMES.get(level, level)
    return name if tag == main else f"{name} T={tag}"


def opening_note(shares: Mapping[str, float], main: str) -> str:
    parts = ", ".join(f"{_cell_name(c, main)} {v:.0%}" for c, v in shares.items())
    return f"text answers not opening with the first-token letter: {parts or 'no prompts'}"


def top_letter(s: Sums, cells: Sequence[str]) -> tuple[str | None, float]:
    """The most frequent first-token letter over ``cells`` and its share of the prompts."""
    counts = s.letters("ft", cells)
    n = sum(counts.values())
    if not n:
        return None, math.nan
    letter = min(counts, key=lambda k: (-counts[k], k))
    return letter, counts[letter] / n


def position_control(t: Table, cells: Sequence[str]) -> str:
    """wobble's position-bias control (not the paper's): share of the most frequent first-token letter, and in
    how many question x cell groups of shuffles the first token keeps its letter (position) rather than its
    option (content)."""
    s = t.total
    letter, top = top_letter(s, cells)
    groups = sum(s[f"poscells|{c}"] for c in cells)
    if letter is None or not groups:
        return "wobble's position-bias control: no prompts"
    pos, con = (sum(s[f"{k}|{c}"] for c in cells) / groups for k in ("position", "content"))
    text = f"wobble's position-bias control: first token '{letter}' on {top:.0%} of prompts; over a question's " \
           f"shuffles it keeps its letter rather than its option in {pos:.0%} of question x level groups (its " \
           f"option rather than its letter in {con:.0%})"
    tx_groups = sum(s[f"txposcells|{c}"] for c in cells)
    if tx_groups:
        text += f"; the text keeps its letter in {sum(s[f'txposition|{c}'] for c in cells) / tx_groups:.0%}"
    return text


def diagnostics(t: Table, cells: Sequence[str]) -> str:
    s = t.total
    parts = [f"text names no option {s.rate('none', cells):.0%}"]
    fin = sum(s[f"fin|{c}"] for c in cells)
    if fin:
        parts.append(f"cut at max_new_tokens {sum(s[f'cut|{c}'] for c in cells) / fin:.0%}")
    return "; ".join(parts)
