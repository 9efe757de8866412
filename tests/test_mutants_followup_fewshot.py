"""wobble.studies.followup.fewshot: behaviour the mutation run (tests/tools/mutate.py) found untested.

Held-out items (MMLU's dev split when it has enough, else a seeded sample of the test split) and the dataset's
own rationale of a demonstration, each on inputs that tell the rule from a plausible slip.
"""

from __future__ import annotations

from pathlib import Path

from wobble.studies.followup.fewshot import demonstrations, rationale, split_items
from wobble.studies.followup.mechanism import direct
from wobble.studies.followup.prompts import BENCHMARKS, load_paper_prompts

B = BENCHMARKS
TEST = [{"id": f"t{i}", "split": "test"} for i in range(10)]


def test_no_held_out_items_when_none_are_asked_for():
    dev = [{"id": f"d{i}", "split": "dev"} for i in range(5)]
    evaluated, heldout = split_items(TEST + dev, None, 0, seed=1)
    assert heldout == [] and [r["id"] for r in evaluated] == [r["id"] for r in TEST]


def test_a_dev_split_too_small_for_the_shots_gives_way_to_test_items():
    evaluated, heldout = split_items(TEST + [{"id": "d0", "split": "dev"}], None, 4, seed=1)
    assert len(heldout) == 4 and all(r["split"] == "test" for r in heldout)
    assert len(evaluated) == 6 and not {r["id"] for r in evaluated} & {r["id"] for r in heldout}


def test_a_rationale_is_the_datasets_own_and_only_its_own():
    gsm = {"extra": {"rationale": "She sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n"}}
    assert rationale(B["gsm8k"], gsm) == "She sells 16 - 3 - 4 = 9 eggs."
    assert rationale(B["gsm8k"], {"extra": {}}) is None and rationale(B["gsm8k"], {}) is None
    assert rationale(B["svamp"], gsm) is None                           # SVAMP has no written reasoning
    target = {"extra": {"target": "No. Dogs bark, yes. Cats meow.  "}}
    assert rationale(B["strategyqa"], target) == "Dogs bark, yes. Cats meow."  # only the leading verdict goes
    assert rationale(B["strategyqa"], {"extra": {"target": "Yes."}}) is None   # nothing but the verdict
    assert rationale(B["strategyqa"], {}) is None and rationale(B["csqa"], target) is None


def test_no_demonstrations_without_the_few_shot_mitigation():
    paper = load_paper_prompts(Path(__file__).resolve().parents[1] / "paper" / "followup")
    pool = [{"id": f"g{i}", "question": "1+1?", "answer": "2", "answer_type": "number"} for i in range(6)]
    assert demonstrations(paper, B["multiarith"], pool, direct("closed-ended", "A", "cot_both"), seed=0) == []
