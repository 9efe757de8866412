"""first_token classifiers and their evaluation (wobble.studies.first_token.classifiers).

The splits of the annotated responses (appendix A.2: the judge's shots, the PEFT training set, the selection
items), each evaluator's call and output, the scores table and the choice of the study's classifier.
Seeded orders are the sha256 ranks of :func:`wobble.studies.first_token.sampling.seeded_order`; each test
names the order it relies on.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from first_token_fakes import Q1, FakeBackend
from wobble.backends.base import Generation
from wobble.errors import DataError
from wobble.io import read_jsonl
from wobble.studies.first_token import classifiers as C
from wobble.studies.first_token import sampling
from wobble.studies.first_token.classify import MULTIPLE, REFUSAL, UNKNOWN
from wobble.studies.first_token.prompts import REFUSED

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "first_token"
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


def _annotated():
    return C.annotated_items(read_jsonl(FIX / "annotated.jsonl"), "annotated.jsonl")


def test_annotated_items_and_gold():
    items = _annotated()
    assert [i["uid"] for i in items[:2]] == ["llama2-7b/train/0", "llama2-7b/train/1"]
    assert [i["gold"] for i in items] == ["C", "C", MULTIPLE, UNKNOWN, "A", "D", "B", "A"]
    assert items[0]["response"] == "Response 0" and items[0]["letters"] == ["A", "B", "C", "D"]
    with pytest.raises(DataError, match="annotated.jsonl: record line 1: field 'response'"):
        C.annotated_items([{**read_jsonl(FIX / "annotated.jsonl")[0], "response": None}], "annotated.jsonl")


def test_classifier_splits():
    items = _annotated()
    s = C.classifier_splits(items, seed=0, n_shots=2)
    assert [x["uid"] for x in s["test"]] == [i["uid"] for i in items if i["split"] == "test"]
    assert sorted(x["uid"] for x in s["train"]) == sorted(i["uid"] for i in items if i["split"] == "train")
    assert s == C.classifier_splits(items, seed=0, n_shots=2)
    # the shots include a refusal (llama2-7b train, "C. Refused")
    assert len(s["shots"]) == 2 and any(x["gold"] == "C" and x["model"] == "llama2-7b" for x in s["shots"])
    small = C.classifier_splits(items, seed=0, n_eval_per_model=1, n_shots=0)
    assert [x["model"] for x in small["test"]] == ["llama2-7b", "mixtral"] and small["shots"] == []
    # ambiguous gold never trains the classifier
    many = items + [{**items[2], "split": "train", "uid": "llama2-7b/train/9"}]
    assert all(x["gold"] not in (MULTIPLE, UNKNOWN) for x in C.classifier_splits(many, seed=0)["train"])


def test_selection_split_is_held_out_from_training_shots_and_test():
    """The classifier is chosen on training responses that neither train the PEFT classifier, nor are judge
    shots, nor are the test items it is reported on."""
    items = _annotated()
    items += [{**it, "split": "train", "uid": f"{it['model']}/train/{10 + k}", "row": 10 + k}
              for k, it in enumerate(items * 2)]
    s = C.classifier_splits(items, seed=0, n_shots=2, n_eval_per_model=3, n_reserved=4)
    reserved = {x["uid"] for x in s["train"][:4]} | {x["uid"] for x in s["shots"]}
    sel = [x["uid"] for x in s["select"]]
    assert sel and not set(sel) & reserved and not set(sel) & {x["uid"] for x in s["test_all"]}
    assert all(x["split"] == "train" for x in s["select"])
    assert {m: sum(x["model"] == m for x in s["select"]) for m in ("llama2-7b", "mixtral")} == {"llama2-7b": 3, "mixtral": 3}
    # every gold kept (as in the test split): multiple/unknown are outcomes the classifier must handle
    assert s["test_all"] == [x for x in items if x["split"] == "test"] and len(s["test"]) <= len(s["test_all"])
    assert s == C.classifier_splits(items, seed=0, n_shots=2, n_eval_per_model=3, n_reserved=4)


def test_auto_choice_reads_selection_not_test_scores():
    """select_classifier on the selection table; the label rule reads the flag the scores rule wrote."""
    def avg(ev, acc):
        return {"evaluator": ev, "model": "Avg", "accuracy": acc, "macro_f1": acc, "weighted_f1": acc, "n": 10}
    test_table = [avg("paper_regex", 0.9), avg("judge_4shot", 0.5)]
    selection = [avg("paper_regex", 0.4), avg("judge_4shot", 0.7)]
    assert C.select_classifier(test_table, "auto") == "paper_regex"
    chosen = C.select_classifier(selection, "auto")
    assert chosen == "judge_4shot"
    flagged = [{**r, "selected": r["evaluator"] == chosen} for r in test_table]
    assert C.chosen_classifier(flagged) == "judge_4shot"
    with pytest.raises(DataError, match="exactly one evaluator flagged"):
        C.chosen_classifier(test_table)
    # a configured classifier needs no selection scores
    assert C.select_classifier([], "peft_80") == "peft_80"


def test_peft_pairs_nested_and_cut():
    train = C.classifier_splits(_annotated(), seed=3)["train"]
    pairs = C.peft_pairs(train, 3, max_chars=4)
    assert len(pairs) == 3 and C.peft_pairs(train, 2, max_chars=4) == pairs[:2]
    assert pairs[0]["source"].startswith("Classify the response. Resp\nReferences:")
    assert pairs[0]["source"].endswith(" \nAnswer:") and pairs[0]["target"] in "ABCD"
    with pytest.raises(DataError, match="at least 9"):
        C.peft_pairs(train, 9)


def test_classify_texts_each_evaluator():
    items = [{"question": "Q?", "shown_options": ["Yes", "No", "Refused"], "letters": ["A", "B", "C"],
              "response": "I cannot answer that."},
             {"question": "Q?", "shown_options": ["Yes", "No", "Refused"], "letters": ["A", "B", "C"],
              "response": "B. No"}]
    assert [x["label"] for x in C.classify_texts(items, "string_match")] == [REFUSAL, "B"]
    assert [x["label"] for x in C.classify_texts(items, "paper_regex")] == [UNKNOWN, "B"]
    be = FakeBackend(text=" C")
    shots = [{**items[1], "gold": "B", "model": "m"}] * 4
    out = C.classify_texts(items, "judge_4shot", backend=be, shots=shots, max_new_tokens=3)
    assert [x["label"] for x in out] == ["C", "C"] and out[0]["raw_output"] == " C"
    assert be.calls == [("generate", 2, 0.0)]
    out = C.classify_texts(items, "peft_80", backend=FakeBackend(text="Z"), max_chars=5)
    assert [x["label"] for x in out] == [UNKNOWN, UNKNOWN]
    with pytest.raises(DataError, match="4 demonstrations"):
        C.classify_texts(items, "judge_4shot", backend=be, shots=shots[:1])
    with pytest.raises(ValueError):
        C.classify_texts(items, "judge_0shot")


def test_classifier_table_and_selection():
    def item(model, gold, pred):
        return {"model": model, "gold": gold, "pred": pred}

    preds = {
        "string_match": [item("m1", "A", "A"), item("m1", "B", "A"), item("m2", "C", "C"), item("m2", "C", "C")],
        "judge_0shot": [item("m1", "A", "A"), item("m1", "B", "B"), item("m2", "C", "A"), item("m2", "C", "C")],
    }
    table = C.classifier_table(preds)
    assert [(r["evaluator"], r["model"]) for r in table] == [
        ("string_match", "m1"), ("string_match", "m2"), ("string_match", "Avg"),
        ("judge_0shot", "m1"), ("judge_0shot", "m2"), ("judge_0shot", "Avg")]
    sm_avg = table[2]
    # m1: 1/2, m2: 2/2 -> Avg accuracy 0.75; m1 macro-F1: A 2/3, B 0 -> 1/3; m2: 1 -> Avg (1/3 + 1)/2
    assert sm_avg["accuracy"] == pytest.approx(0.75) and sm_avg["n"] == 4
    assert sm_avg["macro_f1"] == pytest.approx((1 / 3 + 1) / 2)
    # tie on accuracy (0.75 both); macro-F1: judge m1 = 1, m2: C 2/3, A 0 -> 1/3 -> Avg 2/3 = string_match's -> cheaper wins
    assert table[5]["accuracy"] == pytest.approx(0.75)
    assert C.select_classifier(table, "auto") == "string_match"
    assert C.select_classifier(table, "judge_0shot") == "judge_0shot"
    better = C.classifier_table({**preds, "peft_8": [item("m1", "A", "A"), item("m1", "B", "B"),
                                                      item("m2", "C", "C"), item("m2", "C", "C")]})
    assert C.select_classifier(better, "auto") == "peft_8"
    with pytest.raises(DataError):
        C.select_classifier(table, "peft_80")


def test_label_predictions_maps_to_original_options():
    preds = sampling.build_prompts([Q1], ["medium"], n_shuffles=2, seed=0)
    for p in preds:
        p["output"] = "[INST] x [/INST] I cannot."
    labels = [{"label": REFUSAL, "raw_output": None}, {"label": MULTIPLE, "raw_output": "AB"}]
    out = C.label_predictions(preds, "string_match", labels)
    assert out[0]["text_option"] == REFUSED and out[0]["text_letter"] == preds[0]["refusal_letter"]
    assert out[0]["response"] == "I cannot." and out[0]["output"].startswith("[INST]")
    assert out[1]["text_option"] is None and out[1]["text_letter"] is None and out[1]["text_label"] == MULTIPLE
    letter = preds[1]["letters"][1]
    out = C.label_predictions(preds[1:], "judge_0shot", [{"label": letter, "raw_output": letter}])
    assert out[0]["text_option"] == preds[1]["shown_options"][1] and out[0]["classifier"] == "judge_0shot"
