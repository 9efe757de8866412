"""Malformed inputs raise DataError naming the file, the record and what was expected (never dropped)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wobble.data import ambigprompt, diverse_prompt, followup, icl_raw, opinionqa, para_instructions, robustness, superni
from wobble.data.prepare import prepare
from wobble.errors import DataError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def _raises(fn, *args) -> DataError:
    with pytest.raises(DataError) as err:
        out = fn(*args)
        if out is not None and not isinstance(out, (dict, list, int)):
            list(out)
    return err.value


def _check(err: DataError, path: Path, record: str, expected: str) -> None:
    assert Path(err.path) == path, err
    assert record in str(err.record), err
    assert expected in err.expected, err
    assert str(path) in str(err) and record in str(err)


# ---------------------------------------------------------------- fixture files


def test_gsm8k_missing_answer_marker(tmp_path):
    src = FIXTURES / "gsm8k_bad"
    err = _raises(followup.load_gsm8k, src)
    _check(err, src / "test.jsonl", "line 2", "a solution ending in '#### <number>'")
    # prepare() propagates the error and leaves no output behind
    with pytest.raises(DataError, match="line 2"):
        prepare("gsm8k", {"gsm8k": src}, tmp_path / "gsm8k.jsonl")
    assert not (tmp_path / "gsm8k.jsonl").exists()


def test_opinionqa_unparseable_label():
    src = FIXTURES / "opinionqa_bad_label"
    path = src / "annotated_responses" / "toy-model" / "test.jsonl"
    err = _raises(opinionqa.load_annotated, src)
    _check(err, path, "line 2 shuffle_0 label", "got 'maybe B?'")
    first = next(iter(opinionqa.load_annotated(src)))  # line 1 is valid
    assert (first["label_kind"], first["label_letters"], first["label_option"]) == ("single", ["B"], "No")
    assert first["options_as_shown"] == ["Yes", "No", "Refused"] and first["refusal_letter"] == "C"


def test_superni_output_not_a_list(tmp_path):
    src = FIXTURES / "superni_bad_task"
    task = src / "tasks" / "task9001_toy_entailment.json"
    err = _raises(superni.load_test_instances, src)
    _check(err, task, "Instances[1]", "field 'output' should be a non-empty list of strings")


# ---------------------------------------------------------------- SuperNI variants (a repaired copy of the fixture)


@pytest.fixture()
def toy_superni(tmp_path) -> Path:
    src = tmp_path / "superni"
    shutil.copytree(FIXTURES / "superni_bad_task", src)
    path = src / "tasks" / "task9001_toy_entailment.json"
    data = json.loads(path.read_text())
    data["Instances"][1]["output"] = ["no"]
    path.write_text(json.dumps(data, indent=4))
    return src


def _edit_task(src: Path, fn) -> Path:
    path = src / "tasks" / "task9001_toy_entailment.json"
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data, indent=4))
    return path


def test_superni_toy_valid_and_quirks(toy_superni):
    rows = list(superni.load_test_instances(toy_superni))
    assert [r["id"] for r in rows] == ["task9001-1", "task9001-2"] and not any(r["id_synthesized"] for r in rows)
    assert rows[0]["metric"] == "exact_match" and rows[0]["category_abbrev"] == "TE" and rows[0]["data_status"] == "full"

    def old_format(d):  # no ids, bare-string Definition, no Input_language
        d["Definition"] = "Answer yes or no."
        del d["Input_language"]
        for inst in d["Instances"]:
            del inst["id"]

    _edit_task(toy_superni, old_format)
    rows = list(superni.load_test_instances(toy_superni))
    assert [r["id"] for r in rows] == ["task9001_toy_entailment-0", "task9001_toy_entailment-1"]
    assert all(r["id_synthesized"] for r in rows) and rows[0]["definition"] == "Answer yes or no."
    assert rows[0]["language"] == "English"  # from test_categories.tsv


@pytest.mark.parametrize("edit, record, expected", [
    (lambda d: d.update(Definition=7), "Definition", "a list holding the definition string"),
    (lambda d: d.update(Definition=[]), "Definition", "a list holding the definition string"),
    (lambda d: d["Positive Examples"][0].pop("explanation"), "Positive Examples[0]", "field 'explanation' is missing"),
    (lambda d: d["Instances"][0].update(input=None), "Instances[0]", "field 'input' should be str"),
    (lambda d: d["Instances"][1].update(id="task9001-1"), "Instances (id task9001-1)", "unique instance ids"),
    (lambda d: d["Instances"][0].update(output=[]), "Instances[0]", "a non-empty list of strings"),
])
def test_superni_bad_task_fields(toy_superni, edit, record, expected):
    path = _edit_task(toy_superni, edit)
    _check(_raises(superni.load_test_instances, toy_superni), path, record, expected)


def test_superni_coverage_and_split_mismatches(toy_superni):
    cov = toy_superni / "coverage.tsv"
    cov.write_text(cov.read_text().replace("\t2\t2\t", "\t2\t3\t"))
    _check(_raises(superni.load_test_tasks, toy_superni), cov, "task9001_toy_entailment", "n_instances_in_mirror 3")
    cov.write_text(cov.read_text().replace("\t2\t3\t", "\t2\t2\t").replace("\tfull\t", "\tpartial\t"))
    _check(_raises(superni.load_test_tasks, toy_superni), cov, "task9001_toy_entailment", "status 'partial'")
    split = toy_superni / "splits" / "default" / "test_tasks.txt"
    split.write_text("task9001_toy_entailment\ntask9002_not_categorised\n")
    _check(_raises(superni.load_test_tasks, toy_superni), toy_superni / "test_categories.tsv",
           "task9002_not_categorised", "a row for test task")
    cats = toy_superni / "test_categories.tsv"
    cats.write_text(cats.read_text().replace("\tEM\t", "\tBLEU\t"))
    _check(_raises(superni.read_categories, toy_superni), cats, "line 2", "a metric among")


# ---------------------------------------------------------------- OpinionQA variants


def test_opinionqa_label_letter_out_of_range_and_bad_prompt(tmp_path):
    src = tmp_path / "opinionqa"
    shutil.copytree(FIXTURES / "opinionqa_bad_label", src)
    path = src / "annotated_responses" / "toy-model" / "test.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["shuffle_0"]["label"] = "E. Maybe"
    path.write_text(json.dumps(row) + "\n")
    _check(_raises(opinionqa.load_annotated, src), path, "line 1 shuffle_0 label", "a label letter among ABC")
    row["shuffle_0"]["label"] = "AA"
    path.write_text(json.dumps(row) + "\n")
    _check(_raises(opinionqa.load_annotated, src), path, "line 1 shuffle_0 label", "distinct letters")
    row["shuffle_0"]["label"] = "B. No"
    row["references"] = ["Yes", "No", "Don't know"]
    path.write_text(json.dumps(row) + "\n")
    _check(_raises(opinionqa.load_annotated, src), path, "line 1 shuffle_0", "a permutation of references")
    path.write_text(lines[0][:40] + "\n")
    _check(_raises(opinionqa.load_annotated, src), path, "line 1", "a JSON object")


def test_opinionqa_subset_needs_refused_option(tmp_path):
    src = tmp_path / "opinionqa"
    src.mkdir()
    row = {"uid": "W/Q/1", "qkey": "Q", "wave": "W", "question": "q?", "options": ["Yes", "No"],
           "option_mapping": {"1.0": "Yes", "2.0": "No"}, "option_ordinal": [1.0, 2.0], "idx": 0,
           "mcq_mismatch_classifier_split": "train", "mcq_mismatch_options_as_listed": ["No", "Yes"]}
    (src / "subset_414.jsonl").write_text(json.dumps(row) + "\n")
    (src / "subset_414_ids.txt").write_text("W/Q/1\n")
    _check(_raises(opinionqa.load_subset_414, src), src / "subset_414.jsonl", "line 1", "includes 'Refused'")


# ---------------------------------------------------------------- AmbigPrompt


def _ambig(tmp_path, mutate=None) -> Path:
    src = tmp_path / "ambigprompt"
    src.mkdir()
    header = "\t".join(ambigprompt.FEATURE_COLUMNS)
    rows = ["boolq_answer_length\tBoolQ\tanswer yes(1) vs no(0)\tAnswer?\tpassage length\tLength?\tlong\tshort\tMIRRORED\tx",
            "sa_sentiment_length\tIMDb+Yelp\tpositive(1) vs negative(0)\t(none)\tlength\tLength?\tshort\tlong\tMISSING\tx"]
    (src / "feature_definitions.tsv").write_text(header + "\n" + "\n".join(rows) + "\n")
    data = {"dataset": "boolq_answer_length"}
    for key in ambigprompt.LISTS:
        a, b = key.split("_")[-2:]
        data[key] = [{"id": "0", "question": f"passage {key}\nquestion?", "answer": a, "split": f"{a}_{b}"}]
    if mutate:
        mutate(data)
    (src / "boolq_answer_length.json").write_text(json.dumps(data))
    return src


def test_ambigprompt_valid_toy(tmp_path):
    rows = list(ambigprompt.load_examples(_ambig(tmp_path)))
    assert [(r["list"], r["h1"], r["h2"], r["h1_task_label"], r["h2_feature"]) for r in rows][4] == (
        "testset_1_0", 1, 0, "yes", "short")


@pytest.mark.parametrize("mutate, record, expected", [
    (lambda d: d["testset_1_0"][0].update(answer="0"), "testset_1_0[0]", "the h1 label '1' of list testset_1_0"),
    (lambda d: d["testset_0_1"][0].update(split="0_0"), "testset_0_1[0]", "'0_1' (from the list key)"),
    (lambda d: d["demos_1_1"].append(dict(d["demos_1_1"][0])), "demos_1_1[1]", "an id unique within demos_1_1"),
    (lambda d: d.update(dataset="other"), "dataset", "the pair name 'boolq_answer_length'"),
    (lambda d: d.pop("testset_0_1"), "(top level)", "exactly the keys"),
])
def test_ambigprompt_bad_examples(tmp_path, mutate, record, expected):
    src = _ambig(tmp_path, mutate)
    _check(_raises(ambigprompt.load_examples, src), src / "boolq_answer_length.json", record, expected)


def test_ambigprompt_status_must_match_files(tmp_path):
    src = _ambig(tmp_path)
    (src / "boolq_answer_length.json").rename(src / "boolq_answer_qword.json")
    err = _raises(ambigprompt.load_examples, src)
    assert Path(err.path) == src / "feature_definitions.tsv" and "status MIRRORED" in err.expected


# ---------------------------------------------------------------- the other families


def _write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_yelp_bad_json_line_and_label(tmp_path):
    good = {"id": "y1", "text": "ok", "label": 1, "label_text": "positive", "stars": 5, "business_category": "Bars",
            "domain": "yelp", "source_split": "dev", "source_row": 1}
    path = _write_jsonl(tmp_path / "yelp" / "yelp_4000.jsonl", [good, {**good, "id": "y2"}, '{"id": "y3", "text"'])
    _check(_raises(icl_raw.load_yelp, tmp_path / "yelp"), path, "line 3", "a JSON object")
    _write_jsonl(path, [good, {**good, "id": "y2", "stars": 2}])
    _check(_raises(icl_raw.load_yelp, tmp_path / "yelp"), path, "line 2", "4-5 stars for a positive review")
    _write_jsonl(path, [good, good])
    _check(_raises(icl_raw.load_yelp, tmp_path / "yelp"), path, "line 2", "a unique id")


def test_imdb_label_text_mismatch(tmp_path):
    row = {"id": "imdb_train_pos_1", "text": "Great.", "label": 1, "label_text": "negative", "rating": 9,
           "domain": "imdb", "source_split": "train", "source_path": "aclImdb/train/pos/1_9.txt"}
    src = tmp_path / "imdb"
    path = _write_jsonl(src / "imdb_4000.jsonl", [row])
    _write_jsonl(src / "imdb_short_lt40words_all.jsonl", [])
    _check(_raises(icl_raw.load_imdb, src), path, "line 1", "'positive' (label 1)")


def test_strategyqa_target_scores(tmp_path):
    src = tmp_path / "strategyqa"
    src.mkdir()
    ex = {"input": "Is water wet?", "target_scores": {"Yes": 1, "No": 1}, "target": "Yes."}
    (src / "task.json").write_text(json.dumps({"examples": [ex]}))
    _check(_raises(followup.load_strategyqa, src), src / "task.json", "examples[0]", "exactly one 1")


def test_csqa_choice_labels(tmp_path):
    choices = [{"label": L, "text": L.lower()} for L in "ABCDF"]
    row = {"answerKey": "A", "id": "q1", "question": {"question_concept": "c", "choices": choices, "stem": "s?"}}
    path = _write_jsonl(tmp_path / "csqa" / "dev_rand_split.jsonl", [row])
    _check(_raises(followup.load_csqa, tmp_path / "csqa"), path, "line 1 choice 4", "'E'")


def test_mmlu_subject_counts(tmp_path):
    src = tmp_path / "mmlu"
    row = {"id": "mmlu-anatomy-test-3", "subject": "anatomy", "row_index": 3, "question": "q?",
           "choices": ["A. a", "B. b", "C. c", "D. d"], "choices_raw": ["a", "b", "c", "d"], "answer": "B",
           "answer_type": "letter"}
    _write_jsonl(src / "test_sample500.jsonl", [row])
    _write_jsonl(src / "dev_5shot.jsonl", [])
    (src / "subject_counts.tsv").write_text("subject\tn_test_full\tn_sampled\nanatomy\t135\t2\n")
    _check(_raises(followup.load_mmlu, src), src / "subject_counts.tsv", "anatomy", "n_sampled 2")
    (src / "subject_counts.tsv").write_text("subject\tn_test_full\tn_sampled\nanatomy\t135\t1\textra\n")
    _check(_raises(followup.load_mmlu, src), src / "subject_counts.tsv", "line 2", "3 tab-separated fields, got 4")
    (src / "subject_counts.tsv").write_text("subject\tn_test_full\tn_sampled\nanatomy\t135\t1\n")
    _write_jsonl(src / "test_sample500.jsonl", [{**row, "choices": ["A. a", "B. b", "C. c", "D. x"]}])
    _check(_raises(followup.load_mmlu, src), src / "test_sample500.jsonl", "line 1", "choices = ['A. <choices_raw[0]>'")


def test_para_tsv_disagrees_with_json(tmp_path):
    src = tmp_path / "para"
    src.mkdir()
    obj = {"task": "task1", "category": "Title Generation", "category_abbrev": "TG", "metric": "ROUGE-L",
           "original_definition": "Write a title.", "new_definitions": ["A", "B", "C"], "superni_data_in_mirror": "tasks"}
    (src / "para_instructions.json").write_text(json.dumps([obj]))
    rows = [("original", "Write a title."), ("new_1", "A"), ("new_2", "B"), ("new_3", "C changed")]
    (src / "para_instructions.tsv").write_text("task\tcategory\tdefinition_id\tdefinition\n" + "".join(
        f"task1\tTitle Generation\t{i}\t{t}\n" for i, t in rows))
    _check(_raises(para_instructions.load_para, src), src / "para_instructions.tsv", "line 5", "the same category and new_3 text")
    obj["new_definitions"] = ["A", "B"]
    (src / "para_instructions.json").write_text(json.dumps([obj]))
    _check(_raises(para_instructions.load_para, src), src / "para_instructions.json", "item 0 (task1)", "3 new definitions")


def test_diverse_prompt_count_mismatch(tmp_path):
    src = tmp_path / "dp"
    (src / "tasks").mkdir(parents=True)
    (src / "index.tsv").write_text("\t".join(diverse_prompt.INDEX_COLUMNS) + "\nsum\tsum\t2\t1\t0\texact_match\n")
    task = {"task": "sum", "paper_name": "sum", "prompts": ["Add the numbers."], "official_ii_metric": "exact_match",
            "eval_examples": [{"id": "1", "input": "1 2", "outputs": ["3"]}], "fork_eval_examples": []}
    (src / "tasks" / "sum.json").write_text(json.dumps(task))
    _check(_raises(diverse_prompt.load_tasks, src), src / "tasks" / "sum.json", "prompts", "2 items (index.tsv n_prompts)")


def test_robustness_non_numeric(tmp_path):
    src = tmp_path / "res"
    src.mkdir()
    (src / "xlingual_rougeL.csv").write_text(",title_generation,eval_rougeL\nxlingual,10.8,52.3\nxlingual_x,n/a,1\n")
    _check(_raises(robustness.load_results, src), src / "xlingual_rougeL.csv", "line 3", "numbers in every score column")
