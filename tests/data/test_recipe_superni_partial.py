"""Recipe ``superni_partial``: tasks.csv rows -> tasks_partial task files (slots -> examples / instances)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from wobble.data.recipes import superni_partial as sp

SLOT_COLS = [f"Example_{k}_{p}" for k in range(1, 11) for p in ("input", "output", "explanation")]


def _row(name, slots, instruction="Do it. ", category="Textual Entailment"):
    slots = list(slots) + [("", "", "")] * (10 - len(slots))
    row = {"Instruction": instruction, "Categories": category, "name": name}
    for k, (i, o, e) in enumerate(slots, 1):
        row.update({f"Example_{k}_input": i, f"Example_{k}_output": o, f"Example_{k}_explanation": e})
    return row


def _inputs(tmp_path, rows, test_tasks):
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=["Instruction", "Categories", "name", *SLOT_COLS])
    writer.writeheader()
    writer.writerows(rows)
    (tmp_path / "tasks.csv").write_bytes(buf.getvalue().encode("utf-8"))
    (tmp_path / "test.txt").write_text("\n".join(test_tasks) + "\n")
    return {sp.TASKS_CSV: tmp_path / "tasks.csv", sp.TEST_SPLIT: tmp_path / "test.txt"}


def test_slots_become_examples_and_first_gold_instances():
    row = _row("t", [("p in", "p out", "Positive. Because."), ("n in", "n out", "Negative. Not so."),
                     ("p2", "o2", "Positive. Also, yes"), ("i1", "gold1", ""), ("i2 \n x", "gold2", "")] +
               [(f"i{k}", f"g{k}", "") for k in range(3, 8)])
    obj = sp.task_object(row)
    assert list(obj) == ["Categories", "Definition", "Positive Examples", "Negative Examples", "Instances"]
    assert obj["Categories"] == ["Textual Entailment"] and obj["Definition"] == ["Do it. "]
    assert obj["Positive Examples"] == [{"input": "p in", "output": "p out", "explanation": "Because."},
                                        {"input": "p2", "output": "o2", "explanation": "Also, yes"}]
    assert obj["Negative Examples"] == [{"input": "n in", "output": "n out", "explanation": "Not so."}]
    assert obj["Instances"][:2] == [{"input": "i1", "output": ["gold1"]}, {"input": "i2 \n x", "output": ["gold2"]}]
    assert len(obj["Instances"]) == 7 and all("id" not in inst for inst in obj["Instances"])


def test_ten_examples_leave_no_instances():
    obj = sp.task_object(_row("t", [(f"x{k}", "y", "Positive. e") for k in range(10)]))
    assert len(obj["Positive Examples"]) == 10 and obj["Instances"] == []


def test_wholly_empty_slot_is_skipped():
    obj = sp.task_object(_row("t", [("x", "y", "Negative. e"), ("", "", ""), ("", "0", "")]))
    assert obj["Instances"] == [{"input": "", "output": ["0"]}]


def test_unknown_explanation_raises():
    with pytest.raises(ValueError, match="slot 1"):
        sp.task_object(_row("t", [("x", "y", "Positive: no space")]))


def test_cut_names_map_to_split_names():
    tests = ["task1529_scitail1.1_classification", "task1_a"]
    assert sp.full_name("task1529_scitail1", tests) == "task1529_scitail1.1_classification"
    assert sp.full_name("task1_a", tests) == "task1_a"
    with pytest.raises(ValueError, match="matches 0"):
        sp.full_name("task2_b", tests)


def test_build_skips_full_tasks_and_serialises(tmp_path):
    full = "task645_summarization"
    rows = [_row("task349_squad2", [("q “é”", "yes", "")]), _row(full, [("a", "b", "")])]
    out = sp.build(_inputs(tmp_path, rows, [full, "task349_squad2.0_answerable"]))
    assert list(out) == ["tasks_partial/task349_squad2.0_answerable.json"]
    text = out["tasks_partial/task349_squad2.0_answerable.json"].decode("utf-8")
    assert text.endswith("\n}\n") and "“é”" in text and '\n    "Categories": [\n        "Textual' in text
    assert json.loads(text)["Instances"] == [{"input": "q “é”", "output": ["yes"]}]
