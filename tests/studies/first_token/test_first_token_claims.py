"""The first_token study's claims measured on hand-made labelled predictions (numbers worked out by hand in the
comments), their preconditions and wobble's position-bias control, and the paper passing its own rows."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from wobble.errors import DataError
from wobble.report.claims import Findings, verdict
from wobble.studies.first_token import claims as C
from wobble.studies.first_token import claims_counts as K
from wobble.studies.first_token.claims_measure import measure
from wobble.studies.first_token.metrics import mismatch_rate
from wobble.studies.first_token.table_parts import classifier_text, footnotes

REPO = Path(__file__).resolve().parents[3]
PAPER = REPO / "paper" / "first_token"
MAIN = "0.00"
OPTIONS = ("Yes", "No", "Refused")


def rec(q, level, shuffle, ft, tx, *, opens=False, letter=None, text_letter=None, t=0.0, model="m", finish="stop"):
    """One labelled prediction; ``opens``: the text starts with the first-token letter."""
    letter = letter or "ABC"[OPTIONS.index(ft)]
    text_letter = text_letter or (None if tx is None else "ABC"[OPTIONS.index(tx)])
    return {"question_uid": f"q{q:02d}", "model": model, "constraint": level, "shuffle": shuffle,
            "first_token_option": ft, "first_token_letter": letter, "text_option": tx, "text_letter": text_letter,
            "response": f"{letter}. {ft}" if opens else "Sure! I think so.", "gen_params": {"temperature": t},
            "finish_reason": finish}


def agree(q, level, shuffle=0, **kw):
    """Text and first token say "Yes", the text opening with the letter."""
    return rec(q, level, shuffle, "Yes", "Yes", opens=True, **kw)


def claim(cid):
    return next(c for c in C.CLAIMS if c.id == cid)


def measured(recs, cid, model="m", n_boot=200):
    return measure(recs, MAIN, n_boot=n_boot)[cid][model]


# ------------------------------------------------------------------------------------------ mismatch


def test_the_over_60_statistic_is_the_largest_level_not_the_pooled_rate_and_no_option_texts_count():
    recs = []
    for q in range(10):
        # Low: questions 0-5 name another option, question 6 names none, 7-9 agree -> 7/10 = 0.70
        tx = "No" if q < 6 else (None if q == 6 else "Yes")
        recs.append(rec(q, "low", 0, "Yes", tx, opens=tx == "Yes"))
        # Medium, High, Example: questions 0-1 mismatch -> 2/10 = 0.20 each; pooled would be 1.3/4 = 0.325
        for level in ("medium", "high", "example"):
            recs.append(rec(q, level, 0, "Yes", "No") if q < 2 else agree(q, level))
    m = measured(recs, "mismatch_over_60_percent")
    assert m.effect == pytest.approx(0.70) and m.n_items == 10 and m.applicable
    low = [(r["first_token_option"], r["text_option"]) for r in recs if r["constraint"] == "low"]
    assert mismatch_rate(low) == pytest.approx(0.70)  # Figure 2a's definition: the same cell rate
    assert "text names no option" in m.diagnostics and "position-bias control" in m.diagnostics


def test_a_model_that_opens_every_answer_with_the_letter_is_not_applicable():
    recs = [agree(q, level, s) for q in range(12) for level in K.LEVELS for s in range(2)]
    got = measure(recs, MAIN, n_boot=50)
    for cid in ("mismatch_over_60_percent", "mismatch_persists_when_constrained", "text_more_consistent",
                "refusal_major_reason_for_mismatch", "example_more_mismatch_than_high"):
        m = got[cid]["m"]
        assert not m.applicable and ("Low 0%" in m.precondition_note or cid.startswith("example")), cid
        assert "Example 0%" in m.precondition_note, cid
        assert verdict(claim(cid), m)[0] == "not applicable"


def test_can_disagree_needs_five_percent_not_opening_in_one_cell_and_the_papers_least_affected_model_meets_it():
    assert not K.can_disagree({"a": 0.049, "b": 0.0}) and K.can_disagree({"a": 0.0, "b": 0.05})
    # Mistral-7b-Instruct-v0.1's released mapping_result.json (mean over shuffles): not opening with the letter
    mistral_v01 = {"low": 0.131, "medium": 0.015, "high": 0.004, "example": 0.156}
    assert K.can_disagree(mistral_v01) and not K.can_disagree({"high": mistral_v01["high"]})
    assert not K.can_disagree({})


def test_persisting_mismatch_at_zero_gets_the_exact_binomial_interval():
    recs = []
    for q in range(20):
        recs.append(rec(q, "low", 0, "Yes", "No"))  # misaligned at Low: the precondition holds
        recs += [agree(q, "high"), agree(q, "example")]  # 0 of 20 at High and at Example
    m = measured(recs, "mismatch_persists_when_constrained")
    # min(0/20, 0/20) = 0; Clopper-Pearson for 0 of 20: [0, 1 - 0.025 ** (1 / 20)] = [0, 0.1684]
    assert m.effect == 0.0 and m.applicable
    assert (m.ci_low, m.ci_high) == pytest.approx((0.0, 0.16843), abs=1e-5)
    assert m.interval.startswith("exact binomial") and "0 of 20 prompts" in m.interval
    assert verdict(claim("mismatch_persists_when_constrained"), m)[0] == "inconclusive"  # contains 0.05


def test_steady_decrease_example_and_persistence_statistics_on_the_papers_released_numbers():
    # (Low, Medium, High, Example) mismatch % per model, the paper's released mapping_result.json (mean of 10)
    paper = {"Llama2-7b": (66.2, 60.8, 50.6, 52.7), "Llama2-13b": (63.3, 43.8, 42.4, 49.5),
             "Llama2-70b": (38.8, 18.4, 13.3, 51.2), "Mistral-v0.1": (8.4, 1.2, 0.4, 12.9),
             "Mistral-v0.2": (41.0, 24.9, 30.1, 20.1), "Mixtral": (48.6, 22.7, 18.8, 19.3)}
    dec = {m: K.steady_decrease(lo / 100, me / 100, hi / 100) for m, (lo, me, hi, _) in paper.items()}
    assert dec["Llama2-7b"] == pytest.approx(0.054)  # min(66.2 - 60.8, 60.8 - 50.6) = 5.4 points
    assert [m for m, d in dec.items() if d <= 0] == ["Mistral-v0.2"]  # the paper's stated exception
    ex = {m: K.difference(e, hi) for m, (_, _, hi, e) in paper.items()}
    assert [m for m, d in ex.items() if d <= 0] == ["Mistral-v0.2"]  # "five models out of six"
    per = {m: K.persisting(hi / 100, e / 100) for m, (_, _, hi, e) in paper.items()}
    assert [m for m, p in per.items() if p <= claim("mismatch_persists_when_constrained").null] == ["Mistral-v0.1"]


def test_steady_decrease_measured_by_hand():
    recs = []
    for q in range(10):
        # Low 6/10, Medium 4/10, High 1/10 -> min(0.6 - 0.4, 0.4 - 0.1) = 0.2
        for level, k in (("low", 6), ("medium", 4), ("high", 1)):
            recs.append(rec(q, level, 0, "Yes", "No") if q < k else agree(q, level))
        recs.append(agree(q, "example"))
    m = measured(recs, "mismatch_decreases_low_to_high")
    assert m.effect == pytest.approx(0.2) and m.applicable
    e = measured(recs, "example_more_mismatch_than_high")  # Example 0/10: cannot disagree there
    assert not e.applicable and "Example 0%" in e.precondition_note


# ------------------------------------------------------------------------------------------ refusal


def test_refusal_share_of_the_mismatches_by_hand_and_its_exact_bound_at_zero():
    recs = []
    for q in range(10):
        # Low: one refusing text (first token "Yes") and one other option -> 1 of the 2 mismatches is a refusal
        recs += [rec(q, "low", 0, "Yes", "Refused"), rec(q, "low", 1, "Yes", "No")]
        recs += [agree(q, "high", 0), rec(q, "high", 1, "Refused", "Refused")]  # agreeing refusals: no mismatch
    m = measured(recs, "refusal_major_reason_for_mismatch")
    assert m.effect == pytest.approx(0.5) and m.applicable  # 10 of 20 mismatches
    no_refusal = [dict(r, text_option="No", text_letter="B") if r["text_option"] == "Refused" and
                  r["constraint"] == "low" else r for r in recs]
    m = measured(no_refusal, "refusal_major_reason_for_mismatch")
    # 0 of 20 mismatches: Clopper-Pearson [0, 0.1684], entirely below the 0.25 threshold
    assert m.effect == 0.0 and m.ci_high == pytest.approx(0.16843, abs=1e-5)
    assert verdict(claim("refusal_major_reason_for_mismatch"), m)[0] == "contradicted"


def test_refusal_share_without_any_mismatch_is_undefined_not_zero():
    recs = [rec(q, "low", 0, "Yes", "Yes") for q in range(10)]  # not opening, but always agreeing
    m = measured(recs, "refusal_major_reason_for_mismatch")
    assert m.effect is None and "no mismatch" in m.note
    assert verdict(claim("refusal_major_reason_for_mismatch"), m)[0] == "inconclusive"


# ------------------------------------------------------------------------------------------ Example template


def test_pull_to_c_by_hand_and_a_first_token_pinned_to_one_letter_is_not_applicable():
    recs = []
    for q in range(12):
        # Example: first-token C on 1 of 2 shuffles; High: never -> 0.5 - 0.0 = 0.5
        recs += [rec(q, "example", 0, "Yes", "Yes", letter="C"), rec(q, "example", 1, "No", "No", letter="A"),
                 rec(q, "high", 0, "Yes", "Yes", letter="A"), rec(q, "high", 1, "No", "No", letter="B")]
    m = measured(recs, "example_pulls_first_token_to_C")
    assert m.effect == pytest.approx(0.5) and m.applicable and m.n_items == 12
    pinned = [dict(r, first_token_letter="A") for r in recs]
    m = measured(pinned, "example_pulls_first_token_to_C")
    assert not m.applicable and "High 'A' 100%, Example 'A' 100%" in m.precondition_note
    moved = [dict(r, first_token_letter="C" if r["constraint"] == "example" else "A") for r in recs]
    assert measured(moved, "example_pulls_first_token_to_C").applicable  # pinned to A, then pulled to C: applies


def test_text_more_evenly_distributed_than_the_first_token_under_example():
    recs = []
    for q in range(10):
        # first token "C" on both shuffles (letter entropy 0); text letters A and B (entropy ln 2)
        recs += [rec(q, "example", 0, "Yes", "Yes", letter="C", text_letter="A"),
                 rec(q, "example", 1, "No", "No", letter="C", text_letter="B")]
    m = measured(recs, "example_text_more_evenly_distributed")
    assert m.effect == pytest.approx(math.log(2)) and m.applicable and not m.degenerate
    assert K.letter_entropy({"A": 1, "B": 1, "C": 2}) == pytest.approx(1.5 * math.log(2))  # -2(1/4 ln 1/4) - 1/2 ln 1/2


# ------------------------------------------------------------------------------------------ consistency


def test_entropy_gap_by_hand():
    recs = []
    for q in range(10):
        # first token {Yes, No} over 2 shuffles -> ln 2; text {No, No} -> 0: gap ln 2 at Low
        recs += [rec(q, "low", 0, "Yes", "No"), rec(q, "low", 1, "No", "No")]
    m = measured(recs, "text_more_consistent")
    assert m.effect == pytest.approx(math.log(2)) and m.applicable


def test_mostly_unmapped_text_makes_the_entropy_rows_degenerate():
    recs = [rec(q, "low", s, "Yes", None if s else "No") for q in range(10) for s in range(3)]  # 1/3 mapped
    m = measured(recs, "text_more_consistent")
    assert m.degenerate and verdict(claim("text_more_consistent"), m)[0] == "inconclusive"


# ------------------------------------------------------------------------------------------ temperature


def test_temperature_rows_compare_the_highest_with_the_lowest_temperature_by_hand():
    recs = []
    for q in range(10):
        for s in range(2):
            # T=0: (Yes, Refused), (Yes, Yes) -> mismatch 1/2, refusal 1/2, text entropy ln 2; T=1.4: all agree
            recs.append(rec(q, "medium", s, "Yes", "Refused" if s == 0 else "Yes"))
            recs.append(agree(q, "medium", s, t=1.4))
    got = measure(recs, MAIN, n_boot=100)
    assert got["temperature_lowers_mismatch"]["m"].effect == pytest.approx(-0.5)
    assert got["temperature_lowers_refusal"]["m"].effect == pytest.approx(-0.5)
    assert got["temperature_worsens_consistency"]["m"].effect == pytest.approx(-math.log(2))
    assert got["temperature_lowers_refusal"]["m"].applicable  # refuses 50% >= 5% at T=0
    one = measure([r for r in recs if r["gen_params"]["temperature"] == 0.0], MAIN, n_boot=20)
    assert one["temperature_lowers_mismatch"]["m"].effect is None


def test_temperature_refusal_row_needs_room_to_fall():
    recs = [rec(q, "medium", 0, "Yes", "No", t=t) for q in range(10) for t in (0.0, 1.4)]  # never refuses
    m = measured(recs, "temperature_lowers_refusal")
    assert not m.applicable and "0%" in m.precondition_note


# ------------------------------------------------------------------------------------------ control


def test_position_control_sees_a_first_token_that_keeps_its_letter_across_shuffles():
    # the first token always says "A" while the option under A changes: position, not content; the text keeps
    # its option "Yes" as it moves from A to B: content
    recs = [rec(q, "low", s, OPTIONS[s % 2], "Yes", letter="A", text_letter="AB"[s]) for q in range(10)
            for s in range(2)]
    t = K.model_tables(recs, MAIN, n_boot=10, seed=0)["m"]
    text = K.position_control(t, [K.cell("low", MAIN)])
    assert "'A' on 100% of prompts" in text and "letter rather than its option in 100%" in text
    assert text.endswith("the text keeps its letter in 0%")


# ------------------------------------------------------------------------------------------ paper, inputs, notes


def _paper_paths():
    if not PAPER.is_dir():
        pytest.skip("paper CSVs not present")
    return {f"paper_{f}": str(PAPER / f"{f}.csv") for f in ("figure2", "figure3", "figure7", "table3")}


def test_the_paper_passes_its_own_rows_computed_from_its_csvs():
    effects, values = C.paper_effects(_paper_paths())
    # largest stated mismatch cell 66.2% (Llama2-7b-Chat); 85% - 32.1% = 0.529; Table 3's 21 cells: mean gap 0.187
    assert effects == pytest.approx({"mismatch_over_60_percent": 0.662, "example_pulls_first_token_to_C": 0.529,
                                     "text_more_consistent": 0.18714}, abs=1e-5)
    assert Findings("t", C.CLAIMS, {}, values, (), effects).paper_failures() == []
    assert {c.id for c in C.CLAIMS if c.evidence == "table"} == set(effects)


def test_findings_reads_every_temperature_and_builds_a_row_per_model(tmp_path):
    recs = [r for m in ("a", "b") for q in range(10)
            for r in (rec(q, "low", 0, "Yes", "No", model=m), agree(q, "high", model=m),
                      rec(q, "medium", 0, "Yes", "No", model=m), rec(q, "medium", 0, "Yes", "Yes", model=m, t=0.7))]
    paths = []
    for m in ("a", "b"):
        for t in (0.0, 0.7):
            p = tmp_path / f"{m}_{t}.jsonl"
            p.write_text("".join(json.dumps(r) + "\n" for r in recs
                                 if r["model"] == m and r["gen_params"]["temperature"] == t))
            paths.append(str(p))
    cfg = {"models": {"a": {"source": "tiny"}, "b": {"source": "tiny"}},
           "first_token": {"models": ["a", "b"], "n_questions": 10, "n_shuffles": 1, "temperature": 0.0,
                           "temperatures": [0.7],
                           "sweep_constraints": ["medium"], "bootstrap": {"n": 50, "seed": 0},
                           "classifier": "auto"}}
    f = C.findings({"labeled": paths, **_paper_paths()}, cfg)
    rows = f.rows()
    assert len(rows) == 2 * len(C.CLAIMS) and {r["model"] for r in rows} == {"a", "b"}
    by = {(r["claim"], r["model"]): r for r in rows}
    assert by[("temperature_lowers_mismatch", "a")]["effect"] == pytest.approx(-1.0)  # 10/10 -> 0/10
    assert by[("mismatch_over_60_percent", "a")]["paper_verdict"] == "reproduced"
    assert f.paper_failures() == []


def test_a_labelled_record_without_a_field_is_one_error_naming_the_file(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"uid": "u1", "model": "m"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl: record u1: labelled prediction without constraint"):
        C.read_labeled([str(p)])


def test_footnotes_name_wobbles_rule_classifier_apart_from_the_papers_string_matching():
    assert classifier_text("string_match") == "wobble's rule classifier string_match (not the paper's String Matching)"
    assert classifier_text("paper_regex, string_match").startswith("paper_regex, wobble's rule classifier")
    ctx = {"models": ["m"], "scale": "smoke", "n_questions": 2, "seed": 0, "temperatures": [0.0],
           "constraints": ["low"], "n_shuffles": 1, "max_new_tokens": 4, "classifier": "auto"}
    note = next(n for n in footnotes(ctx, classifier="string_match") if n.startswith("Text answer"))
    assert "not the paper's String Matching" in note


def test_a_level_the_run_does_not_have_is_not_measured_rather_than_not_applicable():
    recs = [rec(q, level, 0, "Yes", "No") for q in range(10) for level in ("medium", "example")]  # no Low, High
    got = measure(recs, MAIN, n_boot=20)
    m = got["mismatch_persists_when_constrained"]["m"]
    assert m.effect is None and m.applicable and m.note == "not run: High at T=0.00"
    assert verdict(claim("mismatch_persists_when_constrained"), m)[0] == "inconclusive"
    assert got["mismatch_over_60_percent"]["m"].effect == 1.0  # the largest of the levels that ran
