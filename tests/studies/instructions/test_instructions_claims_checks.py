"""The instructions claims' floor and ceiling checks on every arm, with the side their failure favours, and the
gates read in every cell, on hand-made unit tables (numbers worked out by hand in the comments)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from wobble.report.engine import UnitTable, measure_claim
from wobble.studies.instructions import claims as C
from wobble.studies.instructions import claims_measure as M
from wobble.studies.instructions.claims_measure import COLUMNS

from instructions_claims_tables import CONDS, SI, SPEC, SW, rec, table


ORDER = {c.id: i for i, c in enumerate(C.CLAIMS, 1)}


def row(claim_id: str, frame: pd.DataFrame, models=("m",), spec=None) -> dict:
    spec = spec or SPEC[claim_id]
    return measure_claim(spec, ORDER[claim_id], UnitTable(frame, "task"), list(models), n_boot=200)[0]


# ------------------------------------------------------------------------------------------ floors and ceilings


@pytest.mark.parametrize("sign, pinned, direction, bias", [
    (-1, -1, 1, "toward the claim"),   # the arm the claim predicts low, at the floor
    (1, -1, 1, "against the claim"),   # the arm the claim predicts high, at the floor
    (1, 1, 1, "toward the claim"),     # ... at the ceiling
    (-1, -1, -1, "against the claim"),
    (1, -1, -1, "toward the claim"),   # DiversePrompt at the floor under "works poorly"
    (0, -1, 1, "toward the null"),
    (0, 1, -1, "toward the null"),
])
def test_a_bound_between_task_sets_favours_the_side_it_pins(sign, pinned, direction, bias):
    assert M.bound_bias(sign, pinned, direction) == bias


def test_every_claims_arms_cover_its_cells_on_the_side_its_weights_say():
    for cid, arms in C.claim_arms().items():
        spec = SPEC[cid]
        cells = [c for a in arms for c in a.cells]
        assert sorted(cells) == sorted(spec.cells), cid  # every cell in exactly one arm
        side = {c: a.sign for a in arms for c in a.cells}
        stat = spec.statistic
        if isinstance(stat, M.TwoSets):
            assert {side[c] for c in stat.a} == {1} and {side[c] for c in stat.b} == {-1}
            assert all(a.spread == stat.spread for a in arms)
        else:
            parts = getattr(stat, "parts", (stat,))
            if cid in C.CLOSE_WHO:  # |drop|: the drop, then its negative
                assert [w for _, w in parts[1].weights] == [-w for _, w in parts[0].weights]
                parts = parts[:1]
            for part in parts:
                for c, w in part.weights:
                    assert side[c] == int(np.sign(round(w, 12))) or (w == 0 and side[c] == 0), (cid, c, w)
        names = [p.name for p in spec.preconditions][:2 * len(arms)]
        assert names == [f"premise: {a.label} off the floor" if a.premise and b == "floor" else f"{b} in {a.label}"
                         for a in arms for b in ("floor", "ceiling")]


def test_the_floor_and_ceiling_checks_read_each_cells_mean_over_tasks():
    floor, ceiling = C.arm_checks([M.Arm("x", ("a", "b", "c"), 1)], 1)
    # a: mean 27.5; b: 20 / 4 = 5.0, not above 5 (no room for a drop); c: 96, not below 95
    f = table({"a": [0, 0, 10, 100], "b": [0, 0, 0, 20], "c": [100, 100, 90, 94]})
    assert floor.check(f) == (False, "mean over tasks above 5: a 27.5, b 5.0 ✗, c 96.0")
    assert ceiling.check(f) == (False, "mean over tasks below 95: a 27.5, b 5.0, c 96.0 ✗")
    assert floor.check(table({"a": [0, 0, 0, 21], "b": [6], "c": [50]}))[0]  # 5.25 > 5: met
    # no bias declared (two task sets): from the arm's side
    assert (floor.bias, ceiling.bias) == ("against the claim", "toward the claim")
    assert floor.text == "the mean over tasks lies above 5 in each of x's cells"
    spread = C.arm_checks([M.Arm("x", ("a",), 1, spread=True)], 1)
    assert [p.bias for p in spread] == ["against the claim"] * 2  # either bound pins a spread low
    # the kind of contrast declares it: both bounds alike
    assert [p.bias for p in C.arm_checks([M.Arm("x", ("a",), 1, bias="toward the null")], 1)] == \
        ["toward the null"] * 2
    # a premise replaces the arm's floor check, of unknown bias
    premise, top = C.arm_checks([M.Arm("o", ("a",), 0, bias="toward the null", premise=True)], 1)
    assert (premise.name, premise.bias, top.name, top.bias) == (
        "premise: o off the floor", "unknown", "ceiling in o", "toward the null")
    assert premise.check(table({"a": [0, 0, 0, 20]})) == (False, "mean over tasks above 5: a 5.0 ✗")


SI_CONDS = ["original", "delete_words", SW, SI]


def _si_frame(original: list[float], si: list[float]) -> pd.DataFrame:
    n = len(original)
    return table({"original/WO": original, "delete_words/WO": [50.0 + i % 3 for i in range(n)],
                  "shuffle_words/WO": [45.0 + i % 4 for i in range(n)], "shuffle_instructions/WO": si})


def test_the_target_arm_at_the_floor_leaves_a_reproduced_row_decided():
    spec = C.claims(SI_CONDS)[0]
    # 12 tasks: shuffle instructions/WO at the floor (30 on one task: mean 2.5); delete words 50-52, shuffle words
    # 45-48: every contrast score(p) − score(SI) is about 47, far above 0. A bound on the same tasks can tie two
    # arms, never reverse them (toward the null), so it cannot have produced "reproduced"
    f = _si_frame([60.0] * 12, [30.0] + [0.0] * 11)
    r = row("shuffle_instructions_largest_drop", f, spec=spec)
    assert r["ci_low"] > 0 and r["verdict"] == "reproduced"
    assert r["reason"].startswith("reproduced despite floor in shuffle_instructions/WO")
    assert "floor in shuffle_instructions/WO: not met (mean over tasks above 5: shuffle_instructions/WO 2.5 ✗)" \
        in r["precondition_note"]
    # the sign-based bias of before (the arm the claim predicts low, at the floor: toward the claim) left it NA
    old = replace(spec, preconditions=tuple(replace(p, bias="toward the claim") if p.name.startswith("floor in shuffle")
                                            else p for p in spec.preconditions))
    assert row("shuffle_instructions_largest_drop", f, spec=old)["verdict"] == "not applicable"


def test_a_drop_claim_without_a_working_original_instruction_is_not_applicable():
    spec = C.claims(SI_CONDS)[0]
    # original/WO at the floor (mean 4): each other perturbation 4-5, SI 0; the contrasts (4-7 points) are decided
    # by the interval alone, but a drop presupposes a working instruction (§3.1): the premise, of unknown bias
    f = table({"original/WO": [4.0] * 12, "delete_words/WO": [4.0 + i % 2 for i in range(12)],
               "shuffle_words/WO": [4.0 + i % 3 for i in range(12)], "shuffle_instructions/WO": [0.0] * 12})
    r = row("shuffle_instructions_largest_drop", f, spec=spec)
    assert (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "premise: original/WO off the floor (unknown)" in r["reason"]
    for cid in ("shuffle_words_worst_word_level", "sentence_level_less_than_word_level",
                "demonstrations_minimize_perturbations"):
        assert [p.bias for p in SPEC[cid].preconditions if p.name == "premise: original/WO off the floor"] == \
            ["unknown"], cid
    for cid in ("examples_robust_all_perturbations", "random_instruction_with_examples_beats_correct_without"):
        assert not any(p.name.startswith("premise") for p in SPEC[cid].preconditions), cid


TRAINED = {"m": "superni_train"}


def _plm_frame(dp_scores: list[float], para_scores: list[float], control: list[float]) -> pd.DataFrame:
    dp = table({"diverse": dp_scores}, prefix="d")
    para = table({c: para_scores for c in C.PARA}, prefix="p")
    return pd.concat([dp, para, table({"original/WO": control}, prefix="e")], ignore_index=True)


def _plm(frame: pd.DataFrame, trained=TRAINED) -> dict:
    spec = C.claims(CONDS, trained)[8]
    tables = C.unit_tables(frame, [spec])
    return measure_claim(spec, 9, tables[spec.id], ["m"], n_boot=200)[0]


def test_plm_prompts_at_the_floor_are_not_read_as_working_poorly():
    para = [30.0 + (i % 3) for i in range(23)]
    working = [20.0] * 12  # English original/WO: human-written instructions without examples work (mean 20)
    # DiversePrompt 10 on 7 of 24 tasks (mean 2.9: the floor); Para-Instructions 30-32: −27.1, decided below 0 by
    # the interval alone, but the floor on the DiversePrompt side can produce it (toward the claim)
    r = _plm(_plm_frame([10.0] * 7 + [0.0] * 17, para, working))
    assert r["effect"] == pytest.approx(7 * 10 / 24 - 31.0 + 1 / 23) and r["would_be"] == "reproduced"
    assert r["verdict"] == "not applicable" and r["n_items"] == 47  # the control's tasks are not resampled
    assert r["reason"].startswith("not applicable — the interval alone would say reproduced; failed: floor in "
                                  "DiversePrompt (toward the claim)")
    # DiversePrompt off the floor: decided
    r = _plm(_plm_frame([10.0] * 24, para, working))
    assert (r["verdict"], r["effect"]) == ("reproduced", pytest.approx(10 - 31 + 1 / 23))
    # the control at the floor too (mean 2.5): without demonstrations every instruction is at the floor, so
    # "works poorly" is what a floor shows
    r = _plm(_plm_frame([10.0] * 24, para, [30.0] + [0.0] * 11))
    assert (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "control: original/WO off the floor (toward the claim)" in r["reason"]
    assert "control: original/WO off the floor: not met (mean over tasks above 5: original/WO 2.5 ✗)" \
        in r["precondition_note"]
    # a model not finetuned on SuperNI's human-oriented instructions: the claim does not speak to it
    r = _plm(_plm_frame([10.0] * 24, para, working), trained={"m": None})
    assert (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "trained on superni_train (unknown)" in r["reason"]
    assert "trained on superni_train: not met (finetune data: none declared ✗)" in r["precondition_note"]


def test_the_spread_claim_needs_as_many_instances_per_version_on_both_arms():
    # DiversePrompt: 12 tasks, 2 prompts of 1 instance (0, 60: std 42.4); Para-Instructions: 12 tasks, 3 new
    # instructions of 2 instances (50, 50, 60 and 40, 60, 50: std 5.77, 10)
    dp = pd.DataFrame([(f"d{t}", "m", "diverse", v, "e0", 1, x, 1.0, 0.0, 1.0) for t in range(12)
                       for v, x in (("0", 0.0 + t % 2), ("1", 60.0))], columns=COLUMNS)
    para = pd.DataFrame([(f"p{t}", "m", c, c, i, 1, x, 1.0, 0.0, 1.0) for t in range(12)
                         for c, xs in zip(C.PARA, ((50, 50), (50, 50), (40, 60), (70, 50))) for i, x in zip("ab", xs)],
                        columns=COLUMNS)
    f = pd.concat([dp, para], ignore_index=True)
    assert M.instances_per_version(f, ["diverse"]) == 1.0 and M.instances_per_version(f, C.PARA[1:]) == 2.0
    r = row("no_demonstrations_larger_spread", f)
    # a version mean over 1 instance varies more than one over 2: the spread favours DiversePrompt
    assert r["would_be"] == "reproduced" and r["verdict"] == "not applicable"
    assert "instances per version in DiversePrompt (toward the claim)" in r["reason"]
    assert "instances per version: DiversePrompt 1, the new instructions 2 ✗" in r["precondition_note"]
    pre = {p.name: p for p in SPEC["no_demonstrations_larger_spread"].preconditions}
    other = pre["instances per version in the new instructions"]
    assert other.bias == "against the claim" and other.check(f) == (
        True, "instances per version: the new instructions 2, DiversePrompt 1")


def _random_frame(si_w: list[float], original_wo: list[float]) -> pd.DataFrame:
    return table({"shuffle_instructions/W": si_w, "original/WO": original_wo})


def test_a_bound_on_a_paired_difference_cannot_explain_a_decided_row():
    # original/WO at the floor (8 on 20 of 33 tasks: mean 4.85); SI with examples 30-33: the interval says
    # reproduced, but a floor on the subtracted arm favours the claim (its tasks at 0 can only add to the
    # difference), so it can explain a reproduced row: not applicable
    original = [8.0] * 20 + [0.0] * 13
    si = [30.0 + (i % 4) for i in range(33)]
    r = row("random_instruction_with_examples_beats_correct_without", _random_frame(si, original))
    assert r["effect"] == pytest.approx((sum(si) - sum(original)) / 33) and r["ci_low"] > 0
    assert r["verdict"] == "not applicable" and "would say reproduced" in r["reason"]
    assert "original/WO 4.8, 13/33 tasks at 0 ✗" in r["precondition_note"]
    # both at the floor and SI below: contradicted despite both floors
    r = row("random_instruction_with_examples_beats_correct_without", _random_frame([0.0] * 33, original))
    assert r["verdict"] == "contradicted" and r["ci_high"] < 0
    assert r["reason"].startswith("contradicted despite floor in shuffle_instructions/W, floor in original/WO")


def test_a_bound_on_a_close_claim_favours_it_and_on_demonstrations_follows_the_setting():
    bias = {c.id: {p.name: p.bias for p in c.preconditions} for c in C.CLAIMS}
    assert set(bias["examples_robust_all_perturbations"].values()) == {"toward the claim"}
    assert set(bias["paraphrase_keeps_performance"].values()) == {"toward the claim"}
    # W-EXAM drops at most 1 point, original/W at the ceiling (96-98): "robust" is what a ceiling shows
    conds = ["original", SW, SI]
    spec = C.claims(conds)[3]
    f = table({"original/W": [96.0 + i % 3 for i in range(12)], "shuffle_words/W": [95.0 + i % 3 for i in range(12)],
               "shuffle_instructions/W": [96.0 + i % 2 for i in range(12)]})
    r = row("examples_robust_all_perturbations", f, spec=spec)
    assert r["ci_high"] < 5 and (r["verdict"], r["would_be"]) == ("not applicable", "reproduced")
    assert "ceiling in original/W (toward the claim)" in r["reason"]


def test_gates_are_read_in_every_cell():
    f = _random_frame([30.0 + i % 5 for i in range(20)], [10.0 + i % 3 for i in range(20)])
    f.loc[(f["cell"] == "original/WO") & (f["task"].isin([f"t{i}" for i in range(3)])), "truncated"] = 1.0
    r = row("random_instruction_with_examples_beats_correct_without", f)
    # 3 of 20 original/WO answers cut: 0.15 > 0.1, a gate of unknown bias: gated
    assert r["gate_figures"] == ("shuffle_instructions/W: degenerate 1.00, truncated 0.00; original/WO: degenerate "
                                 "1.00, truncated 0.15 ✗")
    assert r["verdict"] == "inconclusive" and r["reason"].startswith("gated — the interval alone would say reproduced")
    f["truncated"] = 0.0
    assert row("random_instruction_with_examples_beats_correct_without", f)["verdict"] == "reproduced"


def test_the_cut_gate_reads_rouge_l_answers_only():
    gate = C.GATES[1]
    # 4 answers: 2 EM (NaN: not read), 2 ROUGE-L of which 1 cut -> 1 / 2
    cell = pd.DataFrame({"truncated": [np.nan, np.nan, 1.0, 0.0], "rouge_l": [0.0, 0.0, 1.0, 1.0]})
    assert gate.figure(cell) == 0.5 and not gate.passes(gate.figure(cell))
    # only EM answers: nothing to cut (passes); ROUGE-L answers whose stop was not recorded: cannot pass
    assert gate.figure(cell.iloc[:2]) == 0.0 and gate.passes(0.0)
    unknown = pd.DataFrame({"truncated": [np.nan, np.nan], "rouge_l": [1.0, 1.0]})
    assert np.isnan(gate.figure(unknown)) and not gate.passes(gate.figure(unknown))
    assert gate.describe() == ("truncated: share of a cell's ROUGE-L answers cut at the token cap at most 0.1 "
                               "(failure biases unknown)")
    # on the unit frame: an EM answer at the cap is not counted, a ROUGE-L one is
    em_cut = [rec(0, False, finish_reason="length"), rec(1, True)]
    rouge = [rec(2, True, metric="rougeL", references=["a"], output="a", finish_reason=x) for x in ("stop", "stop")]
    f = M.unit_frame({("original", "wo_exam"): em_cut + rouge}, "m", "english")
    assert gate.figure(f) == 0.0
