"""Recipe ``mmlu``: stratified sample (>= 4 per subject, largest remainder, one shared Random(0)) and record layout."""

from __future__ import annotations

import json
import random

import pytest

from wobble.data.recipes import mmlu


def _write(tmp_path, split, subject, rows):
    path = tmp_path / split / f"{subject}_{split}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(rows).encode("utf-8"))
    return f"data/mmlu/{split}/{subject}_{split}.csv", path


def _inputs(tmp_path, sizes):
    inputs = {}
    for subject, n in sizes.items():
        test = [f'"Q{i} of {subject}, with a comma",a{i},b,c,"d\nline",{"ABCD"[i % 4]}\n' for i in range(n)]
        dev = [f"dev {i} é,w,x,y,z,B\n" for i in range(5)]
        inputs.__setitem__(*_write(tmp_path, "test", subject, test))
        inputs.__setitem__(*_write(tmp_path, "dev", subject, dev))
    return inputs


def test_allocate_minimum_then_largest_remainder():
    # rest = 20 - 3*4 = 8; quotas 8*{10,30,60}/100 = 0.8, 2.4, 4.8 -> floors 0,2,4 (6), 2 left by remainder: a (.8), c (.8)
    alloc = mmlu.allocate({"c": 60, "a": 10, "b": 30}, total=20, minimum=4)
    assert alloc == {"a": 5, "b": 6, "c": 9}
    assert sum(alloc.values()) == 20


def test_allocate_ties_broken_by_subject_name():
    alloc = mmlu.allocate({"y": 10, "x": 10}, total=9, minimum=4)
    assert alloc == {"x": 5, "y": 4}


def test_allocate_rejects_too_small_total():
    with pytest.raises(ValueError):
        mmlu.allocate({"a": 10, "b": 10}, total=7, minimum=4)


def test_sample_uses_one_rng_in_sorted_subject_order():
    sizes, alloc = {"b": 20, "a": 15}, {"a": 4, "b": 6}
    rng = random.Random(0)
    want_a = sorted(rng.sample(range(15), 4))
    want_b = sorted(rng.sample(range(20), 6))
    got = mmlu.sample(sizes, alloc)
    assert got == {"a": want_a, "b": want_b}
    assert got == mmlu.sample(dict(reversed(list(sizes.items()))), alloc)  # input order does not matter


def test_build_layout_and_determinism(tmp_path):
    sizes = {f"s{i:02d}": 10 + 3 * i for i in range(57)}
    inputs = _inputs(tmp_path, sizes)
    out = mmlu.build(inputs)
    assert out == mmlu.build(dict(reversed(list(inputs.items()))))
    assert set(out) == {"test_sample500.jsonl", "dev_5shot.jsonl", "subject_counts.tsv"}

    recs = [json.loads(line) for line in out["test_sample500.jsonl"].decode().splitlines()]
    assert len(recs) == 500
    first = recs[0]
    assert list(first) == ["id", "subject", "row_index", "question", "choices", "choices_raw", "answer",
                           "answer_type"]
    assert first["id"] == f"mmlu-s00-test-{first['row_index']}"
    i = first["row_index"]
    assert first["question"] == f"Q{i} of s00, with a comma"
    assert first["choices_raw"] == [f"a{i}", "b", "c", "d\nline"]
    assert first["choices"] == [f"A. a{i}", "B. b", "C. c", "D. d\nline"]
    assert first["answer"] == "ABCD"[i % 4] and first["answer_type"] == "letter"
    # rows of a subject stay in file order
    s00 = [r["row_index"] for r in recs if r["subject"] == "s00"]
    assert s00 == sorted(s00) and len(s00) >= 4

    dev = out["dev_5shot.jsonl"].decode("utf-8")
    assert dev.count("\n") == 57 * 5 and "dev 0 é" in dev  # ensure_ascii=False
    assert json.loads(dev.splitlines()[0])["id"] == "mmlu-s00-dev-0"

    counts = out["subject_counts.tsv"].decode().splitlines()
    assert counts[0] == "subject\tn_test_full\tn_sampled"
    assert counts[1] == f"s00\t10\t{len(s00)}"
    assert sum(int(line.split("\t")[2]) for line in counts[1:]) == 500


def test_bad_row_is_rejected():
    with pytest.raises(ValueError):
        mmlu.read_rows(b"q,a,b,c,d,E\n")
    with pytest.raises(ValueError):
        mmlu.read_rows(b"q,a,b,c,A\n")
