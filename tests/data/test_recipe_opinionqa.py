"""Rules of the opinionqa recipe (wobble.data.recipes.opinionqa) on tiny hand-made info.csv / MCQ-Mismatch rows."""

import csv
import io
import json

import pytest

from wobble.data.recipes import opinionqa

WAVE_HEADER = ["", "Unnamed: 0.1", "Unnamed: 0", "key", "option_mapping", "question", "references", "option_ordinal"]
DIS_HEADER = ["", "index", "Unnamed: 0.2", "Unnamed: 0.1", "Unnamed: 0", "key", "option_mapping", "question",
              "references", "option_ordinal", "survey"]
YN = ("{1.0: 'Yes', 2.0: 'No', 99.0: 'Refused'}", "['Yes', 'No', 'Refused']", "[1.0, 2.0]")


def csv_text(header, rows):
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def wave_rows(questions):
    return [[i, i, i, key, m, q, refs, ordn] for i, (key, q, (m, refs, ordn)) in enumerate(questions)]


def make_inputs(tmp_path, waves, dis_rows, mcq_train, mcq_test):
    inputs = {}
    for w in opinionqa.WAVES:
        p = tmp_path / opinionqa.wave_input(w)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(csv_text(WAVE_HEADER, wave_rows(waves.get(w, []))), encoding="utf-8", newline="")
        inputs[opinionqa.wave_input(w)] = p
    p = tmp_path / opinionqa.DISAGREEMENT
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(csv_text(DIS_HEADER, dis_rows), encoding="utf-8", newline="")
    inputs[opinionqa.DISAGREEMENT] = p
    for name, rows in ((opinionqa.MCQ_TRAIN, mcq_train), (opinionqa.MCQ_TEST, mcq_test)):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        inputs[name] = p
    return inputs


def dis_row(n, wave, idx, key, question, opts=YN):
    return [n, idx, idx, idx, idx, key, opts[0], question, opts[1], opts[2], f"Pew_American_Trends_Panel_W{wave}"]


def mcq(question, refs):
    return {"original_question": question, "option_ordinal": [1, 2], "references": refs, "shuffle_0": {}}


WAVES = {
    26: [("A_W26", "Same text?", YN), ("B_W26", "Only in W26?", YN), ("C_W26", "Café question?", YN)],
    50: [("A_W50", "Same text?", YN), ("B_W50", "Other options?", ("{1.0: 'Up', 2.0: 'Down'}", "['Up', 'Down']",
                                                                    "[1.0, 2.0]"))],
}


def build(tmp_path, dis=None, train=None, test=None):
    dis = dis if dis is not None else [dis_row(0, 50, 0, "A_W50", "Same text?"), dis_row(1, 26, 1, "B_W26",
                                                                                         "Only in W26?")]
    train = train if train is not None else [mcq("Only in W26?", ["No", "Refused", "Yes"]),
                                             mcq("Same text?", ["Refused", "Yes", "No"])]
    test = test if test is not None else [mcq("Other options?", ["Down", "Up"])]
    return opinionqa.build(make_inputs(tmp_path, WAVES, dis, train, test))


def lines(raw):
    return [json.loads(x) for x in raw.decode("utf-8").splitlines()]


def test_questions_all_fields_and_order(tmp_path):
    out = build(tmp_path)
    rows = lines(out["questions_all.jsonl"])
    assert [r["uid"] for r in rows] == ["American_Trends_Panel_W26/A_W26/0", "American_Trends_Panel_W26/B_W26/1",
                                        "American_Trends_Panel_W26/C_W26/2", "American_Trends_Panel_W50/A_W50/0",
                                        "American_Trends_Panel_W50/B_W50/1"]
    assert rows[0] == {"uid": "American_Trends_Panel_W26/A_W26/0", "qkey": "A_W26", "wave": "American_Trends_Panel_W26",
                       "info_csv_row": 0, "question": "Same text?", "options": ["Yes", "No", "Refused"],
                       "option_mapping": {"1.0": "Yes", "2.0": "No", "99.0": "Refused"}, "option_ordinal": [1.0, 2.0],
                       "has_refused_option": True, "in_disagreement_500": False, "in_mcq_mismatch_414": False}
    assert rows[4]["has_refused_option"] is False
    assert '"option_ordinal": [1.0, 2.0]' in out["questions_all.jsonl"].decode()  # floats kept
    assert "Café".encode("utf-8") in out["questions_all.jsonl"]
    assert [r["in_disagreement_500"] for r in rows] == [False, True, False, True, False]
    assert [r["in_mcq_mismatch_414"] for r in rows] == [False, True, False, True, True]


def test_disagreement_ids_in_file_order(tmp_path):
    out = build(tmp_path)
    assert out["disagreement_500_ids.txt"] == (b"American_Trends_Panel_W50/A_W50/0\n"
                                               b"American_Trends_Panel_W26/B_W26/1\n")


def test_subset_matching_tie_broken_by_disagreement(tmp_path):
    out = build(tmp_path)
    sub = lines(out["subset_414.jsonl"])
    # "Same text?" with the same option set exists in W26 and W50: the disagreement-500 member (W50) wins.
    assert [s["uid"] for s in sub] == ["American_Trends_Panel_W26/B_W26/1", "American_Trends_Panel_W50/A_W50/0",
                                       "American_Trends_Panel_W50/B_W50/1"]
    assert [s["idx"] for s in sub] == [0, 1, 2]
    assert [s["mcq_mismatch_classifier_split"] for s in sub] == ["train", "train", "test"]
    assert sub[0]["mcq_mismatch_options_as_listed"] == ["No", "Refused", "Yes"]
    assert "in_disagreement_500" not in sub[0]
    assert out["subset_414_ids.txt"].decode().splitlines() == [s["uid"] for s in sub]


def test_option_sets_must_match(tmp_path):
    with pytest.raises(ValueError, match="0 OpinionQA matches"):
        build(tmp_path, train=[mcq("Only in W26?", ["Yes", "No"])], test=[])


def test_unresolved_tie_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="matches"):
        build(tmp_path, dis=[], train=[mcq("Same text?", ["Yes", "No", "Refused"])], test=[])


def test_disagreement_row_must_point_at_its_wave_row(tmp_path):
    with pytest.raises(ValueError, match="matches no wave row"):
        build(tmp_path, dis=[dis_row(0, 26, 0, "B_W26", "Only in W26?")])
