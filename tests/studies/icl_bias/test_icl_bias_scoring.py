"""icl_bias requests (what a model is asked), answers (calibrated labels) and the tidy summary."""

from __future__ import annotations

import math

import pytest

from wobble.errors import ConfigError
from wobble.studies.icl_bias.answers import score_records
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.prompts import PromptStyle
from wobble.studies.icl_bias.requests import condition_key, condition_requests, conditions
from wobble.studies.icl_bias.splits import SplitParams, build_split, label_cells
from wobble.studies.icl_bias.summary import groups, summarize

PAIR = PAIRS["sa_sentiment_punctuation"]
L = math.log


def _split():
    pool = [{"id": f"r{h1}{h2}_{i}", "text": f"review {h1}{h2} {i}{'!' if h2 else '.'}", "h1": h1, "meta": {}}
            for (h1, h2), n in {(1, 1): 6, (0, 0): 6, (1, 0): 9, (0, 1): 9}.items() for i in range(n)]
    return build_split(PAIR, label_cells(PAIR, pool), SplitParams(shots=4, n_sets=2, n_test_per_cell=5,
                                                                  min_test_per_cell=2), "reviews")


def test_conditions_order_and_unknown_names():
    assert conditions(["verbalizer", "disambig"]) == [
        ("baseline", None), ("verbalizer", "h1"), ("disambig", "h1"), ("verbalizer", "h2"), ("disambig", "h2")]
    assert conditions(["instruction"], ["h2"]) == [("baseline", None), ("instruction", "h2")]
    with pytest.raises(ConfigError, match=r"unknown intervention 'cot'; expected one of \['baseline'"):
        conditions(["cot"])
    with pytest.raises(ConfigError, match="unknown target 'h3'"):
        conditions(["verbalizer"], ["h3"])
    assert condition_key("baseline", None) == "baseline" and condition_key("explanation", "h2") == "explanation-h2"


def test_label_word_requests_share_a_prefix_per_set_and_carry_calibration():
    split = _split()
    prefixes, reqs = condition_requests(split, PromptStyle("baseline"))
    assert len(prefixes) == 2  # one shared prefix per prompt set
    assert len(reqs) == 2 * (3 + 10)  # per set: 3 content-free prompts + 10 test items
    cf = [r for r in reqs if r["content_free"] is not None]
    assert [r["query"] for r in cf[:3]] == ["[MASK]\n\nCategory:", "N/A\n\nCategory:", "\n\nCategory:"]
    test = next(r for r in reqs if r["item"] is not None)
    assert test["candidates"] == ["0", "1"] and not test["generate"]
    assert prefixes[test["prefix_id"]].count("Category:") == 4  # 4 demonstrations
    assert test["query"].endswith("\n\nCategory:")


def test_disambig_requests_label_demonstrations_by_the_target():
    split = _split()
    items = {it["uid"]: it for it in split["items"]}
    for target in ("h1", "h2"):
        prefixes, reqs = condition_requests(split, PromptStyle("disambig", target, disambig=True))
        ps = next(p for p in split["prompt_sets"] if p["kind"] == "disambig" and p["set"] == 0)
        expected = "".join(f"{items[u]['text']}\n\nCategory:{items[u][target]}\n\n" for u in ps["demos"])
        assert prefixes[f"{PAIR.key}/disambig-{target}/0"] == expected


def test_generation_requests_have_no_calibration_prompts():
    style = PromptStyle("explanation", "h2", explanations=("Period. Therefore, the answer is 0.",
                                                          "Bang. Therefore, the answer is 1."))
    _, reqs = condition_requests(_split(), style)
    assert len(reqs) == 20 and all(r["generate"] and r["content_free"] is None for r in reqs)


def test_score_records_calibrate_per_prompt_set():
    split = _split()
    items = {it["uid"]: it for it in split["items"]}
    _, reqs = condition_requests(split, PromptStyle("baseline"))
    # every test item: p = [0.6, 0.4] (label 0 uncalibrated); set 0's content-free p_cf = [0.8, 0.2]
    # -> calibrated [0.75, 2.0] -> label 1; set 1's content-free prompts are unusable -> stays 0.
    outputs = {}
    for r in reqs:
        if r["content_free"] is not None:
            outputs[r["uid"]] = {"logprobs": {"0": L(0.8), "1": L(0.2)} if r["set"] == 0 else {"0": -math.inf, "1": 0.0}}
        else:
            outputs[r["uid"]] = {"logprobs": {"0": L(0.3), "1": L(0.2)}}
    scores = score_records(reqs, outputs, items)
    assert len(scores) == 20
    assert {s["pred"] for s in scores if s["set"] == 0} == {1} and all(s["calibrated"] for s in scores if s["set"] == 0)
    assert {s["pred"] for s in scores if s["set"] == 1} == {0} and not any(s["calibrated"] for s in scores if s["set"] == 1)
    assert scores[0]["probs"] == pytest.approx([0.6, 0.4])
    assert {s["pred"] for s in score_records(reqs, outputs, items, calibrate=False)} == {0}
    with pytest.raises(KeyError, match="no model output"):
        score_records(reqs, {}, items)


def test_score_records_from_generations():
    split = _split()
    items = {it["uid"]: it for it in split["items"]}
    style = PromptStyle("explanation", "h1", explanations=("Bad. Therefore, the answer is 0.",
                                                          "Good. Therefore, the answer is 1."))
    _, reqs = condition_requests(split, style)
    outputs = {r["uid"]: {"text": "Good. Therefore, the answer is 1.\n\nreview" if items[r["item"]]["h1"] else "Hmm"}
               for r in reqs}
    scores = score_records(reqs, outputs, items)
    assert {(s["h1"], s["pred"]) for s in scores} == {(1, 1), (0, None)}


def _rec(pair, condition, target, uid, s, h1, pred):
    intervention = condition.split("-")[0]
    return {"pair": pair, "condition": condition, "intervention": intervention, "target": target, "set": s,
            "uid": uid, "h1": h1, "h2": 1 - h1, "pred": pred}


def test_summarize_levels_and_hand_computed_values():
    a, b = "nli_entailment_length", "nli_entailment_negation"  # both NLI
    recs = []
    for s in (0, 1):
        # pair a: baseline always answers h1 (h1 100 %); verbalizer-h2 always h2 (effect on h2: +100 points)
        for uid, h1 in (("a1", 1), ("a2", 0)):
            recs += [_rec(a, "baseline", None, uid, s, h1, h1), _rec(a, "verbalizer-h2", "h2", uid, s, h1, 1 - h1)]
        # pair b: baseline answers 1 always (h1 50 %, h2 50 %); verbalizer-h2 answers None (neither)
        for uid, h1 in (("b1", 1), ("b2", 0)):
            recs += [_rec(b, "baseline", None, uid, s, h1, 1), _rec(b, "verbalizer-h2", "h2", uid, s, h1, None)]
    rows = summarize(recs, n_boot=200, seed=0)
    get = {(r["level"], r["group"], r["condition"], r["measure"]): r for r in rows}
    assert get[("pair", a, "baseline", "h1")]["value"] == pytest.approx(100.0)
    assert get[("pair", b, "baseline", "h2")]["value"] == pytest.approx(50.0)
    assert get[("pair", a, "verbalizer-h2", "effect")]["value"] == pytest.approx(100.0)
    assert get[("pair", b, "verbalizer-h2", "effect")]["value"] == pytest.approx(-50.0)
    assert get[("pair", b, "verbalizer-h2", "neither")]["value"] == pytest.approx(100.0)
    assert get[("dataset", "NLI", "baseline", "h1")]["value"] == pytest.approx(75.0)
    assert get[("dataset", "NLI", "verbalizer-h2", "effect")]["value"] == pytest.approx(25.0)
    assert get[("all", "all", "baseline", "h1")]["n_pairs"] == 2
    assert get[("row", "NLI/length", "baseline", "h1")]["n_items"] == 2
    assert ("pair", a, "baseline", "effect") not in get  # the baseline has no effect
    assert rows == summarize(recs, n_boot=200, seed=0)  # deterministic


def test_groups_follow_the_paper_tables():
    g = groups(["nli_entailment_genre_gov_fic", "nli_entailment_genre_gov_tele", "sa_sentiment_domain"])
    assert g[("row", "NLI/genre")] == ["nli_entailment_genre_gov_fic", "nli_entailment_genre_gov_tele"]
    assert g[("dataset", "SA")] == ["sa_sentiment_domain"] and len(g[("all", "all")]) == 3

