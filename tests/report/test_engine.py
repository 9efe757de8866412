"""The measurement engine on hand-made tables: intervals over the declared unit (exact where the bootstrap has no
spread or few units, a cluster bootstrap whose replicates are enumerated by hand), a study cannot reach a finer
unit, preconditions that know their direction (the rule's truth table), gates read on every arm, existence claims
across models, and a claim measured on no model still in the ledger."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pytest

from wobble.report.engine import ClaimSpec, UnitTable, check_table, measure_all, measure_claim, row_id, study_prefix
from wobble.report.gates import Precondition, floor, mapped, read_gates
from wobble.report.intervals import MIN_CLUSTERS, Custom, Difference, Mean, estimate, share_interval
from wobble.report.rules import exists_verdict, explains, interval_verdict, resolve
from wobble.stats import bootstrap_indices, percentile_interval


def frame(rows: list[tuple], cols=("question", "model", "cell", "value")) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(cols))


def shares(per_unit: list[list[float]], model="m", cell="c", unit="question") -> pd.DataFrame:
    """One row per observation: unit i has the observations per_unit[i]."""
    return frame([(f"q{i}", model, cell, v) for i, vs in enumerate(per_unit) for v in vs],
                 cols=(unit, "model", "cell", "value"))


def spec(stat, **kw) -> ClaimSpec:
    base = dict(study="toy_study", id="c1", name="share above zero", quote="models do X", section="§3",
                paper_value="12%", statistic=stat, unit="question", min_units=5)
    return ClaimSpec(**{**base, **kw})


# ------------------------------------------------------------------ intervals over the declared unit
def test_exact_share_intervals_by_hand():
    lo, hi = share_interval([0] * 16)  # 0 of 16: high = 1 - 0.025^(1/16)
    assert lo == 0 and hi == pytest.approx(1 - 0.025 ** (1 / 16)) and round(hi, 3) == 0.206
    lo, hi = share_interval([1, 1] + [0] * 19)  # 2 of 21, the Clopper-Pearson table value
    assert (round(lo, 4), round(hi, 4)) == (0.0117, 0.3038)
    half = (np.log(2 / 0.05) / (2 * 40)) ** 0.5  # Hoeffding: 40 units each at 0.2, no spread yet a width
    assert share_interval([0.3] * 40) == pytest.approx((0.3 - half, 0.3 + half)) and round(half, 3) == 0.215
    assert share_interval([0.9] * 8) == pytest.approx((0.9 - (np.log(40) / 16) ** 0.5, 1.0))


def test_repeated_prompts_get_the_question_level_interval_not_the_prompt_level():
    t = shares([[0] * 10 for _ in range(16)])  # 16 questions x 10 shuffles, no mismatch anywhere
    e = estimate(t, "question", Mean("value"))
    assert e.n_units == 16 and (e.low, round(e.high, 3)) == (0, 0.206) and "Clopper" in e.method
    assert round(share_interval([0] * 160)[1], 4) == 0.0228  # what counting prompts would claim
    # the same table resampled over prompts would be a finer unit: the engine refuses it
    c = spec(Mean("value"))
    t["prompt"] = [f"p{i}" for i in range(len(t))]
    with pytest.raises(ValueError, match="finer unit"):
        check_table(c, UnitTable(t, unit="prompt"))


def test_a_study_cannot_hand_its_own_interval_or_mislabel_units():
    c = spec(Mean("value"), unit_attrs=("subject",), observation=("shuffle",))
    t = shares([[0, 1], [1, 1]])
    with pytest.raises(ValueError, match="carries an interval"):
        check_table(c, UnitTable(t.assign(ci_low=0.0, ci_high=1.0, subject="s", shuffle=[0, 1, 0, 1]), "question"))
    with pytest.raises(ValueError, match="not constant within a question"):
        check_table(c, UnitTable(t.assign(subject=["a", "b", "b", "b"], shuffle=[0, 1, 0, 1]), "question"))
    with pytest.raises(ValueError, match="repeated observations"):
        check_table(c, UnitTable(t.assign(subject="s", shuffle=[0, 0, 0, 1]), "question"))
    with pytest.raises(ValueError, match="lacks"):
        check_table(c, UnitTable(t, "question"))
    with pytest.raises(ValueError, match="declares unit 'question'"):
        check_table(spec(Mean("value")), UnitTable(t.rename(columns={"question": "task"}), "task"))


def test_a_tiny_cluster_bootstrap_enumerated_by_hand():
    # q0 = [1, 1], q1 = [0], q2 = [0, 0, 1]: unit means 1, 0, 1/3; row-pooled share 3/6
    t = shares([[1, 1], [0], [0, 0, 1]])
    draws = np.array([[0, 0, 0], [0, 1, 2], [1, 1, 2], [2, 0, 0]])
    assert Mean("value").replicates(t, "question", draws) == pytest.approx([1, 4 / 9, 1 / 9, 7 / 9])
    pooled = Custom(lambda f: f["value"].mean(), "row-pooled share")
    assert pooled.replicates(t, "question", draws) == pytest.approx([1, 3 / 6, 1 / 5, 5 / 7])  # rows travel
    units = Custom(lambda f: f["question"].nunique(), "distinct units")
    assert list(units.replicates(t, "question", draws)) == [3, 3, 3, 3]  # a unit drawn twice counts twice


def test_the_bootstrap_is_the_percentile_interval_of_seeded_unit_draws():
    per = [[1, 0]] * 20 + [[1, 1]] * 10 + [[0, 0]] * 10  # 40 questions: unit means 0.5, 1, 0
    t = shares(per)
    e = estimate(t, "question", Mean("value"), n_boot=200, seed=7)
    x = np.array([0.5] * 20 + [1.0] * 10 + [0.0] * 10)
    assert (e.low, e.high) == percentile_interval(x[bootstrap_indices(40, 200, 7)].mean(axis=1))
    assert e.point == 0.5 and e.method.startswith("cluster bootstrap over 40 questions")
    assert estimate(t, "question", Mean("value"), n_boot=200, seed=7) == e  # deterministic


def test_few_units_use_the_exact_interval_and_a_custom_statistic_cannot_decide():
    t = shares([[1]] * 2 + [[0]] * 19)  # 2 of 21 < MIN_CLUSTERS
    e = estimate(t, "question", Mean("value"))
    assert 21 < MIN_CLUSTERS and (round(e.low, 4), round(e.high, 4)) == (0.0117, 0.3038)
    c = estimate(t, "question", Custom(lambda f: f["value"].mean(), "pooled"))
    assert c.undecidable and "no exact interval" in c.undecidable
    d = pd.concat([shares([[0]] * 12, cell="a"), shares([[0]] * 12, cell="b")])  # 0 of 12 vs 0 of 12
    e = estimate(d, "question", Difference("value", "a", "b"))
    hi = share_interval([0] * 12, 0.975)[1]
    assert (e.low, e.high) == pytest.approx((-hi, hi)) and "97.5" in e.method


# ------------------------------------------------------------------ the rule, as a truth table
@pytest.mark.parametrize("alone, bias, kind, expected", [
    ("reproduced", "toward the null", "precondition", ("reproduced", "despite")),
    ("contradicted", "toward the null", "precondition", ("contradicted", "despite")),
    ("inconclusive", "toward the null", "precondition", ("not applicable", "would say inconclusive")),
    ("reproduced", "toward the claim", "precondition", ("not applicable", "would say reproduced")),
    ("contradicted", "toward the claim", "precondition", ("contradicted", "despite")),
    ("reproduced", "against the claim", "precondition", ("reproduced", "despite")),
    ("contradicted", "against the claim", "precondition", ("not applicable", "would say contradicted")),
    ("reproduced", "unknown", "precondition", ("not applicable", "would say reproduced")),
    ("contradicted", "unknown", "precondition", ("not applicable", "would say contradicted")),
    ("inconclusive", "unknown", "precondition", ("not applicable", "would say inconclusive")),
    ("reproduced", "unknown", "gate", ("inconclusive", "gated")),
    ("contradicted", "toward the null", "gate", ("contradicted", "despite")),
    ("inconclusive", "toward the claim", "gate", ("inconclusive", "gated")),
])
def test_resolve_truth_table(alone, bias, kind, expected):
    verdict, would, why = resolve(alone, [("room to fall", bias, kind)])
    assert verdict == expected[0] and expected[1] in why and would == alone


def test_resolve_without_failures_and_with_several():
    assert resolve("reproduced", []) == ("reproduced", "reproduced", "")
    v, _, why = resolve("contradicted", [("floor", "toward the null", "gate"), ("room", "toward the claim", "precondition")])
    assert (v, why) == ("contradicted", "contradicted despite floor, room")
    v, _, why = resolve("contradicted", [("floor", "unknown", "gate"), ("room", "against the claim", "precondition")])
    assert v == "not applicable"  # a failed precondition that explains it outranks a gate
    assert explains("unknown", "inconclusive") and not explains("toward the null", "reproduced")
    with pytest.raises(ValueError):
        explains("sideways", "reproduced")


def test_interval_verdict_and_existence_rule():
    assert interval_verdict(0.65, 0.7, 0.6, 1) == "reproduced" and interval_verdict(0.2, 0.4, 0.6, 1) == "contradicted"
    assert interval_verdict(0.5, 0.7, 0.6, 1) == "inconclusive" and interval_verdict(None, 1, 0, 1) == "inconclusive"
    assert exists_verdict(["contradicted", "reproduced", "inconclusive"])[0] == "reproduced"
    assert exists_verdict(["contradicted", "contradicted"])[0] == "inconclusive"  # not reached, not contradicted
    assert exists_verdict(["contradicted", "inconclusive"])[0] == "inconclusive"
    assert exists_verdict(["not applicable", "not applicable"])[0] == "not applicable"
    assert exists_verdict([]) == ("inconclusive", "not measured in this run")


# ------------------------------------------------------------------ gates on every arm, preconditions, scope
def _two_arms(b_value: float, n: int = 40) -> pd.DataFrame:
    """Arm a scores 0.5 or 0.7 (0.6 on average), arm b ``b_value`` on every question: a − b is decided."""
    rows = [(f"q{i}", "m", "a", 0.5 + 0.2 * (i % 2)) for i in range(n)] + [(f"q{i}", "m", "b", b_value)
                                                                          for i in range(n)]
    return frame(rows)


def test_a_floor_on_the_second_arm_gates_the_row():
    c = spec(Difference("value", "a", "b", "a − b"), gates=(floor(0.05, bias="unknown"),))
    t = _two_arms(0.0)
    assert all(r.passes for r in read_gates(c.gates, t, ["a"]))  # read on arm a alone, the row would be decided
    row = measure_claim(c, 1, UnitTable(t, "question"), ["m"])[0]
    assert row["verdict"] == "inconclusive" and row["would_be"] == "reproduced"
    assert row["reason"].startswith("gated — the interval alone would say reproduced; failed: floor in b")
    assert row["gate_figures"] == "a: floor 0.60; b: floor 0.00 ✗"
    assert measure_claim(c, 1, UnitTable(_two_arms(0.1), "question"), ["m"])[0]["verdict"] == "reproduced"


def test_a_precondition_that_cannot_explain_the_result_leaves_it_decided():
    room = Precondition("room to fall", "arm a above 0.7", "toward the null",
                        lambda f: (bool(f[f.cell == "a"].value.mean() > 0.7), f"a = {f[f.cell == 'a'].value.mean():.2f}"))
    c = spec(Difference("value", "a", "b"), direction=-1, preconditions=(room,))
    row = measure_claim(c, 1, UnitTable(_two_arms(0.1), "question"), ["m"])[0]
    assert row["verdict"] == "contradicted" and row["reason"].startswith("contradicted despite room to fall")
    assert row["precondition_note"] == "room to fall: not met (a = 0.60)" and row["applicable"] is False
    blind = spec(Difference("value", "a", "b"), direction=-1, preconditions=(
        Precondition("room to fall", "arm a above 0.7", "unknown", room.check),))
    row = measure_claim(blind, 1, UnitTable(_two_arms(0.1), "question"), ["m"])[0]
    assert (row["verdict"], row["would_be"]) == ("not applicable", "contradicted")


def test_a_claim_measured_on_no_model_still_has_its_rows():
    c = spec(Mean("value", "c"))
    rows = measure_claim(c, 2, None, ["qwen", "smol"])
    assert [(r["row_id"], r["verdict"], r["counted"]) for r in rows] == [
        ("ts-02-qwen", "inconclusive", True), ("ts-02-smol", "inconclusive", True)]
    assert all(r["reason"] == "not measured in this run" for r in rows)
    assert measure_claim(c, 2, UnitTable(shares([[0]] * 12), "question"), ["qwen"])[0]["reason"] == \
        "not measured in this run"  # the model is not in the table
    assert measure_claim(c, 2, None, [])[0]["counted"]
    only_a = measure_claim(spec(Difference("value", "a", "b")), 1,
                           UnitTable(frame([("q1", "m", "a", 1.0)]), "question"), ["m"])[0]
    assert only_a["reason"] == "not measured in this run: cells b not run"


def test_an_existence_claim_is_decided_across_models():
    def run(levels):
        def unit(k: int) -> list[int]:
            return [1] * k + [0] * (10 - k)

        t = pd.concat([shares([unit(round(10 * p) + (i % 3) - 1) for i in range(42)], model=m)
                       for m, p in levels.items()])  # 42 questions at p - 0.1, p, p + 0.1
        c = spec(Mean("value"), null=0.6, scope="exists")
        return measure_claim(c, 1, UnitTable(t, "question"), list(levels))

    rows = run({"big": 0.8, "small": 0.2})
    assert [(r["row_id"], r["verdict"], r["counted"]) for r in rows] == [
        ("ts-01-any", "reproduced", True), ("ts-01-big", "reproduced", False), ("ts-01-small", "contradicted", False)]
    assert rows[0]["effect"] == pytest.approx(0.8) and "big's" in rows[0]["note"]
    assert run({"a": 0.2, "b": 0.3})[0]["verdict"] == "inconclusive"  # not reached by the models run
    assert run({"a": 0.2, "b": 0.6})[0]["verdict"] == "inconclusive"


def test_row_ids_and_declarations():
    assert study_prefix("first_token") == "ft" and study_prefix("followup") == "fo"
    assert row_id("first_token", 3, "qwen05") == "ft-03-qwen05"
    assert row_id("icl_bias", 12, "Qwen2.5-0.5B-Instruct") == "ib-12-qwen2505binstruct"
    with pytest.raises(ValueError, match="freeze"):
        spec(Mean("value"), freeze="last tuesday")
    with pytest.raises(ValueError, match="scope"):
        spec(Mean("value"), scope="some")
    with pytest.raises(ValueError, match="bias"):
        Precondition("p", "t", "sideways", lambda f: (True, ""))
    assert mapped().test == "share at least"
    assert len(measure_all([spec(Mean("value")), spec(Mean("value"), id="c2")], {}, ["m"])) == 2


def test_a_claim_in_points_never_takes_a_share_interval():
    """Scores in points that happen to be all 0 or 1 in a cell stay points: Student t, not Clopper-Pearson."""
    from wobble.report.engine import _measured

    frame = pd.DataFrame({"task": [f"t{i}" for i in range(12)], "model": "m", "cell": "a",
                          "value": [0.0, 1.0] * 6})
    pts = ClaimSpec("s", "c", "c", "q", "§1", "1", Mean("value", cell="a"), "task", scale="points", min_units=5)
    shr = ClaimSpec("s", "c", "c", "q", "§1", "1", Mean("value", cell="a"), "task", scale="share", min_units=5)
    assert _measured(pts, "m", frame, 200, 0)["interval"].startswith("Student t")
    assert _measured(shr, "m", frame, 200, 0)["interval"].startswith("Clopper")


def test_a_row_the_papers_own_effect_fails_is_not_decided():
    """Where the paper's own effect on the run's cells falls on the wrong side, the row cannot test the claim."""
    frame = pd.DataFrame({"task": [f"t{i}" for i in range(40)], "model": "m", "cell": "a",
                          "value": [3.0 + (i % 3) for i in range(40)]})
    c = ClaimSpec("s", "c", "c", "q", "§1", "1", Mean("value", cell="a"), "task", scale="points")
    ok = measure_claim(c, 1, UnitTable(frame, "task"), ["m"], paper_effect=2.0)[0]
    bad = measure_claim(c, 1, UnitTable(frame, "task"), ["m"], paper_effect=-2.0)[0]
    assert ok["verdict"] == "reproduced" and ok["paper_verdict"] == "reproduced"
    assert bad["verdict"] == "inconclusive" and bad["would_be"] == "reproduced"
    assert bad["reason"].startswith("not testable here: the paper's own effect on these cells, -2, gives contradicted")


def test_a_thin_arm_is_gated_in_that_cell_only():
    from wobble.report.gates import enough_units

    frame = pd.DataFrame({"item": ["i1", "i2", "i3", "i1"], "cell": ["a", "a", "a", "b"]})
    readings = read_gates([enough_units(3, "item")], frame, ["a", "b"])
    assert [(r.cell, r.figure, r.passes) for r in readings] == [("a", 3.0, True), ("b", 1.0, False)]


def test_a_paper_effect_per_model_decides_each_models_row_and_the_existence_row_takes_the_furthest():
    frame = pd.DataFrame({"task": [f"t{i}" for i in range(40)] * 2, "model": ["a"] * 40 + ["b"] * 40,
                          "cell": "x", "value": [3.0 + (i % 3) for i in range(80)]})
    per = ClaimSpec("s", "c", "c", "q", "§1", "1", Mean("value", cell="x"), "task", scale="points")
    rows = measure_claim(per, 1, UnitTable(frame, "task"), ["a", "b"], paper_effect={"a": 2.0, "b": -1.0})
    assert [(r["model"], r["paper_verdict"], r["verdict"]) for r in rows] == [
        ("a", "reproduced", "reproduced"), ("b", "contradicted", "inconclusive")]
    ex = replace(per, scope="exists")
    top = measure_claim(ex, 1, UnitTable(frame, "task"), ["a", "b"], paper_effect={"a": 2.0, "b": -1.0})[0]
    assert top["paper_effect"] == 2.0 and top["paper_verdict"] == "reproduced"


def test_an_existence_claims_members_are_measured_at_a_bonferroni_level():
    frame = pd.DataFrame({"task": [f"t{i}" for i in range(40)] * 2, "model": ["a"] * 40 + ["b"] * 40,
                          "cell": "x", "value": [float(i % 5) for i in range(80)]})
    ex = ClaimSpec("s", "c", "c", "q", "§1", "1", Mean("value", cell="x"), "task", scale="points", scope="exists")
    per = replace(ex, scope="per_model")
    wide = measure_claim(ex, 1, UnitTable(frame, "task"), ["a", "b"])[1]
    plain = measure_claim(per, 1, UnitTable(frame, "task"), ["a", "b"])[0]
    assert wide["ci_low"] < plain["ci_low"] and wide["ci_high"] > plain["ci_high"]
    assert "97.50% interval (Bonferroni over the models)" in wide["interval"]


def test_a_statistic_over_groups_decides_the_interval_route_on_its_smallest_group():
    @dataclass(frozen=True)
    class Groups(Mean):
        def decision_units(self, frame, unit):
            return int(frame.groupby("cell")[unit].nunique().min())

    frame = pd.DataFrame({"task": [f"t{i}" for i in range(45)], "model": "m",
                          "cell": ["a"] * 35 + ["b"] * 10, "value": [float(i % 4) for i in range(45)]})
    assert estimate(frame, "task", Mean("value")).method.startswith("cluster bootstrap")
    assert estimate(frame, "task", Groups("value")).method.startswith("Student t")


def test_extreme_takes_each_parts_bonferroni_interval_on_both_routes():
    from wobble.report.intervals import Extreme

    rng = np.random.default_rng(3)
    n = 40
    frame = pd.DataFrame({"task": [f"t{i}" for i in range(n)] * 2, "model": "m", "cell": ["a"] * n + ["b"] * n,
                          "value": np.r_[rng.normal(1.0, 1.0, n), rng.normal(2.0, 1.0, n)]})
    a, b = Mean("value", cell="a"), Mean("value", cell="b")
    ext = Extreme((a, b), pick="min")
    got = estimate(frame, "task", ext, n_boot=500, seed=1)
    draws = bootstrap_indices(n, 500, 1)
    la, ha = percentile_interval(a.replicates(frame, "task", draws), 0.975)
    lb, hb = percentile_interval(b.replicates(frame, "task", draws), 0.975)
    assert got.point == pytest.approx(min(a.point(frame, "task"), b.point(frame, "task")))
    assert (got.low, got.high) == pytest.approx((min(la, lb), min(ha, hb)))
    few = frame[frame["task"].isin([f"t{i}" for i in range(12)])]
    exact = estimate(few, "task", ext)
    ta, tb = (Mean("value", cell=c).exact(few, "task", 0.975)[0] for c in "ab")
    assert (exact.low, exact.high) == pytest.approx((min(ta[0], tb[0]), min(ta[1], tb[1])))
    assert "Bonferroni" in exact.method


def test_rows_say_what_their_sample_could_detect():
    from wobble.report.engine import _power

    row = {"ci_low": 0.1, "ci_high": 0.5, "n_items": 16, "paper_effect": 0.3, "null": 0.0}
    out = _power(row)
    assert out["detectable_effect"] == pytest.approx(2.8 * 0.4 / 3.92)  # 0.2857
    assert out["detects_paper_effect"] is True and out["items_needed"] is None
    small = _power({**row, "paper_effect": 0.1})
    assert small["detects_paper_effect"] is False and small["items_needed"] == 131  # ceil(16 * (0.2857/0.1)^2)
