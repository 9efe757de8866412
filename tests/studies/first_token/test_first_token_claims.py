"""The first_token claims on the measurement engine, from hand-made labelled predictions (numbers worked out by
hand in the comments): the unit tables, intervals over QUESTIONS (never prompts), the refusal share as a ratio of
sums, the engine's Extreme, the existence claim across models, the paper passing its own rows on its released
per-model numbers, Figure 3b's control and the ledger."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.report.engine import UnitTable, measure_all
from wobble.report.findings import Ledger
from wobble.report.intervals import Custom, Extreme
from wobble.studies.first_token import claims as C
from wobble.studies.first_token import claims_counts as K
from wobble.studies.first_token import claims_io as IO
from wobble.studies.first_token import claims_measure as M
from wobble.studies.first_token.prompts import PAPER_OUTPUT_DIRS

from first_token_claims_records import BY, MAIN, OPTIONS, PAPER, agree, rec, row, rows_of


# ------------------------------------------------------------------------------------------ unit tables


def test_the_prompt_table_by_hand():
    recs = [rec(0, "low", 0, "Yes", "No"), rec(0, "low", 1, "Yes", None), rec(0, "low", 2, "Yes", "Refused"),
            rec(0, "example_abc", 0, "Yes", "No")]  # Figure 3b's control: its own cell, no level
    f = K.prompt_frame(recs, MAIN)
    assert list(f["level"]) == ["Low"] * 3 + ["Example A/B/C"]
    f = f[f["level"] == "Low"]
    assert list(f["mismatch"]) == [1, 1, 1] and list(f["mapped"]) == [1, 0, 1]  # no option counts as mismatch
    assert list(f["mismatch_agree"]) == [1, 0, 1]  # ... and as agreement in the variant
    assert list(f["refused"]) == [0, 0, 1] and list(f["notopen"]) == [1, 1, 1] and list(f["truncated"]) == [0, 0, 0]
    assert list(f["n_options"]) == [3, 3, 3]
    # first token "Yes" on all three, its letter moving A -> B -> C: it keeps its option, not its letter; the text:
    # (B, No) and (B, Refused) (None left out): its letter B twice, two options -> keeps its letter
    assert list(f["keeps_letter"]) == [0, 0, 0] and list(f["text_keeps_letter"]) == [1, 1, 1]
    # first-token entropy 0; text options No, Refused (None left out): ln 2; gap -ln 2 on every row of the group;
    # ln 2 / ln 3 of the uniform text's entropy
    assert f["h_gap"].tolist() == pytest.approx([-math.log(2)] * 3)
    assert f["h_text_norm"].tolist() == pytest.approx([math.log(2) / math.log(3)] * 3)
    # Figure 3a pooled: first-token letters A, B, C (ln 3); text B, (none), B (0): gap -ln 3
    assert K.pooled_letter_gap(f) == pytest.approx(-math.log(3))
    pinned = K.prompt_frame([rec(0, "low", s, OPTIONS[s], "Yes", letter="A") for s in range(3)], MAIN)
    assert list(pinned["keeps_letter"]) == [1, 1, 1]  # 'A' whatever option sits under it: position
    assert math.isnan(K.prompt_frame([rec(0, "low", 0, "Yes", "Yes", finish=None)], MAIN)["truncated"][0])
    assert K.letter_entropy({"A": 1, "B": 1, "C": 2}) == pytest.approx(1.5 * math.log(2))


def test_each_claim_reads_its_table_and_the_refusal_statistic_reads_the_mismatches_of_every_prompt():
    recs = [rec(q, "low", s, "Yes", "No" if s == 0 else "Yes", opens=s > 0) for q in range(4) for s in range(4)]
    recs += [rec(q, "example_abc", 0, "Yes", "Yes") for q in range(4)]
    tables, _ = K.tables(recs, MAIN, C.TABLES)
    assert set(tables) == set(BY) and all(t.unit == "question" for t in tables.values())
    assert set(tables["example_abc_lowers_first_token_C"].frame["cell"]) == {"Example A/B/C"}
    assert set(tables["mismatch_over_60_percent"].frame["cell"]) == {"Low"}  # the control is no level
    # the refusal claim reads the four levels' table: its statistic the mismatched prompts (its subset), its
    # gates and preconditions every prompt, so a level without a mismatch is still checked
    table = tables["refusal_major_reason_for_mismatch"].frame
    assert BY["refusal_major_reason_for_mismatch"].subset == "mismatch"
    assert len(table) == 16 and table["mismatch"].sum() == 4  # one mismatched prompt per question
    # the figures of the whole Low cell: 1 of 4 texts does not open with the letter, all mapped, none refuses
    assert set(table["cell_notopen"]) == {0.25} and set(table["cell_mapped"]) == {1.0}
    assert set(table["cell_refuses_text"]) == {0.0}


# ------------------------------------------------------------------------------------------ the unit: questions


def test_no_mismatch_on_16_questions_x_10_shuffles_is_inconclusive_not_contradicted():
    recs = [rec(q, "low", s, "Yes", "No") for q in range(16) for s in range(10)]  # misaligned at Low
    recs += [agree(q, lv, s) for q in range(16) for lv in ("medium", "high", "example") for s in range(10)]
    r = row(recs, "mismatch_persists_when_constrained")
    # min(0 of 16 at High, 0 of 16 at Example), each at 97.5 % (Bonferroni): 1 - 0.0125^(1/16) = 0.2395; over
    # the 160 prompts it would be [0, 0.023], entirely below 0.05: the old "contradicted"
    assert r["effect"] == 0 and r["n_items"] == 16 and r["ci_low"] == 0
    assert r["ci_high"] == pytest.approx(1 - 0.0125 ** (1 / 16)) and round(r["ci_high"], 4) == 0.2396
    assert "Clopper" in r["interval"] and "Bonferroni" in r["interval"]
    assert r["verdict"] == "inconclusive" and r["would_be"] == "inconclusive"


def test_the_refusal_share_is_a_ratio_of_sums_over_all_mismatches_resampled_by_question():
    recs = []
    for q in range(21):  # q00: three mismatches, all refusals; the others one mismatch each, not a refusal
        if q == 0:
            recs += [rec(q, "low", s, "Yes", "Refused") for s in range(3)] + [agree(q, "low", 3)]
        else:
            recs += [rec(q, "low", 0, "Yes", "No"), agree(q, "low", 1)]
    r = row(recs, "refusal_major_reason_for_mismatch")
    # Figure 2a's light bar over the whole bar: 3 refusals of 3 + 20 = 23 mismatches (the mean of the questions'
    # shares would be 1/21); 21 questions < 30 and no exact interval for a ratio: undecided, never a bootstrap
    # known to be too narrow
    assert r["effect"] == pytest.approx(3 / 23) and r["n_items"] == 21 and r["verdict"] == "inconclusive"
    assert "21 < 30 questions and no exact interval" in r["reason"]
    assert isinstance(BY["refusal_major_reason_for_mismatch"].statistic, Custom)
    # the text refuses in 3 of the 43 Low answers, 7 % >= 5 %: the precondition holds
    assert r["applicable"] and "refuses: met (text refusal: Low 7%)" in r["precondition_note"]
    # 40 questions of 10 mismatches each, half of them with 2 refusals: 40 of 400 = 0.1; a resample drawing k
    # refusing questions gives 2k / 400, at most 80 / 400 = 0.2
    many = [rec(q, "low", s, "Yes", "Refused" if q < 20 and s < 2 else "No") for q in range(40) for s in range(10)]
    r = row(many, "refusal_major_reason_for_mismatch")
    assert r["effect"] == pytest.approx(0.1) and "cluster bootstrap over 40 questions" in r["interval"]
    assert r["ci_high"] < 0.25 and r["verdict"] == "contradicted"


def test_the_refusal_rows_checks_read_all_four_levels_not_only_those_with_mismatches():
    # 12 questions; only Low has mismatches (each a refusal); Medium, High and Example agree on both shuffles
    recs = [rec(q, "low", 0, "Yes", "Refused") for q in range(12)] + [agree(q, "low", 1) for q in range(12)]
    recs += [agree(q, lv, s) for q in range(12) for lv in ("medium", "high", "example") for s in range(2)]
    r = row(recs, "refusal_major_reason_for_mismatch")
    assert r["effect"] == 1.0 and r["n_items"] == 12  # the statistic: the 12 mismatched prompts' questions
    assert [c.split(":")[0] for c in r["gate_figures"].split("; ")] == ["Low", "Medium", "High", "Example"]
    assert "text refusal: Low 50%, Medium 0%, High 0%, Example 0%" in r["precondition_note"]
    assert "texts not opening with the first-token letter: Low 50%, Medium 0%, High 0%, Example 0%" in \
        r["precondition_note"]


def test_a_text_that_never_refuses_cannot_contradict_the_refusal_share():
    # 40 questions x 10 mismatched shuffles; the text refuses once in 12 of them: 12 of 400 answers, 3 % < 5 %
    # in every level — too rare a refusal to be a major reason anywhere (against the claim)
    recs = [rec(q, "low", s, "Yes", "Refused" if q < 12 and s == 0 else "No") for q in range(40) for s in range(10)]
    r = row(recs, "refusal_major_reason_for_mismatch")
    assert r["effect"] == pytest.approx(0.03) and r["would_be"] == "contradicted"
    assert r["verdict"] == "not applicable" and "refuses (against the claim)" in r["reason"]
    assert "text refusal: Low 3%" in r["precondition_note"]


def test_extreme_takes_the_largest_level_and_bonferroni_bounds():
    recs = []
    for q in range(12):  # Low 9 of 12 questions mismatch on both shuffles; the other levels 3 of 12
        for s in range(2):
            recs.append(rec(q, "low", s, "Yes", "No") if q < 9 else agree(q, "low", s))
            recs += [rec(q, lv, s, "Yes", "No") if q < 3 else agree(q, lv, s) for lv in ("medium", "high", "example")]
    r = next(x for x in rows_of(recs, "mismatch_over_60_percent") if x["model"] == "m")
    from wobble.report.intervals import share_interval

    lo, hi = share_interval([1] * 9 + [0] * 3, 1 - 0.05 / 4)  # Low's exact interval at 98.75 %
    assert r["effect"] == 0.75 and (r["ci_low"], r["ci_high"]) == pytest.approx((lo, hi))
    assert "each of 4 parts at 98.75% (Bonferroni), the max of their bounds" in r["interval"]
    st = BY["mismatch_decreases_low_to_high"].statistic
    frame = K.tables(recs, MAIN, C.TABLES)[0]["mismatch_decreases_low_to_high"].frame
    assert st.point(frame, "question") == pytest.approx(0.0)  # min(0.75 - 0.25, 0.25 - 0.25)


def test_the_largest_and_smallest_are_the_engines_extreme():
    for cid, pick in (("mismatch_over_60_percent", "max"), ("mismatch_persists_when_constrained", "min"),
                      ("mismatch_decreases_low_to_high", "min")):
        assert type(BY[cid].statistic) is Extreme and BY[cid].statistic.pick == pick
    assert not hasattr(M, "Extreme")  # no study-local copy


# ------------------------------------------------------------------------------------------ existence, paper


def test_over_60_is_an_existence_claim_a_model_below_does_not_contradict_it():
    recs = []
    for q in range(16):
        for s in range(2):
            recs += [rec(q, lv, s, "Yes", "No", model="big") for lv in ("low", "medium", "high", "example")]
            recs += [rec(q, lv, s, "Yes", "Yes", model="small") for lv in ("low", "medium", "high", "example")]
    rows = rows_of(recs, "mismatch_over_60_percent", models=("big", "small"))
    assert [(r["row_id"], r["counted"]) for r in rows] == [
        ("ft-01-any", True), ("ft-01-big", False), ("ft-01-small", False)]
    # members at 97.5 % (Bonferroni over the 2 models), each level at 1 - 0.025/4 = 99.375 %: big, 16 of 16:
    # low = 0.003125^(1/16) = 0.697 > 0.6; small: 0 of 16, high 1 - 0.697 = 0.30 < 0.6
    assert rows[1]["verdict"] == "reproduced" and rows[2]["verdict"] == "contradicted"
    assert rows[0]["verdict"] == "reproduced" and rows[0]["ci_low"] == pytest.approx(0.003125 ** (1 / 16))


#: The released mapping_result.json, mean over the 10 shuffles (%, Low, Medium, High, Example), as Figure 2's
#: paper columns print them.
RELEASED = {"Llama2-7b-Chat": (66.2, 60.8, 50.6, 52.7), "Llama2-13b-Chat": (63.3, 43.8, 42.4, 49.5),
            "Llama2-70b-Chat": (38.8, 18.4, 13.3, 51.2), "Mistral-7b-Instruct-V0.1": (8.4, 1.2, 0.4, 12.9),
            "Mistral-7b-Instruct-V0.2": (41.0, 24.9, 30.1, 20.1), "Mixtral-8x7b-Instruct-V0.1": (48.6, 22.7, 18.8, 19.3)}


def _released_means(tmp_path) -> str:
    p = tmp_path / "mapping.jsonl"
    p.write_text("".join(json.dumps({"constraint": PAPER_OUTPUT_DIRS[lv], "model": m, "shuffle": 0, "total": 414,
                                     "total_mis_rate": v / 100, "refuse_rate": 0.0, "total_first_token_mismatch": 0,
                                     "total_mis": round(v * 4.14), "total_refuse": round(v * 4.14 / 2)})
                         + "\n" for m, vs in RELEASED.items() for lv, v in zip(K.LEVELS, vs)))
    return str(p)


def _paper_inputs(mapping: str) -> dict:
    if not PAPER.is_dir():
        pytest.skip("paper CSVs not present")
    return {"paper_mapping": mapping, **{f"paper_{f}": str(PAPER / f"{f}.csv") for f in ("figure3", "figure7", "table3")}}


def test_the_paper_passes_its_own_rows_on_its_released_per_model_numbers(tmp_path):
    effects, shown = IO.paper_effects(_paper_inputs(_released_means(tmp_path)), C.CLAIMS, C.COVERED)
    # largest: Llama2-7b Low 66.2; persists: least favourable of five, Llama2-70b min(13.3, 51.2); decrease:
    # Mistral-v0.1 min(8.4 - 1.2, 1.2 - 0.4) = 0.8 points; Example - High: Mixtral 19.3 - 18.8; C: 85 - 32.1;
    # Table 3: Mistral v0.1's mean gap over its levels (0.02 + 0 + 0 + 0.02) / 4
    assert effects == pytest.approx({"mismatch_over_60_percent": 0.662, "mismatch_persists_when_constrained": 0.133,
                                     "mismatch_decreases_low_to_high": 0.008, "example_more_mismatch_than_high": 0.005,
                                     "example_pulls_first_token_to_C": 0.529, "text_more_consistent": 0.01}, abs=1e-9)
    assert shown["mismatch_over_60_percent"] == "0.662 (Llama2-7b-Chat; max of 6 stated)"
    # the refusal row's paper column: released refusals over mismatches, an upper bound (here half of each)
    bounds = IO.refusal_bounds(_paper_inputs(_released_means(tmp_path)))
    assert bounds.startswith("≤ 0.50 Llama2 7b, 0.50 Llama2 13b") and bounds.endswith("0.50 Mixtral (released)")
    rows = measure_all(C.CLAIMS, {}, ["m"], paper_effects=effects)
    table = [r for r in rows if r["evidence"] == "table"]
    assert {r["claim"] for r in table} == set(effects) and all(r["paper_verdict"] == "reproduced" for r in table)
    # 4 of the paper's 6 models stay below 60 %: the claim is about some model, not each
    per = M.per_model(BY["mismatch_over_60_percent"], IO.paper_tables(_paper_inputs(_released_means(tmp_path)))["mapping"])
    assert sorted(m for m, v in per.items() if v < 0.6) == ["Llama2-70b-Chat", "Mistral-7b-Instruct-V0.1",
                                                            "Mistral-7b-Instruct-V0.2", "Mixtral-8x7b-Instruct-V0.1"]
    # the stated exceptions fail under the same statistic: Mistral-v0.2 rises Medium -> High, Example < High
    exc = IO.paper_tables(_paper_inputs(_released_means(tmp_path)))["mapping"]
    exc = exc[exc["model"] == "Mistral-7b-Instruct-V0.2"]
    assert BY["mismatch_decreases_low_to_high"].statistic.point(exc, "question") < 0
    assert BY["example_more_mismatch_than_high"].statistic.point(exc, "question") < 0


def test_the_prepared_release_gives_the_same_paper_effects(tmp_path, mirror):
    """The released per-model means, prepared from the mirror as the workflow does, give the typed means' effects."""
    from wobble.data import acquire, prepare

    acquire("opinionqa", tmp_path / "opinionqa", mirror=mirror)
    prepared = tmp_path / "opinionqa_paper_mapping.jsonl"
    prepare("opinionqa_paper_mapping", {"opinionqa": tmp_path / "opinionqa"}, prepared)
    full, _ = IO.paper_effects(_paper_inputs(str(prepared)), C.CLAIMS, C.COVERED)
    means, _ = IO.paper_effects(_paper_inputs(_released_means(tmp_path)), C.CLAIMS, C.COVERED)
    assert full == pytest.approx(means, abs=6e-4)  # the printed means are rounded to 0.1 point


# ------------------------------------------------------------------------------------------ the ledger


def test_findings_is_a_ledger_with_a_row_per_claim_and_model(tmp_path):
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
                           "temperatures": [0.7], "sweep_constraints": ["medium"], "bootstrap": {"n": 50, "seed": 0},
                           "classifier": "auto"}}
    led = C.findings({"labeled": paths, **_paper_inputs(_released_means(tmp_path))}, cfg)
    assert isinstance(led, Ledger)
    rows = led.rows()
    assert [r["row_id"] for r in rows][:4] == ["ft-01-any", "ft-01-a", "ft-01-b", "ft-02-a"]
    assert len(rows) == 3 + 2 * (len(C.CLAIMS) - 1) and len(C.CLAIMS) == 12
    by = {(r["claim"], r["model"]): r for r in rows}
    assert by[("temperature_lowers_mismatch", "a")]["effect"] == pytest.approx(-1.0)  # 10/10 -> 0/10
    assert by[("mismatch_persists_when_constrained", "a")]["paper_verdict"] == "reproduced"
    assert all(c.freeze == C.FREEZE for c in C.CLAIMS) and len(C.FREEZE) >= 7
    assert "T=0.00 -> T=0.70 on Medium" in led.notes[0] and "extrapolation" not in led.notes[0]
    assert by[("refusal_major_reason_for_mismatch", "a")]["paper"].startswith("≤ ")
    assert by[("example_abc_lowers_first_token_C", "a")]["reason"].startswith("not measured")  # no example_abc


def _figure_3b(text_abc: str) -> list[dict]:
    """12 questions: Example answers 'C' on 1 of 2 shuffles (first token and text alike); Example A/B/C's first
    token never, its text 'C' on shuffle 0 if ``text_abc`` is "C"."""
    recs = []
    for q in range(12):
        recs += [rec(q, "example", 0, "Yes", "Yes", letter="C", text_letter="C"),
                 rec(q, "example", 1, "No", "No", letter="A", text_letter="A"),
                 rec(q, "example_abc", 0, "Yes", "Yes", letter="A", text_letter=text_abc),
                 rec(q, "example_abc", 1, "No", "No", letter="B", text_letter="B")]
        recs += [agree(q, "high", s) for s in range(2)]
    return recs


def test_figure_3b_control_example_against_example_abc_by_hand():
    # "for both first-token evaluation and the classified text output": the smaller of the two halves' drops in
    # the share of 'C', each at 97.5 % (Bonferroni over the two); each arm's Hoeffding interval at 98.75 %
    recs = _figure_3b("A")  # both halves: 0.5 -> 0.0
    r = row(recs, "example_abc_lowers_first_token_C")
    assert isinstance(BY["example_abc_lowers_first_token_C"].statistic, Extreme)
    assert r["effect"] == pytest.approx(0.5) and r["n_items"] == 12 and r["applicable"]
    half = math.sqrt(math.log(2 / 0.0125) / (2 * 12))  # Example: 0.5 on every question, Hoeffding
    top = 1 - 0.00625 ** (1 / 12)  # Example A/B/C: 0 of 12 questions, Clopper-Pearson at 98.75 %
    assert r["ci_low"] == pytest.approx(0.5 - half - top) and r["verdict"] == "inconclusive"
    assert "share of 'C', Example → Example A/B/C: first token 0.50 → 0.00; text 0.50 → 0.00" in r["diagnostics"]
    assert "first token keeps its letter" in r["diagnostics"]
    # the text stays on 'C' under A/B/C: its half does not move, and the claim of both halves does not hold
    still = row(_figure_3b("C"), "example_abc_lowers_first_token_C")
    assert still["effect"] == pytest.approx(0.0) and "text 0.50 → 0.50" in still["diagnostics"]
    gone = row([x for x in recs if x["constraint"] != "example_abc"], "example_abc_lowers_first_token_C")
    assert gone["reason"] == "not measured in this run: cells Example A/B/C not run"


def test_the_temperature_note_labels_a_sweep_beyond_the_papers_as_extrapolation():
    recs = [agree(q, "medium", s, t=t) for q in range(2) for s in range(2) for t in (0.0, 1.4)]
    prompts = K.prompt_frame(recs, MAIN)
    assert K.sweep_note(prompts, C.PAPER_SWEEP_MAX) == "m: T=0.00 -> T=1.40 on Medium (extrapolation: above the " \
                                                        "paper's sweep)"
    assert "extrapolation" not in K.sweep_note(prompts[prompts["temp"] != "1.40"].pipe(
        lambda f: pd.concat([f, f.assign(temp="0.70")])), C.PAPER_SWEEP_MAX)


def test_a_labelled_record_without_a_field_is_one_error_naming_the_file(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"uid": "u1", "model": "m"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl: record u1: labelled prediction without constraint"):
        IO.read_labeled([str(p)])


def test_declarations_keep_their_ids_order_and_directions():
    assert list(BY) == ["mismatch_over_60_percent", "mismatch_persists_when_constrained",
                        "mismatch_decreases_low_to_high", "example_more_mismatch_than_high",
                        "refusal_major_reason_for_mismatch", "example_pulls_first_token_to_C",
                        "example_text_more_evenly_distributed", "text_more_consistent",
                        "temperature_lowers_mismatch", "temperature_lowers_refusal",
                        "temperature_worsens_consistency", "example_abc_lowers_first_token_C"]
    assert all(c.unit == "question" and c.min_units == 10 for c in C.CLAIMS)
    assert [c.id for c in C.CLAIMS if c.direction == -1] == ["temperature_lowers_mismatch", "temperature_lowers_refusal"]
    assert [c.id for c in C.CLAIMS if c.scope == "exists"] == ["mismatch_over_60_percent"]
    assert {c.id for c in C.CLAIMS if c.evidence == "table"} == set(C.COVERED) == set(IO.SOURCES)
    assert {(g.name, g.test, g.threshold) for c in C.CLAIMS for g in c.gates} == {
        ("degenerate", "share at least", 0.5), ("positional", "share at most", 0.5), ("truncated", "share at most", 0.1),
        ("near uniform", "mean below", 0.8)}
    assert isinstance(pd.DataFrame(), pd.DataFrame) and UnitTable  # the engine's types are what a study hands
