"""Pipeline of the ``first_token`` study (Wang et al. 2024, "My Answer is C"): the logic between the
prepared data and the rendered tables, as pure functions (models come in as backends).

Stages (one workflow rule each, ``rules/first_token.smk``; paths under ``results/first_token/``)
------------------------------------------------------------------------------------------------
1. **prompts** (:func:`sample_questions`, :func:`build_prompts`) — a seeded sample of the 414
   OpinionQA questions (``opinionqa_414``), each under every constraint level and option shuffle:
   one record per prompt with ``uid`` (``"<question uid>|<constraint>|<shuffle>"``),
   ``question_uid``, ``qkey``, ``question``, ``options`` (OpinionQA order), ``constraint``,
   ``shuffle``, ``letters``, ``shown_options``, ``permutation``, ``refusal_letter`` and ``messages``
   (one user turn; the backend applies the model's chat template). A shuffle's permutation depends
   on (seed, shuffle, question uid) only, so every constraint level shows the same option order.
2. **infer** (:func:`infer`) — per (model, temperature): the first-token answer (argmax of the
   next-token log-probs over the shown option letters, the refusal letter included; a letter's
   probability sums its spellings "A" and " A" where the tokenizer has a token for each,
   :func:`letter_variants`) and the text
   answer (decoded with ``temperature``; 0 = greedy) — from ONE model call where the backend allows
   (``supports_first_token_logprobs``: the hf backend scores the letters at the first step of the
   same ``generate`` call), else a ``next_token_logprobs`` call then ``generate`` on the same chat
   messages. The first-token answer does not depend on the temperature: runs at a sweep
   temperature copy it from the main-temperature run (``reuse``) instead of recomputing it.
3. **classifier data / evaluation** (:func:`annotated_items`, :func:`classifier_splits`,
   :func:`evaluate_classifier`, :func:`classifier_table`) — the paper's annotated responses with
   their 80/20 train/test split: every evaluator (string matching, the LLM judge 0-/k-shot, PEFT
   classifiers finetuned on ``n`` training examples) labels the test responses, scored per annotated
   model and averaged (paper Tables 2 and 4); :func:`select_classifier` picks the one the study uses.
4. **label** (:func:`label_predictions`) — the chosen classifier maps every generated text to an
   option letter, ``"refusal"``, ``"multiple"`` or ``"unknown"``; the raw text stays beside it.
5. **metrics** (:func:`cell_metrics`, :func:`choice_rows`, :func:`mapping_rows`) — per (model,
   constraint, temperature): mismatch rate and its refusal part, refusal rates, share of each
   unmapped text, answer-consistency entropy (first token / text), the choice distribution per
   letter — each with a 95% percentile-bootstrap interval over QUESTIONS (all shuffles of a
   resampled question move together) — and the paper's per-shuffle ``mapping_result.json`` summary.

Evaluator names: ``string_match``, ``judge_<k>shot`` (``k`` demonstrations from the training split),
``peft_<n>`` (LoRA on ``n`` training examples); the config's ``classifier`` is one of them or
``auto`` (the best average accuracy on the annotated test split, Table 2).
"""

from __future__ import annotations

from dataclasses import replace
import math
import os
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from wobble import seeding as _seeding
from wobble.errors import ConfigError, DataError
from wobble.stats import bootstrap_indices, ratio_ci
from wobble.studies.first_token.classify import (
    MULTIPLE,
    UNKNOWN,
    canonical_label,
    classifier_examples,
    classifier_input,
    gold_label,
    judge_prompt,
    label_to_option,
    parse_judge_output,
    string_match,
    strip_chat_template,
)
from wobble.studies.first_token.metrics import (
    answer_entropy,
    choice_distribution,
    classifier_scores,
    consistency_entropy,
    first_token_choice,
    mapping_summary,
    mismatch_rate,
    refusal_mismatch_rate,
    refusal_rate,
)
from wobble.studies.first_token.prompts import (
    CONSTRAINTS,
    LETTERS,
    REFUSED,
    is_refusal_option,
    letter_to_option,
    shuffled_prompt,
)

ROOT = "results/first_token"
#: Salt of the question sample and classifier splits (kept from the first release: same samples).
SAMPLE_SALT = "wobble.first_token.sample"
#: Prepared datasets the study reads.
DATASETS = ("opinionqa_414", "opinionqa_annotated", "opinionqa_paper_mapping")

#: The paper's six chat models: canonical id -> name in each of the paper's files.
PAPER_MODELS: dict[str, dict[str, str]] = {
    "llama2-7b-chat": {"mapping": "Llama2-7b-Chat", "table3": "Llama2 7b", "label": "Llama2-7b-Chat"},
    "llama2-13b-chat": {"mapping": "Llama2-13b-Chat", "table3": "Llama2 13b", "label": "Llama2-13b-Chat"},
    "llama2-70b-chat": {"mapping": "Llama2-70b-Chat", "table3": "Llama2 70b", "label": "Llama2-70b-Chat"},
    "mistral-7b-instruct-v0.1": {"mapping": "Mistral-7b-Instruct-V0.1", "table3": "Mistral v0.1",
                                 "label": "Mistral-7b-Instruct-v0.1"},
    "mistral-7b-instruct-v0.2": {"mapping": "Mistral-7b-Instruct-V0.2", "table3": "Mistral v0.2",
                                 "label": "Mistral-7b-Instruct-v0.2"},
    "mixtral-8x7b-instruct-v0.1": {"mapping": "Mixtral-8x7b-Instruct-V0.1", "table3": "Mixtral",
                                   "label": "Mixtral-8x7b-Instruct-v0.1"},
}

# ------------------------------------------------------------------------------------------ config


def _evaluator_order(name: str) -> tuple:
    if name == "string_match":
        return (0, 0)
    if name.startswith("judge_"):
        return (1, int(name[len("judge_"):-len("shot")]))
    return (2, int(name[len("peft_"):]))


def evaluator_names(cfg: Mapping[str, Any]) -> list[str]:
    """The evaluators a config builds: string matching, judge k-shot per ``judge_shots``, PEFT per size."""
    names = ["string_match"]
    if cfg.get("judge_model"):
        names += [f"judge_{int(k)}shot" for k in sorted(set(cfg.get("judge_shots") or []))]
    if cfg.get("classifier_base"):
        names += [f"peft_{int(n)}" for n in sorted(set(cfg.get("peft_train_sizes") or []))]
    return names


def check_section(cfg: Mapping[str, Any]) -> None:
    """Cross-field checks of the validated ``first_token`` section (the schema fragment holds every default
    and the per-key types); ConfigError naming the key and what was expected."""
    if not cfg["models"]:
        raise ConfigError("first_token.models", "at least one model key")
    bad = [c for c in cfg["constraints"] if c not in CONSTRAINTS]
    if bad or not cfg["constraints"]:
        raise ConfigError("first_token.constraints", f"a non-empty subset of {CONSTRAINTS}, got {cfg['constraints']}")
    if not cfg["temperatures"] or any(float(t) < 0 for t in cfg["temperatures"]):
        raise ConfigError("first_token.temperatures", f"a non-empty list of temperatures >= 0, got {cfg['temperatures']}")
    tags = [temp_tag(t) for t in cfg["temperatures"]]
    if len(set(tags)) != len(tags):
        raise ConfigError("first_token.temperatures", f"distinct values (2 decimals), got {cfg['temperatures']}")
    bad = [c for c in cfg["sweep_constraints"] if c not in cfg["constraints"]]
    if bad:
        raise ConfigError("first_token.sweep_constraints", f"a subset of first_token.constraints, got {bad}")
    if cfg["n_questions"] is not None and int(cfg["n_questions"]) < 1:
        raise ConfigError("first_token.n_questions", f"a positive integer or null, got {cfg['n_questions']}")
    if int(cfg["n_shuffles"]) < 1:
        raise ConfigError("first_token.n_shuffles", f"a positive integer, got {cfg['n_shuffles']}")
    names = evaluator_names(cfg)
    if cfg["classifier"] != "auto" and cfg["classifier"] not in names:
        raise ConfigError("first_token.classifier",
                          f"'auto' or one of the configured evaluators {names}, got {cfg['classifier']!r}")
    unknown = sorted(set(cfg["paper_models"].values()) - set(PAPER_MODELS))
    if unknown:
        raise ConfigError("first_token.paper_models", f"values among {sorted(PAPER_MODELS)}, got {unknown}")


def temp_tag(t: float | str) -> str:
    """File-name form of a temperature: ``0.0 -> "0.00"``, ``0.7 -> "0.70"``."""
    return f"{float(t):.2f}"


def main_temperature(cfg: Mapping[str, Any]) -> str:
    """The temperature of the main analyses (the first of ``temperatures``), as a tag."""
    return temp_tag(cfg["temperatures"][0])


def run_constraints(cfg: Mapping[str, Any], tag: str) -> list[str]:
    """Constraint levels run at a temperature: all at the main one, ``sweep_constraints`` elsewhere."""
    return list(cfg["constraints"]) if tag == main_temperature(cfg) else list(cfg["sweep_constraints"])


def runs(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (model, temperature tag) the study infers."""
    return [(m, temp_tag(t)) for m in cfg["models"] for t in cfg["temperatures"]]


def predictions_path(model: str, tag: str) -> str:
    return f"{ROOT}/predictions/{model}/t{tag}.jsonl"


def labeled_path(model: str, tag: str) -> str:
    return f"{ROOT}/scores/labeled/{model}/t{tag}.jsonl"


def evaluator_path(name: str) -> str:
    return f"{ROOT}/predictions/classifiers/{name}.jsonl"


def peft_dir(n: int | str) -> str:
    return f"{ROOT}/finetune/classifier_peft_{n}"


def infer_inputs(cfg: Mapping[str, Any], model: str, tag: str, model_dir: Callable[[str], str]) -> dict[str, str]:
    """Inputs of the infer rule: model, prompts, and at a sweep temperature the main run (first tokens)."""
    inputs = {"model": model_dir(model), "prompts": f"{ROOT}/splits/prompts.jsonl"}
    if tag != main_temperature(cfg):
        inputs["reuse"] = predictions_path(model, main_temperature(cfg))
    return inputs


def evaluator_models(name: str, cfg: Mapping[str, Any], model_dir: Callable[[str], str]) -> dict[str, str]:
    """Model inputs of an evaluator: ``{"judge": dir}``, ``{"classifier": adapter dir, "base": dir}`` or {}."""
    if name.startswith("judge_"):
        return {"judge": model_dir(cfg["judge_model"])}
    if name.startswith("peft_"):
        return {"classifier": peft_dir(name[len("peft_"):]), "base": model_dir(cfg["classifier_base"])}
    return {}


def label_inputs(cfg: Mapping[str, Any], model: str, tag: str, model_dir: Callable[[str], str]) -> dict[str, Any]:
    """Inputs of the label rule: the predictions, the classifier scores and the models it may run."""
    inputs: dict[str, Any] = {"predictions": predictions_path(model, tag), "scores": f"{ROOT}/scores/classifiers.jsonl"}
    candidates = evaluator_names(cfg) if cfg["classifier"] == "auto" else [cfg["classifier"]]
    for name in candidates:
        for key, path in evaluator_models(name, cfg, model_dir).items():
            inputs[f"{key}_{name}"] = path
    return inputs


# ----------------------------------------------------------------------------------------- prompts


def seeded_sample(items: Sequence[Any], n: int | None, seed: int, key: Callable[[Any], str]) -> list[Any]:
    """``n`` items chosen by the seeded rank of ``key(item)`` (:func:`wobble.seeding.seeded_sample`)."""
    return _seeding.seeded_sample(items, n, seed, key, salt=SAMPLE_SALT)


def seeded_order(items: Sequence[Any], seed: int, key: Callable[[Any], str]) -> list[Any]:
    """All items in a seeded pseudo-random order (:func:`wobble.seeding.seeded_order`)."""
    return _seeding.seeded_order(items, seed, key, salt=SAMPLE_SALT)


def _check_question(rec: Any, path, lineno: int) -> None:
    where = f"line {lineno}"
    if not isinstance(rec, Mapping):
        raise DataError(path, where, "a JSON object (an opinionqa_414 question)")
    for key in ("uid", "question"):
        if not isinstance(rec.get(key), str) or not rec.get(key):
            raise DataError(path, where, f"field '{key}' should be a non-empty string, got {rec.get(key)!r:.60}")
    opts = rec.get("options")
    if not isinstance(opts, list) or not all(isinstance(o, str) and o for o in opts):
        raise DataError(path, where, f"field 'options' should be a list of non-empty strings, got {opts!r:.80}")
    if not 2 <= len(opts) <= len(LETTERS):
        raise DataError(path, where, f"2..{len(LETTERS)} options, got {len(opts)}")
    if len(set(opts)) != len(opts):
        raise DataError(path, where, f"distinct options, got {opts!r:.80}")
    if REFUSED not in opts:
        raise DataError(path, where, f"an options list that includes {REFUSED!r} (the refusal option)")


def sample_questions(records: Sequence[Mapping], n: int | None, seed: int, path: str | os.PathLike = "<opinionqa_414>"
                     ) -> list[dict]:
    """Validate the ``opinionqa_414`` records and return a seeded sample of ``n`` (None = all), file order."""
    seen: set[str] = set()
    for i, rec in enumerate(records, 1):
        _check_question(rec, path, i)
        if rec["uid"] in seen:
            raise DataError(path, f"line {i}", f"a unique 'uid', {rec['uid']!r} repeats")
        seen.add(rec["uid"])
    if not records:
        raise DataError(path, "(file)", "at least one question")
    return [dict(r) for r in seeded_sample(records, n, seed, key=lambda r: r["uid"])]


def build_prompts(questions: Sequence[Mapping], constraints: Sequence[str], n_shuffles: int, seed: int) -> list[dict]:
    """One record per (question, constraint, shuffle), in that nesting order (see module docstring)."""
    out = []
    for q in questions:
        for c in constraints:
            for s in range(int(n_shuffles)):
                sp = shuffled_prompt(q["question"], q["options"], c, seed, s, key=q["uid"])
                out.append({
                    "uid": f"{q['uid']}|{c}|{s}",
                    "question_uid": q["uid"],
                    "qkey": q.get("qkey"),
                    "question": q["question"],
                    "options": list(q["options"]),
                    "constraint": c,
                    "shuffle": s,
                    "letters": sp["letters"],
                    "shown_options": sp["shown_options"],
                    "permutation": sp["permutation"],
                    "refusal_letter": sp["refusal_letter"],
                    "messages": sp["messages"],
                })
    return out


# ------------------------------------------------------------------------------------------- infer

PROMPT_FIELDS = ("uid", "question_uid", "question", "constraint", "shuffle", "letters", "shown_options",
                 "refusal_letter", "messages")


def check_prompts(prompts: Sequence[Mapping], path: str | os.PathLike = "<prompts>") -> None:
    for i, p in enumerate(prompts, 1):
        missing = [k for k in PROMPT_FIELDS if k not in p]
        if missing:
            raise DataError(path, f"line {i}", f"a prompt record with fields {list(PROMPT_FIELDS)}; missing {missing}")
        if len(p["letters"]) != len(p["shown_options"]):
            raise DataError(path, f"line {i}", "as many letters as shown options")


#: Spellings of a letter that may start the answer: "A" right after the generation prompt, " A" after a
#: template ending in a word ("Assistant:"). Both are scored; see :func:`letter_variants`.
LETTER_PREFIXES = ("", " ")


def letter_variants(backend, letters: Sequence[str], prefixes: Sequence[str] = LETTER_PREFIXES) -> dict[str, list[str]]:
    """Letter -> the candidate strings whose next-token probability counts for that letter.

    A prefix (``""``, ``" "``) is used only when the first tokens of ``prefix + letter`` are distinct
    across all ``letters`` (so the token names the letter: ByT5's ``" A"`` starts with the space byte
    for every letter and is dropped); spellings of one letter that share a first token count once. A
    backend without ``encode_continuation`` (not the hf backend) gets the bare letters.
    """
    enc = getattr(backend, "encode_continuation", None)
    if enc is None:
        return {lt: [lt] for lt in letters}
    first = {(pre, lt): tuple(enc(pre + lt)[:1]) for pre in prefixes for lt in letters}
    usable = [pre for pre in prefixes if all(first[(pre, lt)] for lt in letters)
              and len({first[(pre, lt)] for lt in letters}) == len(letters)]
    out: dict[str, list[str]] = {}
    for lt in letters:
        seen: set[tuple] = set()
        variants = []
        for pre in usable:
            if first[(pre, lt)] not in seen:
                seen.add(first[(pre, lt)])
                variants.append(pre + lt)
        out[lt] = variants or [lt]
    return out


def _logsumexp(values: Sequence[float]) -> float:
    vals = [float(v) for v in values if not math.isnan(float(v))]
    if not vals:
        return float("nan")
    m = max(vals)
    return m if m == -math.inf else m + math.log(sum(math.exp(v - m) for v in vals))


def first_token_fields(letters: Sequence[str], shown_options: Sequence[str], logprobs: Mapping[str, float],
                       variants: Mapping[str, Sequence[str]] | None = None) -> dict:
    """The first-token answer of one prompt from next-token log-probs (only the shown letters compete).

    A letter's log-prob is the log of the summed probabilities of its ``variants`` (default: the bare
    letter), i.e. the probability that the answer starts with that letter however it is spelled.
    """
    variants = variants or {lt: [lt] for lt in letters}
    lp = {lt: _logsumexp([logprobs[v] for v in variants[lt]]) for lt in letters}
    letter = first_token_choice(lp)
    return {"first_token_logprobs": lp, "first_token_letter": letter,
            "first_token_option": letter_to_option(letters, shown_options, letter),
            "first_token_candidates": sorted({v for lt in letters for v in variants[lt]})}


def letter_candidates(backend, prompts: Sequence[Mapping]) -> tuple[dict[str, list[str]], list[str]]:
    """(letter -> spellings, sorted candidate strings) for every letter shown in ``prompts``."""
    letters = sorted({lt for p in prompts for lt in p["letters"]})
    variants = letter_variants(backend, letters)
    return variants, sorted({v for vs in variants.values() for v in vs})


def first_token_answers(backend, prompts: Sequence[Mapping]) -> dict[str, dict]:
    """uid -> first-token fields, from ONE ``next_token_logprobs`` call over all prompts."""
    if not prompts:
        return {}
    variants, candidates = letter_candidates(backend, prompts)
    lps = backend.next_token_logprobs([p["messages"] for p in prompts], candidates)
    return {p["uid"]: first_token_fields(p["letters"], p["shown_options"], lp, variants) for p, lp in zip(prompts, lps)}


def infer(backend, prompts: Sequence[Mapping], out_path: str | os.PathLike, *, temperature: float,
          max_new_tokens: int, seed: int = 0, reuse: Sequence[Mapping] | None = None, chunk_size: int = 32) -> int:
    """First-token and text answers of every prompt; writes the predictions JSONL (resumable).

    Text answers come from :func:`wobble.runner.generate_resumable` in chunks (a killed job resumes
    from ``<out>.partial``). First-token answers come from ``reuse`` when given (prediction records
    of the same prompts at another temperature, matched by ``uid`` and checked to hold the same
    messages), else from the same ``generate`` call when the backend supports it (one model call
    per prompt), else from one ``next_token_logprobs`` call before generating. Each prediction = the
    prompt record + ``first_token_logprobs``, ``first_token_letter``, ``first_token_option``,
    ``rendered_prompt``, ``output`` (raw text), ``model``, ``gen_params``.
    """
    from wobble.backends.base import GenParams
    from wobble.runner import finished_uids, generate_resumable

    done = finished_uids(out_path)
    todo = [p for p in prompts if p["uid"] not in done]
    params = GenParams(max_new_tokens=int(max_new_tokens), temperature=float(temperature), seed=int(seed))
    ft: dict[str, dict] = {}
    annotate = None
    if reuse is not None:
        by_uid = {r["uid"]: r for r in reuse}
        for p in todo:
            r = by_uid.get(p["uid"])
            if r is None or r.get("messages") != p["messages"] or "first_token_letter" not in r:
                raise DataError("<reused predictions>", p["uid"],
                                "a main-temperature prediction with the same messages and first-token fields")
            ft[p["uid"]] = {k: r[k] for k in ("first_token_logprobs", "first_token_letter", "first_token_option",
                                              "first_token_candidates") if k in r}
    elif getattr(backend, "supports_first_token_logprobs", False):
        variants, candidates = letter_candidates(backend, prompts)
        params = replace(params, first_token_candidates=tuple(candidates))

        def annotate(rec: Mapping, gen) -> dict:
            return first_token_fields(rec["letters"], rec["shown_options"], gen.first_token_logprobs, variants)
    else:
        ft = first_token_answers(backend, todo)
    records = [{**p, **ft.get(p["uid"], {})} for p in prompts]
    return generate_resumable(backend, records, params, out_path, prompt_of=lambda r: r["messages"],
                              chunk_size=chunk_size, desc=f"{getattr(backend, 'model_key', '')} t={temperature}",
                              annotate=annotate)


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


def classifier_splits(items: Sequence[Mapping], *, seed: int, eval_per_model: int | None = None,
                      n_shots: int = 4, max_shot_chars: int = 400) -> dict[str, list[dict]]:
    """``{"test", "train", "shots"}`` from the annotated items (the paper's 80/20 split per model).

    * ``test``: the test split of every annotated model, in data order; ``eval_per_model`` keeps a
      seeded sample of that many per model.
    * ``train``: the training items with a single-option gold (multiple/unknown dropped), in a seeded
      order; the PEFT classifier on ``n`` examples trains on the first ``n``, so smaller training
      sets are subsets of larger ones.
    * ``shots``: the judge's demonstrations, ``n_shots`` training items with responses of at most
      ``max_shot_chars`` characters, taken in the seeded order but with the first refusal among them
      (so the judge sees how a refusal is labelled: the letter of the "Refused" option).
    """
    test_all = [dict(x) for x in items if x["split"] == "test"]
    if eval_per_model:
        test = []
        for model in sorted({x["model"] for x in test_all}):
            sub = [x for x in test_all if x["model"] == model]
            test += seeded_sample(sub, int(eval_per_model), seed, key=lambda x: x["uid"])
    else:
        test = test_all
    train = seeded_order([dict(x) for x in items if x["split"] == "train" and x["gold"] not in (MULTIPLE, UNKNOWN)],
                         seed, key=lambda x: x["uid"])
    short = [x for x in train if len(x["response"]) <= max_shot_chars]
    shots = short[:max(0, int(n_shots))]
    refusal = next((x for x in short if _is_refusal_gold(x)), None)
    if refusal is not None and refusal not in shots and n_shots >= 2:
        shots = [x for x in short if x is not refusal][: n_shots - 1] + [refusal]
        shots.sort(key=lambda x: short.index(x))
    return {"test": test, "train": train, "shots": shots}


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

    ``string_match`` needs no model; ``judge_<k>shot`` generates with the judge backend on
    :func:`judge_messages` (the first ``k`` shots); ``peft_<n>`` generates with the finetuned
    classifier on the plain :func:`classifier_input` text (no chat template: it was trained so). Model
    outputs are read with :func:`parse_judge_output`; ``max_chars`` cuts long responses (and shots)
    before they go to a model (:func:`cut_response`; string matching always reads the whole text).
    Labels are raw (a letter, ``"refusal"``, ``"multiple"``, ``"unknown"``); see
    :func:`canonical_label` to compare them with the gold.
    """
    from wobble.backends.base import GenParams

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
    for ev in sorted(predictions, key=_evaluator_order):
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


def select_classifier(table: Sequence[Mapping], setting: str) -> str:
    """The classifier the study uses: ``setting`` itself, or for ``"auto"`` the evaluator with the best
    Avg accuracy (then macro-F1; a tie goes to the cheaper one: string matching, judge, PEFT)."""
    avgs = [r for r in table if r["model"] == "Avg"]
    names = [r["evaluator"] for r in avgs]
    if setting != "auto":
        if setting not in names and setting != "string_match":
            raise DataError("<classifier scores>", setting, f"scores of the configured classifier (have {names})")
        return setting
    if not avgs:
        return "string_match"
    best = min(avgs, key=lambda r: (-_nz(r["accuracy"]), -_nz(r["macro_f1"]), _evaluator_order(r["evaluator"])))
    return best["evaluator"]


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


# ----------------------------------------------------------------------------------------- metrics

METRICS = ("mismatch_rate", "refusal_mismatch_rate", "refusal_rate_text", "refusal_rate_first_token",
           "unmapped_rate", "entropy_first_token", "entropy_text")
NONE_LETTER = "none"


def _group(records: Iterable[Mapping]) -> dict[tuple, dict[str, list[Mapping]]]:
    """(model, constraint, temperature tag) -> question uid -> records sorted by shuffle."""
    cells: dict[tuple, dict[str, list[Mapping]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        t = temp_tag(r["gen_params"]["temperature"])
        cells[(r["model"], r["constraint"], t)][r["question_uid"]].append(r)
    return {k: {q: sorted(v, key=lambda r: r["shuffle"]) for q, v in sorted(qs.items())} for k, qs in cells.items()}


def _per_question(groups: Mapping[str, Sequence[Mapping]]) -> dict[str, tuple[list[float], list[float]]]:
    """Per-question numerators and denominators of every metric (ratio of sums over questions)."""
    out: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in METRICS}

    def add(m, a, b):
        out[m][0].append(float(a))
        out[m][1].append(float(b))

    for recs in groups.values():
        n = len(recs)
        pairs = [(r["first_token_option"], r["text_option"]) for r in recs]
        add("mismatch_rate", sum(1 for ft, tx in pairs if tx is None or ft != tx), n)
        add("refusal_mismatch_rate", sum(1 for ft, tx in pairs if is_refusal_option(tx) and not is_refusal_option(ft)), n)
        add("refusal_rate_text", sum(1 for _, tx in pairs if is_refusal_option(tx)), n)
        add("refusal_rate_first_token", sum(1 for ft, _ in pairs if is_refusal_option(ft)), n)
        add("unmapped_rate", sum(1 for _, tx in pairs if tx is None), n)
        h_ft = answer_entropy([ft for ft, _ in pairs])
        h_tx = answer_entropy([tx for _, tx in pairs])
        add("entropy_first_token", 0.0 if math.isnan(h_ft) else h_ft, 0 if math.isnan(h_ft) else 1)
        add("entropy_text", 0.0 if math.isnan(h_tx) else h_tx, 0 if math.isnan(h_tx) else 1)
    return out


def _point(metric: str, groups: Mapping[str, Sequence[Mapping]]) -> float:
    """Point estimates with the study's metric functions (equal to the pooled ratio of sums)."""
    recs = [r for rs in groups.values() for r in rs]
    pairs = [(r["first_token_option"], r["text_option"]) for r in recs]
    if metric == "mismatch_rate":
        return mismatch_rate(pairs)
    if metric == "refusal_mismatch_rate":
        return refusal_mismatch_rate(pairs)
    if metric == "refusal_rate_text":
        return refusal_rate([tx for _, tx in pairs])
    if metric == "refusal_rate_first_token":
        return refusal_rate([ft for ft, _ in pairs])
    if metric == "unmapped_rate":
        return sum(1 for _, tx in pairs if tx is None) / len(pairs) if pairs else float("nan")
    if metric == "entropy_first_token":
        return consistency_entropy([[r["first_token_option"] for r in rs] for rs in groups.values()])
    if metric == "entropy_text":
        return consistency_entropy([[r["text_option"] for r in rs] for rs in groups.values()])
    raise ValueError(metric)


def _clean(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 12)


def _classifier_of(groups: Mapping[str, Sequence[Mapping]]) -> str | None:
    names = sorted({r.get("classifier") for rs in groups.values() for r in rs if r.get("classifier")})
    return ", ".join(names) if names else None


def cell_metrics(records: Iterable[Mapping], *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Metric rows per (model, constraint, temperature): ``metric``, ``value``, ``ci_low``, ``ci_high``
    (95% percentile bootstrap over questions, ``n_boot`` resamples, ``seed``), ``n_prompts``,
    ``n_questions``, ``classifier``. Cells and metrics in a fixed order."""
    rows = []
    for (model, constraint, tag), groups in sorted(_group(records).items(), key=_cell_order):
        idx = bootstrap_indices(len(groups), n_boot, seed)
        per = _per_question(groups)
        n_prompts = sum(len(v) for v in groups.values())
        for m in METRICS:
            lo, hi = ratio_ci(*per[m], idx)
            rows.append({"model": model, "constraint": constraint, "temperature": float(tag), "metric": m,
                         "value": _clean(_point(m, groups)), "ci_low": _clean(lo), "ci_high": _clean(hi),
                         "n_prompts": n_prompts, "n_questions": len(groups), "classifier": _classifier_of(groups)})
    return rows


def _cell_order(item) -> tuple:
    (model, constraint, tag), _ = item
    return (model, CONSTRAINTS.index(constraint) if constraint in CONSTRAINTS else 99, float(tag))


def choice_rows(records: Iterable[Mapping], *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Choice distribution per cell: for ``answer_by`` first_token / text, the share of each letter
    (A.. up to the most options shown; text answers naming no single option count as ``"none"``),
    with ``count``, ``n_prompts`` and a bootstrap interval over questions."""
    rows = []
    for (model, constraint, tag), groups in sorted(_group(records).items(), key=_cell_order):
        idx = bootstrap_indices(len(groups), n_boot, seed)
        recs = [r for rs in groups.values() for r in rs]
        width = max(len(r["letters"]) for r in recs)
        letters = list(LETTERS[:width])
        for by, field in (("first_token", "first_token_letter"), ("text", "text_letter")):
            answers = [r[field] if r[field] is not None else NONE_LETTER for r in recs]
            keys = letters + ([NONE_LETTER] if by == "text" else [])
            dist = choice_distribution(answers, all_letters=keys)
            for lt in keys:
                num = [sum(1 for r in rs if (r[field] if r[field] is not None else NONE_LETTER) == lt)
                       for rs in groups.values()]
                den = [len(rs) for rs in groups.values()]
                lo, hi = ratio_ci(num, den, idx)
                rows.append({"model": model, "constraint": constraint, "temperature": float(tag), "answer_by": by,
                             "letter": lt, "share": _clean(dist[lt]), "ci_low": _clean(lo), "ci_high": _clean(hi),
                             "count": int(sum(num)), "n_prompts": len(recs), "classifier": _classifier_of(groups)})
    return rows


def mapping_rows(records: Iterable[Mapping], *, greedy_top_token: bool = True) -> list[dict]:
    """The paper's ``mapping_result.json`` fields per (model, constraint, temperature, shuffle)."""
    cells: dict[tuple, list[Mapping]] = defaultdict(list)
    for r in records:
        cells[(r["model"], r["constraint"], temp_tag(r["gen_params"]["temperature"]), r["shuffle"])].append(r)
    rows = []
    for (model, constraint, tag, shuffle), recs in sorted(
            cells.items(), key=lambda kv: (kv[0][0], CONSTRAINTS.index(kv[0][1]) if kv[0][1] in CONSTRAINTS else 99,
                                           float(kv[0][2]), kv[0][3])):
        view = [{"first_token_letter": r["first_token_letter"], "response": r.get("response") or r.get("output", ""),
                 "first_token_option": r["first_token_option"], "text_option": r["text_option"]} for r in recs]
        s = mapping_summary(view)
        rows.append({"model": model, "constraint": constraint, "temperature": float(tag), "shuffle": shuffle,
                     **{k: _clean(v) if isinstance(v, float) else v for k, v in s.items()}})
    return rows


__all__ = [
    "PAPER_MODELS", "ROOT", "annotated_items", "build_prompts", "cell_metrics", "check_prompts",
    "choice_rows", "classifier_splits", "classifier_table", "classify_texts", "evaluate_classifier",
    "evaluator_names", "first_token_answers", "first_token_fields", "infer", "label_inputs", "label_predictions",
    "mapping_rows", "peft_pairs", "ratio_ci", "runs",
    "sample_questions", "select_classifier", "check_section", "temp_tag", "text_items",
]
