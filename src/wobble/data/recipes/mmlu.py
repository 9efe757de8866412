"""Recipe ``mmlu``: the MMLU test sample and 5-shot dev set of the ``mmlu`` source (``followup/mmlu``).

Builds ``test_sample500.jsonl``, ``dev_5shot.jsonl`` and ``subject_counts.tsv`` from the 57
``data/mmlu/test/<subject>_test.csv`` and 57 ``data/mmlu/dev/<subject>_dev.csv`` files of
stanford-cs336/spring2024-assignment5-alignment (the final MMLU
release: 14,042 test rows). The mirror's README (``followup/README.md``) describes each step:

* The CSVs have no header; each row is ``question,A,B,C,D,answer`` and the subject is the file name
  (``<subject>_test.csv`` / ``<subject>_dev.csv``). Rows are read with :mod:`csv` (quoted fields may hold
  commas and newlines) and kept verbatim — no stripping.
* *Stratified 500-question sample*: every subject gets 4 questions; the other ``500 - 4*57 = 272`` are spread
  in proportion to subject size by largest remainder (quota ``272 * n_subject / 14042``; floors first, then
  one more to the subjects with the largest fractional part, ties broken by subject name). This gives 6–34
  per subject.
* *Sampling*: one ``random.Random(0)`` shared by all subjects, visited in sorted subject order; each subject
  draws ``rng.sample(range(n_subject), k)`` and the drawn rows are kept in original (row) order, so
  ``row_index`` is the 0-based row in ``<subject>_test.csv``.
* *JSONL records*: ``{"id": "mmlu-<subject>-<split>-<row>", "subject", "row_index", "question",
  "choices": ["A. <A>", ...], "choices_raw": [<A>, ...], "answer": <letter>, "answer_type": "letter"}``,
  written with ``json.dumps(ensure_ascii=False)``, one per line. ``dev_5shot.jsonl`` holds all 5 dev rows of
  every subject, subjects sorted.
* ``subject_counts.tsv``: ``subject  n_test_full  n_sampled`` per subject, sorted, with a header.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Mapping
from pathlib import Path

SAMPLE_SIZE = 500
MIN_PER_SUBJECT = 4
SEED = 0
LETTERS = ("A", "B", "C", "D")


def read_rows(data: bytes) -> list[list[str]]:
    """Parse one header-less MMLU CSV into ``[question, A, B, C, D, answer]`` rows."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    for row in rows:
        if len(row) != 6 or row[5] not in LETTERS:
            raise ValueError(f"unexpected MMLU row: {row!r}")
    return rows


def allocate(sizes: Mapping[str, int], total: int = SAMPLE_SIZE, minimum: int = MIN_PER_SUBJECT) -> dict[str, int]:
    """``minimum`` per subject plus the rest in proportion to size, by largest remainder."""
    subjects = sorted(sizes)
    n_all = sum(sizes.values())
    rest = total - minimum * len(subjects)
    if rest < 0:
        raise ValueError("sample too small for the per-subject minimum")
    quota = {s: rest * sizes[s] / n_all for s in subjects}
    alloc = {s: minimum + int(quota[s]) for s in subjects}
    left = total - sum(alloc.values())
    by_remainder = sorted(subjects, key=lambda s: (-(quota[s] - int(quota[s])), s))
    for s in by_remainder[:left]:
        alloc[s] += 1
    return alloc


def sample(sizes: Mapping[str, int], alloc: Mapping[str, int], seed: int = SEED) -> dict[str, list[int]]:
    """Row indices drawn per subject: one shared ``random.Random(seed)``, subjects in sorted order."""
    rng = random.Random(seed)
    return {s: sorted(rng.sample(range(sizes[s]), alloc[s])) for s in sorted(sizes)}


def record(subject: str, split: str, index: int, row: list[str]) -> str:
    question, *options, answer = row
    rec = {
        "id": f"mmlu-{subject}-{split}-{index}",
        "subject": subject,
        "row_index": index,
        "question": question,
        "choices": [f"{letter}. {text}" for letter, text in zip(LETTERS, options)],
        "choices_raw": options,
        "answer": answer,
        "answer_type": "letter",
    }
    return json.dumps(rec, ensure_ascii=False) + "\n"


def _subject_files(inputs: Mapping[str, Path], split: str) -> dict[str, Path]:
    prefix, suffix = f"data/mmlu/{split}/", f"_{split}.csv"
    out = {}
    for name, path in inputs.items():
        if name.startswith(prefix) and name.endswith(suffix):
            out[name[len(prefix) : -len(suffix)]] = Path(path)
    return out


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    test_files = _subject_files(inputs, "test")
    dev_files = _subject_files(inputs, "dev")
    if not test_files or sorted(test_files) != sorted(dev_files):
        raise ValueError("need one test and one dev CSV per subject")
    test = {s: read_rows(test_files[s].read_bytes()) for s in sorted(test_files)}
    dev = {s: read_rows(dev_files[s].read_bytes()) for s in sorted(dev_files)}

    sizes = {s: len(rows) for s, rows in test.items()}
    alloc = allocate(sizes)
    picked = sample(sizes, alloc)

    sample_lines = [record(s, "test", i, test[s][i]) for s in sorted(test) for i in picked[s]]
    dev_lines = [record(s, "dev", i, row) for s in sorted(dev) for i, row in enumerate(dev[s])]
    counts = ["subject\tn_test_full\tn_sampled\n"] + [f"{s}\t{sizes[s]}\t{alloc[s]}\n" for s in sorted(test)]
    return {
        "test_sample500.jsonl": "".join(sample_lines).encode("utf-8"),
        "dev_5shot.jsonl": "".join(dev_lines).encode("utf-8"),
        "subject_counts.tsv": "".join(counts).encode("utf-8"),
    }
