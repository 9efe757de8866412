"""Metrics. :mod:`wobble.metrics.superni`: the official SuperNI / Tk-Instruct exact match and ROUGE-L."""

from wobble.metrics.superni import (
    CATEGORY_METRIC,
    category_abbrev,
    category_metric,
    exact_match,
    normalize_answer,
    rouge_l,
    score_file,
    score_records,
)

__all__ = ["CATEGORY_METRIC", "category_abbrev", "category_metric", "exact_match", "normalize_answer",
           "rouge_l", "score_file", "score_records"]
