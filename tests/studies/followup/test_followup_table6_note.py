"""Table 6's note names the prompt variants ours averages (wobble.studies.followup.tables.prompts_ran), and its
plain-mechanism row averages the same prompts as its mitigation rows (``followup.mitigation_variants``); Table 19,
per prompt, keeps every prompt the plain mechanism ran."""

from pathlib import Path

import pandas as pd

from wobble.studies.followup.tables import build_table6, build_table19, prompts_ran


def test_the_note_names_one_prompt_several_or_none():
    assert prompts_ran(["A", "A"]).startswith("prompt A only (followup.mitigation_variants, else followup.variants)")
    assert prompts_ran(["C", "A", "B", "A"]) == "prompts A, B, C"
    assert prompts_ran([]) == "none: this run has no mitigation rows"


def _summary(tmp_path) -> str:
    """A summary where prompt B ran without mitigations (variants [A, B], mitigation_variants [A])."""
    base = {"model": "m", "dataset": "strategyqa", "temperature": "0.5", "form": "direct", "prompt_set": "",
            "round": "1", "question_type": "closed-ended", "paper_dataset": "StrategyQA", "task_type": "Commonsense",
            "before": 80.0, "after": 40.0, "error_rate_pct": 0.0, "e_to_r_rate_pct": 0.0}
    rows = [{**base, "run": "direct_CA_none", "mitigation": "none", "variant": "A", "modification": 40.0,
             "modification_rate_pct": 50.0},
            {**base, "run": "direct_CB_none", "mitigation": "none", "variant": "B", "modification": 8.0,
             "modification_rate_pct": 10.0},
            {**base, "run": "direct_CA_cot_both", "mitigation": "cot_both", "variant": "A", "modification": 16.0,
             "modification_rate_pct": 20.0}]
    pd.DataFrame(rows).to_csv(tmp_path / "summary.csv", index=False)
    return str(tmp_path / "summary.csv")


PAPER = Path(__file__).resolve().parents[3] / "paper" / "followup"
CONTEXT = {"models": ["m"], "temperatures": {"m": 0.5}, "paper_models": {}}


def test_the_plain_mechanism_row_averages_only_the_prompts_the_mitigations_ran_with(tmp_path):
    """Table 6 leaves prompt B out of the plain row, which would otherwise be the mean of A (50 %) and B (10 %)."""
    table = build_table6({"summaries": [_summary(tmp_path)], "paper_table6": str(PAPER / "table6.csv")}, CONTEXT)
    ours = table.tidy[(table.tidy["side"] == "ours") & (table.tidy["measure"] == "modification_rate_pct")]
    assert dict(zip(ours["mitigation"], ours["value"])) == {
        "FOLLOW-UP QUESTIONING MECHANISM": 50.0, "w/ Zero-shot-CoT (both the initial and follow-up inputs)": 20.0}
    assert any("ours prompt A only" in n for n in table.notes)


def test_table19_keeps_the_plain_mechanism_of_every_prompt(tmp_path):
    table = build_table19({"summaries": [_summary(tmp_path)], "paper_table19": str(PAPER / "table19.csv")}, CONTEXT)
    ours = table.tidy[(table.tidy["side"] == "ours") & (table.tidy["measure"] == "modification_rate_pct")]
    assert sorted(zip(ours["mitigation"], ours["prompt"], ours["value"])) == [
        ("FOLLOW-UP QUESTIONING MECHANISM", "A", 50.0), ("FOLLOW-UP QUESTIONING MECHANISM", "B", 10.0),
        ("w/ Zero-shot-CoT (both the initial and follow-up inputs)", "A", 20.0)]
