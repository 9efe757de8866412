"""The instructions study's claims measured on hand-made predictions (EM: 100 when output == reference)."""

from __future__ import annotations

import numpy as np
import pytest

from wobble.report.claims import verdict
from wobble.studies.instructions import claims as C

CONDS = ["original", *C.PERTURBATIONS]


def rec(i, correct, task="t1", seed=1, **extra):
    return {"task": task, "instance_id": f"{task}-{i}", "output": "yes" if correct else "no", "references": ["yes"],
            "metric": "exact_match", "language": "English", "seed": seed, **extra}


def runs_from(correct_by: dict, n=20):
    """``correct_by[(condition, setting)]`` = number of the n instances answered correctly (the first ones)."""
    return {k: [rec(i, i < k_ok) for i in range(n)] for k, k_ok in correct_by.items()}


def test_instance_score_uses_the_category_metric():
    assert C.instance_score(rec(0, True)) == 100.0
    r = {"output": "the cat sat", "references": ["the cat"], "metric": "rougeL", "language": "English"}
    assert C.instance_score(r) == pytest.approx(100 * 0.8)  # LCS 2, P 2/3, R 1 -> F 0.8


def test_score_matrix_pairs_instances_and_averages_seeds():
    runs = {("original", "wo_exam"): [rec(0, True, seed=1), rec(0, False, seed=2), rec(1, True)],
            ("shuffle_words", "wo_exam"): [rec(0, False)]}
    m, dropped = C.score_matrix(runs, [("original", "wo_exam"), ("shuffle_words", "wo_exam")])
    assert m.tolist() == [[50.0, 0.0]] and dropped == 1


def test_shuffle_instructions_largest_drop_by_hand():
    # WO-EXAM: original 18/20 correct; shuffle_instructions 2/20; every other perturbation 14/20 (W-EXAM 17/20).
    correct = {(c, s): (14 if s == "wo_exam" else 17) for c in C.PERTURBATIONS for s in ("wo_exam", "w_exam")}
    correct.update({("original", "wo_exam"): 18, ("original", "w_exam"): 18, ("shuffle_instructions", "wo_exam"): 2,
                    ("shuffle_instructions", "w_exam"): 17})
    english = runs_from(correct)
    got = C.measure(english, {}, [], conditions=CONDS, n_boot=300, seed=0)
    m = got["shuffle_instructions_largest_drop"]
    # drops: SI 80, others 20 -> effect 60 (instances 2..13 flip under SI only)
    assert m.effect == pytest.approx(60.0) and m.n_items == 20 and not m.degenerate
    assert m.ci_low > 0 and verdict(C.CLAIMS[0], m)[0] == "reproduced"
    # random instruction + examples (17/20) beats original without (18/20)? no: -5 points
    r = got["random_instruction_with_examples_beats_correct_without"]
    assert r.effect == pytest.approx(-5.0)
    # examples shrink drops: WO drop 20 vs W drop 5 for most (15); SI: 80 vs 5 (75) -> min 15
    assert got["examples_shrink_every_drop"].effect == pytest.approx(15.0)
    # word vs sentence level: all 20 -> 0; shuffle words not worse than the others -> 0
    assert got["sentence_level_less_than_word_level"].effect == pytest.approx(0.0)
    assert got["shuffle_words_worst_word_level"].effect == pytest.approx(0.0)
    assert verdict(C.CLAIMS[3], got["sentence_level_less_than_word_level"])[0] == "inconclusive"
    assert got["paraphrase_keeps_performance"] is None and got["no_demonstrations_larger_spread"] is None


def test_floor_is_degenerate():
    correct = {(c, s): 0 for c in CONDS for s in ("wo_exam", "w_exam")}
    got = C.measure(runs_from(correct), {}, [], conditions=CONDS, n_boot=50)
    m = got["shuffle_instructions_largest_drop"]
    assert m.degenerate and verdict(C.CLAIMS[0], m)[0] == "inconclusive"


def test_missing_conditions_give_no_measurement():
    got = C.measure(runs_from({("original", "wo_exam"): 5}), {}, [], conditions=["original"], n_boot=10)
    assert all(v is None for v in got.values())


def test_paraphrase_and_spread_by_hand():
    para = {c: [rec(i, i < k, task=t) for t in ("a", "b") for i in range(10)]
            for c, k in zip(C.PARA_CONDITIONS, (8, 8, 7, 9))}
    # DiversePrompt: task x has prompts scoring 100 and 0 (std 50); task y 100 and 100 (std 0)
    diverse = [rec(0, True, task="x", prompt_index=0), rec(0, False, task="x", prompt_index=1),
               rec(0, True, task="y", prompt_index=0), rec(0, True, task="y", prompt_index=1)]
    got = C.measure({}, para, diverse, conditions=["original"], n_boot=200)
    p = got["paraphrase_keeps_performance"]
    assert p.effect == pytest.approx(80.0 - 80.0) and p.n_items == 20
    s = got["no_demonstrations_larger_spread"]
    para_std = float(np.std([80, 80, 70, 90]))  # per task, over the four instructions (both tasks alike)
    assert s.effect == pytest.approx(25.0 - para_std) and s.n_items == 2


def test_paper_values_from_the_paper_tables():
    from pathlib import Path

    from wobble.report.cells import read_paper

    paper = Path(__file__).resolve().parents[1] / "paper" / "instructions"
    v = C.paper_values(read_paper(paper / "table4.csv"), read_paper(paper / "table7.csv"),
                       read_paper(paper / "table8.csv"))
    assert set(v) == {c.id for c in C.CLAIMS}
    assert v["shuffle_instructions_largest_drop"].startswith("14.6")  # 35.3 - 20.7 over the 12 categories
