"""wobble.runner.run_dialogue_sets_resumable: several outputs' dialogues asked as one set (followup's run groups).
Each output equals the one its dialogues give asked alone; a history several dialogues wait with is asked once;
a set killed mid-way resumes from its joint ``.partial`` to the uninterrupted outputs."""

from __future__ import annotations

import pytest
from test_runner import Killed, Scripted

from wobble.backends.base import GenParams
from wobble.errors import DataError
from wobble.io import read_jsonl
from wobble.runner import partial_path, run_dialogue_sets_resumable, run_dialogues_resumable

# Run "a" challenges once, run "b" twice and otherwise: their first turns are the same two questions
RUN_A = [{"uid": "q0|a", "messages": [{"role": "user", "content": "2+2?"}], "challenges": ["Are you sure?"]},
         {"uid": "q1|a", "messages": [{"role": "user", "content": "Capital?"}], "challenges": ["Are you sure?"]}]
RUN_B = [{**d, "uid": d["uid"].replace("|a", "|b"), "challenges": ["Think again.", "Are you sure?"]} for d in RUN_A]
PARAMS = GenParams(max_new_tokens=8)


def next_turn(dialogue, history):
    k = sum(m["role"] == "assistant" for m in history)
    return dialogue["challenges"][k - 1] if k <= len(dialogue["challenges"]) else None


def ask_both(backend, tmp_path, chunk_size=32):
    sets = {tmp_path / "a.jsonl": RUN_A, tmp_path / "b.jsonl": RUN_B}
    return run_dialogue_sets_resumable(backend, sets, next_turn, PARAMS, chunk_size=chunk_size,
                                       annotate_turn=lambda d, t: {"chars": len(t["output"])})


def ask_alone(tmp_path):
    for name, run in (("a", RUN_A), ("b", RUN_B)):
        run_dialogues_resumable(Scripted(), run, next_turn, PARAMS, tmp_path / f"{name}.jsonl",
                                annotate_turn=lambda d, t: {"chars": len(t["output"])})


def test_a_shared_history_is_asked_once_and_each_output_equals_its_run_alone(tmp_path):
    alone, joint = tmp_path / "alone", tmp_path / "joint"
    alone.mkdir(), joint.mkdir()
    ask_alone(alone)
    backend = Scripted()
    assert ask_both(backend, joint) == 4
    for name in ("a", "b"):
        assert (joint / f"{name}.jsonl").read_bytes() == (alone / f"{name}.jsonl").read_bytes(), name
    # turn 1: the two questions once for both runs; turn 2: four different follow-ups; turn 3: run b only
    assert [len(c[1]) for c in backend.calls] == [2, 4, 2]
    assert not list(joint.glob("*.partial"))
    a0 = read_jsonl(joint / "a.jsonl")[0]
    assert a0["uid"] == "q0|a" and len(a0["turns"]) == 2 and a0["turns"][0]["output"] == "1:?2+2"


@pytest.mark.parametrize("chunk_size, kill_at", [(32, 2), (32, 3), (1, 4)])
def test_a_set_killed_mid_way_resumes_to_the_uninterrupted_outputs(tmp_path, chunk_size, kill_at):
    full, part = tmp_path / "full", tmp_path / "part"
    full.mkdir(), part.mkdir()
    uninterrupted = Scripted()
    ask_both(uninterrupted, full, chunk_size)
    first = Scripted(kill_at=kill_at)
    with pytest.raises(Killed):
        ask_both(first, part, chunk_size)
    assert partial_path(part / "a.jsonl.joint").exists() and not list(part.glob("*.jsonl"))
    second = Scripted()
    ask_both(second, part, chunk_size)
    for name in ("a", "b"):
        assert (part / f"{name}.jsonl").read_bytes() == (full / f"{name}.jsonl").read_bytes(), name
    assert not list(part.glob("*.partial"))
    asked = [p for c in first.calls[:-1] + second.calls for p in c[1]]  # the killed call is redone
    assert sorted(asked) == sorted(p for c in uninterrupted.calls for p in c[1])


def test_a_uid_in_two_outputs_names_the_joint_file(tmp_path):
    sets = {tmp_path / "a.jsonl": RUN_A, tmp_path / "b.jsonl": RUN_A[:1]}
    with pytest.raises(DataError, match=r"a\.jsonl\.joint.*q0\|a.*unique 'uid'"):
        run_dialogue_sets_resumable(Scripted(), sets, next_turn, PARAMS)
