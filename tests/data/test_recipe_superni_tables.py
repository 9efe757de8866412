"""Recipe ``superni_tables``: status, counts, page rule and categories of coverage.tsv / test_categories.tsv."""

from __future__ import annotations

import json

import pytest

from wobble.data.recipes import superni_tables as st


def _task_text(n_instances, license=True, pad=0):
    obj = {"Categories": ["Title Generation"], "Definition": ["d" * pad], "Positive Examples": [{"input": "a"}],
           "Negative Examples": [], "Instances": [{"id": f"x-{i}", "input": "i", "output": ["o"]}
                                                  for i in range(n_instances)]}
    if license:
        obj["Instance License"] = ["MIT"]
    return json.dumps(obj, indent=4, ensure_ascii=False) + "\n"


def test_instance_ends_and_page_rule():
    text = _task_text(45, license=False)
    ends = st.instance_ends(text)
    assert len(ends) == 45 and text[ends[0] - 1] == "}"
    assert st.pages_read("test_default", text) == 1  # all 45 end within 16,000 chars
    assert st.pages_read("test_xlingual", _task_text(3, license=False)) == 1
    assert st.pages_read("test_default", _task_text(45, license=False, pad=15000)) == 2  # few on page one


def test_xlingual_category_rules():
    assert st.xlingual_category("task1627_copa_hr_classification") == "Cause Effect Classification"
    assert st.xlingual_category("task534_farstail_entailment") == "Textual Entailment"
    assert st.xlingual_category("task396_persianqa_classification") == "Answerability Classification"
    assert st.xlingual_category("task1561_clickbait_new_bg_summarization") == "Title Generation"
    with pytest.raises(ValueError):
        st.xlingual_category("task9_unknown")


def test_constants_keys_are_unique_and_parse():
    assert st.task_key("task861_asdiv_addsub_question_answering") == "task861_asdiv"
    with pytest.raises(ValueError, match="repeats"):
        st.parse_table("a=1 a=2")
    assert len(st.parse_table(st.UPSTREAM_INSTANCES)) == 171
    chars = st.parse_table(st.UPSTREAM_CHARS_AT)
    assert len(chars) == 117 and all(v.split("@")[1] in st.COMMITS for v in chars.values())


def test_statuses_and_tables(tmp_path, monkeypatch):
    # one train task held in full, one missing; test: one full, one truncated, one partial; xlingual: one missing
    monkeypatch.setattr(st, "UPSTREAM_INSTANCES", "task1_a=500 task2_b=120")
    monkeypatch.setattr(st, "UPSTREAM_CHARS_AT", "task3_c=99999@ae457ac")
    monkeypatch.setattr(st, "TRANSCRIPTION_NOTES", {"task3_c": "a note"})
    files = {"tasks/task1_a.json": _task_text(8), "tasks/task2_b.json": _task_text(100),
             "tasks/task3_c.json": _task_text(5, license=False)}
    split_text = {"splits/default/train_tasks.txt": "task1_a\ntask5_e\n",
                  "splits/default/test_tasks.txt": "task2_b\ntask3_c\ntask4_d.1_x\n",
                  "splits/xlingual/test_tasks.txt": "task396_persianqa_classification\n"}
    header = ["Instruction", "Categories", "name"] + [f"Example_{k}_{p}" for k in range(1, 11)
                                                     for p in ("input", "output", "explanation")]
    empty = "," * 30
    csv_text = ",".join(header) + "\n" + "\n".join([
        f"D,Question Rewriting,task4_d{empty}", f"D,Word Analogy,task3_c{empty}", f"D,Keyword Tagging,task2_b{empty}"])
    inputs = {}
    for rel, text in {**files, **split_text, st.TASKS_CSV: csv_text + "\n"}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        inputs[rel] = path
    out = st.build(inputs)
    cov = [line.split("\t") for line in out["coverage.tsv"].decode().splitlines()]
    assert cov[0] == list(st.COVERAGE_COLUMNS)
    assert cov[1] == ["task1_a", "train", "full", "500", "8", "1", "0", "", "", "", ""]
    assert cov[2] == ["task5_e", "train", "missing", "", "0", "", "", "", "", "", ""]
    assert cov[4] == ["task3_c", "test_default", "truncated", "", "5", "1", "0", "99999",
                      "ae457ac40dafe0cd3dcd1370f0a29da54f33df4a", "2", "a note"]
    assert cov[5][:7] == ["task4_d.1_x", "test_default", "partial", "", "0", "0", "0"]
    assert cov[6][:3] == ["task396_persianqa_classification", "test_xlingual", "missing"]
    cats = [line.split("\t") for line in out["test_categories.tsv"].decode().splitlines()]
    assert [c[0] for c in cats[1:]] == ["task4_d.1_x", "task3_c", "task2_b", "task396_persianqa_classification"]
    assert cats[3][3:8] == ["Title Generation", "TG", "ROUGE-L", "task file", st.DATA_IN_MIRROR["full"]]
    assert cats[1][3:7] == ["Question Rewriting", "QR", "ROUGE-L", "Tk-Instruct fork tasks.csv"]
    assert cats[4][1:] == ["xlingual", "non-English", "Answerability Classification", "AC", "EM",
                           "inferred from task name (12 test categories)", "none", "0"]


def test_unused_constant_raises(tmp_path, monkeypatch):
    monkeypatch.setattr(st, "UPSTREAM_INSTANCES", "task7_z=1")
    monkeypatch.setattr(st, "UPSTREAM_CHARS_AT", "")
    with pytest.raises(ValueError, match="task7_z"):
        st.coverage_rows({"train": [], "test_default": [], "test_xlingual": []}, {})
