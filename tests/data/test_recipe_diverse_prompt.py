"""Recipe ``diverse_prompt``: per-task answer lists, cause_and_effect / common_concept reshaping, the fork's
last-demonstration parse and its ``str.strip`` bug (``as_loaded_by_fork``), and the output layout."""

from __future__ import annotations

import json

import pytest

from wobble.data.recipes import diverse_prompt as dp


def _prompt(pairs):
    seen = "\n\n".join(f"Input: {i}\nOutput: {o}" for i, o in pairs)
    return {"input": "I gave a friend ...\n\n" + seen + "\n\nThe instruction was", "metadata": {"examples_seen": seen}}


def test_cause_and_effect_gives_both_orders_with_the_cause_as_answer():
    execute = {"examples": {"7": {"cause": "It rained.", "effect": "The street got wet."}}}
    got = dp.eval_examples("cause_and_effect", execute)
    assert [e["id"] for e in got] == ["7.1", "7.2"]
    assert got[0]["input"] == "Sentence 1: It rained. Sentence 2: The street got wet."
    assert got[1]["input"] == "Sentence 1: The street got wet. Sentence 2: It rained."
    assert all(e["outputs"] == ["It rained."] and e["raw"] == execute["examples"]["7"] for e in got)


def test_common_concept_joins_items_and_uses_all_concepts():
    rec = {"concept": "c1", "items": ["a", "b c"], "all_common_concepts": ["c1", "c2"]}
    (got,) = dp.eval_examples("common_concept", {"examples": {"1": rec}})
    assert got == {"id": "1", "input": "a, b c", "outputs": ["c1", "c2"], "raw": rec}


@pytest.mark.parametrize("task,key", [("rhymes", "other_rhymes"), ("translation_en-fr", "possible_translations"),
                                      ("word_in_context", "possible_outputs")])
def test_multi_answer_tasks(task, key):
    rec = {"input": "x", "output": "y", key: ["y", "z"]}
    assert dp.eval_examples(task, {"examples": {"1": rec}})[0]["outputs"] == ["y", "z"]


def test_sentence_similarity_and_others_use_the_single_output():
    rec = {"input": "x", "output": "y"}
    for task in ("sentence_similarity", "antonyms"):
        assert dp.eval_examples(task, {"examples": {"1": rec}})[0]["outputs"] == ["y"]


def test_fork_keeps_last_demo_of_first_100_and_records_the_strip_bug():
    induction = {"examples": {str(k): _prompt([("first", "one"), (f"tiger {k}", "hat")]) for k in range(1, 103)}}
    induction["examples"]["2"] = _prompt([("a", "b"), ("multi\nline", "ok")])
    got = dp.fork_eval_examples(induction)
    assert len(got) == 100 and got[-1]["id"] == "100"
    assert got[0] == {"id": "1", "input": "tiger 1", "output": "hat",
                      # 'Input: tiger 1'.strip('Input: ') also eats the 't'; 'Output: hat' loses its final 't'
                      "as_loaded_by_fork": {"input": "iger 1", "output": "ha"}}
    assert got[1] == {"id": "2", "input": "multi\nline", "output": "ok"}  # untouched: no as_loaded_by_fork


def test_last_demo_rejects_garbage():
    with pytest.raises(ValueError):
        dp.last_demo("no demonstration here")


def test_build_layout(tmp_path):
    inputs = {}
    for task in dp.TASKS:
        ann, exe, ind = dp.input_names(task)
        if task == "cause_and_effect":
            records = {"1": {"cause": "C.", "effect": "E."}}
        elif task == "common_concept":
            records = {"1": {"concept": "k", "items": ["p", "q"], "all_common_concepts": ["k"]}}
        else:
            records = {"1": {"input": "über", "output": "o", **{k: ["o"] for k in dp.ANSWER_KEYS.values()}}}
        for name, data in ((ann, {"annotations": ["do it", "do that"]}), (exe, {"examples": records}),
                           (ind, {"examples": {"1": _prompt([("in", "out")])}})):
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data), encoding="utf-8")
            inputs[name] = path
    out = dp.build(inputs)
    assert set(out) == {"index.tsv"} | {f"tasks/{t}.json" for t in dp.TASKS}
    text = out["tasks/antonyms.json"].decode("utf-8")
    assert text.endswith("}\n") and "über" in text and text.startswith('{\n  "task": "antonyms",')
    rec = json.loads(text)
    assert list(rec) == ["task", "paper_name", "prompts", "official_ii_metric", "eval_examples_source",
                         "eval_examples", "fork_eval_examples_source", "fork_eval_examples"]
    assert rec["fork_eval_examples"] == [{"id": "1", "input": "in", "output": "out",
                                          "as_loaded_by_fork": {"input": "i", "output": "o"}}]
    index = out["index.tsv"].decode().splitlines()
    assert index[0].split("\t") == ["task", "paper_name", "n_prompts", "n_eval_examples", "n_fork_eval_examples",
                                    "official_ii_metric"]
    rows = {line.split("\t")[0]: line.split("\t") for line in index[1:]}
    assert rows["orthography_starts_with"][1:] == ["orthography", "2", "1", "1", "exact_set"]
    assert rows["cause_and_effect"][3] == "2"
    assert rows["synonyms"][5] == "contains" and rows["common_concept"][5] == "f1"
    assert rows["sum"][5] == "exact_match"
