"""Per-model scorecards: each study's rows on fixtures (values, intervals, paper's nearest number) and the writer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from wobble.report.cells import read_paper
from wobble.report.scorecard import Row, display_frame, write_scorecard
from wobble.studies import get

REPO = Path(__file__).resolve().parents[2]
FT = REPO / "tests" / "fixtures" / "first_token"


def test_first_token_rows_from_the_metrics():
    from wobble.studies.first_token.scorecard import rows

    config = {"first_token": {"models": ["fixture-a"], "temperature": 0.0, "temperatures": [1.0],
                              "paper_models": {"fixture-a": "llama2-70b-chat"}}}
    got = {(r.quantity, r.condition): r for r in rows({"metrics": FT / "metrics.jsonl",
                                                       "paper_mapping": FT / "paper_mapping.jsonl"}, config, "fixture-a")}
    mid = got[("first-token/text mismatch", "Medium constraint")]
    # fixture-a at 0.0: mismatch 0.25 [0.10, 0.40] over 4 questions; the paper's Llama2-70b at Middle: mean of
    # 83/414 and 124/414 = 25.0 %
    assert (mid.value, mid.ci_low, mid.ci_high, mid.n, mid.unit) == (25.0, 10.0, 40.0, 4, "%")
    assert mid.paper == "25.0 (Llama2-70b-Chat)"
    assert got[("text answer refuses", "Medium constraint")].value == pytest.approx(10.0)
    assert got[("text names no option", "Medium constraint")].paper == ""
    assert ("first-token/text mismatch", "Low constraint") in got


def test_icl_bias_rows_from_table2(tmp_path):
    from wobble.studies.icl_bias.scorecard import rows

    (tmp_path / "t2.csv").write_text(
        "steer_towards,intervention,model,paper_model,value,ci_low,ci_high,paper\n"
        "h1,Baseline,m,Davinci,46.875,41.5,51.9,39.5\n"
        "h2,Instruction,m,Davinci,-1.25,-3.0,0.5,-2.4\n"
        "h1,Baseline,other,Text-Davinci-002,50,45,55,59.1\n")
    got = rows({"table2": tmp_path / "t2.csv"}, {}, "m")
    assert [(r.quantity, r.value, r.unit, r.paper) for r in got] == [
        ("accuracy of h1 (baseline: task feature)", 46.875, "%", "39.5 (Davinci)"),
        ("Instruction effect on h2-accuracy", -1.25, "points", "-2.4 (Davinci)")]


def test_followup_rows_from_the_summary(tmp_path):
    from wobble.studies.followup.scorecard import rows

    cols = ("model,dataset,run,temperature,condition,form,mitigation,prompt_set,round,question_type,variant,n,"
            "modification_rate_pct,modification_rate_pct_lo,modification_rate_pct_hi,paper_dataset")
    (tmp_path / "s.csv").write_text(cols + "\n"
        "m,strategyqa,direct_CA_none,0.5,direct_CA_none,direct,none,,1,closed-ended,A,16,40.0,20.0,60.0,StrategyQA\n"
        "m,strategyqa,direct_CA_none,0,direct_CA_none,direct,none,,1,closed-ended,A,16,10.0,0.0,30.0,StrategyQA\n"
        "m,strategyqa,direct_CA_cot_both,0.5,direct_CA_cot_both,direct,cot_both,,1,closed-ended,A,16,5,0,9,StrategyQA\n"
        "m,strategyqa,progressive_A_none,0.5,progressive_CA.OA.LA_none,progressive,none,A,3,leading,A,16,70,50,90,StrategyQA\n"
        # neither Table 16's emotional disturbance nor wobble's neutral control is a row
        "m,strategyqa,direct_EA_none,0.5,direct_EA_none,direct,none,,1,emotional,A,16,30.0,10.0,50.0,StrategyQA\n"
        "m,strategyqa,direct_NA_none,0.5,direct_NA_none,direct,none,,1,neutral,A,16,20.0,0.0,40.0,StrategyQA\n")
    config = {"followup": {"models": ["m"], "paper_models": {}, "temperature": 0.5, "model_temperature": {}}}
    paper = REPO / "paper" / "followup"
    got = rows({"summary": tmp_path / "s.csv", "paper_direct": paper / "table8.csv",
                "paper_progressive": paper / "table9.csv"}, config, "m")
    assert [(r.condition, r.value, r.ci_low, r.n) for r in got] == [
        ("Direct Form, StrategyQA", 40.0, 20.0, 16), ("Progressive Form, StrategyQA", 70.0, 50.0, 16)]
    t8 = read_paper(paper / "table8.csv")
    want = t8[(t8["dataset"] == "StrategyQA") & (t8["prompt"] == "A") & (t8["question_type"] == "closed-ended")]
    assert got[0].paper == f"{float(want.iloc[0]['modification_rate_pct']):.1f} (ChatGPT)"


def test_instructions_paper_statistic():
    from wobble.studies.instructions.scorecard import _paper_stats

    t4 = pd.read_csv(REPO / "paper" / "instructions" / "table4.csv", dtype=str)
    orig, drop = _paper_stats(t4, "wo_exam", ["shuffle_instructions"])
    t = t4[t4["setting"] == "INSTRU-WO-EXAM"].copy()
    t["v"] = pd.to_numeric(t["mean"], errors="coerce")
    m = t.groupby("condition")["v"].mean()
    assert orig == pytest.approx(m["original"]) and drop == pytest.approx(m["original"] - m["shuffle_instructions"])


def test_every_study_declares_a_scorecard_and_the_writer(tmp_path):
    for name in ("instructions", "first_token", "icl_bias", "followup"):
        assert get(name).scorecard is not None
    rows = [Row("s", "q", "c", 12.345, 10.0, 15.0, "%", 20, "30.0 (P)"), Row("s", "e", "c", 0.5, None, None, "nats",
                                                                            None, "")]
    df = display_frame(rows)
    assert list(df["ours [95% CI]"]) == ["12.3 [10.0, 15.0]", "0.50"] and list(df["paper (nearest)"]) == ["30.0 (P)", "–"]
    write_scorecard("m", "m (tiny)", rows, tmp_path / "m", ["followup"])
    md = (tmp_path / "m.md").read_text()
    assert md.startswith("# Scorecard: m") and "Not in this scorecard: followup" in md
    assert list(pd.read_csv(tmp_path / "m.csv")["model"]) == ["m", "m"]
    # a model key with dots (Path.with_suffix would write qwen2.5-coder-0.md: the default run failed so)
    key = "qwen2.5-coder-0.5b-instruct"
    paths = write_scorecard(key, key, rows, tmp_path / key, [])
    assert sorted(p.name for p in paths) == [f"{key}.csv", f"{key}.md", f"{key}.tex"]
    assert all(p.is_file() for p in paths)


def test_number_reads_csv_cells_and_gives_none_for_empty_or_nan():
    from wobble.report.scorecard import number

    assert number("12.5") == 12.5 and number(3) == 3.0
    assert number("") is None and number(None) is None and number("n/a") is None and number(float("nan")) is None
