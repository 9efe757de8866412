"""Metrics of the ``first_token`` study: pure functions of per-prompt predictions.

Identity: answers are compared as ORIGINAL options (the option text; a refusal is the
``"Refused"`` option, :data:`~wobble.studies.first_token.prompts.REFUSED`), never as letters, because the
same letter names different options in different shuffles. ``None`` stands for a text answer that
names no single option (multiple / unknown).

Definitions (checked against the paper's ``outputs/<constraint>/<model>/mapping_result.json`` in
mainlp/MCQ-Mismatch, see :func:`mapping_summary`):

* **mismatch rate** - share of prompts whose first-token option differs from the text option; a text
  answer that names no single option (``None``) counts as a mismatch (it differs from every option
  the first token can pick), as in the paper's ``total_mis``;
* **refusal part of the mismatch** - share of prompts where the text refuses and the first token
  does not (the paper attributes much of the mismatch to refusals: the first-token evaluation
  rarely picks "Refused" while the text often refuses);
* **refusal rate** - share of answers that are the ``"Refused"`` option (``refuse_rate`` of the
  paper's summary counts the TEXT answers; apply it to first-token answers for the other bar);
* **answer-consistency entropy** (paper Table 3) - per question, the Shannon entropy, in NATS
  (natural log), of the distribution of the ORIGINAL options chosen over its 10 shuffles, averaged
  over questions. The natural log is the scipy/numpy default and is the only base consistent with
  Table 3: Llama2-70b-Chat picks the letter "C" about 85% of the time with the Example template
  (Figure 3), i.e. an almost random original option over 10 shuffles. Simulating exactly that on the
  414 questions' option counts (3-10 options; "C" with p=0.85, else a uniform letter) gives a mean
  plug-in entropy of 1.34 nats = 1.93 bits; Table 3 prints 1.25, so the unit is nats.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Hashable, Iterable, Mapping, Sequence

from wobble.studies.first_token.classify import strip_chat_template
from wobble.studies.first_token.prompts import REFUSED, is_refusal_option

# ----------------------------------------------------------------------------------------------
# first-token answer
# ----------------------------------------------------------------------------------------------


def first_token_choice(logprobs: Mapping[str, float]) -> str:
    """The letter with the highest first-token log-prob (the refusal letter competes like any other).

    Ties are broken towards the alphabetically first letter ("A" before "B"), so the result does not
    depend on dict order. NaN scores never win. Raises ``ValueError`` on an empty mapping or when
    every score is NaN.
    """
    best: str | None = None
    best_v = -math.inf
    for letter in sorted(logprobs):
        v = float(logprobs[letter])
        if math.isnan(v):
            continue
        if best is None or v > best_v:
            best, best_v = letter, v
    if best is None:
        raise ValueError(f"no usable first-token scores in {dict(logprobs)!r}")
    return best


# ----------------------------------------------------------------------------------------------
# mismatch / refusal
# ----------------------------------------------------------------------------------------------


def _pairs(pairs: Iterable[Sequence]) -> list[tuple]:
    out = [tuple(p) for p in pairs]
    for p in out:
        if len(p) != 2:
            raise ValueError(f"expected (first_token_option, text_option) pairs, got {p!r}")
    return out


def mismatch_rate(pairs: Iterable[Sequence]) -> float:
    """Share of ``(first_token_option, text_option)`` pairs that differ (``None`` text = mismatch)."""
    ps = _pairs(pairs)
    if not ps:
        return float("nan")
    return sum(1 for ft, tx in ps if tx is None or ft != tx) / len(ps)


def refusal_mismatch_rate(pairs: Iterable[Sequence]) -> float:
    """Share of ALL pairs where the text refuses and the first token does not.

    This is the part of :func:`mismatch_rate` due to refusals (always <= the mismatch rate).
    """
    ps = _pairs(pairs)
    if not ps:
        return float("nan")
    return sum(1 for ft, tx in ps if is_refusal_option(tx) and not is_refusal_option(ft)) / len(ps)


def refusal_rate(options: Iterable[str | None]) -> float:
    """Share of answers that are the ``"Refused"`` option."""
    xs = list(options)
    if not xs:
        return float("nan")
    return sum(1 for x in xs if is_refusal_option(x)) / len(xs)


def choice_distribution(letters: Iterable[str], all_letters: Sequence[str] | None = None) -> dict[str, float]:
    """Share of each chosen letter (e.g. how often the first token says "C"), keys sorted.

    ``all_letters`` adds zero entries for letters never chosen.
    """
    xs = list(letters)
    counts = Counter(xs)
    keys = sorted(set(counts) | set(all_letters or ()), key=str)
    n = len(xs)
    return {k: (counts.get(k, 0) / n if n else float("nan")) for k in keys}


# ----------------------------------------------------------------------------------------------
# answer consistency
# ----------------------------------------------------------------------------------------------


def answer_entropy(answers: Iterable[Hashable | None], *, drop_none: bool = True) -> float:
    """Shannon entropy (nats, ``scipy.stats.entropy`` of the answer counts) of one question's answers.

    ``None`` answers (no single option) are dropped by default; with ``drop_none=False`` they form
    one more outcome. Returns NaN when no answer is left.
    """
    from scipy.stats import entropy

    xs = [a for a in answers if not (drop_none and a is None)]
    if not xs:
        return float("nan")
    return float(entropy(list(Counter(xs).values()))) + 0.0  # scipy's, natural log; + 0.0 turns -0.0 into 0.0


def consistency_entropy(answers_over_shuffles: Iterable[Iterable[Hashable | None]], *, drop_none: bool = True) -> float:
    """Mean over questions of :func:`answer_entropy` (paper Table 3; lower = more consistent).

    ``answers_over_shuffles[q]`` holds question q's ORIGINAL-option answers, one per shuffle.
    Questions with no usable answer are skipped.
    """
    hs = [answer_entropy(a, drop_none=drop_none) for a in answers_over_shuffles]
    hs = [h for h in hs if not math.isnan(h)]
    return sum(hs) / len(hs) if hs else float("nan")


# ----------------------------------------------------------------------------------------------
# classifier evaluation
# ----------------------------------------------------------------------------------------------


def classifier_scores(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> dict[str, float]:
    """Accuracy, macro-F1 and weighted-F1 by scikit-learn (``accuracy_score``, ``f1_score``).

    Labels = those in ``gold`` or ``pred`` (sorted); per label 0 where a denominator is 0 (``zero_division=0``);
    macro = unweighted mean over labels, weighted = mean weighted by gold support (labels absent from gold
    weigh 0). Labels are handed to scikit-learn as their positions in that order, because a prediction that
    names no option (``None``) beside option texts is a mix of label types it refuses
    (``test_classifier_scores_are_sklearns_with_none_as_a_label``).
    """
    from sklearn.metrics import accuracy_score, f1_score

    gold, pred = list(gold), list(pred)
    if len(gold) != len(pred):
        raise ValueError(f"gold and pred differ in length: {len(gold)} vs {len(pred)}")
    if not gold:
        return {"accuracy": float("nan"), "macro_f1": float("nan"), "weighted_f1": float("nan"), "n": 0}
    position = {lab: i for i, lab in enumerate(sorted(set(gold) | set(pred), key=str))}
    g, p = [position[x] for x in gold], [position[x] for x in pred]
    labels = list(range(len(position)))
    return {
        "accuracy": float(accuracy_score(g, p)),
        "macro_f1": float(f1_score(g, p, labels=labels, average="macro", zero_division=0)),
        "weighted_f1": float(f1_score(g, p, labels=labels, average="weighted", zero_division=0)),
        "n": len(gold),
    }


# ----------------------------------------------------------------------------------------------
# the paper's per-shuffle summary (mapping_result.json)
# ----------------------------------------------------------------------------------------------


def text_starts_with_letter(response: str, letter: str) -> bool:
    """Whether the generated answer begins with ``letter`` as a token of its own.

    Leading whitespace, quotes, ``*`` and ``(`` are skipped; ``"C. Rarely"``, ``"C"``, ``"(C)"`` start
    with C, ``"Certainly"`` and ``"As an AI"`` do not.
    """
    t = (response or "").lstrip(" \t\n\r\"'“*([")
    if not t.startswith(letter):
        return False
    rest = t[len(letter):]
    return not rest or not rest[0].isalnum()


def first_token_is_letter(record: Mapping) -> bool:
    """Whether the model's actual first generated token is the first-token letter.

    Uses ``top_first_token`` (the unrestricted argmax token) when the record has it, else the start
    of ``response`` (:func:`text_starts_with_letter`; greedy decoding makes the two agree up to
    tokenisation).
    """
    letter = record["first_token_letter"]
    top = record.get("top_first_token")
    if top is not None:
        return str(top).strip() == letter
    return text_starts_with_letter(strip_chat_template(record.get("response", "")), letter)


def mapping_summary(records: Iterable[Mapping]) -> dict[str, float | int]:
    """The fields of the paper's ``mapping_result.json`` for one (constraint, model, shuffle).

    Each record is one prompt with ``first_token_option`` and ``text_option`` (ORIGINAL options,
    ``None`` for no single option), ``first_token_letter`` and ``response`` (or ``top_first_token``).
    Fields, as reverse-engineered from the paper's files and verified on its annotated outputs
    (Medium constraint, shuffle 0; e.g. Llama2-13b-Chat: ours from the human labels 226 / 414 / 107 /
    188 vs the file's 225 / 414 / 108 / 189, the file being computed with the paper's classifier):

    * ``total`` - number of prompts;
    * ``total_refuse`` / ``refuse_rate`` - text answers that are the Refused option, count / share;
    * ``total_mis`` / ``total_mis_rate`` - prompts whose text option differs from the first-token
      option (:func:`mismatch_rate`), count / share;
    * ``total_first_token_mismatch`` - prompts whose actual first generated token is NOT the
      first-token letter (the model opens with "Sure", "I", ... instead of the letter);
    * ``same_but_not_first`` - of those, prompts whose text answer nevertheless equals the
      first-token answer;
    * ``same/total_first_token_mismatch_rate`` - ``same_but_not_first / total_first_token_mismatch``.
    """
    recs = list(records)
    total = len(recs)
    refuse = sum(1 for r in recs if is_refusal_option(r.get("text_option")))
    mis = sum(1 for r in recs if r.get("text_option") is None or r.get("text_option") != r.get("first_token_option"))
    not_first = [r for r in recs if not first_token_is_letter(r)]
    same_nf = sum(
        1 for r in not_first if r.get("text_option") is not None and r.get("text_option") == r.get("first_token_option")
    )
    return {
        "total": total,
        "total_refuse": refuse,
        "refuse_rate": refuse / total if total else float("nan"),
        "total_mis": mis,
        "total_mis_rate": mis / total if total else float("nan"),
        "total_first_token_mismatch": len(not_first),
        "same_but_not_first": same_nf,
        "same/total_first_token_mismatch_rate": same_nf / len(not_first) if not_first else float("nan"),
    }


__all__ = [
    "REFUSED",
    "answer_entropy",
    "choice_distribution",
    "classifier_scores",
    "consistency_entropy",
    "first_token_choice",
    "first_token_is_letter",
    "mapping_summary",
    "mismatch_rate",
    "refusal_mismatch_rate",
    "refusal_rate",
    "text_starts_with_letter",
]
