"""first_token aggregates (wobble.studies.first_token.aggregate): each cell's metrics and rows.

Every metric's interval is the percentile bootstrap over QUESTIONS (module docstring): recomputed here from
the study's metric functions on resampled questions (:func:`wobble.stats.bootstrap_ci`), so each per-question
numerator and denominator is checked, not only the point. Cells, rows and their fields in the fixed order.
"""

from __future__ import annotations

import math

import pytest

from wobble.stats import bootstrap_ci, bootstrap_indices, percentile_interval
from wobble.studies.first_token import aggregate as A
from wobble.studies.first_token.metrics import (consistency_entropy, mismatch_rate, refusal_mismatch_rate,
                                                refusal_rate)

L = math.log


def _rec(q, shuffle, ft, tx, *, finish="stop", model="m", constraint="medium", t=0.0, ft_letter="A", tx_letter="A",
         logprobs=None, classifier="string_match", response="A"):
    r = {"model": model, "constraint": constraint, "question_uid": q, "shuffle": shuffle,
         "gen_params": {"temperature": t}, "letters": ["A", "B", "C"], "first_token_option": ft, "text_option": tx,
         "first_token_letter": ft_letter, "text_letter": tx_letter, "response": response, "classifier": classifier,
         "first_token_logprobs": logprobs or {"A": L(0.5), "B": L(0.25), "C": L(0.125)}}
    if finish is not None:
        r["finish_reason"] = finish
    return r


def _questions():
    """Three questions x 4 shuffles: refusals on either side, texts naming no option, cut generations."""
    return [
        [_rec("q1", 0, "x", "x"), _rec("q1", 1, "x", "Refused", finish="length"),
         _rec("q1", 2, "Refused", "Refused", finish=None), _rec("q1", 3, "y", None)],
        [_rec("q2", 0, "z", "z"), _rec("q2", 1, "z", None, finish="length"), _rec("q2", 2, "z", "y"),
         _rec("q2", 3, "z", "Refused")],
        [_rec("q3", 0, "Refused", "Refused"), _rec("q3", 1, "Refused", "Refused", finish="length"),
         _rec("q3", 2, "w", "v"), _rec("q3", 3, "w", "w", logprobs={"A": L(0.5), "B": None, "C": math.nan})],
        # no first-token option and no text option at all: every entropy of this question is undefined
        [_rec("q4", 0, None, None), _rec("q4", 1, None, None, finish="length")],
    ]


def _interval(groups, stat, n, seed):
    """The percentile interval of ``stat`` over resampled questions (NaN replicates left out)."""
    reps = [stat([groups[i] for i in row]) for row in bootstrap_indices(len(groups), n, seed)]
    return percentile_interval(reps)


def _pairs(groups):
    return [(r["first_token_option"], r["text_option"]) for g in groups for r in g]


def _share(groups, keep):
    recs = [r for g in groups for r in g]
    return sum(1 for r in recs if keep(r)) / len(recs)


def _cut(groups):
    fin = [r["finish_reason"] for g in groups for r in g if r.get("finish_reason")]
    return sum(1 for f in fin if f == "length") / len(fin)


def _mass(r):
    return sum(math.exp(v) for v in r["first_token_logprobs"].values() if v is not None and not math.isnan(v))


STATISTICS = {
    "mismatch_rate": lambda gs: mismatch_rate(_pairs(gs)),
    "refusal_mismatch_rate": lambda gs: refusal_mismatch_rate(_pairs(gs)),
    "refusal_rate_text": lambda gs: refusal_rate([tx for _, tx in _pairs(gs)]),
    "refusal_rate_first_token": lambda gs: refusal_rate([ft for ft, _ in _pairs(gs)]),
    "unmapped_rate": lambda gs: _share(gs, lambda r: r["text_option"] is None),
    "different_option_rate": lambda gs: _share(gs, lambda r: r["text_option"] not in (None, "Refused")
                                               and r["text_option"] != r["first_token_option"]),
    "letter_mass": lambda gs: sum(_mass(r) for g in gs for r in g) / sum(len(g) for g in gs),
    "cut_rate": _cut,
    "entropy_first_token": lambda gs: consistency_entropy([[r["first_token_option"] for r in g] for g in gs]),
    "entropy_text": lambda gs: consistency_entropy([[r["text_option"] for r in g] for g in gs]),
    "entropy_text_none": lambda gs: consistency_entropy([[r["text_option"] for r in g] for g in gs], drop_none=False),
}


@pytest.mark.parametrize("metric", sorted(STATISTICS))
def test_each_metric_is_its_statistic_with_a_bootstrap_interval_over_questions(metric):
    qs = _questions()
    rows = {r["metric"]: r for r in A.cell_metrics([r for g in qs for r in g], n_boot=200, seed=3)}
    stat = STATISTICS[metric]
    assert rows[metric]["value"] == pytest.approx(stat(qs), abs=1e-11)
    assert (rows[metric]["ci_low"], rows[metric]["ci_high"]) == pytest.approx(_interval(qs, stat, 200, 3))


def test_a_cells_fields_and_the_cell_level_share_without_interval():
    qs = _questions()
    rows = A.cell_metrics([r for g in qs for r in g], n_boot=50)
    top = next(r for r in rows if r["metric"] == "top_letter_share")
    assert top == {"model": "m", "constraint": "medium", "temperature": 0.0, "metric": "top_letter_share",
                   "value": 1.0, "ci_low": None, "ci_high": None, "n_prompts": 14, "n_questions": 4,
                   "n_text_mapped": 10, "n_questions_mapped": 3, "classifier": "string_match"}
    # values are rounded to 12 decimals
    unmapped = next(r for r in rows if r["metric"] == "unmapped_rate")
    assert unmapped["value"] == round(4 / 14, 12)


def test_the_defaults_are_1000_resamples_from_seed_0():
    # 40 questions with different letter masses and choices, so the intervals move with the resamples and the seed
    recs = [_rec(f"q{q:02d}", s, "x", "x" if s >= q % 5 else "y", ft_letter="ABC"[s % 3], tx_letter="ABC"[q % 3],
                 logprobs={"A": L(0.1 + 0.013 * q + 0.0017 * s)}) for q in range(40) for s in range(4)]
    assert A.cell_metrics(recs) == A.cell_metrics(recs, n_boot=1000, seed=0)
    assert A.cell_metrics(recs) != A.cell_metrics(recs, n_boot=1001, seed=0) != A.cell_metrics(recs, n_boot=1000,
                                                                                                seed=1)
    assert A.choice_rows(recs) == A.choice_rows(recs, n_boot=1000, seed=0)
    assert A.choice_rows(recs) != A.choice_rows(recs, n_boot=1001, seed=0) != A.choice_rows(recs, n_boot=1000, seed=1)


def test_records_without_a_classifier_name_none():
    recs = [{**_rec("q1", 0, "x", "x"), "classifier": None}, {**_rec("q1", 1, "x", "x"), "classifier": None}]
    assert {r["classifier"] for r in A.cell_metrics(recs, n_boot=10)} == {None}


def test_a_question_whose_texts_name_no_option_is_not_mapped():
    recs = [_rec("q1", 0, "x", "x"), _rec("q2", 0, "x", None), _rec("q2", 1, "y", None)]
    row = A.cell_metrics(recs, n_boot=20)[0]
    assert (row["n_text_mapped"], row["n_questions_mapped"], row["n_questions"]) == (1, 1, 2)


def test_cells_come_in_model_constraint_temperature_order_and_name_every_classifier():
    recs = [_rec("q", 0, "x", "x", model=m, constraint=c, t=t, classifier=k)
            for m in ("b", "a") for c in ("high", "low", "custom") for t in (0.7, 0.0)
            for k in ("string_match", "judge_0shot")]
    cells = [(r["model"], r["constraint"], r["temperature"]) for r in A.cell_metrics(recs, n_boot=10)
             if r["metric"] == "mismatch_rate"]
    expected = [(m, c, t) for m in ("a", "b") for c in ("low", "high", "custom") for t in (0.0, 0.7)]
    assert cells == expected  # CONSTRAINTS order (low before high), an unknown constraint last
    assert {r["classifier"] for r in A.cell_metrics(recs, n_boot=10)} == {"judge_0shot, string_match"}
    choices = [(r["model"], r["constraint"], r["temperature"]) for r in A.choice_rows(recs, n_boot=10)
               if r["answer_by"] == "first_token" and r["letter"] == "A"]
    assert choices == expected
    one_classifier = [r for r in recs if r["classifier"] == "string_match"]
    shuffles = [(r["model"], r["constraint"], r["temperature"], r["shuffle"]) for r in
                A.mapping_rows([{**r, "shuffle": s} for r in one_classifier for s in (1, 0)])]
    assert shuffles == [(m, c, t, s) for m in ("a", "b") for c in ("low", "high", "custom") for t in (0.0, 0.7)
                        for s in (0, 1)]


def test_letter_mass_sums_only_the_letters_with_a_score():
    assert A.letter_mass({"first_token_logprobs": {"A": L(0.5), "B": None, "C": math.nan}}) == pytest.approx(0.5)


def test_the_cut_rate_counts_only_generations_with_a_finish_reason():
    recs = [_rec("q1", 0, "x", "x", finish="length"), _rec("q1", 1, "x", "x", finish=None),
            _rec("q2", 0, "x", "x", finish=None)]
    row = next(r for r in A.cell_metrics(recs, n_boot=20) if r["metric"] == "cut_rate")
    assert row["value"] == 1.0
    none = next(r for r in A.cell_metrics(recs[1:], n_boot=20) if r["metric"] == "cut_rate")
    assert none["value"] is None  # no finished generation: undefined


def test_choice_rows_over_the_widest_prompt_with_every_letter():
    recs = [{**_rec("q1", 0, "x", "x", ft_letter="A", tx_letter=None)},
            {**_rec("q1", 1, "x", "x", ft_letter="A", tx_letter="B"), "letters": ["A", "B", "C", "D"]}]
    rows = A.choice_rows(recs, n_boot=20)
    ft = {r["letter"]: r for r in rows if r["answer_by"] == "first_token"}
    assert list(ft) == ["A", "B", "C", "D"] and ft["A"]["count"] == 2 and ft["D"]["share"] == 0.0
    tx = {r["letter"]: r for r in rows if r["answer_by"] == "text"}
    assert (tx["B"]["count"], tx["none"]["count"], tx["A"]["count"]) == (1, 1, 0)
    assert {k: tx["B"][k] for k in ("model", "constraint", "temperature", "classifier", "n_prompts")} == {
        "model": "m", "constraint": "medium", "temperature": 0.0, "classifier": "string_match", "n_prompts": 2}


def test_mapping_rows_read_the_response_or_else_the_output():
    base = _rec("q1", 0, "x", "x", ft_letter="C")
    rows = A.mapping_rows([
        {**base, "response": "C. yes", "output": "Sure"},                      # the response opens with C
        {**{k: v for k, v in base.items() if k != "response"}, "question_uid": "q2", "output": "C, then"},
        {**{k: v for k, v in base.items() if k != "response"}, "question_uid": "q3"},  # nothing: not the letter
    ])
    assert rows[0]["total_first_token_mismatch"] == 1
    assert {k: rows[0][k] for k in ("model", "constraint", "temperature", "shuffle", "total")} == {
        "model": "m", "constraint": "medium", "temperature": 0.0, "shuffle": 0, "total": 3}


def test_the_thin_text_entropy_threshold_is_half_the_prompts():
    assert A.MIN_MAPPED_SHARE == 0.5


def _fixture_records():
    """Two questions x 4 shuffles (hand-computed below)."""
    return [
        # q1: first token x,x,y,y ; text x,x,x,Refused
        _rec("q1", 0, "x", "x", ft_letter="A", tx_letter="A"),
        _rec("q1", 1, "x", "x", ft_letter="C", tx_letter="C", response="Sure"),
        _rec("q1", 2, "y", "x", ft_letter="B", tx_letter="A"),
        _rec("q1", 3, "y", "Refused", ft_letter="C", tx_letter="B", response="I cannot"),
        # q2: first token z x4 ; text z, None, z, z
        _rec("q2", 0, "z", "z", ft_letter="C", tx_letter="C", response="C"),
        _rec("q2", 1, "z", None, ft_letter="C", tx_letter=None, response="B or C", finish="length"),
        _rec("q2", 2, "z", "z", ft_letter="C", tx_letter="C", response="C."),
        _rec("q2", 3, "Refused", "z", ft_letter="A", tx_letter="C", response="C"),
    ]


def test_cell_metrics_hand_computed():
    rows = {r["metric"]: r for r in A.cell_metrics(_fixture_records(), n_boot=200, seed=0)}
    assert set(rows) == set(A.METRICS)
    # mismatches: q1 shuffles 2, 3; q2 shuffles 1 (None), 3 -> 4/8
    assert rows["mismatch_rate"]["value"] == pytest.approx(0.5)
    # refusal part: text refuses, first token not: q1 s3 -> 1/8
    assert rows["refusal_mismatch_rate"]["value"] == pytest.approx(0.125)
    assert rows["refusal_rate_text"]["value"] == pytest.approx(0.125)
    assert rows["refusal_rate_first_token"]["value"] == pytest.approx(0.125)
    assert rows["unmapped_rate"]["value"] == pytest.approx(0.125)
    # the third part of the mismatch: the text names another (non-refusal) option: q1 s2 (y/x), q2 s3 (Refused/z)
    assert rows["different_option_rate"]["value"] == pytest.approx(0.25)
    assert sum(rows[m]["value"] for m in ("refusal_mismatch_rate", "unmapped_rate", "different_option_rate")) \
        == pytest.approx(rows["mismatch_rate"]["value"])
    assert rows["letter_mass"]["value"] == pytest.approx(0.875)  # 0.5 + 0.25 + 0.125 on every prompt
    assert rows["top_letter_share"]["value"] == pytest.approx(5 / 8)  # first-token letter C on 5 of 8 prompts
    assert rows["cut_rate"]["value"] == pytest.approx(1 / 8)  # q2 s1 ran into max_new_tokens
    # entropy first token: q1 {x:2, y:2} = ln 2; q2 {z:3, Refused:1} = -(.75 ln .75 + .25 ln .25) = 0.562335
    assert rows["entropy_first_token"]["value"] == pytest.approx((math.log(2) + 0.562335) / 2, abs=1e-6)
    # entropy text: q1 {x:3, Refused:1} = 0.562335; q2 {z:3} (None dropped) = 0
    assert rows["entropy_text"]["value"] == pytest.approx(0.562335 / 2, abs=1e-6)
    # no option as an outcome: q2 {z:3, None:1} = 0.562335 too
    assert rows["entropy_text_none"]["value"] == pytest.approx(0.562335, abs=1e-6)
    r = rows["mismatch_rate"]
    assert (r["n_prompts"], r["n_questions"], r["classifier"], r["temperature"]) == (8, 2, "string_match", 0.0)
    assert (r["n_text_mapped"], r["n_questions_mapped"]) == (7, 2)  # q2 s1 names no option
    assert r["ci_low"] <= r["value"] <= r["ci_high"]


def test_cluster_bootstrap_equals_bootstrap_ci_over_questions():
    recs = _fixture_records() + [_rec("q3", s, "x", "y" if s % 2 else "x") for s in range(4)]
    groups = {}
    for r in recs:
        groups.setdefault(r["question_uid"], []).append(r)
    qs = [groups[k] for k in sorted(groups)]
    rows = {r["metric"]: r for r in A.cell_metrics(recs, n_boot=300, seed=5)}
    pooled = lambda gs: mismatch_rate([(r["first_token_option"], r["text_option"]) for g in gs for r in g])  # noqa: E731
    assert (rows["mismatch_rate"]["ci_low"], rows["mismatch_rate"]["ci_high"]) == \
        pytest.approx(bootstrap_ci(qs, pooled, n=300, seed=5))
    ent = lambda gs: consistency_entropy([[r["text_option"] for r in g] for g in gs])  # noqa: E731
    assert (rows["entropy_text"]["ci_low"], rows["entropy_text"]["ci_high"]) == \
        pytest.approx(bootstrap_ci(qs, ent, n=300, seed=5))


def test_choice_rows_hand_computed():
    rows = A.choice_rows(_fixture_records(), n_boot=100, seed=0)
    ft = {r["letter"]: r for r in rows if r["answer_by"] == "first_token"}
    tx = {r["letter"]: r for r in rows if r["answer_by"] == "text"}
    # first-token letters A, C, B, C, C, C, C, A -> A 2/8, B 1/8, C 5/8
    assert {k: v["share"] for k, v in ft.items()} == {"A": 0.25, "B": 0.125, "C": 0.625}
    # text letters A, C, A, B, C, None, C, C -> A 2/8, B 1/8, C 4/8, none 1/8
    assert {k: v["share"] for k, v in tx.items()} == {"A": 0.25, "B": 0.125, "C": 0.5, "none": 0.125}
    assert tx["C"]["count"] == 4 and tx["C"]["n_prompts"] == 8 and tx["C"]["ci_low"] <= 0.5 <= tx["C"]["ci_high"]


def test_mapping_rows_per_shuffle():
    rows = A.mapping_rows(_fixture_records())
    assert [r["shuffle"] for r in rows] == [0, 1, 2, 3]
    s1 = rows[1]  # q1: ft x (letter C), text x, response "Sure"; q2: text None -> mismatch, "B or C" not C
    assert (s1["total"], s1["total_mis"], s1["total_first_token_mismatch"], s1["same_but_not_first"]) == (2, 1, 2, 1)
    s3 = rows[3]  # q1 refuses in text; q2: ft Refused (A) vs text z
    assert (s3["total_refuse"], s3["total_mis"]) == (1, 2)
