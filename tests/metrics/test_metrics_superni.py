"""SuperNI / Tk-Instruct metrics against hand-computed values (wobble.metrics.superni)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from wobble.errors import DataError
from wobble.metrics import superni as S

PAPER = Path(__file__).resolve().parents[3] / "shared" / "paper" / "instructions"


# ------------------------------------------------------------------------------------- exact match

@pytest.mark.parametrize("pred,ref,expected", [
    ("The  Answer is: Yes!", "the answer is yes", True),   # casing, punctuation, whitespace
    ("New\tYork\n City ", "new york city", True),          # any whitespace run collapses
    ("don't", "dont", True),                               # punctuation inside words is removed
    ("U.S.A.", "usa", True),
    ("the cat", "cat", False),                             # articles are KEPT (unlike SQuAD)
    ("an apple", "apple", False),
    ("“yes”", "yes", False),                               # only ASCII punctuation is removed
    ("", "  ", True),
])
def test_exact_match(pred, ref, expected):
    assert S.exact_match(pred, ref) is expected


def test_normalize_answer():
    assert S.normalize_answer("  The  Cat's   HAT!! ") == "the cats hat"
    assert S.normalize_answer("A, an; THE.") == "a an the"


# ---------------------------------------------------------------------------------------- ROUGE-L

def test_rouge_l_by_hand():
    # default tokenizer: lower-case, split on non-[a-z0-9], Porter-stem tokens longer than 3 characters
    # pred: a brown fox jump          (4 tokens; "jumped" -> "jump")
    # ref:  the quick brown dog jump over (6 tokens; "jumps" -> "jump")
    # LCS = [brown, jump] = 2 -> P = 2/4 = 0.5, R = 2/6 = 1/3, F = 2PR/(P+R) = (1/3)/(5/6) = 0.4
    assert S.rouge_l("a brown fox jumped", "the quick brown dog jumps over") == pytest.approx(0.4)
    # word order matters: LCS of [a b c] and [c b a] is 1 -> P = R = F = 1/3
    assert S.rouge_l("alpha beta gamma", "gamma beta alpha") == pytest.approx(1 / 3)
    assert S.rouge_l("Running!", "runs") == 1.0  # stems: run / run
    assert S.rouge_l("", "something") == 0.0
    assert S.rouge_l("", "") == 0.0  # no tokens on either side -> 0, although exact match is 1


def test_rouge_l_non_english_uses_whitespace_tokens():
    # whitespace tokens, no lower-casing: ["Hola,", "mundo"] vs ["hola", "mundo"] -> LCS 1, P = R = F = 1/2
    assert S.rouge_l("Hola, mundo", "hola mundo", language="Spanish") == pytest.approx(0.5)
    assert S.rouge_l("Hola, mundo", "hola mundo", language="English") == 1.0
    # the English tokenizer keeps only [a-z0-9], so it would score non-Latin text 0
    assert S.rouge_l("你好 世界", "你好 世界", language="Chinese") == 1.0
    assert S.rouge_l("你好 世界", "你好 世界") == 0.0


def test_max_over_references():
    assert S.score_instance("Yes", ["No", "yes."]) == {"exact_match": 1.0, "rougeL": 1.0}
    s = S.score_instance("brown fox", ["the quick brown dog", "a brown fox"])
    # ref 1: LCS 1, P=1/2, R=1/4 -> F=1/3; ref 2: LCS 2, P=1, R=2/3 -> F=0.8; max = 0.8
    assert s == {"exact_match": 0.0, "rougeL": pytest.approx(0.8)}
    assert S.score_instance("", ["", "a"]) == {"exact_match": 1.0, "rougeL": 0.0}
    with pytest.raises(ValueError):
        S.score_instance("x", [])


# ------------------------------------------------------------------------------------ aggregation

RECORDS = [
    # category TE: task A, 1 instance, right; task B, 3 instances, wrong
    {"task": "A", "category": "Textual Entailment", "prediction": "Yes", "references": ["yes"]},
    {"task": "B", "category": "TE", "prediction": "foo", "references": ["bar"]},
    {"task": "B", "category": "TE", "prediction": "foo", "references": ["bar"]},
    {"task": "B", "category": "TE", "prediction": "foo", "references": ["bar"]},
    # category Data to Text (written DT as in test_categories.tsv): ROUGE-L 1/2 and 0
    {"task": "C", "category": "DT", "prediction": "x y", "references": ["x z"]},
    {"task": "C", "category": "DT", "prediction": "", "references": ["w"]},
]


def test_score_records_pools_instances():
    out = S.score_records(RECORDS)
    # TE over its 4 instances: 1/4 = 25.0 (the mean of task means would be (100 + 0) / 2 = 50.0)
    assert out["by_category"]["TE"] == {"exact_match": 25.0, "rougeL": 25.0, "n": 4}
    # DTT: EM 0; ROUGE-L ("x y" vs "x z": LCS 1, P = R = 1/2, F = 1/2; "" -> 0) = 100 * (0.5 + 0) / 2
    assert out["by_category"]["DTT"] == {"exact_match": 0.0, "rougeL": 25.0, "n": 2}
    assert out["by_task"] == {
        "A": {"exact_match": 100.0, "rougeL": 100.0, "n": 1},
        "B": {"exact_match": 0.0, "rougeL": 0.0, "n": 3},
        "C": {"exact_match": 0.0, "rougeL": 25.0, "n": 2},
    }
    # overall: EM 1/6 = 16.6667 (4 decimals); ROUGE-L (1 + 0.5) / 6 = 25.0
    assert out["overall"] == {"exact_match": 16.6667, "rougeL": 25.0, "n": 6}
    with pytest.raises(ValueError):
        S.score_records([])


def test_score_file_and_validation(tmp_path):
    good = tmp_path / "pred.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in RECORDS) + "\n")
    assert S.score_file(good) == S.score_records(RECORDS)

    cases = [
        ({"task": "A", "prediction": "x"}, "references"),
        ({"task": "A", "prediction": None, "references": ["x"]}, "prediction"),
        ({"task": "A", "prediction": "x", "references": []}, "references"),
        ({"task": "A", "prediction": "x", "references": "x"}, "references"),
        ({"task": "", "prediction": "x", "references": ["x"]}, "task"),
        ({"task": "A", "prediction": "x", "references": ["x"], "category": 3}, "category"),
    ]
    for bad, field in cases:
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps(bad) + "\n")
        with pytest.raises(DataError) as err:
            S.score_file(path)
        msg = str(err.value)
        assert str(path) in msg and "line 2" in msg and f"'{field}'" in msg
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataError):
        S.score_file(empty)


# ------------------------------------------------------------------------------------- categories

def test_category_metric_matches_paper_table2():
    assert S.CATEGORY_METRIC == {"TE": "exact_match", "CEC": "exact_match", "CR": "exact_match",
                                 "DAR": "exact_match", "AC": "exact_match", "WA": "exact_match",
                                 "OE": "rougeL", "KT": "rougeL", "QR": "rougeL", "TG": "rougeL",
                                 "DTT": "rougeL", "GEC": "rougeL"}
    if (PAPER / "table2.csv").exists():
        for row in csv.DictReader(io.StringIO((PAPER / "table2.csv").read_text())):
            assert S.category_abbrev(row["category"]) == row["abbr"]
            assert S.category_metric(row["abbr"]) == {"Exact Match": "exact_match", "ROUGE-L": "rougeL"}[row["metric"]]
    assert S.category_abbrev("DT") == S.category_abbrev("data_to_text") == "DTT"
    assert S.category_abbrev("Something Else") == "Something Else"
    with pytest.raises(KeyError):
        S.category_metric("Something Else")


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
