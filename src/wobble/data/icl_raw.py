"""Raw labelled text pools for rebuilding underspecified ICL splits (sources icl_imdb, icl_yelp, icl_mnli).

``imdb`` (icl_raw/imdb: imdb_4000.jsonl then the reviews of imdb_short_lt40words_all.jsonl that are
not in it; one record per review id, 4,376 records):

* ``id`` (str, ``imdb_<split>_<pos|neg>_<file id>``), ``text`` (str, verbatim: still holds ``<br />``
  markup; clean it before computing features), ``label`` (int: 1 positive, 0 negative),
  ``label_text`` (``"positive"``/``"negative"``), ``domain`` (``"imdb"``), ``rating`` (int 1-4 neg,
  7-10 pos), ``source_split`` (``"train"``/``"test"``), ``source_path`` (path in aclImdb),
  ``pools`` (list[str]: ``"imdb_4000"`` and/or ``"short_lt40words"``, the files holding the review).

``yelp`` (icl_raw/yelp/yelp_4000.jsonl, file order, 4,000 records): ``id``, ``text`` (verbatim),
``label`` (1: 4-5 stars, 0: 1-2 stars), ``label_text``, ``domain`` (``"yelp"``), ``stars`` (int),
``business_category`` (str), ``source_split`` (``"dev"``/``"test"``), ``source_row`` (int).

``mnli_genre`` (icl_raw/mnli/mnli_train_genre_kshot480.jsonl, file order, 480 records): ``id``,
``premise``, ``hypothesis``, ``label`` (int: 1 entailment, 0 neutral or contradiction: the h1 of
Si et al.), ``gold_label`` (``"entailment"``/``"neutral"``/``"contradiction"``), ``genre`` (e.g.
``"government"``, ``"fiction"``, ``"telephone"``), ``promptID``, ``pairID``, ``source_split``
(``"train"``), ``glue_train_index`` (str), ``kshot_files`` (list[str]).

Every record is validated: label in {0, 1} and consistent with label_text / rating / stars /
gold_label, ids unique.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from wobble.data._util import expect, get, need_file, str_list
from wobble.io import iter_jsonl

_LABEL_TEXT = {1: "positive", 0: "negative"}
_NLI = ("entailment", "neutral", "contradiction")


def _label(path, rec, obj) -> int:
    label = get(path, rec, obj, "label", int, check=lambda v: v in (0, 1), expected="0 or 1")
    get(path, rec, obj, "label_text", str, check=lambda v: v == _LABEL_TEXT[label],
        expected=f"{_LABEL_TEXT[label]!r} (label {label})")
    return label


def _imdb_record(path, rec, obj) -> dict:
    label = _label(path, rec, obj)
    rating = get(path, rec, obj, "rating", int, check=lambda v: (7 <= v <= 10) if label else (1 <= v <= 4),
                 expected="7-10 for a positive review, 1-4 for a negative one")
    return {"id": get(path, rec, obj, "id", str), "text": get(path, rec, obj, "text", str), "label": label,
            "label_text": _LABEL_TEXT[label],
            "domain": get(path, rec, obj, "domain", str, check=lambda v: v == "imdb", expected="'imdb'"),
            "rating": rating,
            "source_split": get(path, rec, obj, "source_split", str, check=lambda v: v in ("train", "test"),
                                expected="'train' or 'test'"),
            "source_path": get(path, rec, obj, "source_path", str)}


def load_imdb(src: Path) -> Iterator[dict]:
    src = Path(src)
    main = need_file(src / "imdb_4000.jsonl", "the IMDb 4000-review sample")
    short = need_file(src / "imdb_short_lt40words_all.jsonl", "the short IMDb reviews")
    records: dict[str, dict] = {}
    order: list[str] = []
    for path, pool in ((main, "imdb_4000"), (short, "short_lt40words")):
        for lineno, obj in iter_jsonl(path):
            rec = f"line {lineno}"
            r = _imdb_record(path, rec, obj)
            if pool == "short_lt40words":
                in_main = get(path, rec, obj, "in_imdb_4000", bool)
                expect(in_main == (r["id"] in records and "imdb_4000" in records[r["id"]]["pools"]), path, rec,
                       f"in_imdb_4000 {in_main} to agree with imdb_4000.jsonl")
            if r["id"] in records:
                prev = records[r["id"]]
                expect(pool not in prev["pools"], path, rec, f"a unique id, {r['id']!r} repeats")
                expect({k: v for k, v in prev.items() if k != "pools"} == r, path, rec,
                       f"the same review as {r['id']} in the other file")
                prev["pools"].append(pool)
            else:
                records[r["id"]] = {**r, "pools": [pool]}
                order.append(r["id"])
    for iid in order:
        yield records[iid]


def load_yelp(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "yelp_4000.jsonl", "the Yelp 4000-review sample")
    seen = set()
    for lineno, obj in iter_jsonl(path):
        rec = f"line {lineno}"
        label = _label(path, rec, obj)
        stars = get(path, rec, obj, "stars", int, check=lambda v: v in ((4, 5) if label else (1, 2)),
                    expected="4-5 stars for a positive review, 1-2 for a negative one")
        iid = get(path, rec, obj, "id", str, check=lambda v: v not in seen, expected="a unique id")
        seen.add(iid)
        yield {"id": iid, "text": get(path, rec, obj, "text", str), "label": label, "label_text": _LABEL_TEXT[label],
               "domain": get(path, rec, obj, "domain", str, check=lambda v: v == "yelp", expected="'yelp'"),
               "stars": stars, "business_category": get(path, rec, obj, "business_category", str),
               "source_split": get(path, rec, obj, "source_split", str, check=lambda v: v in ("dev", "test"),
                                   expected="'dev' or 'test'"),
               "source_row": get(path, rec, obj, "source_row", int)}


def load_mnli(src: Path) -> Iterator[dict]:
    path = need_file(Path(src) / "mnli_train_genre_kshot480.jsonl", "the MNLI genre pool")
    seen = set()
    for lineno, obj in iter_jsonl(path):
        rec = f"line {lineno}"
        gold = get(path, rec, obj, "gold_label", str, check=lambda v: v in _NLI, expected=f"one of {_NLI}")
        label = get(path, rec, obj, "label_entail", int, check=lambda v: v == int(gold == "entailment"),
                    expected=f"{int(gold == 'entailment')} (1 iff gold_label is entailment)")
        iid = get(path, rec, obj, "id", str, check=lambda v: v not in seen, expected="a unique id")
        seen.add(iid)
        yield {"id": iid, "premise": get(path, rec, obj, "premise", str),
               "hypothesis": get(path, rec, obj, "hypothesis", str), "label": label, "gold_label": gold,
               "genre": get(path, rec, obj, "genre", str, check=bool, expected="a non-empty genre"),
               "promptID": get(path, rec, obj, "promptID", str), "pairID": get(path, rec, obj, "pairID", str),
               "source_split": get(path, rec, obj, "mnli_split", str, check=lambda v: v == "train", expected="'train'"),
               "glue_train_index": get(path, rec, obj, "glue_train_index", str),
               "kshot_files": str_list(path, rec, obj, "kshot_files")}
