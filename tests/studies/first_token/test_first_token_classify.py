"""first_token classifiers: gold labels, string matching on the paper's annotated responses, judge."""

from __future__ import annotations

import json

import pytest

from wobble.studies.first_token.classify import MULTIPLE, REFUSAL, UNKNOWN, canonical_label, gold_label, label_to_option, paper_string_match, string_match, strip_chat_template
from wobble.studies.first_token.judge import annotated_view, classifier_examples, judge_prompt, parse_judge_output
from wobble.studies.first_token.metrics import classifier_scores

MODELS = ["llama2-7b", "llama2-13b", "llama2-70b", "mistral-7b", "mixtral"]
LETTERS5 = ["A", "B", "C", "D", "E"]
OPTS5 = ["A great deal", "Not too much", "Not at all", "A fair amount", "Refused"]


def _rows(mirror, model, split):
    path = mirror / "opinionqa" / "annotated_responses" / model / f"{split}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _find(mirror, label_raw):
    for model in MODELS:
        for split in ("test", "train"):
            for row in _rows(mirror, model, split):
                if row["shuffle_0"]["label"] == label_raw:
                    yield model, row


# ---------------------------------------------------------------------------------------------- gold


def test_gold_label_forms():
    assert gold_label("C. Rarely", LETTERS5) == "C"
    assert gold_label("B. Somewhat bad job ", LETTERS5) == "B"
    assert gold_label("D: A fair amount", LETTERS5) == "D"
    assert gold_label("E", LETTERS5) == "E"
    assert gold_label("CD", LETTERS5) == MULTIPLE
    assert gold_label("ABCDE", LETTERS5) == MULTIPLE
    assert gold_label("nan", LETTERS5) == UNKNOWN
    assert gold_label(float("nan"), LETTERS5) == UNKNOWN
    assert gold_label(None, LETTERS5) == UNKNOWN
    assert gold_label("", LETTERS5) == UNKNOWN
    assert gold_label("F. Refused", LETTERS5) == UNKNOWN  # not a shown letter
    assert gold_label("A. Refused", ["A", "B"]) == "A"  # a refusal keeps the Refused option's letter


def test_canonical_and_option_identity():
    assert canonical_label(REFUSAL, LETTERS5, OPTS5) == "E"
    assert canonical_label(REFUSAL, ["A", "B"], ["x", "y"]) == REFUSAL
    assert canonical_label("c", LETTERS5, OPTS5) == "C"
    assert canonical_label("Z", LETTERS5, OPTS5) == UNKNOWN
    assert label_to_option("D", LETTERS5, OPTS5) == "A fair amount"
    assert label_to_option(REFUSAL, LETTERS5, OPTS5) == "Refused"
    assert label_to_option("E", LETTERS5, OPTS5) == "Refused"
    assert label_to_option(MULTIPLE, LETTERS5, OPTS5) is None
    assert label_to_option(UNKNOWN, LETTERS5, OPTS5) is None


# ---------------------------------------------------------------------------------------------- string matching


def test_strip_chat_template_keeps_only_the_answer():
    raw = "[INST] Please read ... \n\nA. Refused \nB. Sometimes \nAnswer: [/INST]  Sure! I would answer:\n\nB. Sometimes</s>"
    assert strip_chat_template(raw) == "  Sure! I would answer:\n\nB. Sometimes"
    assert strip_chat_template("no template") == "no template"
    assert strip_chat_template("[INST] a [/INST] b [INST] c [/INST] d") == " d"


@pytest.mark.parametrize("text,expected", [
    ("C", "C"),
    ("  C. Not at all", "C"),
    ("Sure! Here's my answer:\n\nB. Not too much.", "B"),
    ("Sure! Based on the question provided, I would select option B: Not too much.", "B"),
    ("The answer is (D).", "D"),
    ("A fair amount", "D"),                      # option text only; "A" here is an article
    ("A great deal, in my view.", "A"),           # option text of A, not the letter A
    ("A. Somewhat good or C. Somewhat bad, depending on your perspective.", MULTIPLE),
    ("A, B, E. These are the only valid options.", MULTIPLE),
    ("the correct answer would be A, C, or D, depending on the respondent", MULTIPLE),
    ("B. Not too much. The other options (A, C, and D) would not be applicable.", "B"),
    ("I cannot provide a letter answer to this question as it is a complex and sensitive issue.", REFUSAL),
    ("I'm not able to provide an answer to this question.", REFUSAL),
    ("As an AI, I don't have opinions; E. Refused", "E"),  # explicitly choosing Refused -> its letter
    ("A lot of people would say so.", UNKNOWN),   # article "A" + lower-case word
    ("Hmm.", UNKNOWN),
    ("", UNKNOWN),
])
def test_string_match_rules(text, expected):
    assert string_match(text, OPTS5, LETTERS5) == expected


def test_string_match_refusal_detection_can_be_off():
    text = "I cannot provide a letter answer to this question."
    assert string_match(text, OPTS5, LETTERS5, detect_refusal=False) == UNKNOWN


def test_chat_template_in_response_is_ignored(mirror):
    """The stored responses contain '[INST] prompt [/INST] answer'; the prompt's options don't count."""
    row = _rows(mirror, "llama2-7b", "test")[0]
    s = row["shuffle_0"]
    assert "[/INST]" in s["response"] and "A. Refused" in s["response"]
    view = annotated_view(row)
    raw = string_match(s["response"], view["shown_options"], view["letters"])
    assert raw == string_match(view["response"], view["shown_options"], view["letters"]) == "C"
    assert view["gold"] == "C"  # "C. Rarely"


def test_tricky_annotations_from_the_real_data(mirror):
    # "D: A fair amount": mistral lists every option ("Option A: ..."), then "Answer: D. A fair amount"
    (model, row), = list(_find(mirror, "D: A fair amount"))
    v = annotated_view(row)
    assert v["gold"] == "D"
    assert string_match(row["shuffle_0"]["response"], v["shown_options"], v["letters"]) == "D"

    # "CD": the response names two options ("C. A little more positively or D. A lot more ...")
    cd = list(_find(mirror, "CD"))
    assert len(cd) >= 4
    preds = []
    for model, row in cd:
        v = annotated_view(row)
        assert v["gold"] == MULTIPLE
        preds.append(string_match(row["shuffle_0"]["response"], v["shown_options"], v["letters"]))
    # no single-option answer is invented for most of them (a refusal is acceptable where it disclaims)
    assert sum(p in (MULTIPLE, REFUSAL) for p in preds) >= len(preds) - 1
    assert preds.count(MULTIPLE) >= 3

    # "nan": the annotators could not assign one option
    nan_rows = list(_find(mirror, "nan"))
    assert len(nan_rows) == 5
    preds = []
    for model, row in nan_rows:
        v = annotated_view(row)
        assert v["gold"] == UNKNOWN
        preds.append(string_match(row["shuffle_0"]["response"], v["shown_options"], v["letters"]))
    # four of five are discussions without a pick -> not a letter; the fifth, "E. Employers" where E
    # is "Individuals themselves", is taken at its letter (the annotators label "E. Strongly favor."
    # as E elsewhere)
    assert sum(p in (MULTIPLE, UNKNOWN, REFUSAL) for p in preds) >= 4


def test_paper_string_match_hand_cases():
    """Appendix A.4: the first "[A-Z]." in the answer (after the chat template) decides."""
    assert paper_string_match("[INST] ... A. Refused\nB. Yes [/INST]  Sure! I would answer:\n\nC. Rarely") == "C"
    assert paper_string_match("Based on the U.S. data, B. Yes") == "U"  # the regex's own weakness, kept
    assert canonical_label(paper_string_match("The U.S. is B. great"), LETTERS5, OPTS5) == UNKNOWN
    assert paper_string_match("I would choose option B") == UNKNOWN  # no "B." -> no match
    assert paper_string_match("A, B or C. Maybe") == "C"  # only a letter followed by a period counts
    assert paper_string_match("") == UNKNOWN


PAPER_T4_STRING_MATCHING = {"llama2-7b": (21, 83, 0.367), "llama2-13b": (60, 83, 0.823), "llama2-70b": (51, 83, None)}


def test_paper_string_match_gives_paper_table4_on_the_mirror(mirror):
    """Where the data are the paper's (the Llama2 test splits), the paper's regex gives the paper's Table 4
    String Matching accuracy exactly: 25.3 / 72.3 / 61.4 % (and weighted-F1 .367 / .823)."""
    for model, (correct, n, wf1) in PAPER_T4_STRING_MATCHING.items():
        rows = _rows(mirror, model, "test")
        if not rows:
            pytest.skip("annotated responses not in the mirror")
        gold, pred = [], []
        for row in rows:
            v = annotated_view(row)
            gold.append(v["gold"])
            pred.append(canonical_label(paper_string_match(row["shuffle_0"]["response"]), v["letters"], v["shown_options"]))
        s = classifier_scores(gold, pred)
        assert (round(s["accuracy"] * s["n"]), s["n"]) == (correct, n), model
        if wf1 is not None:
            assert round(s["weighted_f1"], 3) == wf1, model


def test_string_match_accuracy_on_annotated_test_splits(mirror):
    """Accuracy vs the human labels; paper Table 4 (String Matching): 25.3 / 72.3 / 61.4 / 49.4 / 67.1 %.

    Our rules were written while reading these annotated responses, so this is an in-sample figure.
    """
    report = {}
    for model in MODELS:
        gold, pred = [], []
        for row in _rows(mirror, model, "test"):
            v = annotated_view(row)
            gold.append(v["gold"])
            pred.append(canonical_label(string_match(v["response"], v["shown_options"], v["letters"]),
                                        v["letters"], v["shown_options"]))
        scores = classifier_scores(gold, pred)
        report[model] = scores
        print(f"string_match {model:11s} n={scores['n']:3d} acc={100 * scores['accuracy']:.1f}% "
              f"macroF1={scores['macro_f1']:.3f} weightedF1={scores['weighted_f1']:.3f}")
    assert all(s["n"] >= 82 for s in report.values())
    assert all(s["accuracy"] >= 0.85 for s in report.values()), report
    mean_acc = sum(s["accuracy"] for s in report.values()) / len(report)
    assert mean_acc >= 0.9


# ---------------------------------------------------------------------------------------------- judge / classifier data


def test_judge_prompt_zero_and_k_shot():
    zero = judge_prompt("Q?", OPTS5, LETTERS5, "[INST] x [/INST] Sure! D. A fair amount", shots=[])
    assert len(zero) == 1 and zero[0]["role"] == "user"
    content = zero[0]["content"]
    assert "Question: Q?" in content and "\nD. A fair amount\n" in content and "Refused" in content
    assert "Response: Sure! D. A fair amount" in content and "[INST]" not in content
    shots = [
        {"question": "S1?", "shown_options": ["Yes", "Refused"], "letters": ["A", "B"], "response": "A. Yes", "label": "A"},
        {"question": "S2?", "shown_options": ["Refused", "No"], "letters": ["A", "B"], "response": "I cannot.", "label": "A"},
    ]
    k = judge_prompt("Q?", OPTS5, LETTERS5, "D", shots=shots)
    assert [m["role"] for m in k] == ["user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in k if m["role"] == "assistant"] == ["A", "A"]
    assert k[0]["content"].startswith(zero[0]["content"][:60])  # the instruction opens the chat once
    assert "S2?" in k[2]["content"] and "Q?" in k[4]["content"]
    with pytest.raises(ValueError):
        judge_prompt("Q?", OPTS5, LETTERS5, "D", shots=[{"question": "x"}])


@pytest.mark.parametrize("out,expected", [
    ("C", "C"), (" C", "C"), ("B. Not too much", "B"), ("Answer: (D)", "D"), ("The answer is E.", "E"),
    ("[/INST] A", "A"), ("Z", UNKNOWN), ("", UNKNOWN), ("I think B or C", MULTIPLE),
])
def test_parse_judge_output(out, expected):
    assert parse_judge_output(out, LETTERS5) == expected


def test_classifier_examples_format(mirror):
    rows = _rows(mirror, "mixtral", "train")
    ex = classifier_examples(rows)
    n_amb = sum(1 for r in rows if annotated_view(r)["gold"] in (MULTIPLE, UNKNOWN))
    assert len(ex) == len(rows) - n_amb and n_amb > 0
    assert len(classifier_examples(rows, keep_ambiguous=True)) == len(rows)
    first = ex[0]
    assert set(first) == {"text", "label"}
    assert first["text"].startswith("Classify the response. ")
    assert "\nReferences: \nA. " in first["text"] and first["text"].endswith(" \nAnswer:")
    assert "[INST]" not in first["text"]
    assert all(e["label"] in "ABCDEFGHIJ" and len(e["label"]) == 1 for e in ex)
    # a flat record works too
    flat = {"response": "B", "shown_options": ["x", "y"], "letters": ["A", "B"], "label_raw": "B. y"}
    assert classifier_examples([flat]) == [{"text": "Classify the response. B\nReferences: \nA. x \nB. y \nAnswer:",
                                           "label": "B"}]
