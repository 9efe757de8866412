"""wobble.metrics.superni: behaviour the mutation run (tests/tools/mutate.py) found untested.

Each test pins something a researcher relies on when reading the instructions study's numbers, with
hand-computed values.
"""

from __future__ import annotations

import json

import pytest

from wobble.errors import DataError
from wobble.metrics import superni as S


def test_score_records_uses_each_records_language():
    # Chinese prediction == reference: whitespace tokens give ROUGE-L 100; the English tokenizer keeps only
    # [a-z0-9] and would give 0 (a Chinese ROUGE-L of 100 becomes 0 if the language is dropped).
    recs = [{"task": "zh", "prediction": "你好 世界", "references": ["你好 世界"], "language": "Chinese"}]
    assert S.score_records(recs)["overall"]["rougeL"] == 100.0
    # without a language the record is scored as English: 0
    assert S.score_records([{k: v for k, v in recs[0].items() if k != "language"}])["overall"]["rougeL"] == 0.0


def test_score_file_keeps_the_language_field(tmp_path):
    path = tmp_path / "pred.jsonl"
    path.write_text(json.dumps({"task": "zh", "prediction": "你好 世界", "references": ["你好 世界"],
                                "language": "Chinese"}) + "\n")
    assert S.read_prediction_records(path)[0]["language"] == "Chinese"
    assert S.score_file(path)["overall"] == {"exact_match": 100.0, "rougeL": 100.0, "n": 1}


def test_summary_rounds_to_four_decimals():
    # 1 right of 3: 100/3 = 33.333333... -> 33.3333 (compute_metrics rounds to 4 decimals)
    recs = [{"task": "t", "prediction": p, "references": ["a"]} for p in ("a", "b", "b")]
    out = S.score_records(recs)["overall"]
    assert out["exact_match"] == 33.3333 and out["rougeL"] == 33.3333


def test_references_must_be_a_list_not_a_string():
    # a bare string would otherwise be iterated character by character ("yes" -> "y", "e", "s")
    with pytest.raises(ValueError, match="non-empty list of strings"):
        S.score_instance("y", "yes")
    with pytest.raises(ValueError, match="non-empty list of strings"):
        S.max_exact_match("y", [])
    with pytest.raises(ValueError, match="non-empty list of strings"):
        S.max_rouge_l("y", [])


def test_unknown_category_names_itself():
    with pytest.raises(KeyError, match="unknown SuperNI category 'Poetry'"):
        S.category_metric("Poetry")


def test_every_category_name_maps_to_its_abbreviation():
    for abbr, name in S.CATEGORY_NAMES.items():
        assert S.category_abbrev(name) == abbr
        assert S.category_abbrev("_".join(name.lower().split())) == abbr
        assert S.category_abbrev(f"  {abbr.lower()} ") == abbr
    assert S.category_abbrev("DT") == "DTT"


def test_read_prediction_records_says_what_was_expected(tmp_path):
    def error(obj) -> str:
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(obj) + "\n")
        with pytest.raises(DataError) as err:
            S.read_prediction_records(path)
        return str(err.value)

    assert "field 'task' should be a non-empty string, got" in error({"task": " ", "prediction": "x", "references": ["x"]})
    # a list that holds a non-string is not a list of strings
    assert "field 'references' should be a non-empty list of strings, got" in error(
        {"task": "A", "prediction": "x", "references": ["x", 3]})
    # a null optional field is allowed and dropped
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps({"task": "A", "prediction": "x", "references": ["x"], "category": None}) + "\n")
    assert "category" not in S.read_prediction_records(path)[0]


def test_the_language_is_read_in_any_case_and_spacing():
    assert S.is_english(" English\n") and S.is_english("ENGLISH") and not S.is_english("Chinese")


def test_only_categories_are_scored_by_category():
    recs = [{"task": "t1", "prediction": "a", "references": ["a"], "category": "Grammar Error Correction"},
            {"task": "t2", "prediction": "b", "references": ["a"]}]
    out = S.score_records(recs)
    assert list(out["by_category"]) == ["GEC"] and sorted(out["by_task"]) == ["t1", "t2"]
