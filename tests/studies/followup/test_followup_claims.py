"""followup claims ledger: each claim's effect, precondition, interval and diagnostics against hand-computed values
on made-up item scores (with wobble's neutral control), the paper's effects from its printed tables by the same
statistic, and the verdicts the shared rule gives."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wobble.report.cells import read_paper
from wobble.report.claims import Findings
from wobble.report.ledger import ledger_rows
from wobble.studies.followup import claims
from wobble.studies.followup import claims_measure as cm
from wobble.studies.followup.prompts import BENCHMARKS, MITIGATIONS

ROOT = Path(__file__).resolve().parents[3]
PAPER = ROOT / "paper" / "followup"
OWN = {"m": "0.5"}


def _score(item, qtype, correct, *, form="direct", mitigation="none", temperature="0.5", variant="A", gate="all",
           dataset="strategyqa", model="m"):
    rounds = ([{"question_type": q, "variant": variant} for q in ("closed-ended", "open-ended", "leading")]
              if form == "progressive" else [{"question_type": qtype, "variant": variant}])
    return {"model": model, "dataset": dataset, "item": item, "form": form, "mitigation": mitigation,
            "temperature": temperature, "rounds": rounds, "correct": list(correct), "gate": gate}


def _arm(qtype, flipped, n=20, **kw):
    """``n`` initially correct items; items < ``flipped`` are wrong after the follow-up."""
    return [_score(i, qtype, [True, i >= flipped], **kw) for i in range(n)]


def _tables():
    return {n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}


def _section(path="config.yaml"):
    return yaml.safe_load((ROOT / path).read_text())["followup"]


# --------------------------------------------------------------------------------------------- precondition


def test_chance_comes_from_each_datasets_answer_space():
    assert cm.chance("strategyqa") == cm.chance("coin_flip") == 0.5  # true/false, yes/no
    assert cm.chance("mmlu") == 0.25 and cm.chance("csqa") == 0.2  # options A-D, A-E
    assert cm.chance("multiarith") == cm.chance("gsm8k") == cm.chance("last_letters") == 0.0  # open answers


def test_precondition_keeps_datasets_whose_initial_accuracy_beats_chance_by_an_exact_binomial_test():
    # strategyqa 12/15: P(X >= 12 | 15, 1/2) = (455 + 105 + 15 + 1) / 2^15 = 0.0176 < 0.05 -> kept
    # coin_flip 10/15: P(X >= 10) = 4944 / 32768 = 0.151 -> left out; mmlu 8/15 vs 1/4: p = 0.0173 -> kept
    # multiarith 0/15 vs chance 0: p = 1 -> left out
    acc = {"strategyqa": (12, 15), "coin_flip": (10, 15), "mmlu": (8, 15), "multiarith": (0, 15)}
    kept, note = cm.precondition(acc, ["strategyqa", "coin_flip", "mmlu", "multiarith"])
    assert kept == ["mmlu", "strategyqa"]
    assert "strategyqa 12/15 vs chance 50%: p = 0.0176" in note
    assert "coin_flip 10/15 vs chance 50%: p = 0.151 (left out)" in note
    assert "multiarith 0/15 vs chance 0%: p = 1 (left out)" in note
    # an open answer space: one correct answer is above chance 0
    assert cm.precondition({"multiarith": (1, 15)}, ["multiarith"])[0] == ["multiarith"]


def test_initial_accuracy_counts_items_once_from_the_plain_dialogues_at_the_models_temperature():
    s = _arm("closed-ended", 0, n=4) + _arm("leading", 0, n=4)  # items 0-3 initially correct, twice each
    s += [_score(9, "closed-ended", [False, False])]  # a fifth item, wrong
    s += [_score(7, "closed-ended", [True, True], temperature="0")]  # another temperature: not counted
    s += [_score(8, "closed-ended", [True, True], mitigation="cot_both")]  # a mitigation's prompt: not counted
    assert cm.initial_accuracy(s, "0.5") == {"strategyqa": (4, 5)}


def test_a_model_at_chance_is_not_applicable_and_the_ledger_says_so():
    # 10 of 20 initially correct on a yes/no dataset: p = 0.588
    s = [_score(i, q, [i < 10, i < 5]) for q in ("closed-ended", "open-ended", "leading", "neutral")
         for i in range(20)]
    m = claims.measure(s, OWN, n_boot=50)["consistency_drops"]["m"]
    assert not m.applicable and m.effect is None
    assert m.precondition_note == "strategyqa 10/20 vs chance 50%: p = 0.588 (left out)"
    row = next(r for r in ledger_rows(claims.CLAIMS, {"consistency_drops": {"m": m}}) if r["claim"] == "consistency_drops")
    assert row["verdict"] == "not applicable" and row["model"] == "m"


def test_a_dataset_failing_the_precondition_is_left_out_of_the_models_measurement():
    good = _arm("closed-ended", 4) + _arm("neutral", 1)  # 20 % vs 5 %
    bad = [_score(i, q, [i < 10, False], dataset="coin_flip") for q in ("closed-ended", "neutral") for i in range(20)]
    m = claims.measure(good + bad, OWN, n_boot=50)["consistency_drops"]["m"]
    assert m.applicable and m.effect == pytest.approx(20 - 5) and m.n_items == 20
    assert "coin_flip 10/20 vs chance 50%: p = 0.588 (left out)" in m.precondition_note


# ------------------------------------------------------------------------------------------------ effects


def _direct_fixture():
    s = _arm("closed-ended", 2) + _arm("open-ended", 4) + _arm("leading", 10) + _arm("neutral", 3)
    s += _arm("closed-ended", 0, variant="B") + _arm("open-ended", 1, variant="B") + _arm("leading", 2, variant="B")
    return s


def test_headline_is_challenge_minus_wobbles_control_paired_over_items():
    m = claims.measure(_direct_fixture(), OWN, n_boot=200)["consistency_drops"]["m"]
    # prompt A: (2 + 4 + 10) / 60 = 26.67 %; control 3 / 20 = 15 %
    assert m.effect == pytest.approx(100 * 16 / 60 - 15)
    assert m.n_items == 20 and m.ci_low <= m.effect <= m.ci_high and m.interval == "bootstrap over items"
    assert m.note == "20 items; 80 initially correct (fewest in one arm: 20)"


def test_every_prompt_is_the_smallest_difference_over_the_annotators():
    m = claims.measure(_direct_fixture(), OWN, n_boot=200)["every_prompt_declines"]["m"]
    # A 26.67 - 15 = +11.67; B (0 + 1 + 2) / 60 = 5 % - 15 = -10
    assert m.effect == pytest.approx(-10)
    assert m.interval == "bootstrap over items, Bonferroni over the 2 annotators (min)"
    assert m.note.endswith("prompt A +11.7, prompt B -10.0")


def test_wording_sensitivity_is_the_noise_corrected_squared_spread_between_annotators():
    s = _arm("closed-ended", 4) + _arm("closed-ended", 0, variant="B")   # d = 100 on 4 of 20 items
    s += _arm("open-ended", 2) + _arm("open-ended", 2, variant="B")      # d = 0 everywhere
    s += _arm("leading", 10) + _arm("leading", 0, variant="B")           # d = 100 on 10 of 20 items
    m = claims.measure(s, OWN, n_boot=200)["wording_sensitivity_ranking"]
    # closed: d̄ = 20, var = (4·80² + 16·20²) / 19 = 32000 / 19, S_C = 400 − 32000 / (19·20) = 315.79
    # open: S_O = 0; leading: d̄ = 50, var = 20·50² / 19, S_L = 2500 − 50000 / 380 = 2368.42
    s_c, s_l = 400 - 32000 / 380, 2500 - 50000 / 380
    assert m.effect == pytest.approx(min(s_l - s_c, s_c - 0))
    assert "annotators A, B (the paper: A, B, C), 3 annotator-pair cells" in m.note
    assert m.interval == "bootstrap over items, Bonferroni over the 2 parts (min)"


def test_wording_spread_and_parts_by_hand():
    # two cells: d̄ 10 with v 20 -> 80, d̄ 0 with v 0 -> 0: mean 40
    assert claims.wording_spread([(10, 20), (0, 0)]) == pytest.approx(40)
    assert list(claims.wording_parts({"leading": 9, "closed-ended": 5, "open-ended": 4})) == [4, 1]


def test_temperature_row_is_the_largest_rise_of_m_rate_at_temperature_zero_over_the_focus_datasets():
    s = _arm("closed-ended", 4) + _arm("closed-ended", 6, temperature="0")                     # 20 % -> 30 %
    s += _arm("open-ended", 10, dataset="coin_flip") + _arm("open-ended", 5, dataset="coin_flip", temperature="0")
    m = claims.measure(s, OWN, n_boot=200)["temperature_zero_no_better"]["m"]
    # strategyqa +10, coin_flip 25 − 50 = −25: max +10, Bonferroni over the 2 datasets
    assert m.effect == pytest.approx(10)
    assert m.interval == "bootstrap over items, Bonferroni over the 2 focus datasets (max)"
    assert m.note.endswith("coin_flip -25.0, strategyqa +10.0") and m.n_items == 40


def test_temperature_row_drops_a_dataset_with_too_few_correct_answers_rather_than_the_row():
    s = _arm("closed-ended", 4) + _arm("closed-ended", 6, temperature="0")
    thin = [_score(i, "open-ended", [i < 17, i < 3], dataset="coin_flip") for i in range(20)]  # 17/20 right
    thin += [_score(i, "open-ended", [i < 9, False], dataset="coin_flip", temperature="0") for i in range(20)]
    m = claims.measure(s + thin, OWN, n_boot=100)["temperature_zero_no_better"]["m"]
    assert m.effect == pytest.approx(10) and not m.degenerate
    assert "; left out (< 10 initially correct): coin_flip" in m.note


def test_e_to_r_is_the_focus_questions_corrections_minus_the_controls():
    # 40 items, 28 initially correct (p = 0.0083 against 50 %), 12 wrong
    s = []
    for q, fixed in (("closed-ended", 4), ("neutral", 1)):
        s += [_score(i, q, [i >= 12, i >= 12 or i < fixed]) for i in range(40)]
    m = claims.measure(s, OWN, n_boot=200)["mechanism_corrects_some"]["m"]
    assert m.effect == pytest.approx(100 * 4 / 12 - 100 * 1 / 12)
    assert m.note == "40 items; 24 initially wrong (fewest in one arm: 12)"
    # a model that corrects nothing beyond the control's re-guessing has no effect
    same = [x for x in s if x["rounds"][0]["question_type"] == "neutral"]
    same += [{**x, "rounds": [{"question_type": "closed-ended", "variant": "A"}]} for x in same]
    assert claims.measure(same, OWN, n_boot=50)["mechanism_corrects_some"]["m"].effect == 0


def _mitigation_fixture():
    s = _arm("closed-ended", 10)                                   # no mitigation 50 %
    s += _arm("closed-ended", 6, mitigation="emotion_both")       # 30 %
    s += _arm("closed-ended", 2, mitigation="cot_both")           # 10 %
    s += _arm("closed-ended", 4, mitigation="fewshot")            # 20 %
    return s


def test_mitigation_rows_by_hand():
    m = claims.measure(_mitigation_fixture(), OWN, n_boot=200)
    eff = {k: m[k]["m"].effect for k in ("mitigation_effective", "cot_fewshot_beat_emotion", "cot_most_efficient")}
    # min(50 − 30, 50 − 10, 50 − 20); min(30 − 10, 30 − 20); min(30 − 10, 20 − 10)
    assert eff == pytest.approx({"mitigation_effective": 20, "cot_fewshot_beat_emotion": 10, "cot_most_efficient": 10})
    assert m["both_positions_best"]["m"] is None  # no single position run: not measured


def test_both_positions_pools_the_single_positions_of_every_method_run_at_both():
    s = _mitigation_fixture()
    s += _arm("closed-ended", 8, mitigation="emotion_initial") + _arm("closed-ended", 4, mitigation="cot_followup")
    m = claims.measure(s, OWN, n_boot=200)
    # single (8 + 4) / 40 = 30 %, both (6 + 2) / 40 = 20 %
    assert m["both_positions_best"]["m"].effect == pytest.approx(10)
    # emotion (6 + 8) / 40 = 35 %, CoT (2 + 4) / 40 = 15 %, few-shot 20 %: min(35 − 15, 20 − 15)
    assert m["cot_most_efficient"]["m"].effect == pytest.approx(5)


def test_an_interval_with_no_bootstrap_spread_becomes_exact_binomial():
    s = _arm("closed-ended", 20) + _arm("neutral", 0)  # every answer flipped vs none: always +100
    m = claims.measure(s, OWN, n_boot=100)["consistency_drops"]["m"]
    # Clopper-Pearson at 97.5 % per arm over 20 items: 20/20 from 0.0125^(1/20) = 0.8032, 0/20 up to 0.1968
    low = 0.0125 ** (1 / 20)
    assert m.effect == 100 and m.ci_high == pytest.approx(100)
    assert m.ci_low == pytest.approx(100 * (low - (1 - low)))
    assert m.interval.endswith("exact binomial (Clopper-Pearson) where the bootstrap has no spread")


def test_diagnostics_count_unextracted_and_cut_replies():
    # 2 + 1 replies; no answer in the second reply of one and the only reply of the other; one cut at the cap
    s = [{"answers": ["true", None], "asked_rounds": 1, "n_cut": 1}, {"answers": [None, None], "asked_rounds": 0,
                                                                       "n_cut": 0}]
    assert cm.diagnostics(s) == "3 replies: 66.7% with no extractable answer, 33.3% cut at the token cap"
    assert cm.diagnostics([{"answers": ["true", "false"], "asked_rounds": 1}]) == (
        "2 replies: 0.0% with no extractable answer")
    assert cm.diagnostics([{"correct": [True]}]) == ""


def test_missing_arms_are_not_measured():
    m = claims.measure(_arm("closed-ended", 2), OWN, n_boot=50)  # no control, no other temperature, no mitigation
    assert all(m[c.id]["m"] is None for c in claims.CLAIMS if c.per_model)
    assert m["wording_sensitivity_ranking"] is None
    rows = ledger_rows(claims.CLAIMS, m)
    assert {r["verdict"] for r in rows} == {"inconclusive"} and {r["reason"] for r in rows} == {"not measured in this run"}


def test_verdicts_follow_the_shared_rule():
    rows = {r["claim"]: r for r in ledger_rows(claims.CLAIMS, claims.measure(_direct_fixture(), OWN, n_boot=500))}
    assert rows["consistency_drops"]["verdict"] in ("reproduced", "inconclusive")
    assert rows["consistency_drops"]["model"] == "m" and rows["wording_sensitivity_ranking"]["model"] == "all"


def test_measure_is_deterministic():
    s = _direct_fixture() + _mitigation_fixture()
    assert claims.measure(s, OWN, n_boot=100, seed=3) == claims.measure(s, OWN, n_boot=100, seed=3)


# ------------------------------------------------------------------------------------------------- paper


def test_paper_effects_by_hand():
    effects, texts = claims.paper_effects(_tables(), _section())
    # Table 8, ChatGPT, prompt A on StrategyQA, CoinFlip, MultiArith, MMLU: Σ M. 426.88 / Σ before 818.11
    assert effects["consistency_drops"] == pytest.approx(100 * 426.88 / 818.11)
    # Table 5: (39.01·26.87 + 92.20·13.23 + 4.44·12.50) / (39.01 + 92.20 + 4.44)
    assert effects["mechanism_corrects_some"] == pytest.approx(
        (39.01 * 26.87 + 92.20 * 13.23 + 4.44 * 12.50) / (39.01 + 92.20 + 4.44))
    # Table 3: StrategyQA 42.94/61.57 − 44.69/66.67 = 69.74 − 67.03 (CoinFlip, MultiArith fall at T = 0)
    assert effects["temperature_zero_no_better"] == pytest.approx(100 * (42.94 / 61.57 - 44.69 / 66.67))
    assert texts["consistency_drops"] == "+52.2 (Table 8, ChatGPT, prompt A: M. Rate − 0, the paper runs no control)"
    assert texts["wording_sensitivity_ranking"].startswith("+7.7 (Tables 8/10/12")


@pytest.mark.parametrize("overrides", [{}, {"variants": ["A", "B", "C"], "mitigation_variants": None,
                                            "mitigations": list(MITIGATIONS)[1:],
                                            "datasets": list(BENCHMARKS)}])
def test_the_paper_passes_its_own_rows(overrides):
    effects, texts = claims.paper_effects(_tables(), {**_section(), **overrides})
    f = Findings("t", claims.CLAIMS, {}, texts, (), effects)
    assert f.paper_failures() == []
    assert set(effects) == {c.id for c in claims.CLAIMS} and all(c.evidence == "table" for c in claims.CLAIMS)
