"""SuperNI / Tk-Instruct metrics: exact match and ROUGE-L, max over the gold references.

Definitions (checked against ``eval/automatic/evaluation.py`` of allenai/natural-instructions@8540acd3 and
yizhongw/Tk-Instruct ``src/compute_metrics.py``; re-implemented, not copied):

* :func:`normalize_answer`: lower-case, drop every ASCII punctuation character (``string.punctuation``),
  collapse whitespace runs to one space and strip. Articles are KEPT (the SQuAD step that removes
  "a/an/the" is deliberately disabled in both official files).
* :func:`exact_match`: ``normalize_answer(prediction) == normalize_answer(reference)``.
* :func:`rouge_l`: ROUGE-L F-measure of ``rouge_score``. English: ``RougeScorer(["rougeL"],
  use_stemmer=True)`` (its default tokenizer: lower-case, non-``[a-z0-9]`` characters become spaces,
  Porter stemming of tokens longer than 3 characters). Non-English: whitespace tokens (``str.split``, no
  lower-casing, no stemming) - the ``SplitTokenizer`` of Tk-Instruct's ``compute_metrics.py``. The
  natural-instructions scorer's xlingual track uses GPT-2 BPE pieces instead; we do not, so non-English
  ROUGE-L can differ from the paper's (the English default tokenizer would drop every non-ASCII letter).
* An instance scores the max over its references; a group scores ``100 * mean`` over its instances,
  rounded to 4 decimals (as ``compute_metrics``).

Aggregation (:func:`score_records`): per task, per category and overall, each over ALL instances of the
group (``compute_grouped_metrics`` pools instances; a category figure is not a mean of task means).

Categories: the paper (Table 2) abbreviates Data to Text as ``DTT``; ``data/superni/test_categories.tsv``
and its README write ``DT``. Both, the full names, and the fork's ``snake_case`` names map to the paper's
abbreviation (:func:`category_abbrev`); ``by_category`` is keyed by it.

Seeds (:func:`wobble.stats.mean_std`): the fork's ``tk_results/*_stds.csv`` (and so the paper's ± values) are the
POPULATION std over 3 seeds (numpy's default, ``ddof=0``): e.g. Word Analogy, original instruction,
INSTRU-W-EXAM: per-seed EM 51.875, 51.25, 52.125 (8 tasks x 100 instances, so multiples of 0.125) give
std 0.3680 with ``ddof=0`` (the fork's 0.36799, printed 0.4) and 0.4507 with ``ddof=1``. ``ddof=0`` is
therefore the default here.
"""

from __future__ import annotations

import os
import string
from typing import Any, Iterable, Mapping, Sequence

from wobble.errors import DataError

# ----------------------------------------------------------------------------------------- categories

CATEGORY_NAMES: dict[str, str] = {
    "TE": "Textual Entailment",
    "CEC": "Cause Effect Classification",
    "CR": "Coreference Resolution",
    "DAR": "Dialogue Act Recognition",
    "AC": "Answerability Classification",
    "WA": "Word Analogy",
    "OE": "Overlap Extraction",
    "KT": "Keyword Tagging",
    "QR": "Question Rewriting",
    "TG": "Title Generation",
    "DTT": "Data to Text",
    "GEC": "Grammar Error Correction",
}
#: The paper's metric per category (Table 2): exact match for classification-like categories.
CATEGORY_METRIC: dict[str, str] = {
    **{abbr: "exact_match" for abbr in ("TE", "CEC", "CR", "DAR", "AC", "WA")},
    **{abbr: "rougeL" for abbr in ("OE", "KT", "QR", "TG", "DTT", "GEC")},
}
CATEGORY_ALIASES: dict[str, str] = {"DT": "DTT"}

_LOOKUP: dict[str, str] = {}
for _abbr, _name in CATEGORY_NAMES.items():
    _LOOKUP[_abbr.lower()] = _abbr
    _LOOKUP[_name.lower()] = _abbr
    _LOOKUP["_".join(_name.lower().split())] = _abbr
for _alias, _abbr in CATEGORY_ALIASES.items():
    _LOOKUP[_alias.lower()] = _abbr


def category_abbrev(category: str) -> str:
    """The paper's abbreviation for a category name/abbreviation ("Data to Text", "DT", "data_to_text"
    -> "DTT"); an unknown category is returned unchanged."""
    return _LOOKUP.get(" ".join(category.split()).lower(), category)


def category_metric(category: str) -> str:
    """``"exact_match"`` or ``"rougeL"``: the paper's metric for ``category`` (KeyError if unknown)."""
    abbr = category_abbrev(category)
    if abbr not in CATEGORY_METRIC:
        raise KeyError(f"unknown SuperNI category {category!r}; known: {', '.join(CATEGORY_METRIC)}")
    return CATEGORY_METRIC[abbr]


# -------------------------------------------------------------------------------------------- metrics

_PUNCT = frozenset(string.punctuation)


def normalize_answer(s: str) -> str:
    """Lower-case, remove ASCII punctuation, collapse whitespace. Articles are kept.

    Written here because the official scorers are scripts, not a library, and the SQuAD normalization that
    libraries ship drops articles, which theirs keeps (``tests/metrics/test_metrics_superni.py::test_exact_match``).
    """
    s = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    return " ".join(s.split())


def exact_match(prediction: str, reference: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(reference)


class WhitespaceTokenizer:
    """ROUGE tokenizer for non-English text: ``str.split()``."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


_SCORERS: dict[bool, Any] = {}


def _scorer(english: bool):
    if english not in _SCORERS:
        from rouge_score import rouge_scorer

        _SCORERS[english] = (rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True) if english
                             else rouge_scorer.RougeScorer(["rougeL"], tokenizer=WhitespaceTokenizer()))
    return _SCORERS[english]


def is_english(language: str | None) -> bool:
    """None (unknown) counts as English, as in the official scorer's default track."""
    return language is None or language.strip().lower() == "english"


def rouge_l(prediction: str, reference: str, language: str | None = None) -> float:
    """ROUGE-L F-measure in [0, 1] (0 when either side has no tokens)."""
    return _scorer(is_english(language)).score(reference, prediction)["rougeL"].fmeasure


def _check_references(references: Sequence[str]) -> None:
    if isinstance(references, str) or not references:
        raise ValueError("references must be a non-empty list of strings")


def max_exact_match(prediction: str, references: Sequence[str]) -> float:
    _check_references(references)
    return float(max(exact_match(prediction, r) for r in references))


def max_rouge_l(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    _check_references(references)
    return max(rouge_l(prediction, r, language) for r in references)


def score_instance(prediction: str, references: Sequence[str], language: str | None = None) -> dict[str, float]:
    """``{"exact_match": 0|1, "rougeL": [0, 1]}`` for one prediction, max over references."""
    return {"exact_match": max_exact_match(prediction, references),
            "rougeL": max_rouge_l(prediction, references, language)}


# ---------------------------------------------------------------------------------------- aggregation

def _summary(em_sum: float, rl_sum: float, n: int) -> dict[str, Any]:
    return {"exact_match": round(100.0 * em_sum / n, 4), "rougeL": round(100.0 * rl_sum / n, 4), "n": n}


def score_records(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Score prediction records ``{task, prediction, references, [category], [language]}``.

    Returns ``{"overall": m, "by_task": {task: m}, "by_category": {abbr: m}}`` where each ``m`` is
    ``{"exact_match": %, "rougeL": %, "n": instances}`` over all instances of the group, in percent
    rounded to 4 decimals. Records without a category are left out of ``by_category`` only.
    """
    acc: dict[tuple[str, str], list[float]] = {}

    def add(key, em, rl):
        a = acc.setdefault(key, [0.0, 0.0, 0])
        a[0] += em
        a[1] += rl
        a[2] += 1

    n = 0
    for rec in records:
        s = score_instance(rec["prediction"], rec["references"], rec.get("language"))
        em, rl = s["exact_match"], s["rougeL"]
        add(("overall", ""), em, rl)
        add(("task", rec["task"]), em, rl)
        if rec.get("category"):
            add(("category", category_abbrev(rec["category"])), em, rl)
        n += 1
    if n == 0:
        raise ValueError("no prediction records to score")
    out: dict[str, Any] = {"overall": _summary(*acc[("overall", "")]), "by_task": {}, "by_category": {}}
    for (kind, name), a in sorted(acc.items()):
        if kind == "task":
            out["by_task"][name] = _summary(*a)
        elif kind == "category":
            out["by_category"][name] = _summary(*a)
    return out


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(isinstance(x, str) for x in v)


def read_prediction_records(path: str | os.PathLike) -> list[dict]:
    """Read and validate a predictions JSONL: ``task`` (str), ``prediction`` (str), ``references``
    (non-empty list of str), optional ``category`` / ``language`` (str). A bad line raises
    :class:`DataError` naming the file, the line and the field."""
    from wobble.io import iter_jsonl, require

    out = []
    for lineno, obj in iter_jsonl(path):
        where = f"line {lineno}"
        rec = {
            "task": require(path, where, obj, "task", str, lambda v: bool(v.strip()), "a non-empty string"),
            "prediction": require(path, where, obj, "prediction", str),
            "references": require(path, where, obj, "references", list, _is_str_list,
                                  "a non-empty list of strings"),
        }
        for key in ("category", "language"):
            if key in obj and obj[key] is not None:
                rec[key] = require(path, where, obj, key, str)
        out.append(rec)
    if not out:
        raise DataError(path, "file", "at least one prediction record (the file is empty)")
    return out


def score_file(path: str | os.PathLike) -> dict[str, Any]:
    """:func:`score_records` of a validated predictions JSONL (see :func:`read_prediction_records`)."""
    return score_records(read_prediction_records(path))


# ------------------------------------------------------------------------------------------- seeds

__all__ = [
    "CATEGORY_NAMES", "CATEGORY_METRIC", "CATEGORY_ALIASES", "category_abbrev", "category_metric",
    "normalize_answer", "exact_match", "rouge_l", "is_english", "max_exact_match", "max_rouge_l",
    "score_instance", "score_records", "read_prediction_records", "score_file",
    "WhitespaceTokenizer",
]
