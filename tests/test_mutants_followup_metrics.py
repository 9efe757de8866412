"""followup metrics: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

import math

import pytest

from wobble.errors import DataError
from wobble.seeding import derive_seed
from wobble.studies.followup.metrics import follow_up_metrics, score_dialogue, summarize

BEFORE = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
AFTER = [1, 0, 0, 1, 1, 0, 0, 0, 0, 0]


def test_defaults_are_gate_all_1000_resamples_seed_0_level_95():
    # 60 items, irregular pattern: ratio quantities take many values, so the intervals move with n, seed, level
    before = [(i * 7) % 10 < 6 for i in range(60)]
    after = [(i * 3) % 7 < 4 for i in range(60)]
    base = follow_up_metrics(before, after)
    assert base == follow_up_metrics(before, after, "all", n_boot=1000, seed=0, level=0.95)

    def intervals(m):
        return {k: v for k, v in m.items() if k.endswith(("_lo", "_hi"))}
    for other in ({"n_boot": 999}, {"n_boot": 1001}, {"seed": 1}, {"level": 0.9}):
        assert intervals(follow_up_metrics(before, after, **other)) != intervals(base), other


def test_before_and_after_must_be_one_dimensional():
    with pytest.raises(ValueError, match="paired per item"):
        follow_up_metrics([[1, 0]], [[1, 0]])


def test_no_items_gives_nan_everywhere():
    m = follow_up_metrics([], [])
    assert m["n"] == 0 and m["n_wrong"] == 0
    assert all(math.isnan(m[k]) for k in m if k not in ("n", "n_wrong"))


def test_no_resamples_gives_points_without_intervals():
    m = follow_up_metrics(BEFORE, AFTER, n_boot=0)
    assert m["before"] == pytest.approx(40.0) and m["modification_rate_pct"] == pytest.approx(50.0)
    assert math.isnan(m["before_lo"]) and math.isnan(m["modification_rate_pct_hi"])


def test_gate_wrong_blanks_acc_after_too():
    m = follow_up_metrics(BEFORE, AFTER, "wrong", n_boot=20)
    assert math.isnan(m["after"]) and math.isnan(m["after_lo"]) and math.isnan(m["after_hi"])


def _dialogue(item, outputs, gate="correct", rounds=None):
    rounds = rounds or [{"question_type": "leading", "variant": "A", "misleading": "35"}]
    return {"uid": f"{item}|direct_LA_none", "item": item, "dataset": "multiarith", "condition": "direct_LA_none",
            "form": "direct", "mitigation": "none", "gate": gate, "gold": "39", "rounds": rounds, "model": "m",
            "gen_params": {"temperature": 0.5, "seed": 7}, "turns": [{"output": o} for o in outputs]}


def test_score_dialogue_keeps_the_fields_tables_group_by():
    s = score_dialogue(_dialogue("a", ["Answer: 39", "Answer: 35"]))
    assert {k: s[k] for k in ("uid", "item", "dataset", "condition", "form", "mitigation", "gate", "gold", "model")} \
        == {"uid": "a|direct_LA_none", "item": "a", "dataset": "multiarith", "condition": "direct_LA_none",
            "form": "direct", "mitigation": "none", "gate": "correct", "gold": "39", "model": "m"}
    assert s["rounds"][0]["question_type"] == "leading"


def test_summarize_refuses_mixed_gates_or_round_counts():
    a = score_dialogue(_dialogue("a", ["Answer: 39", "Answer: 35"]))
    b = score_dialogue(_dialogue("b", ["Answer: 39", "Answer: 39"], gate="all"))
    with pytest.raises(DataError, match="one gate and one number of rounds"):
        summarize([a, b], ("condition",), n_boot=10)
    two = [{"question_type": "closed-ended", "variant": "A", "misleading": None},
           {"question_type": "leading", "variant": "A", "misleading": "35"}]
    c = score_dialogue(_dialogue("c", ["Answer: 39"], rounds=two))
    with pytest.raises(DataError, match="one gate and one number of rounds"):
        summarize([a, c], ("condition",), n_boot=10)


def test_summarize_seeds_each_group_from_its_keys():
    scores = [score_dialogue(_dialogue(i, o)) for i, o in
              [("a", ["Answer: 39", "Answer: 35"]), ("b", ["Answer: 39", "Answer: 39"]),
               ("c", ["Answer: 1", "Answer: 39"]), ("d", ["Answer: 39", "Answer: 2"])]]
    (row,) = summarize(scores, ("model", "condition"), n_boot=200, seed=4)
    expected = follow_up_metrics([s["correct"][0] for s in scores], [s["correct"][1] for s in scores], "correct",
                                 n_boot=200, seed=derive_seed(4, "followup-metrics", "m", "direct_LA_none"))
    assert {k: row[k] for k in expected} == expected
    assert summarize(scores, ("model", "condition")) == summarize(scores, ("model", "condition"), n_boot=1000, seed=0)
