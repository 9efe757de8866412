"""The first_token claims' gates and preconditions, from hand-made labelled predictions (numbers worked out by
hand in the comments): the gates read in every cell of every claim with the same figures (the text's position
bias at its lower bound; the first token's printed, gating nothing), preconditions that know their direction
(floors, uniform sampling, unmapped texts counted as agreement), the pooled letter entropy of Figure 3a and the
temperature rows."""

from __future__ import annotations

import math

import pytest

from wobble.report.engine import measure_all, measure_claim
from wobble.report.gates import read_gates
from wobble.report.intervals import Custom
from wobble.studies.first_token import claims as C
from wobble.studies.first_token import claims_counts as K
from wobble.studies.first_token import claims_measure as M

from first_token_claims_records import BY, MAIN, OPTIONS, agree, rec, row


# ------------------------------------------------------------------------------------------ gates on every arm


def _refusal_gone_unmapped():
    """Lowest T: the text refuses every answer; highest: it names no option (half its texts, say, unreadable)."""
    return [rec(q, "medium", s, "Yes", "Refused" if t == 0 else None, t=t) for q in range(12) for s in range(2)
            for t in (0.0, 1.4)]


def _mismatch_from_unmapped_at_high_t():
    """Lowest T: the texts of 30 of 40 questions name another option (0.75, above the uniform 2/3; not opening
    with the letter: room to fall); highest: no option named, a mismatch (1.0)."""
    return [rec(q, "medium", s, "Yes", ("No" if q < 30 else "Yes") if t == 0 else None, t=t) for q in range(40)
            for s in range(2) for t in (0.0, 1.4)]


def _high_cut():
    """Low misaligned; High and Example name another option, High's texts cut at the token cap."""
    return [r for q in range(12) for s in range(2) for r in (
        rec(q, "low", s, "Yes", "No"), rec(q, "medium", s, "Yes", "No"), rec(q, "high", s, "Yes", "No",
                                                                            finish="length"),
        rec(q, "example", s, "Yes", "No"))]


def _example_unmapped():
    return [r for q in range(12) for s in range(2) for r in (rec(q, "example", s, "Yes", None),
                                                          rec(q, "high", s, "Yes", "Yes"))]


def _text_positional_at_low():
    """Low: the TEXT stays on 'A' while the options move (position); the first token keeps "Yes" (entropy 0) in
    q00-q05 and says Yes, Yes, No in q06-q11 (H(2/3, 1/3) = 0.637): first token − text, -ln 3 or 0.637 - ln 3."""
    return [rec(q, "low", s, "No" if q >= 6 and s == 2 else "Yes", OPTIONS[s], text_letter="A")
            for q in range(12) for s in range(3)]


@pytest.mark.parametrize("cid, make, good_cell, bad_cell, alone", [
    ("temperature_lowers_refusal", _refusal_gone_unmapped, K.LOWEST, K.HIGHEST, "reproduced"),
    ("temperature_lowers_mismatch", _mismatch_from_unmapped_at_high_t, K.LOWEST, K.HIGHEST, "contradicted"),
    ("mismatch_persists_when_constrained", _high_cut, "Example", "High", "reproduced"),
    ("example_more_mismatch_than_high", _example_unmapped, "High", "Example", "reproduced"),
    ("text_more_consistent", _text_positional_at_low, None, "Low", "contradicted"),
])
def test_a_gate_read_on_the_wrong_arm_would_decide_the_row(cid, make, good_cell, bad_cell, alone):
    recs = make()
    table = K.tables(recs, MAIN, C.TABLES)[0][cid]
    r = measure_claim(BY[cid], 1, table, ["m"], n_boot=200)[0]
    assert r["applicable"], r["precondition_note"]
    assert r["would_be"] == alone and r["verdict"] == "inconclusive", r["reason"]
    assert r["reason"].startswith("gated") and f" in {bad_cell}" in r["reason"]
    assert f"{bad_cell}: degenerate" in r["gate_figures"]
    if good_cell:  # read on the other arm alone, every gate passes and the interval would decide the row
        assert all(g.passes for g in read_gates(BY[cid].gates, table.frame, [good_cell]))


def test_gates_print_the_same_figures_in_every_claim_reading_a_cell():
    recs = [rec(q, lv, s, OPTIONS[s], ("Refused", "No", "No" if q % 2 else None)[s], letter="A" if q < 8 else None)
            for q in range(12) for lv in ("low", "medium", "high", "example") for s in range(3)]
    rows = M.measure(C.CLAIMS, K.tables(recs, MAIN, C.TABLES)[0], ["m"], n_boot=50)
    low = {r["claim"]: next(p for p in r["gate_figures"].split("; ") if p.startswith("Low:"))
           for r in rows if r["model"] == "m" and "Low:" in r["gate_figures"]}
    # 12 questions x 3 shuffles: texts name an option on 2 of 3, all 3 in odd questions -> 30 of 36 = 0.83. The
    # text's letters (C, Refused), (C, No), (A | none, No): it keeps its letter C in the 6 even questions only,
    # 6 of 12, one-sided 95 % Clopper-Pearson lower bound beta(0.05; 6, 7) = 0.245 <= 0.5: passes
    assert set(low.values()) == {"Low: degenerate 0.83, positional 0.25, truncated 0.00"}
    assert {"refusal_major_reason_for_mismatch", "text_more_consistent", "mismatch_over_60_percent",
            "mismatch_decreases_low_to_high"} <= set(low)
    by = {r["claim"]: r for r in rows if r["model"] == "m"}
    # the first token stays on 'A' over the options in 8 of 12 questions (0.67; lower bound beta(0.05; 8, 5) =
    # 0.391): printed beside the rows on the first token's letters and consistency, gating none of them
    for cid in ("text_more_consistent", "example_text_more_evenly_distributed", "example_pulls_first_token_to_C"):
        assert "first token keeps its letter" in by[cid]["diagnostics"], cid
        assert "positional" not in by[cid]["reason"]
    assert "Low 0.67 (≥ 0.39)" in by["text_more_consistent"]["diagnostics"]
    assert "Example 0.67 (≥ 0.39)" in by["example_pulls_first_token_to_C"]["diagnostics"]


# ------------------------------------------------------------------------------------------ preconditions


def test_a_rate_below_uniform_sampling_rises_under_sampling_so_it_explains_a_contradiction():
    recs = [r for q in range(12) for s in range(2) for r in (
        agree(q, "medium", s), rec(q, "medium", s, "Yes", "No", t=1.4))]  # 0 -> 1, texts still name an option
    r = row(recs, "temperature_lowers_mismatch")
    # no room to fall (toward the null) cannot make it rise; a lowest-T mismatch of 0 below the uniform 1 - 1/3
    # can (against the claim): not applicable, the would-be verdict printed
    assert r["effect"] == 1.0 and r["applicable"] is False and r["would_be"] == "contradicted"
    assert r["verdict"] == "not applicable" and "above uniform (against the claim)" in r["reason"]
    assert "room to fall (toward the null)" not in r["reason"]
    assert "texts not opening with the first-token letter: lowest T 0%" in r["precondition_note"]
    assert "lowest T: mismatch 0.00 vs 0.67 under uniform sampling" in r["precondition_note"]


def test_the_uniform_levels_and_the_near_uniform_gate_by_hand():
    # q00 shows 3 options, q01 5: the uniform mismatch is mean(2/3, 4/5) = 0.733, the uniform refusal mean(1/3,
    # 1/5) = 0.267; the lowest-T text refuses on 1 of 2 shuffles in both: refusal 0.5 > 0.267, mismatch 0.5 < 0.733
    recs = [dict(rec(q, "medium", s, "Yes", "Refused" if s == 0 else "Yes", t=t), letters=list("ABCDE"[:3 + 2 * q]))
            for q in range(2) for s in range(2) for t in (0.0, 1.4)]
    f = K.tables(recs, MAIN, C.TABLES)[0]["temperature_lowers_refusal"].frame
    ok, fig = M.above_uniform(K.LOWEST, "refuses_text", "against the claim").check(f)
    assert ok and fig == "lowest T: refuses_text 0.50 vs 0.27 under uniform sampling"
    ok, fig = M.above_uniform(K.LOWEST, "mismatch", "against the claim").check(f)
    assert not ok and fig == "lowest T: mismatch 0.50 vs 0.73 under uniform sampling"
    # text entropy over the shuffles: ln 2 in each question; over ln 3 and ln 5: mean 0.5 * (0.631 + 0.431) =
    # 0.531 < 0.8: not near uniform
    gate = M.near_uniform("unknown")
    fig = gate.figure(f[f["cell"] == K.LOWEST])
    assert fig == pytest.approx(0.5 * (math.log(2) / math.log(3) + math.log(2) / math.log(5))) and gate.passes(fig)
    assert not gate.passes(0.8)


def test_the_text_positional_gate_fails_only_when_the_lower_bound_is_above_half():
    def recs(n_positional):  # 12 questions; the text stays on 'A' over the options in the first n of them
        return [rec(q, "low", s, "Yes", OPTIONS[s], text_letter="A" if q < n_positional else None)
                for q in range(12) for s in range(3)]
    for n, bound in ((8, 0.391), (12, 0.05 ** (1 / 12))):  # beta(0.05; 8, 5); 12 of 12: 0.05^(1/12) = 0.779
        f = K.tables(recs(n), MAIN, C.TABLES)[0]["text_more_consistent"].frame
        assert f["cell_text_positional"].tolist() == pytest.approx([bound] * len(f), abs=5e-4)
        gate = next(g for g in BY["text_more_consistent"].gates if g.name == "positional")
        assert gate.passes(bound) is (n == 8)  # 8 of 12 (0.67) is above half at the point, not clearly


def test_the_positional_gate_reads_the_text_and_only_where_the_statistic_reads_the_text():
    assert all(g.column == "cell_text_positional" for c in C.CLAIMS for g in c.gates if g.name == "positional")
    no_gates = {c.id for c in C.CLAIMS if not c.gates}
    assert no_gates == {"example_pulls_first_token_to_C"}
    # Figure 3b's control reads the text too: gated on texts naming an option and cut texts, not on the text's
    # positional answering (a text keeping the template's letter is what it measures)
    assert {g.name: g.bias for g in BY["example_abc_lowers_first_token_C"].gates} == {
        "degenerate": "unknown", "truncated": "unknown"}
    assert "positional" not in {g.name for g in BY["temperature_lowers_refusal"].gates}
    assert {g.name: g.bias for g in BY["text_more_consistent"].gates}["positional"] == "unknown"
    assert {g.name: g.bias for g in BY["example_text_more_evenly_distributed"].gates}["positional"] == "unknown"
    assert all("near uniform" in {g.name for g in BY[c].gates} for c in C.TABLES if c.startswith("temperature_"))


def test_a_floor_on_one_step_has_no_known_direction_and_example_needs_only_example_to_disagree():
    # Medium pinned to the letter (no mismatch), Low and High misaligned: Low - Medium = 1, Medium - High = -1
    recs = [r for q in range(12) for s in range(2) for r in (
        rec(q, "low", s, "Yes", "No"), agree(q, "medium", s), rec(q, "high", s, "Yes", "No"))]
    r = row(recs, "mismatch_decreases_low_to_high")
    assert r["would_be"] == "contradicted" and r["verdict"] == "not applicable"
    assert "can disagree (unknown)" in r["reason"]
    # Example's texts open with the letter and still name another option; High agrees: a floor at Example
    # (against the claim) cannot explain Example > High, and High's floor is the paper's mechanism (§4.1)
    recs = [r for q in range(12) for s in range(2) for r in (
        rec(q, "example", s, "Yes", "No", opens=True), agree(q, "high", s))]
    r = row(recs, "example_more_mismatch_than_high")
    assert r["verdict"] == "reproduced" and r["reason"].startswith("reproduced despite can disagree")
    assert "Example 0%" in r["precondition_note"] and "High" not in r["precondition_note"]


def test_a_row_resting_on_unmapped_texts_stands_only_if_it_passes_with_them_counted_as_agreement():
    # 40 questions; at High and Example 3 of 5 texts agree, 2 name no option: mismatch 0.4 in both (mapped 0.6,
    # the degenerate gate passes). Each question the same: no bootstrap spread, Hoeffding at 97.5 % per part:
    # 0.4 -/+ sqrt(ln(80) / 80) = 0.4 -/+ 0.234 -> [0.166, 0.634] > 0.05: reproduced alone. Counted as agreement
    # the mismatch is 0: the precondition fails, toward the claim: not applicable
    recs = [agree(q, lv, s) if s < 3 else rec(q, lv, s, "Yes", None) for q in range(40) for lv in ("high", "example")
            for s in range(5)]
    r = row(recs, "mismatch_persists_when_constrained")
    assert r["effect"] == pytest.approx(0.4) and r["ci_low"] == pytest.approx(0.4 - math.sqrt(math.log(80) / 80))
    assert r["would_be"] == "reproduced" and r["verdict"] == "not applicable"
    assert "unmapped as agreement (toward the claim)" in r["reason"]
    assert "unmapped counted as agreement: 0 [0, " in r["precondition_note"]
    # printed beside it: among the texts naming an option, no mismatch
    assert r["diagnostics"] == "mismatch among texts naming an option: High 0.00, Example 0.00"
    mapped = [agree(q, lv, s) if s < 3 else rec(q, lv, s, "Yes", "No") for q in range(40)
              for lv in ("high", "example") for s in range(5)]
    r = row(mapped, "mismatch_persists_when_constrained")  # the same rates from texts naming another option
    assert r["verdict"] == "reproduced" and "unmapped as agreement: met" in r["precondition_note"]


def test_a_model_whose_text_always_opens_with_the_letter_is_not_applicable_where_that_explains_it():
    recs = [agree(q, lv, s) for q in range(12) for lv in ("low", "medium", "high", "example") for s in range(2)]
    r = row(recs, "mismatch_persists_when_constrained")  # 0 everywhere: the letter forces agreement
    assert r["verdict"] == "not applicable" and r["would_be"] == "inconclusive"
    assert "Low 0%" in r["precondition_note"] and "Example 0%" in r["precondition_note"]
    d = row(recs, "example_more_mismatch_than_high")  # a floor on both arms: toward the null, no decided result
    assert d["verdict"] == "not applicable"


def test_pinned_first_token_and_the_pull_to_c_by_hand():
    recs = []
    for q in range(12):  # Example: 'C' on 1 of 2 shuffles; High: never -> 0.5 - 0.0
        recs += [rec(q, "example", 0, "Yes", "Yes", letter="C"), rec(q, "example", 1, "No", "No", letter="A"),
                 rec(q, "high", 0, "Yes", "Yes", letter="A"), rec(q, "high", 1, "No", "No", letter="B")]
    r = row(recs, "example_pulls_first_token_to_C")
    assert r["effect"] == pytest.approx(0.5) and r["applicable"] and r["n_items"] == 12
    pinned = row([dict(x, first_token_letter="A") for x in recs], "example_pulls_first_token_to_C")
    assert pinned["verdict"] == "not applicable" and "High 'A' 100%, Example 'A' 100%" in pinned["precondition_note"]


def test_text_letters_more_even_under_example_pooled_as_figure_3a():
    recs = []
    for q in range(10):  # the first token on 'C' throughout (entropy 0); the text on A in even questions, B in odd
        recs += [rec(q, "example", s, "Yes", "Yes", letter="C", text_letter="AB"[q % 2]) for s in range(2)]
    r = row(recs, "example_text_more_evenly_distributed")
    # pooled letter counts A 10, B 10: ln 2 (a question's own entropy is 0: the per-question mean would be 0);
    # 10 questions < 30 and no exact interval for an entropy: undecided
    assert r["effect"] == pytest.approx(math.log(2)) and r["applicable"] and r["verdict"] == "inconclusive"
    assert "10 < 30 questions and no exact interval" in r["reason"]
    st = BY["example_text_more_evenly_distributed"].statistic
    assert isinstance(st, Custom) and st.cells == ("Example",)
    more = [dict(x, question_uid=f"{x['question_uid']}-{i}") for i in range(4) for x in recs]  # 40 questions
    r = row(more, "example_text_more_evenly_distributed")
    assert "cluster bootstrap over 40 questions" in r["interval"] and r["verdict"] == "reproduced"


def test_temperature_rows_by_hand_and_a_single_temperature_is_not_measured():
    recs = []
    for q in range(10):
        for s in range(2):  # T=0: (Yes, Refused), (Yes, Yes): mismatch 1/2, refusal 1/2, text entropy ln 2
            recs += [rec(q, "medium", s, "Yes", "Refused" if s == 0 else "Yes"), agree(q, "medium", s, t=1.4)]
    rows = measure_all(C.CLAIMS, K.tables(recs, MAIN, C.TABLES)[0], ["m"], n_boot=50)
    by = {r["claim"]: r for r in rows}
    assert by["temperature_lowers_mismatch"]["effect"] == pytest.approx(-0.5)
    assert by["temperature_lowers_refusal"]["effect"] == pytest.approx(-0.5)
    assert by["temperature_worsens_consistency"]["effect"] == pytest.approx(-math.log(2))
    one = measure_all(C.CLAIMS, K.tables([x for x in recs if x["gen_params"]["temperature"] == 0],
                                         MAIN, C.TABLES)[0], ["m", "absent"], n_boot=20)
    gone = [r for r in one if r["claim"].startswith("temperature_")]
    assert len(gone) == 6 and all(r["reason"].startswith("not measured") for r in gone)
