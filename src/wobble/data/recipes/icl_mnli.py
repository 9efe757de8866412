"""Recipe ``icl_mnli``: rebuild ``mnli_train_genre_kshot480.jsonl`` of source ``icl_mnli`` (icl_raw/mnli).

From: ZhengxiangShi/PowerfulPromptFT,
``data/k-shot/MNLI/16-{13,21,42,87,100}/{train,dev_matched}.tsv``. These are LM-BFF k-shot files (16 per class
per file) in the GLUE MNLI TSV layout: index, promptID, pairID, genre, four parse columns, sentence1, sentence2,
label1, gold_label. The mirror README (icl_raw/mnli/README.md) says that all 10 files come from the MultiNLI
*train* split. They are the only MNLI copy with a ``genre`` field that fits the snapshot limit.

Steps, following that README:

1. Read each of the 10 files as plain tab-separated text. There is no CSV quoting, because GLUE's MNLI TSV
   keeps quote characters verbatim. Drop the parse columns.
2. Take the union, deduplicated by ``pairID``. ``kshot_files`` lists every ``16-<seed>/<file>.tsv`` that holds
   the pair, in the input order (seeds 13, 21, 42, 87, 100; train before dev_matched). At the pinned commit
   the 10 files are disjoint, so each pair has one file: 480 = 10 x 48 pairs, 160 per gold label.
3. Write one JSON object per pair with the fields ``id`` (``mnli_<pairID>``), ``premise`` (sentence1),
   ``hypothesis`` (sentence2), ``gold_label``, ``label_entail`` (1 iff entailment: the h1 of Si et al.), ``genre``,
   ``promptID``, ``pairID``, ``mnli_split`` (``"train"``), ``glue_train_index`` (the TSV ``index``, a
   string) and ``kshot_files``.
4. Order the rows by (genre, pairID), both compared as strings. Serialize with ``json.dumps(...,
   ensure_ascii=False)`` and end every line with ``\\n``.

No randomness is involved: although ``pins.tsv`` notes a ``random.Random(0)`` sample, this file is the whole union.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

SEEDS = (13, 21, 42, 87, 100)
SPLITS = ("train", "dev_matched")
INPUTS = tuple(f"data/k-shot/MNLI/16-{s}/{f}.tsv" for s in SEEDS for f in SPLITS)
OUTPUT = "mnli_train_genre_kshot480.jsonl"
_GOLD = ("entailment", "neutral", "contradiction")


def read_tsv(text: str) -> list[dict[str, str]]:
    """Split GLUE-style TSV text into dicts by the header row. Quotes are kept verbatim."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    header = lines[0].rstrip("\r").split("\t")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        cells = line.rstrip("\r").split("\t")
        if len(cells) != len(header):
            raise ValueError(f"line {n}: {len(cells)} cells, header has {len(header)}")
        rows.append(dict(zip(header, cells)))
    return rows


def pool(files: list[tuple[str, str]]) -> list[dict]:
    """files: (short name like ``16-13/train.tsv``, TSV text), in input order -> records, sorted."""
    by_pair: dict[str, dict] = {}
    for short, text in files:
        for row in read_tsv(text):
            pid = row["pairID"]
            if pid in by_pair:
                rec = by_pair[pid]
                if (rec["premise"], rec["hypothesis"], rec["gold_label"]) != (
                        row["sentence1"], row["sentence2"], row["gold_label"]):
                    raise ValueError(f"pairID {pid} differs between {rec['kshot_files']} and {short}")
                if short not in rec["kshot_files"]:
                    rec["kshot_files"].append(short)
                continue
            gold = row["gold_label"]
            if gold not in _GOLD:
                raise ValueError(f"{short}: pairID {pid} has gold_label {gold!r}")
            by_pair[pid] = {
                "id": f"mnli_{pid}", "premise": row["sentence1"], "hypothesis": row["sentence2"],
                "gold_label": gold, "label_entail": int(gold == "entailment"), "genre": row["genre"],
                "promptID": row["promptID"], "pairID": pid, "mnli_split": "train",
                "glue_train_index": row["index"], "kshot_files": [short],
            }
    return sorted(by_pair.values(), key=lambda r: (r["genre"], r["pairID"]))


def to_jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    files = [(name.split("MNLI/", 1)[1], Path(inputs[name]).read_bytes().decode("utf-8")) for name in INPUTS]
    return {OUTPUT: to_jsonl(pool(files))}
