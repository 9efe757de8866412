"""Task selection, splits and training pairs of the instructions study (splits.py, pipeline.make_selection) on
hand-made tiny inputs: which tasks and instances, in which order, with how many examples, seeded."""

from __future__ import annotations

import pytest

from wobble.errors import DataError
from wobble.studies.instructions.pipeline import TABLE3_TASK, make_selection
from wobble.studies.instructions.splits import (
    build_diverse_split, build_split, first_instances, select_tasks, shuffle_pool, training_pairs,
)


def task(name, cat="TE", split="default", n=5, status="full", definition=None, language="English", pos=2):
    return {"task": name, "split": split, "category": f"category {cat}", "category_abbrev": cat,
            "metric": "exact_match", "language": language, "n_instances": n, "data_status": status,
            "definition": f"Definition of {name}." if definition is None else definition,
            "pos_examples": [{"input": f"{name} in {i}", "output": f"{name} out {i}"} for i in range(1, pos + 1)]}


def instance(name, i, outputs=("yes",)):
    return {"task": name, "id": f"{name}-{i}", "input": f"input {i} of {name}", "outputs": list(outputs)}


# ------------------------------------------------------------------------------------------ selection

def test_select_tasks_eligibility_and_missing_categories():
    tasks = [task("te_ok"), task("te_no_def", definition=""), task("te_few", n=1), task("te_missing", status="missing"),
             task("cr_few", cat="CR", n=1), task("x_te", split="xlingual")]
    chosen, missing = select_tasks(tasks, "default", 3, 2)
    assert chosen == ["te_ok"]  # no definition, < 2 instances, status "missing" and the other split are out
    assert missing == {"CR": "no task with a definition and >= 2 instances in the data"}
    assert select_tasks(tasks, "xlingual", 3, 2) == (["x_te"], {})


def test_select_tasks_prefers_full_files_and_takes_include_first():
    tasks = [task("a_partial", status="partial"), task("b_full"), task("c_truncated", status="truncated"),
             task("d_partial", status="partial")]
    for seed in range(5):
        one, _ = select_tasks(tasks, "default", 1, 2, seed)
        assert one in (["b_full"], ["c_truncated"])  # fully mirrored / truncated files before partial ones
        two, _ = select_tasks(tasks, "default", 2, 2, seed)
        assert two == ["b_full", "c_truncated"]
        three, _ = select_tasks(tasks, "default", 3, 2, seed)
        assert set(three) - {"b_full", "c_truncated"} <= {"a_partial", "d_partial"} and len(three) == 3
        # an included task is taken first even when partial
        assert select_tasks(tasks, "default", 1, 2, seed, include=("d_partial",))[0] == ["d_partial"]
    # an included task that is not eligible is not forced in
    assert select_tasks(tasks, "default", 1, 9, 0, include=("d_partial",)) == ([], {
        "TE": "no task with a definition and >= 9 instances in the data"})


def test_select_tasks_seeded_sorted_and_per_category():
    tasks = [task(f"te{i}") for i in range(8)] + [task(f"gec{i}", cat="GEC") for i in range(8)]
    picks = {tuple(select_tasks(tasks, "default", 2, 2, seed)[0]) for seed in range(8)}
    assert len(picks) > 1  # the seed changes the draw
    for pick in picks:
        assert list(pick) == sorted(pick) and len(pick) == 4
        assert sum(p.startswith("te") for p in pick) == 2 and sum(p.startswith("gec") for p in pick) == 2
    # same seed, same answer; a category's draw does not depend on the other categories' tasks
    a = select_tasks(tasks, "default", 2, 2, 3)[0]
    assert a == select_tasks(list(reversed(tasks)), "default", 2, 2, 3)[0]
    b = select_tasks(tasks + [task("cr0", cat="CR")], "default", 2, 2, 3)[0]
    assert [t for t in b if not t.startswith("cr")] == a


def test_make_selection_task_sets_and_reasons():
    tasks = [task(TABLE3_TASK, cat="GEC"), task("gec_other", cat="GEC"), task("te1"),
             task("x_tg", cat="TG", split="xlingual", language="French"), task("x_ac", cat="AC", split="xlingual", n=1),
             task("para_ok", cat="TG"), task("para_empty", cat="TG", n=0)]
    para = [{"task": "para_ok"}, {"task": "para_empty"}, {"task": "para_absent"}]
    diverse = [{"task": "sum"}, {"task": "negation"}]
    cfg = {"selection_seed": 0, "english": {"n_tasks_per_category": 1, "n_instances_per_task": 2},
           "xlingual": {"n_tasks_per_category": 1, "n_instances_per_task": 2}, "para": {"tasks": None},
           "diverse": {"tasks": None}}
    sel = make_selection(tasks, para, diverse, cfg)
    assert TABLE3_TASK in sel["english"] and "gec_other" not in sel["english"]  # the paper's running example
    assert sel["xlingual"] == ["x_tg"]
    assert sel["missing"]["xlingual"] == {"AC": "no task with a definition and >= 2 instances in the data"}
    assert sel["para"] == ["para_ok"]
    assert sel["missing"]["para"] == {"para_empty": "no instances in the data", "para_absent": "no instances in the data"}
    assert sel["diverse"] == ["negation", "sum"]
    chosen = make_selection(tasks, para, diverse, dict(cfg, para={"tasks": ["para_ok"]}, diverse={"tasks": ["sum"]}))
    assert chosen["para"] == ["para_ok"] and chosen["diverse"] == ["sum"] and chosen["missing"]["para"] == {}


# --------------------------------------------------------------------------------------------- splits

def test_first_instances_keeps_file_order():
    insts = [instance("a", 1), instance("b", 1), instance("a", 2), instance("a", 3), instance("c", 1)]
    got = first_instances(insts, ["a", "b", "z"], 2)
    assert [i["id"] for i in got["a"]] == ["a-1", "a-2"] and [i["id"] for i in got["b"]] == ["b-1"]
    assert got["z"] == [] and "c" not in got


def test_build_split_records_and_settings():
    records = {"a": task("a"), "b": task("b", cat="GEC")}
    insts = {"b": [instance("b", 1, ("B1", "B2"))], "a": [instance("a", 1), instance("a", 2)]}
    wo = build_split("english", "original", "wo_exam", 1, records, insts, pool={})
    assert [r["uid"] for r in wo] == ["a/a-1", "a/a-2", "b/b-1"]  # tasks sorted, instances in given order
    r = wo[2]
    assert (r["task"], r["category_abbrev"], r["condition"], r["setting"], r["seed"], r["references"]) == (
        "b", "GEC", "original", "wo_exam", 1, ["B1", "B2"])
    assert r["prompt"] == ("Definition: Definition of b.\n\n"
                           "Now complete the following example -\nInput: input 1 of b.\nOutput: ")
    w = build_split("english", "original", "w_exam", 1, records, insts, pool={})
    assert [x["prompt"].count("Positive Example") for x in w] == [2, 2, 2]
    # examples are dropped, last first, while the source is longer than max_source_chars
    one = len(build_split("english", "original", "w_exam", 1, records, {"a": insts["a"][:1]}, pool={},
                          max_source_chars=10_000)[0]["prompt"])
    cut = build_split("english", "original", "w_exam", 1, records, {"a": insts["a"][:1]}, pool={},
                      max_source_chars=one - 1)[0]["prompt"]
    assert cut.count("Positive Example") == 1


def test_build_split_conditions_change_only_the_definition():
    records = {"a": task("a", definition="Read the text. Answer the question. Be brief."), "b": task("b")}
    insts = {"a": [instance("a", 1)]}
    pool = shuffle_pool(records, "english")
    assert pool == {"a": "Read the text. Answer the question. Be brief.", "b": "Definition of b."}
    orig = build_split("english", "original", "wo_exam", 1, records, insts, pool=pool)[0]
    shuf = build_split("english", "shuffle_instructions", "wo_exam", 1, records, insts, pool=pool)[0]
    assert shuf["definition"] == "Definition of b."  # the only other task of the pool
    assert {k: v for k, v in shuf.items() if k not in ("definition", "prompt", "condition")} == \
        {k: v for k, v in orig.items() if k not in ("definition", "prompt", "condition")}
    again = build_split("english", "shuffle_sentences", "wo_exam", 1, records, insts, pool=pool)
    assert again == build_split("english", "shuffle_sentences", "wo_exam", 1, records, insts, pool=pool)
    with pytest.raises(KeyError, match="unknown setting"):
        build_split("english", "original", "zero_shot", 1, records, insts, pool=pool)
    with pytest.raises(DataError, match="non-empty 'outputs'"):
        build_split("english", "original", "wo_exam", 1, records, {"a": [instance("a", 1, ())]}, pool=pool)


def test_shuffle_instructions_draws_from_the_same_language_subset():
    records = {"en1": task("en1"), "en2": task("en2"), "fr1": task("fr1", split="xlingual", language="French"),
               "de1": task("de1", split="xlingual", language="German"), "nodef": task("nodef", definition="")}
    assert shuffle_pool(records, "english") == {"en1": "Definition of en1.", "en2": "Definition of en2."}
    assert shuffle_pool(records, "para") == shuffle_pool(records, "english")
    assert shuffle_pool(records, "xlingual") == {"fr1": "Definition of fr1.", "de1": "Definition of de1."}
    with pytest.raises(KeyError, match="no SuperNI subset"):
        shuffle_pool(records, "diverse")
    insts = {"fr1": [instance("fr1", 1)]}
    for seed in range(10):  # the only other non-English task, never an English one
        rec = build_split("xlingual", "shuffle_instructions", "wo_exam", seed, records, insts,
                          pool=shuffle_pool(records, "xlingual"))[0]
        assert rec["definition"] == "Definition of de1."


def test_build_diverse_split_prompts_times_examples():
    diverse = [{"task": "sum", "metric": "exact_match", "prompts": ["Add them.", "Sum:", "Total?"],
                "eval_examples": [{"id": "1", "input": "1 2", "outputs": ["3"]},
                                  {"id": "2", "input": "2 2", "outputs": ["4"]},
                                  {"id": "3", "input": "3 3", "outputs": ["6"]}]}]
    recs = build_diverse_split(diverse, ["sum"], 2, 1, max_prompts=2)
    assert [r["uid"] for r in recs] == ["sum/1/1", "sum/1/2", "sum/2/1", "sum/2/2"]
    assert [r["prompt_index"] for r in recs] == [1, 1, 2, 2]
    assert recs[2]["definition"] == "Sum:" and recs[2]["condition"] == "diverse_prompt_2"
    assert recs[0]["setting"] == "wo_exam" and "Positive Example" not in recs[0]["prompt"]
    assert len(build_diverse_split(diverse, None, 1, 1)) == 3
    with pytest.raises(DataError, match="a DiversePrompt task"):
        build_diverse_split(diverse, ["negation"], 1, 1)


# ------------------------------------------------------------------------------------- training pairs

def test_training_pairs_cap_source_and_seeded_target():
    insts = [dict(instance("a", i, ("t1", "t2", "t3")), definition="Def a.", pos_examples=task("a")["pos_examples"])
             for i in range(1, 5)]
    insts += [dict(instance("b", 1, ("only",)), definition="Def b.", pos_examples=[])]
    pairs = training_pairs(insts, 1, n_instances_per_task=3)
    assert [(p["task"], p["id"]) for p in pairs] == [("a", "a-1"), ("a", "a-2"), ("a", "a-3"), ("b", "b-1")]
    assert pairs[0]["source"].count("Positive Example") == 2 and pairs[0]["source"].startswith("Definition: Def a.")
    assert all(p["target"] in ("t1", "t2", "t3") for p in pairs[:3]) and pairs[3]["target"] == "only"
    # the target depends on (seed, task, id) only: the same in any order, different across seeds somewhere
    assert {(p["id"], p["target"]) for p in training_pairs(list(reversed(insts)), 1, n_instances_per_task=None)} >= \
        {(p["id"], p["target"]) for p in pairs}
    targets = {tuple(p["target"] for p in training_pairs(insts, s)) for s in range(6)}
    assert len(targets) > 1
    short = training_pairs(insts[:1], 1, max_source_chars=60)[0]["source"]
    assert "Positive Example" not in short
