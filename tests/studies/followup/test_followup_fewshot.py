"""wobble.studies.followup.fewshot: the held-out items (MMLU's dev split when it has enough, else a seeded sample
of the test split; never evaluated), the dataset's own rationale of a demonstration, and the demonstrations a
few-shot mitigation prepends; a dialogue with demonstrations is in test_followup_mechanism.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from wobble.seeding import seeded_sample
from wobble.studies.followup.fewshot import demonstrations, rationale, split_items
from wobble.studies.followup.mechanism import direct
from wobble.studies.followup.prompts import BENCHMARKS, RECONSIDER, load_paper_prompts

B = BENCHMARKS
TEST = [{"id": f"t{i}", "split": "test"} for i in range(10)]


@pytest.fixture(scope="module")
def paper():
    return load_paper_prompts(Path(__file__).resolve().parents[3] / "paper" / "followup")


def test_held_out_items_are_never_evaluated():
    test = [{"id": f"t{i}", "split": "test"} for i in range(30)]
    ev, held = split_items(test, 10, 4, seed=1)
    assert len(ev) == 10 and len(held) == 4 and not {r["id"] for r in ev} & {r["id"] for r in held}
    assert (ev, held) == split_items(test, 10, 4, seed=1)
    all_ev, _ = split_items(test, None, 4, seed=1)
    assert len(all_ev) == 26 and {r["id"] for r in ev} <= {r["id"] for r in all_ev}
    dev = [{"id": f"d{i}", "split": "dev"} for i in range(5)]
    ev2, held2 = split_items(test + dev, None, 4, seed=1)  # MMLU: the dev split is the held-out pool
    assert held2 == dev and len(ev2) == 30


def test_no_held_out_items_when_none_are_asked_for():
    dev = [{"id": f"d{i}", "split": "dev"} for i in range(5)]
    evaluated, heldout_items = split_items(TEST + dev, None, 0, seed=1)
    assert heldout_items == [] and [r["id"] for r in evaluated] == [r["id"] for r in TEST]


def test_a_dev_split_too_small_for_the_shots_gives_way_to_test_items():
    evaluated, heldout_items = split_items(TEST + [{"id": "d0", "split": "dev"}], None, 4, seed=1)
    assert len(heldout_items) == 4 and all(r["split"] == "test" for r in heldout_items)
    assert len(evaluated) == 6 and not {r["id"] for r in evaluated} & {r["id"] for r in heldout_items}


def test_a_rationale_is_the_datasets_own_and_only_its_own():
    gsm = {"extra": {"rationale": "She sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n"}}
    assert rationale(B["gsm8k"], gsm) == "She sells 16 - 3 - 4 = 9 eggs."
    assert rationale(B["gsm8k"], {"extra": {}}) is None and rationale(B["gsm8k"], {}) is None
    assert rationale(B["svamp"], gsm) is None                           # SVAMP has no written reasoning
    target = {"extra": {"target": "No. Dogs bark, yes. Cats meow.  "}}
    assert rationale(B["strategyqa"], target) == "Dogs bark, yes. Cats meow."  # only the leading verdict goes
    assert rationale(B["strategyqa"], {"extra": {"target": "Yes."}}) is None   # nothing but the verdict
    assert rationale(B["strategyqa"], {}) is None and rationale(B["csqa"], target) is None


def test_no_demonstrations_without_the_few_shot_mitigation(paper):
    pool = [{"id": f"g{i}", "question": "1+1?", "answer": "2", "answer_type": "number"} for i in range(6)]
    assert demonstrations(paper, B["multiarith"], pool, direct("closed-ended", "A", "cot_both"), seed=0) == []


def test_a_dev_split_of_exactly_the_shots_is_the_held_out_pool():
    dev = [{"id": f"d{i}", "split": "dev"} for i in range(4)]
    assert split_items(TEST + dev, None, 4, seed=1)[1] == dev


def test_the_seeded_draws_have_their_own_salts():
    evaluated, heldout_items = split_items(TEST, 3, 2, seed=5)
    assert heldout_items == seeded_sample(TEST, 2, 5, key=lambda r: r["id"], salt="followup-heldout")
    rest = [r for r in TEST if r not in heldout_items]
    assert evaluated == seeded_sample(rest, 3, 5, key=lambda r: r["id"], salt="followup-eval")


def test_a_demonstration_without_a_rationale_is_the_answer_line_alone(paper):
    pool = [{"id": f"v{i}", "question": f"{i} + 1?", "answer": str(i + 1), "answer_type": "number"} for i in range(30)]
    cond = direct("closed-ended", "A", "fewshot")
    demos = demonstrations(paper, B["svamp"], pool, cond, seed=0)
    chosen = seeded_sample(pool, 4, 0, key=lambda r: r["id"], salt="followup-shots-svamp")
    assert [d["content"].split(" ")[0] for d in demos if d["role"] == "user"][::2] == [
        r["question"].split(" ")[0] for r in chosen]  # the four held-out items of this dataset's draw
    assert [d["content"] for d in demos if d["role"] == "assistant"][:2] == [
        f"Answer: {chosen[0]['answer']}", f"{RECONSIDER}\nAnswer: {chosen[0]['answer']}"]
