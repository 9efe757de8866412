"""AmbigPrompt loaders for Si et al. (2023) (source ``ambigprompt``; datasets ambigprompt, ambigprompt_features).

Each mirrored split file ``<pair>.json`` holds ``dataset`` (= the pair name) and six lists:
``demos_1_1``, ``demos_0_0`` (ambiguous demonstrations, h1 = h2) and ``testset_1_1``, ``testset_0_0``,
``testset_1_0``, ``testset_0_1`` (``1_0`` / ``0_1`` disambiguate). An example is
``{"id": str, "question": str, "answer": "1"|"0", "split": "a_b"}``. Quirk: the h2 (spurious
feature) value is not a field; it is the SECOND digit of the list key (``testset_a_b``: h1 = a,
h2 = b). ``answer`` is the h1 label and must equal a; ``split`` must equal ``a_b``. ``id`` restarts in
every list (unique only within a list).

``ambigprompt`` record (one per example; pairs in file-name order, lists in the order above, items in
file order; 20,065 records for the 7 mirrored pairs):

* ``pair`` (str): e.g. ``"boolq_answer_length"`` (= file stem = the file's ``dataset`` field).
* ``dataset`` (str): the source dataset, ``"BoolQ"``, ``"CivilComments"`` or ``"MultiNLI"``.
* ``list`` (str): ``"demos_1_1"``, ``"demos_0_0"``, ``"testset_1_1"``, ... ; ``role``: ``"demo"`` or ``"test"``.
* ``id`` (str): as in the file (unique per (pair, list) only).
* ``text`` (str): the example text (``question``: NLI premise + "\\n" + hypothesis; BoolQ passage +
  "\\n" + question; comments: the comment).
* ``h1`` (int 0/1): task label; ``h2`` (int 0/1): spurious-feature value.
* ``h1_task_label`` (str): the label word of h1 for this example, e.g. ``"entailment"`` / ``"non-entailment"``,
  ``"toxic"`` / ``"non-toxic"``, ``"yes"`` / ``"no"`` (BoolQ answer).
* ``h2_feature`` (str): the feature's label word for h2 (feature_definitions.tsv ``h2_word_when_<b>``),
  e.g. ``"long"`` / ``"short"`` for boolq_answer_length.
* ``in_demos`` (bool): for test items, whether the same text appears among the pair's mirrored demos
  (the authors' run script skips those test items; demo lists of 3 pairs are cut to 1000, so this is
  relative to the mirrored demos); false for demos.

``ambigprompt_features`` record (feature_definitions.tsv, 22 rows, file order): ``pair``,
``source_dataset``, ``h1_task_label`` (e.g. ``"entailment(1) vs non-entailment(0)"``),
``h1_label_when_1`` / ``h1_label_when_0`` (parsed from it), ``h1_verbalizer_prefix``,
``h2_feature_description``, ``h2_verbalizer_prefix``, ``h2_word_when_1``, ``h2_word_when_0``,
``status`` (``"MIRRORED"`` / ``"MISSING"``), ``mirrored`` (bool), ``h2_definition``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from wobble.data._util import expect, get, load_json, read_tsv
from wobble.errors import DataError

LISTS = ("demos_1_1", "demos_0_0", "testset_1_1", "testset_0_0", "testset_1_0", "testset_0_1")
FEATURE_COLUMNS = ("dataset_feature_pair", "source_dataset", "h1_task_label", "h1_verbalizer_prefix",
                   "h2_feature_description", "h2_verbalizer_prefix", "h2_word_when_1", "h2_word_when_0",
                   "status_in_this_mirror", "h2_definition_per_run_py_instructions")
_H1_LABELS = re.compile(r"^(?:answer )?(.+?)\(1\) vs (.+?)\(0\)$")


def load_features(src: Path) -> Iterator[dict]:
    path = Path(src) / "feature_definitions.tsv"
    seen = set()
    for lineno, row in read_tsv(path, columns=FEATURE_COLUMNS):
        rec = f"line {lineno} ({row['dataset_feature_pair']})"
        expect(row["dataset_feature_pair"] not in seen, path, rec, "each pair listed once")
        seen.add(row["dataset_feature_pair"])
        m = _H1_LABELS.match(row["h1_task_label"])
        expect(bool(m), path, rec, f"h1_task_label like 'x(1) vs y(0)', got {row['h1_task_label']!r}")
        expect(row["status_in_this_mirror"] in ("MIRRORED", "MISSING"), path, rec,
               f"status MIRRORED or MISSING, got {row['status_in_this_mirror']!r}")
        expect(bool(row["h2_word_when_1"]) and bool(row["h2_word_when_0"]), path, rec, "both h2 label words")
        yield {"pair": row["dataset_feature_pair"], "source_dataset": row["source_dataset"],
               "h1_task_label": row["h1_task_label"], "h1_label_when_1": m.group(1), "h1_label_when_0": m.group(2),
               "h1_verbalizer_prefix": row["h1_verbalizer_prefix"],
               "h2_feature_description": row["h2_feature_description"],
               "h2_verbalizer_prefix": row["h2_verbalizer_prefix"], "h2_word_when_1": row["h2_word_when_1"],
               "h2_word_when_0": row["h2_word_when_0"], "status": row["status_in_this_mirror"],
               "mirrored": row["status_in_this_mirror"] == "MIRRORED",
               "h2_definition": row["h2_definition_per_run_py_instructions"]}


def load_examples(src: Path) -> Iterator[dict]:
    src = Path(src)
    features = {f["pair"]: f for f in load_features(src)}
    files = sorted(src.glob("*.json"))
    expect(bool(files), src, "(folder)", "at least one <pair>.json split file")
    mirrored = {p for p, f in features.items() if f["mirrored"]}
    present = {p.stem for p in files}
    if present != mirrored:
        odd = sorted(present ^ mirrored)
        raise DataError(src / "feature_definitions.tsv", odd[0],
                        f"status MIRRORED exactly for the pairs with a split file (files: {sorted(present)})")
    for path in files:
        yield from _pair_examples(path, features[path.stem])


def _pair_examples(path: Path, feat: dict) -> Iterator[dict]:
    pair = path.stem
    data = load_json(path, f"the {pair} split file")
    expect(isinstance(data, dict), path, "(top level)", "a JSON object")
    expect(set(data) == {"dataset", *LISTS}, path, "(top level)", f"exactly the keys dataset, {', '.join(LISTS)}")
    expect(data["dataset"] == pair, path, "dataset", f"the pair name {pair!r}, got {data['dataset']!r}")
    lists = {}
    for key in LISTS:
        items = data[key]
        expect(isinstance(items, list), path, key, "a list of examples")
        lists[key] = items
    demo_texts = {ex.get("question") for key in LISTS[:2] for ex in lists[key] if isinstance(ex, dict)}
    for key in LISTS:
        a, b = key.split("_")[-2:]
        ids = set()
        for i, ex in enumerate(lists[key]):
            rec = f"{key}[{i}]"
            iid = get(path, rec, ex, "id", str)
            expect(iid not in ids, path, rec, f"an id unique within {key}, {iid!r} repeats")
            ids.add(iid)
            text = get(path, rec, ex, "question", str)
            get(path, rec, ex, "answer", str, check=lambda v: v == a,
                expected=f"the h1 label '{a}' of list {key} (the first digit of the key)")
            get(path, rec, ex, "split", str, check=lambda v: v == f"{a}_{b}", expected=f"'{a}_{b}' (from the list key)")
            h1, h2 = int(a), int(b)
            yield {"pair": pair, "dataset": feat["source_dataset"], "list": key,
                   "role": "demo" if key.startswith("demos") else "test", "id": iid, "text": text, "h1": h1, "h2": h2,
                   "h1_task_label": feat[f"h1_label_when_{h1}"], "h2_feature": feat[f"h2_word_when_{h2}"],
                   "in_demos": key.startswith("testset") and text in demo_texts}
