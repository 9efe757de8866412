"""Text answer -> option (§3, appendix A.4): the paper's annotated responses and their train/test split, the
evaluators compared in Tables 2 and 4 (string matching, an LLM judge 0/k-shot, a LoRA classifier), the choice
of the one the study uses, and the labelling of every generated text with it."""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import Mapping, Sequence

import numpy as np

from wobble.errors import DataError
from wobble.studies.first_token.classify import MULTIPLE, UNKNOWN, canonical_label, gold_label, label_to_option, paper_string_match, string_match, strip_chat_template
from wobble.studies.first_token.judge import classifier_examples, classifier_input, judge_prompt, parse_judge_output
from wobble.studies.first_token.metrics import (
    classifier_scores,
)
from wobble.studies.first_token.prompts import (
    LETTERS,
    is_refusal_option,
    letter_to_option,
)
from wobble.studies.first_token.layout import evaluator_order
from wobble.studies.first_token.sampling import seeded_order, seeded_sample


# ------------------------------------------------------------------------------------- classifiers


def annotated_items(records: Sequence[Mapping], path: str | os.PathLike = "<opinionqa_annotated>") -> list[dict]:
    """Flat evaluation items from ``opinionqa_annotated`` records (gold via :func:`gold_label`)."""
    out = []
    for i, r in enumerate(records, 1):
        for key, typ in (("model", str), ("split", str), ("row", int), ("question_text", str),
                         ("options_as_shown", list), ("response", str), ("label_raw", str)):
            if not isinstance(r.get(key), typ):
                raise DataError(path, f"line {i}", f"field '{key}' of type {typ.__name__}, got {r.get(key)!r:.60}")
        if r["split"] not in ("train", "test"):
            raise DataError(path, f"line {i}", f"split 'train' or 'test', got {r['split']!r}")
        shown = list(r["options_as_shown"])
        letters = list(LETTERS[: len(shown)])
        out.append({
            "uid": f"{r['model']}/{r['split']}/{r['row']}",
            "model": r["model"], "split": r["split"], "row": r["row"],
            "question": r["question_text"], "shown_options": shown, "letters": letters,
            "response": strip_chat_template(r["response"]).strip(),
            "label_raw": r["label_raw"], "gold": gold_label(r["label_raw"], letters),
        })
    return out


def _is_refusal_gold(item: Mapping) -> bool:
    return is_refusal_option(letter_to_option(item["letters"], item["shown_options"], item["gold"]))


def classifier_splits(items: Sequence[Mapping], *, seed: int, n_eval_per_model: int | None = None,
                      n_shots: int = 4, max_shot_chars: int = 400, n_reserved: int = 0) -> dict[str, list[dict]]:
    """``{"test", "test_all", "train", "shots", "select"}`` from the annotated items (the paper's 80/20 split
    per model, appendix A.2).

    * ``test_all``: the test split of every annotated model, in data order (the rule-based evaluators,
      which cost nothing, are scored on all of it: the paper's Table 4 rows are on these responses);
      ``test``: a seeded sample of ``n_eval_per_model`` per model of it (all with ``None``) for the
      model-based evaluators.
    * ``train``: the training items with a single-option gold (multiple/unknown dropped), in a seeded
      order; the PEFT classifier on ``n`` examples trains on the first ``n``, so smaller training
      sets are subsets of larger ones.
    * ``shots``: the judge's demonstrations, ``n_shots`` training items with responses of at most
      ``max_shot_chars`` characters, taken in the seeded order but with the first refusal among them
      (so the judge sees how a refusal is labelled: the letter of the "Refused" option).
    * ``select``: the items the study's classifier is CHOSEN on (``first_token.classifier: auto``), never
      the items it is scored on: per model up to ``n_eval_per_model`` training responses (every gold kept,
      as in the test split) that are neither among the first ``n_reserved`` of ``train`` (the largest PEFT
      training set) nor a judge shot.
    """
    test_all = [dict(x) for x in items if x["split"] == "test"]
    test = _per_model_sample(test_all, n_eval_per_model, seed)
    train = seeded_order([dict(x) for x in items if x["split"] == "train" and x["gold"] not in (MULTIPLE, UNKNOWN)],
                         seed, key=lambda x: x["uid"])
    short = [x for x in train if len(x["response"]) <= max_shot_chars]
    shots = short[:max(0, int(n_shots))]
    refusal = next((x for x in short if _is_refusal_gold(x)), None)
    if refusal is not None and refusal not in shots and n_shots >= 2:
        shots = [x for x in short if x is not refusal][: n_shots - 1] + [refusal]
        shots.sort(key=lambda x: short.index(x))
    used = {x["uid"] for x in train[: max(0, int(n_reserved))]} | {x["uid"] for x in shots}
    rest = [dict(x) for x in items if x["split"] == "train" and x["uid"] not in used]
    select = _per_model_sample(rest, n_eval_per_model, seed)
    return {"test": test, "test_all": test_all, "train": train, "shots": shots, "select": select}


def _per_model_sample(items: Sequence[Mapping], per_model: int | None, seed: int) -> list[dict]:
    """A seeded sample of ``per_model`` items of each model (models sorted); all items with ``None``."""
    if not per_model:
        return [dict(x) for x in items]
    out: list[dict] = []
    for model in sorted({x["model"] for x in items}):
        sub = [x for x in items if x["model"] == model]
        out += seeded_sample(sub, int(per_model), seed, key=lambda x: x["uid"])
    return out


def cut_response(text: str, max_chars: int | None) -> str:
    """The response as a model-based classifier sees it: at most ``max_chars`` characters (the head)."""
    return text if not max_chars or len(text) <= max_chars else text[: int(max_chars)]


def peft_pairs(train: Sequence[Mapping], n: int, max_chars: int | None = None) -> list[dict]:
    """``{"source", "target"}`` pairs of the PEFT classifier: ``classifier_input`` -> gold letter.

    The first ``n`` training items (responses cut to ``max_chars``, as at inference)."""
    if len(train) < n:
        raise DataError("<classifier train split>", "(all)", f"at least {n} training examples, got {len(train)}")
    items = [{**x, "response": cut_response(x["response"], max_chars)} for x in train[:n]]
    return [{"source": e["text"], "target": e["label"]} for e in classifier_examples(items)]


def _shot(item: Mapping) -> dict:
    return {"question": item["question"], "shown_options": item["shown_options"], "letters": item["letters"],
            "response": item["response"], "label": item["gold"]}


def judge_messages(item: Mapping, shots: Sequence[Mapping]) -> list[dict]:
    return judge_prompt(item["question"], item["shown_options"], item["letters"], item["response"],
                        shots=[_shot(s) for s in shots])


def classify_texts(items: Sequence[Mapping], evaluator: str, *, backend=None, shots: Sequence[Mapping] = (),
                   max_new_tokens: int = 8, max_chars: int | None = None) -> list[dict]:
    """Label each item's ``response`` with one evaluator; ``[{"label", "raw_output"}]`` per item.

    ``paper_regex`` (the paper's A.4 regex) and ``string_match`` (wobble's rules) need no model; ``judge_<k>shot`` generates with the judge backend on
    :func:`judge_messages` (the first ``k`` shots); ``peft_<n>`` generates with the finetuned
    classifier on the plain :func:`classifier_input` text (no chat template: it was trained so). Model
    outputs are read with :func:`parse_judge_output`; ``max_chars`` cuts long responses (and shots)
    before they go to a model (:func:`cut_response`; string matching always reads the whole text).
    Labels are raw (a letter, ``"refusal"``, ``"multiple"``, ``"unknown"``); see
    :func:`canonical_label` to compare them with the gold.
    """
    from wobble.backends.base import GenParams

    if evaluator == "paper_regex":
        return [{"label": paper_string_match(it["response"]), "raw_output": None} for it in items]
    if evaluator == "string_match":
        return [{"label": string_match(it["response"], it["shown_options"], it["letters"]), "raw_output": None}
                for it in items]
    if backend is None:
        raise ValueError(f"evaluator {evaluator!r} needs a backend")
    params = GenParams(max_new_tokens=int(max_new_tokens), temperature=0.0)
    items = [{**it, "response": cut_response(it["response"], max_chars)} for it in items]
    shots = [{**s, "response": cut_response(s["response"], max_chars)} for s in shots]
    if evaluator.startswith("judge_"):
        k = int(evaluator[len("judge_"):-len("shot")])
        if len(shots) < k:
            raise DataError("<judge shots>", "(all)", f"{k} demonstrations, got {len(shots)}")
        prompts = [judge_messages(it, shots[:k]) for it in items]
    elif evaluator.startswith("peft_"):
        prompts = [classifier_input(it["response"], it["shown_options"], it["letters"]) for it in items]
    else:
        raise ValueError(f"unknown evaluator {evaluator!r}")
    gens = backend.generate(prompts, params) if prompts else []
    return [{"label": parse_judge_output(g.text, it["letters"]), "raw_output": g.text} for it, g in zip(items, gens)]


def evaluate_classifier(test: Sequence[Mapping], evaluator: str, **kwargs) -> list[dict]:
    """Evaluator predictions on the test items: item + ``evaluator``, ``pred`` (canonical), ``label``, ``raw_output``."""
    out = []
    for it, res in zip(test, classify_texts(test, evaluator, **kwargs)):
        pred = canonical_label(res["label"], it["letters"], it["shown_options"])
        out.append({**it, "evaluator": evaluator, "label": res["label"], "pred": pred, "raw_output": res["raw_output"]})
    return out


def classifier_table(predictions: Mapping[str, Sequence[Mapping]]) -> list[dict]:
    """Scores per evaluator x annotated model, plus ``"Avg"`` (mean of the per-model scores).

    Rows: ``{"evaluator", "model", "accuracy", "macro_f1", "weighted_f1", "n"}`` (``n`` of Avg = the
    total); evaluators in :func:`evaluator_names` order, models sorted, Avg last.
    """
    rows = []
    for ev in sorted(predictions, key=evaluator_order):
        by_model: dict[str, list[Mapping]] = defaultdict(list)
        for p in predictions[ev]:
            by_model[p["model"]].append(p)
        per = []
        for model in sorted(by_model):
            ps = by_model[model]
            s = classifier_scores([p["gold"] for p in ps], [p["pred"] for p in ps])
            per.append(s)
            rows.append({"evaluator": ev, "model": model, **s})
        if per:
            avg = {k: float(np.mean([s[k] for s in per])) for k in ("accuracy", "macro_f1", "weighted_f1")}
            rows.append({"evaluator": ev, "model": "Avg", **avg, "n": sum(s["n"] for s in per)})
    return rows


#: Evaluators that need no model: cheap enough to score on every annotated test response.
RULE_EVALUATORS = ("paper_regex", "string_match")


def select_classifier(table: Sequence[Mapping], setting: str) -> str:
    """The classifier the study uses: ``setting`` itself, or for ``"auto"`` the evaluator with the best
    Avg accuracy (then macro-F1; a tie goes to the cheaper one: string matching, judge, PEFT).

    ``table`` must be scored on the ``select`` split (training responses), never on the test items the
    evaluators are reported on (Table 4), so the choice does not overfit the reported numbers."""
    avgs = [r for r in table if r["model"] == "Avg"]
    names = [r["evaluator"] for r in avgs]
    if setting != "auto":
        if avgs and setting not in names and setting not in RULE_EVALUATORS:
            raise DataError("<classifier scores>", setting, f"scores of the configured classifier (have {names})")
        return setting
    if not avgs:
        return "string_match"
    best = min(avgs, key=lambda r: (-_nz(r["accuracy"]), -_nz(r["macro_f1"]), evaluator_order(r["evaluator"])))
    return best["evaluator"]


def chosen_classifier(scores: Sequence[Mapping], path: str = "<classifier scores>") -> str:
    """The evaluator flagged ``selected`` in classifier-score rows (chosen by :func:`select_classifier`)."""
    chosen = sorted({r["evaluator"] for r in scores if r.get("selected")})
    if len(chosen) != 1:
        raise DataError(path, "(all)", f"exactly one evaluator flagged 'selected', got {chosen}")
    return chosen[0]


def _nz(x) -> float:
    return -1.0 if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


# ------------------------------------------------------------------------------------------- label


def label_predictions(predictions: Sequence[Mapping], classifier: str, labels: Sequence[Mapping]) -> list[dict]:
    """Prediction records + the text answer: ``classifier``, ``response`` (the answer text, chat template
    stripped; ``output`` keeps the raw text), ``text_label`` (raw classifier label), ``text_letter``
    (a shown letter; a refusal is the Refused option's letter; None for multiple/unknown),
    ``text_option`` (the ORIGINAL option or None) and ``classifier_output`` (a model's raw output)."""
    if len(labels) != len(predictions):
        raise ValueError(f"{len(labels)} labels for {len(predictions)} predictions")
    out = []
    for p, lab in zip(predictions, labels):
        letters, shown = p["letters"], p["shown_options"]
        canon = canonical_label(lab["label"], letters, shown)
        letter = canon if canon in letters else None
        out.append({**p, "classifier": classifier, "response": strip_chat_template(p.get("output", "")).strip(),
                    "text_label": lab["label"], "text_letter": letter,
                    "text_option": label_to_option(canon, letters, shown),
                    "classifier_output": lab.get("raw_output")})
    return out


def text_items(predictions: Sequence[Mapping]) -> list[dict]:
    """The classifier view of generated answers (question, shown options, letters, response)."""
    return [{"question": p["question"], "shown_options": p["shown_options"], "letters": p["letters"],
             "response": strip_chat_template(p.get("output", "")).strip()} for p in predictions]
