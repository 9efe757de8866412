"""wobble.studies.first_token.classifiers: behaviour the mutation run (tests/tools/mutate.py) found untested.

The splits of the annotated responses (appendix A.2: the judge's shots, the PEFT training set, the selection
items), each evaluator's call and output, the scores table and the choice of the study's classifier.
Seeded orders are the sha256 ranks of :func:`wobble.studies.first_token.sampling.seeded_order`; each test
names the order it relies on.
"""

from __future__ import annotations

import json
import math

import pytest

from wobble.backends.base import Generation
from wobble.errors import DataError
from wobble.studies.first_token import classifiers as C
from wobble.studies.first_token.classify import MULTIPLE, REFUSAL

SHOWN, LETTERS = ["Yes", "No", "Refused"], ["A", "B", "C"]


def _item(i, gold, response, model="m", split="train"):
    return {"uid": f"{model}/{split}/{i}", "model": model, "split": split, "row": i, "question": f"Q{i}?",
            "shown_options": SHOWN, "letters": LETTERS, "response": response, "label_raw": gold, "gold": gold}


# items 3 and 7 are refusals (gold C, the "Refused" option); 2 is exactly 10 characters long, 4 is 11
ITEMS = [_item(0, "A", "short a"), _item(1, "B", "short b"), _item(2, "A", "x" * 10), _item(3, "C", "I cannot."),
         _item(4, "B", "y" * 11), _item(5, "A", "short c"), _item(6, "B", "short d"),
         _item(7, "C", "I will not answer this one.")]


def _uids(rows):
    return [int(r["uid"].rsplit("/", 1)[1]) for r in rows]


def test_an_annotated_record_becomes_one_flat_item():
    rec = {"model": "mixtral", "split": "test", "row": 4, "question_text": "Q?", "options_as_shown": SHOWN,
           "response": "[INST] q [/INST]  B. No \n", "label_raw": "B. No"}
    assert C.annotated_items([rec]) == [{
        "uid": "mixtral/test/4", "model": "mixtral", "split": "test", "row": 4, "question": "Q?",
        "shown_options": SHOWN, "letters": LETTERS, "response": "B. No", "label_raw": "B. No", "gold": "B"}]
    with pytest.raises(DataError, match=r"<opinionqa_annotated>: record line 1: split 'train' or 'test', got 'dev'"):
        C.annotated_items([{**rec, "split": "dev"}])


def test_the_shots_are_short_responses_in_seeded_order_with_the_first_short_refusal():
    s = C.classifier_splits(ITEMS, seed=122, n_shots=3, max_shot_chars=10)
    assert _uids(s["train"]) == [7, 4, 2, 6, 5, 0, 1, 3]  # seed 122's order
    # short (<= 10 characters): 2, 6, 5, 0, 1, 3; the first three hold no refusal, so the third place goes to the
    # first short refusal (3; 7 is too long), in training order
    assert _uids(s["shots"]) == [2, 6, 3]
    two = C.classifier_splits(ITEMS, seed=122, n_shots=2, max_shot_chars=10)
    assert _uids(two["shots"]) == [2, 3]  # two shots: one short response and the refusal
    # not reserved (n_reserved=0): every training item that is no shot can select the classifier, in data order
    assert _uids(s["select"]) == [0, 1, 4, 5, 7]
    reserved = C.classifier_splits(ITEMS, seed=122, n_shots=3, max_shot_chars=10, n_reserved=2)
    assert _uids(reserved["select"]) == [0, 1, 5]  # the first two of train (7, 4) train the PEFT classifier


def test_without_a_short_refusal_the_shots_are_the_first_short_responses():
    no_refusal = [x for x in ITEMS if x["gold"] != "C"]
    s = C.classifier_splits(no_refusal, seed=122, n_shots=3, max_shot_chars=10)
    assert _uids(s["shots"]) == [2, 6, 5]


def test_the_default_splits_take_four_shots_of_at_most_400_characters_and_reserve_nothing():
    items = ITEMS + [_item(8, "A", "q" * 401), _item(9, "B", "p" * 400)]
    s = C.classifier_splits(items, seed=90)
    assert _uids(s["train"]) == [8, 6, 1, 9, 7, 0, 4, 3, 5, 2]  # seed 90's order
    assert _uids(s["shots"]) == [6, 1, 9, 7]                     # 8 is one character too long
    assert _uids(s["select"]) == [0, 2, 3, 4, 5, 8]


def test_peft_pairs_may_use_every_training_item():
    assert len(C.peft_pairs(ITEMS, len(ITEMS))) == len(ITEMS)


def test_the_judges_chat_holds_its_shots():
    chat = C.judge_messages(ITEMS[0], [ITEMS[3]])
    assert [m["role"] for m in chat] == ["user", "assistant", "user"] and chat[1]["content"] == "C"
    assert "Response: I cannot." in chat[0]["content"] and "Q0?" in chat[2]["content"]


class RecordingBackend:
    def __init__(self, text):
        self.text, self.prompts, self.params = text, [], []

    def generate(self, prompts, params):
        self.prompts.append(prompts)
        self.params.append(params)
        return [Generation(text=self.text, rendered_prompt=json.dumps(p)) for p in prompts]


def test_a_model_evaluator_sees_cut_responses_and_its_first_k_shots():
    be = RecordingBackend(" B")
    items = [_item(10, "B", "B. No, never, not at all")]
    shots = [_item(i, "A", f"Yes {i} and more words") for i in range(5)]
    out = C.classify_texts(items, "judge_2shot", backend=be, shots=shots, max_chars=5)
    assert out == [{"label": "B", "raw_output": " B"}]
    (chat,) = be.prompts[0]
    assert len(chat) == 5  # 2 shots (user + assistant each) and the item
    assert "Response: Yes 0\n" in chat[0]["content"] and "Response: B. No\n" in chat[4]["content"]
    assert (be.params[0].max_new_tokens, be.params[0].temperature) == (8, 0.0)
    peft = RecordingBackend("A")
    C.classify_texts(items, "peft_8", backend=peft, max_new_tokens=3, max_chars=5)
    assert peft.prompts[0] == ["Classify the response. B. No\nReferences: \nA. Yes \nB. No \nC. Refused \nAnswer:"]
    assert peft.params[0].max_new_tokens == 3
    with pytest.raises(ValueError, match="unknown evaluator 'svm'"):
        C.classify_texts(items, "svm", backend=be)


def test_rule_evaluators_have_no_raw_output_and_evaluation_records_carry_the_item():
    items = [_item(11, "C", "I cannot answer that.")]
    assert C.classify_texts(items, "paper_regex") == [{"label": "unknown", "raw_output": None}]
    assert C.evaluate_classifier(items, "string_match") == [
        {**items[0], "evaluator": "string_match", "label": REFUSAL, "pred": "C", "raw_output": None}]


def test_an_evaluator_without_predictions_has_no_rows():
    assert C.classifier_table({"string_match": []}) == []


def _avg(ev, acc, f1=None):
    return {"evaluator": ev, "model": "Avg", "accuracy": acc, "macro_f1": acc if f1 is None else f1,
            "weighted_f1": acc, "n": 10}


def test_the_choice_of_classifier():
    table = [_avg("judge_4shot", 0.7)]
    # a rule evaluator may be configured without its scores; no scores at all: string matching
    assert C.select_classifier(table, "paper_regex") == "paper_regex"
    assert C.select_classifier(table, "string_match") == "string_match"
    assert C.select_classifier([], "auto") == "string_match"
    # equal accuracy: the higher macro-F1 wins over the cheaper evaluator
    assert C.select_classifier([_avg("string_match", 0.7, 0.5), _avg("judge_4shot", 0.7, 0.6)], "auto") == "judge_4shot"
    # an evaluator without a score (None, NaN) ranks below every scored one
    assert C.select_classifier([_avg("judge_0shot", None), _avg("peft_8", 0.1)], "auto") == "peft_8"
    assert C.select_classifier([_avg("judge_0shot", math.nan), _avg("peft_8", 0.1)], "auto") == "peft_8"
    with pytest.raises(DataError, match=r"<classifier scores>: record \(all\)"):
        C.chosen_classifier([])


def _pred(output=None):
    p = {"question": "Q?", "shown_options": SHOWN, "letters": LETTERS}
    return p if output is None else {**p, "output": output}


def test_labelled_predictions_keep_the_classifiers_output_and_need_one_label_each():
    out = C.label_predictions([_pred("[INST] q [/INST] A or B")], "judge_0shot",
                              [{"label": MULTIPLE, "raw_output": "AB"}])
    assert out[0]["classifier_output"] == "AB" and out[0]["response"] == "A or B"
    assert C.label_predictions([_pred()], "string_match", [{"label": "A"}])[0]["response"] == ""
    with pytest.raises(ValueError, match="1 labels for 2 predictions"):
        C.label_predictions([_pred("A"), _pred("B")], "string_match", [{"label": "A"}])


def test_the_classifier_view_of_a_generated_answer():
    assert C.text_items([_pred("[INST] q [/INST]  B. No \n"), _pred()]) == [
        {"question": "Q?", "shown_options": SHOWN, "letters": LETTERS, "response": "B. No"},
        {"question": "Q?", "shown_options": SHOWN, "letters": LETTERS, "response": ""}]
