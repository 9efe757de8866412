"""followup claims ledger against the paper: the paper's effect per model by hand from its tables, the paper
passing its own rows by the same statistic, its cells restricted to the run's, and the findings() wiring."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from wobble.report.cells import read_paper
from wobble.report.findings import Ledger
from wobble.studies.followup import claims
from wobble.studies.followup import claims_paper as cp
from wobble.studies.followup.prompts import BENCHMARKS, MITIGATIONS

from followup_claims_scores import OWN, PAPER, ROOT, _arm, _rows, _score


def _tables():
    return {n: read_paper(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}


def _section(path="config.yaml"):
    return yaml.safe_load((ROOT / path).read_text())["followup"]


# ------------------------------------------------------------------------------------------------- paper


def test_paper_effects_by_hand():
    effects, texts = claims.paper_effects(_tables(), _section())
    tol = 2e-3  # one pseudo-item per 0.1 % of a dataset
    # Table 8, ChatGPT, prompt A on StrategyQA, CoinFlip, MultiArith, MMLU: Σ M. 426.88 / Σ before 818.11
    assert effects["consistency_drops"] == pytest.approx(426.88 / 818.11, abs=tol)
    # Table 5, the largest over its three models: ChatGPT 17.1 %, PaLM2-Bison (34.79·40.59 + 49.80·18.07 +
    # 5.56·0) / 90.15 = 25.6 %, Vicuna-13B 18.4 %
    assert effects["mechanism_corrects_some"] == pytest.approx(
        (34.79 * 40.59 + 49.80 * 18.07) / (34.79 + 49.80 + 5.56) / 100, abs=tol)
    # Table 3 over all three of the paper's models, whichever the config's paper_models names: ChatGPT's largest
    # rise is StrategyQA's +0.027, Vicuna-13B's MultiArith's +0.092 (1e-4 is its T = 0), PaLM2-Bison's MultiArith's
    # 86.11 / 93.89 − 22.22 / 94.44 = +0.682 (StrategyQA +0.548, CoinFlip −0.049)
    assert effects["temperature_zero_no_better"] == pytest.approx(86.11 / 93.89 - 22.22 / 94.44, abs=tol)
    assert texts["temperature_zero_no_better"] == ("+0.682 (PaLM2-Bison on MultiArith: Table 3, T = 0 vs own, the "
                                                   "largest of its 3 models; the run's datasets)")
    only_chatgpt = claims.paper_effects(_tables(), {**_section(), "paper_models": {}})[0]
    assert only_chatgpt["temperature_zero_no_better"] == effects["temperature_zero_no_better"]
    assert texts["mechanism_corrects_some"].startswith("+0.256 (PaLM2-Bison: Table 5, the largest of its 3 models; ")
    assert texts["consistency_drops"] == ("+0.522 (Table 8, ChatGPT, prompt A; the paper runs no control (0); the "
                                          "run's datasets)")
    # every cell of Figure 4 (eight datasets, A/B/C) gives +7.7; the run's four datasets and pair A-B +16.8
    full = claims.paper_effects(_tables(), {**_section(), "datasets": list(BENCHMARKS), "variants": ["A", "B", "C"]})
    assert full[1]["wording_sensitivity_ranking"].startswith("+7.7 points² (Tables 8/10/12")
    assert texts["wording_sensitivity_ranking"].startswith("+16.8 points²")
    assert "over its eight datasets and A/B/C only" in texts["wording_sensitivity_ranking"]
    assert claims.wording_effect(_tables(), ["coin_flip"], ["A", "B"])[0] < 0  # not the paper's ranking there


def test_the_paper_effect_is_each_models_on_the_datasets_its_row_keeps():
    # Table 19, ChatGPT, prompt A, MultiArith alone: EmotionPrompt 16.67/17.14 % = 0.171, Zero-shot-CoT 0.064,
    # Few-shot (4-shot) 20.00/20.00 % = 0.200: min(0.171 − 0.064, 0.171 − 0.200) = −0.028
    effects, texts = claims.paper_effects(_tables(), _section(), {"cot_fewshot_beat_emotion": {"m": ("multiarith",)}})
    assert effects["cot_fewshot_beat_emotion"]["m"] == pytest.approx(0.1714 - 0.2000, abs=2e-3)
    assert texts["cot_fewshot_beat_emotion"]["m"].startswith("-0.028 (Table 19, ChatGPT")
    # a model above chance on MultiArith alone, whose own interval says reproduced: not testable there
    s = [_score(i, "leading", [True, i >= 40], mitigation="emotion_both", dataset="multiarith") for i in range(40)]
    s += [_score(i, "leading", [True, True], mitigation=m, dataset="multiarith") for m in ("cot_both", "fewshot")
          for i in range(40)]
    s += [_score(i, "leading", [True, True], dataset="multiarith") for i in range(40)]  # the plain runs
    row = _rows(s, paper=(_tables(), _section()))["fo-07-m"]
    assert row["effect"] == pytest.approx(1.0) and row["would_be"] == "reproduced"
    assert (row["verdict"], row["paper_verdict"]) == ("inconclusive", "contradicted")
    assert row["reason"].startswith("not testable here: the paper's own effect on these cells, -0.0284")
    assert row["paper"].startswith("-0.028 (") and row["paper"].endswith("; multiarith)")
    # on the run's three focus datasets the paper's effect is +0.126: a row there is testable
    assert claims.paper_effects(_tables(), _section())[0]["cot_fewshot_beat_emotion"] == pytest.approx(0.126, abs=2e-3)


@pytest.mark.parametrize("overrides", [{}, {"variants": ["A", "B", "C"], "mitigation_variants": None,
                                            "mitigations": list(MITIGATIONS)[1:], "datasets": list(BENCHMARKS)}])
def test_the_paper_passes_its_own_rows(overrides):
    rows = claims.measure([], OWN, paper=(_tables(), {**_section(), **overrides}), n_boot=10)
    assert {r["claim"]: r["paper_verdict"] for r in rows} == {c.id: "reproduced" for c in claims.CLAIMS}
    assert all(r["paper"] for r in rows)


def test_the_temperature_rows_take_the_largest_over_the_papers_three_models_and_name_it():
    # the rows keep StrategyQA and CoinFlip (no MultiArith run): PaLM2-Bison's StrategyQA, Table 3's 60.91 % at
    # T = 0 against 6.08 % at its own 0.4: 406 / 667 − 42 / 694 pseudo-items = +0.548 (Vicuna-13B's best there,
    # CoinFlip, +0.069; ChatGPT's StrategyQA +0.027)
    s = _arm("closed-ended", 4) + _arm("closed-ended", 6, temperature="0")
    s += _arm("open-ended", 10, dataset="coin_flip") + _arm("open-ended", 5, dataset="coin_flip", temperature="0")
    rows = _rows(s, paper=(_tables(), _section()))
    text = ("+0.548 (PaLM2-Bison on StrategyQA: Table 3, T = 0 vs own, the largest of its 3 models; coin_flip, "
            "strategyqa)")
    for rid in ("fo-04-any", "fo-04-m"):
        assert rows[rid]["paper_effect"] == pytest.approx(406 / 667 - 42 / 694, abs=1e-9), rid
        assert rows[rid]["paper"] == text and rows[rid]["paper_verdict"] == "reproduced", rid
    assert len(text) <= 120  # the short table's cell, whole
    # one model's frames: no name; over parts that are not datasets: the model alone
    t3 = _tables()[3]
    one = [("PaLM2-Bison", cp.pseudo_items(cp.temperature_arms(t3, ["strategyqa", "coin_flip"], "PaLM2-Bison")))]
    stat = claims.CLAIMS[3].statistic
    assert cp.largest(stat, 1, one) == (pytest.approx(406 / 667 - 42 / 694), "")
    two = [("Vicuna-13B", cp.pseudo_items(cp.temperature_arms(t3, ["coin_flip"], "Vicuna-13B"))), *one]
    assert cp.largest(stat, 1, two)[1] == "PaLM2-Bison on StrategyQA"
    assert cp.largest(stat, -1, two) == (pytest.approx(512 / 522 - 414 / 454), "Vicuna-13B on CoinFlip")


def test_pseudo_items_of_the_papers_cells():
    t = cp.pseudo_items({"a": (np.array([1.25, np.nan]), np.array([5.0, 3.0]))})
    assert len(t) == 50 and t["flip"].sum() == 12  # 10·5 items, round(10·1.25) flips; the "?" cell left out
    assert t["item"].is_unique and set(t["cell"]) == {"a"}


def test_paper_restricts_to_the_runs_cells_and_falls_back_to_all():
    t8 = _tables()[8]
    one = cp.direct_arms(t8, ["strategyqa"], ["A"], False)
    assert len(one["challenge"][0]) == 3  # StrategyQA's three question types at prompt A
    none = cp.direct_arms(t8, [], ["A"], False)
    assert len(none["challenge"][0]) == 24  # eight datasets
    keys = {k.split(":")[0] for k in cp.mitigation_arms(_tables()[19], ["strategyqa"], ["A"], [], False)}
    assert keys == set(MITIGATIONS)
    assert set(cp.temperature_arms(_tables()[3], ["coin_flip"], "Vicuna-13B")) == {"t0:coin_flip", "own:coin_flip"}


def test_a_paper_table_without_a_column_it_is_read_by_is_one_clear_error(tmp_path):
    from wobble.errors import DataError

    bad = tmp_path / "t3.csv"
    bad.write_text("model,dataset\nChatGPT,StrategyQA\n")
    inputs = {f"paper_table{n}": str(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES} | {"paper_table3": str(bad)}
    with pytest.raises(DataError, match="missing"):
        claims.read_tables(inputs)


# --------------------------------------------------------------------------------------------- findings()


def _config(n_items=5):
    return {"models": {"m": {"source": "tiny"}},
            "followup": {**_section(), "models": ["m"], "temperature": 0.5, "bootstrap": {"n": 40, "seed": 7},
                         "n_items": n_items, "model_temperature": {}}}


def _findings(tmp_path, monkeypatch, made_up, n_records):
    from wobble.io import write_jsonl
    from wobble.studies.followup import pipeline

    recs = [{"turns": [{"finish_reason": "stop"}, {"finish_reason": "length"}]} for _ in range(n_records)]
    write_jsonl(tmp_path / "d0.jsonl", recs)
    monkeypatch.setattr(pipeline, "scores", lambda records: [dict(s) for s in made_up])
    inputs = {"dialogues": [str(tmp_path / "d0.jsonl")],
              **{f"paper_table{n}": str(PAPER / f"table{n}.csv") for n in claims.PAPER_TABLES}}
    return claims.findings(inputs, _config())


def test_findings_returns_a_ledger_with_the_cut_replies_counted(tmp_path, monkeypatch):
    made_up = [{**x, "cut_turns": None} for x in _arm("closed-ended", 2) + _arm("neutral", 1)]
    f = _findings(tmp_path, monkeypatch, made_up, len(made_up))
    assert isinstance(f, Ledger) and f.title.startswith("Claims ledger: followup")
    row = f.rows()[0]
    assert row["row_id"] == "fo-01-m" and "truncated 1.00 ✗" in row["gate_figures"]  # the follow-up cut
    # the paper's effect on the one dataset the row keeps: Table 8, ChatGPT, StrategyQA, prompt A,
    # (44.69 + 42.65 + 51.38) / (66.67 + 67.54 + 66.52) = 0.691
    assert row["paper_verdict"] == "reproduced" and row["paper_effect"] == pytest.approx(138.72 / 200.73, abs=2e-3)
    assert row["paper"] == "+0.691 (Table 8, ChatGPT, prompt A; the paper runs no control (0); strategyqa)"
    assert f.notes[1].startswith("Control (wobble's, not the paper's)")
    # 5 items per dataset: a yes/no dataset needs 5 of 5 right (1/32 = 0.031; 4 of 5: 6/32 = 0.19)
    assert [n for n in f.notes if n.startswith("Above chance")][0].startswith(
        "Above chance (the precondition): a one-sided exact binomial test at p < 0.05 on 5 items per dataset, which "
        "needs at least 5 of 5 right at chance 50% (strategyqa, coin_flip)")
    unpaired = _findings(tmp_path, monkeypatch, made_up, 3)  # scores and records do not pair: cut unknown
    assert "truncated nan ✗" in unpaired.rows()[0]["gate_figures"]
