"""Result tables released in the Robustness authors' fork (source ``robustness_tk_results``).

The 12 CSVs ``{english,xlingual}_{exact_match,rougeL}[_means|_stds].csv`` have a blank first header
cell, one row per perturbation setting (``english``, ``english_delete_5``, ...) and one column per
SuperNI test category plus the overall score (``eval_exact_match`` / ``eval_rougeL``). Quirk: in the
``*_stds`` files the ``*_repeat_first_sentences`` and ``*_repeat_last_sentences`` rows hold the same
numbers as the ``*_means`` rows (4-decimal single-run scores, neither means nor standard deviations);
such rows are flagged ``suspect`` in both files instead of being dropped.

``robustness_tk_results`` record (tidy: one per file x row x column; files sorted, rows and columns in
file order; 720 records):

* ``file`` (str): the CSV name; ``language`` (``"english"`` / ``"xlingual"``).
* ``metric`` (``"exact_match"`` / ``"rougeL"``); ``stat`` (``"single"``: one run, ``"mean"`` / ``"std"``
  over the seed runs 1, 2, 3).
* ``row_label`` (str): the row as printed, e.g. ``"english_delete_5"``; ``setting`` (str): the row
  without the language prefix, ``"original"`` for the bare language row.
* ``category`` (str): the column, e.g. ``"answerability_classification"`` or ``"overall"`` for
  ``eval_*``; ``category_abbrev`` (str): ``"AC"``, ..., ``"overall"``.
* ``value`` (float).
* ``suspect`` (bool) and ``note`` (str | None): set on the mean/std rows that are identical (see above).
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Iterator

from wobble.data._util import expect, need_file

CATEGORY_ABBREV = {
    "answerability_classification": "AC", "cause_effect_classification": "CEC", "coreference_resolution": "CR",
    "dialogue_act_recognition": "DAR", "word_analogy": "WA", "textual_entailment": "TE", "data_to_text": "DT",
    "grammar_error_correction": "GEC", "title_generation": "TG", "keyword_tagging": "KT",
    "overlap_extraction": "OE", "question_rewriting": "QR",
}
_FILE = re.compile(r"^(english|xlingual)_(exact_match|rougeL)(?:_(means|stds))?\.csv$")
_STAT = {None: "single", "means": "mean", "stds": "std"}
SUSPECT_NOTE = ("the *_means and *_stds rows are identical: a single-run score copied into both files, "
                "not a mean / std over seeds")


def _read(path: Path) -> tuple[list[str], list[tuple[int, str, list[float]]]]:
    with open(need_file(path, "a results CSV"), encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    expect(bool(rows) and rows[0] and rows[0][0] == "", path, "line 1", "a header with a blank first cell")
    header = rows[0][1:]
    out = []
    for lineno, row in enumerate(rows[1:], 2):
        if not row:
            continue
        expect(len(row) == len(header) + 1, path, f"line {lineno}", f"{len(header) + 1} fields, got {len(row)}")
        try:
            values = [float(v) for v in row[1:]]
        except ValueError:
            expect(False, path, f"line {lineno}", f"numbers in every score column, got {row[1:]}")
        expect(all(math.isfinite(v) for v in values), path, f"line {lineno}", "finite numbers")
        out.append((lineno, row[0], values))
    return header, out


def load_results(src: Path) -> Iterator[dict]:
    src = Path(src)
    files = sorted(p for p in src.glob("*.csv"))
    expect(bool(files), src, "(folder)", "the fork's result CSVs")
    parsed = {}
    for path in files:
        m = _FILE.match(path.name)
        expect(bool(m), path, "(file name)", "a name like english_exact_match[_means|_stds].csv")
        parsed[path.name] = (m, *_read(path))
    for name, (m, header, rows) in parsed.items():
        language, metric, suffix = m.groups()
        path = src / name
        for col in header:
            expect(col in CATEGORY_ABBREV or col == f"eval_{metric}", path, "line 1",
                   f"category columns and eval_{metric}, got {col!r}")
        twin = {"stds": name.replace("_stds", "_means"), "means": name.replace("_means", "_stds")}.get(suffix or "")
        other = {}
        if twin in parsed:
            _, oh, orows = parsed[twin]
            other = {label: dict(zip(oh, vals)) for _, label, vals in orows}
        labels = [label for _, label, _ in rows]
        for lineno, label, values in rows:
            expect(label == language or label.startswith(language + "_"), path, f"line {lineno}",
                   f"a row label starting with {language!r}, got {label!r}")
            expect(labels.count(label) == 1, path, f"line {lineno}", f"a unique row label, {label!r} repeats")
            suspect = bool(other) and other.get(label) == dict(zip(header, values))
            setting = "original" if label == language else label[len(language) + 1:]
            for col, value in zip(header, values):
                category = "overall" if col.startswith("eval_") else col
                yield {"file": name, "language": language, "metric": metric, "stat": _STAT[suffix],
                       "row_label": label, "setting": setting, "category": category,
                       "category_abbrev": CATEGORY_ABBREV.get(col, "overall"), "value": value,
                       "suspect": suspect,
                       "note": SUSPECT_NOTE if suspect else None}
