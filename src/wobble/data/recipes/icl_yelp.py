"""Recipe ``icl_yelp``: rebuild ``yelp_4000.jsonl`` of source ``icl_yelp`` (icl_raw/yelp).

From: AI-secure/aug-pe, ``data/yelp/dev.csv`` and ``data/yelp/test.csv``.
Each has 5,000 rows with columns ``text,label1,label2``, where label1 is ``"Business Category: X"`` and label2 is
``"Review Stars: N.0"``. This is the processed Yelp Open Dataset of Yue et al. (ACL 2023), not the
``yelp_review_polarity`` CSV. See the mirror README, icl_raw/yelp/README.md.

Steps, following that README:

1. Read dev.csv, then test.csv, with the ``csv`` module (RFC 4180 quoting; the text stays verbatim). Every row
   keeps its split and its 0-based data row (``source_row``: the header is not counted).
2. Split the 10,000 rows by stars. Positive is 4-5 stars (6,613 rows). Negative is 1-2 stars (2,326 rows).
   The 3-star rows are dropped, because they have no polarity. Both lists keep the dev-then-test file order.
3. Make one ``rng = random.Random(0)``. Take ``rng.sample(positive, 2000) + rng.sample(negative, 2000)``, then
   ``rng.shuffle`` that list. The README says "2,000 of the 6,613 positive and 2,000 of the 2,326 negative rows
   in dev+test, then shuffled". Only this order of calls gives the pinned file.
4. Write one JSON object per review with the fields ``id`` (``yelp_augpe_<split>_<row>``), ``text``, ``label``
   (1/0), ``label_text`` (positive/negative), ``stars`` (int), ``business_category`` (label1 without its
   prefix), ``domain`` (``"yelp"``), ``source_split`` and ``source_row``. Serialize with ``json.dumps(...,
   ensure_ascii=False)``, one object per ``\\n``-ended line.
"""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path
from typing import Mapping

SPLITS = (("dev", "data/yelp/dev.csv"), ("test", "data/yelp/test.csv"))
OUTPUT = "yelp_4000.jsonl"
N_PER_CLASS = 2000
_CAT = "Business Category: "
_STARS = "Review Stars: "


def read_rows(split: str, text: str) -> list[dict]:
    """One dict per CSV data row: the README's fields (except ``label``), in file order."""
    out = []
    for i, row in enumerate(csv.DictReader(io.StringIO(text, newline=""))):
        cat, stars = row["label1"], row["label2"]
        if not cat.startswith(_CAT) or not stars.startswith(_STARS):
            raise ValueError(f"{split}.csv row {i}: unexpected labels {cat!r}, {stars!r}")
        out.append({"id": f"yelp_augpe_{split}_{i}", "text": row["text"], "stars": int(float(stars[len(_STARS):])),
                    "business_category": cat[len(_CAT):], "source_split": split, "source_row": i})
    return out


def sample(rows: list[dict], n_per_class: int | None = None, seed: int = 0) -> list[dict]:
    """Return n positive (4-5 star) + n negative (1-2 star) rows, sampled and shuffled with Random(seed)."""
    n_per_class = N_PER_CLASS if n_per_class is None else n_per_class
    pos = [r for r in rows if r["stars"] >= 4]
    neg = [r for r in rows if r["stars"] <= 2]
    rng = random.Random(seed)
    picked = rng.sample(pos, n_per_class) + rng.sample(neg, n_per_class)
    rng.shuffle(picked)
    out = []
    for r in picked:
        label = int(r["stars"] >= 4)
        out.append({"id": r["id"], "text": r["text"], "label": label,
                    "label_text": "positive" if label else "negative", "stars": r["stars"],
                    "business_category": r["business_category"], "domain": "yelp",
                    "source_split": r["source_split"], "source_row": r["source_row"]})
    return out


def to_jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    rows: list[dict] = []
    for split, name in SPLITS:
        rows += read_rows(split, Path(inputs[name]).read_bytes().decode("utf-8"))
    return {OUTPUT: to_jsonl(sample(rows))}
