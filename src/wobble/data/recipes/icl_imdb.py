"""Recipe ``icl_imdb``: rebuild ``imdb_4000.jsonl`` and ``imdb_short_lt40words_all.jsonl`` of source ``icl_imdb``.

The source's mirror folder is icl_raw/imdb.

From: PVidyadhar/Detection-of-Fraud-apps-using-Sentiment-Analysis,
folder ``aclImdb/``. It is a plain-file copy of the Stanford Large Movie Review Dataset v1.0 (Maas et al., ACL
2011), with one review per file: ``aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt``, 12,500 per split and
polarity. There are 50,000 files, so the recipe's one input is an ``archive`` (the codeload tarball at that
commit). ``build`` gets the extracted ``aclImdb`` folder.

**Which files the input's tree digest covers.** The recipe reads only the ``*.txt`` files of the four
subfolders ``train/pos``, ``train/neg``, ``test/pos`` and ``test/neg`` (:data:`ARCHIVE_FILES`, which
:mod:`wobble.data.derive` reads: only those files are extracted). The ``sha256`` in ``icl_imdb.tsv`` is the tree
digest over exactly those 50,000 files, with paths relative to ``aclImdb`` (e.g. ``train/pos/8542_9.txt``).
The rest of ``aclImdb`` is left out:
``train/unsup/`` (50,000 unlabelled reviews), ``*/labeledBow.feat``, ``train/unsupBow.feat`` and
``*/urls_*.txt``. The ``.feat`` blobs are over the snapshot's 4 MiB limit, so a digest over the whole folder
could not be checked here. The ``size`` column is the total size of the 50,000 files (65,477,753 bytes).

Steps, following the mirror README (icl_raw/imdb/README.md):

1. Read every review file as UTF-8 and keep the text verbatim, ``<br />`` markup included. (All 50,000 decode
   strictly; none has a BOM, a CR or a trailing newline.) The file name ``<id>_<rating>.txt`` gives ``rating``.
   The folder gives ``label`` (pos = 1, neg = 0) and ``source_split``. The record's ``id`` is
   ``imdb_<split>_<pos|neg>_<id>`` and its ``source_path`` is ``aclImdb/<split>/<pol>/<file>``.
2. ``imdb_4000.jsonl``: the README says "train+test pooled, sorted by path". Sort all reviews by
   ``source_path`` (plain string order) and split them into the 25,000 pos and the 25,000 neg reviews. Make one
   ``rng = random.Random(0)``. Take ``rng.sample(pos, 2000) + rng.sample(neg, 2000)`` and ``rng.shuffle`` it.
   This is the same call order as the Yelp sample, and only it gives the pinned bytes.
3. ``imdb_short_lt40words_all.jsonl``: **all** reviews with fewer than 40 words, where words are counted by
   ``text.replace("<br />", " ").split()``, Python's whitespace split. That gives 405 rows (216 pos / 189 neg).
   They are sorted by ``id`` (string order: this is not the path order, e.g. ``..._1016`` comes before
   ``..._10160``). Each row also gets ``in_imdb_4000``, a bool.
4. Fields, in order: ``id``, ``text``, ``label``, ``label_text``, ``rating``, ``domain`` (``"imdb"``),
   ``source_split``, ``source_path`` (and ``in_imdb_4000`` in the short file). Serialize with
   ``json.dumps(..., ensure_ascii=False)``, one object per ``\\n``-ended line.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Mapping

INPUT = "aclImdb"
SUBFOLDERS = ("train/pos", "train/neg", "test/pos", "test/neg")
#: the files read from the archive input (fnmatch patterns relative to its folder), for wobble.data.derive
ARCHIVE_FILES = {INPUT: tuple(f"{sub}/*.txt" for sub in SUBFOLDERS)}
OUT_SAMPLE = "imdb_4000.jsonl"
OUT_SHORT = "imdb_short_lt40words_all.jsonl"
N_PER_CLASS = 2000
SHORT_WORDS = 40


def files_read(folder: Path) -> list[Path]:
    """The files the recipe reads under the ``aclImdb`` folder, sorted by their path relative to it."""
    folder = Path(folder)
    found = [p for sub in SUBFOLDERS for p in (folder / sub).glob("*.txt") if p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def review(rel: str, raw: bytes) -> dict:
    """One record from a file's path relative to ``aclImdb`` (``<split>/<pol>/<id>_<rating>.txt``) and bytes."""
    split, pol, name = rel.split("/")
    if split not in ("train", "test") or pol not in ("pos", "neg") or not name.endswith(".txt"):
        raise ValueError(f"unexpected aclImdb path {rel!r}")
    fid, rating = name[:-4].split("_")
    label = int(pol == "pos")
    return {"id": f"imdb_{split}_{pol}_{fid}", "text": raw.decode("utf-8"), "label": label,
            "label_text": "positive" if label else "negative", "rating": int(rating), "domain": "imdb",
            "source_split": split, "source_path": f"aclImdb/{rel}"}


def sample(reviews: list[dict], n_per_class: int | None = None, seed: int = 0) -> list[dict]:
    """n pos + n neg from the path-sorted pool, with one Random(seed): sample pos, sample neg, shuffle."""
    n = N_PER_CLASS if n_per_class is None else n_per_class
    pool = sorted(reviews, key=lambda r: r["source_path"])
    pos = [r for r in pool if r["label"] == 1]
    neg = [r for r in pool if r["label"] == 0]
    rng = random.Random(seed)
    picked = rng.sample(pos, n) + rng.sample(neg, n)
    rng.shuffle(picked)
    return picked


def word_count(text: str) -> int:
    return len(text.replace("<br />", " ").split())


def short_reviews(reviews: list[dict], in_sample: set[str]) -> list[dict]:
    """All reviews under SHORT_WORDS words, sorted by id, with ``in_imdb_4000``."""
    short = sorted((r for r in reviews if word_count(r["text"]) < SHORT_WORDS), key=lambda r: r["id"])
    return [{**r, "in_imdb_4000": r["id"] in in_sample} for r in short]


def to_jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    folder = Path(inputs[INPUT])
    reviews = [review(p.relative_to(folder).as_posix(), p.read_bytes()) for p in files_read(folder)]
    ids = [r["id"] for r in reviews]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate review ids in aclImdb")
    picked = sample(reviews)
    return {OUT_SAMPLE: to_jsonl(picked),
            OUT_SHORT: to_jsonl(short_reviews(reviews, {r["id"] for r in picked}))}
