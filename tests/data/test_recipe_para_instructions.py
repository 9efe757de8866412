"""Recipe ``para_instructions``: three paraphrase CSVs -> one JSON record per task and a long-form TSV."""

from __future__ import annotations

import csv
import io
import json

import pytest

from wobble.data.recipes import para_instructions as pi

HEADER = ["Write your instruction", "Original Instruction", "Categories", "name", "Example_1_input",
          "Example_1_output", "Example_1_explanation"]


def _csv(rows):
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


TASKS = (("task1", "Title Generation", "Orig one."), ("task9", "Word Analogy", "Orig 9"))


def _inputs(tmp_path, new_texts, tasks=TASKS):
    inputs = {}
    for i, name in enumerate(pi.CSV_NAMES):
        rows = [[new_texts[i][k], orig, cat, task, "in, with comma", "out", "Positive. x"]
                for k, (task, cat, orig) in enumerate(tasks)]
        path = tmp_path / f"n{i}.csv"
        path.write_bytes(_csv(rows))
        inputs[name] = path
    return inputs


def test_reshape_keeps_csv_order_and_verbatim_paraphrases(tmp_path):
    new = [["A1 ", "B1"], ["A2", "B2 “quoted”"], ["A3", "B3"]]
    out = pi.build(_inputs(tmp_path, new))
    records = json.loads(out["para_instructions.json"])
    assert [r["task"] for r in records] == ["task1", "task9"]
    assert records[0] == {"task": "task1", "category": "Title Generation", "category_abbrev": "TG", "metric": "ROUGE-L",
                          "original_definition": "Orig one.", "new_definitions": ["A1 ", "A2", "A3"],
                          "superni_data_in_mirror": "tasks_partial"}
    assert records[1]["category_abbrev"] == "WA" and records[1]["metric"] == "EM"
    assert records[1]["new_definitions"][1] == "B2 “quoted”"  # ensure_ascii=False keeps the character
    assert "“" in out["para_instructions.json"].decode("utf-8")
    assert out["para_instructions.json"].endswith(b"}\n]\n")


def test_tsv_long_form_unquoted(tmp_path):
    new = [["A1 ", "B1"], ["A2", 'B2 "q"'], ["A3", "B3"]]
    lines = pi.build(_inputs(tmp_path, new))["para_instructions.tsv"].decode("utf-8").split("\n")
    assert lines[0] == "task\tcategory\tdefinition_id\tdefinition"
    assert lines[1:5] == ["task1\tTitle Generation\toriginal\tOrig one.", "task1\tTitle Generation\tnew_1\tA1 ",
                          "task1\tTitle Generation\tnew_2\tA2", "task1\tTitle Generation\tnew_3\tA3"]
    assert lines[7] == 'task9\tWord Analogy\tnew_2\tB2 "q"'
    assert lines[-1] == "" and len(lines) == 1 + 8 + 1


def test_full_in_mirror_tasks_are_marked(tmp_path):
    tasks = (("task645_summarization", "Keyword Tagging", "o"),)
    out = pi.build(_inputs(tmp_path, [["a"], ["b"], ["c"]], tasks))
    assert json.loads(out["para_instructions.json"])[0]["superni_data_in_mirror"] == "tasks"


def test_mismatched_csvs_raise(tmp_path):
    inputs = _inputs(tmp_path, [["a", "b"], ["a", "b"], ["a", "b"]])
    inputs[pi.CSV_NAMES[2]].write_bytes(_csv([["a", "Other", "Title Generation", "task1", "", "", ""],
                                             ["b", "Orig 9", "Word Analogy", "task9", "", "", ""]]))
    with pytest.raises(ValueError, match="Original Instruction"):
        pi.build(inputs)


def test_tab_in_a_definition_raises(tmp_path):
    with pytest.raises(ValueError, match="tab or newline"):
        pi.build(_inputs(tmp_path, [["a\tb", "x"], ["a", "x"], ["a", "x"]]))
