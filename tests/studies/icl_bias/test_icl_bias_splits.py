"""icl_bias split construction: invariants on hand-made pools, on the authors' released splits and on
pools rebuilt from the mirror; the feature functions against the released h2 labels."""

from __future__ import annotations

import collections
import json

import pytest

from wobble.data import ambigprompt, icl_raw
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.pools import build_pool, dedupe_texts, released_cells
from wobble.studies.icl_bias.splits import (
    SplitParams, build_split, check_split, demo_label, label_cells, split_for_pair,
)

PAIR = PAIRS["sa_sentiment_punctuation"]


def _pool(n_per_cell: dict) -> list[dict]:
    """Reviews with a known (sentiment, punctuation) cell: text ends in "!" for h2 = 1, "." for 0."""
    items = []
    for (h1, h2), n in n_per_cell.items():
        for i in range(n):
            items.append({"id": f"r{h1}{h2}_{i}", "text": f"review {h1}{h2} number {i}{'!' if h2 else '.'}",
                          "h1": h1, "meta": {"domain": "yelp"}})
    return items


def _cells(n_agree=30, n_disagree=40):
    return label_cells(PAIR, _pool({(1, 1): n_agree, (0, 0): n_agree, (1, 0): n_disagree, (0, 1): n_disagree}))


def test_label_cells_uses_the_feature_and_drops_none():
    pool = _pool({(1, 1): 2, (0, 1): 1}) + [{"id": "q", "text": "a question?", "h1": 1, "meta": {}}]
    cells = label_cells(PAIR, pool)
    assert [len(cells[c]) for c in ((1, 1), (0, 0), (1, 0), (0, 1))] == [2, 0, 0, 1]
    assert all(it["h2"] == 1 for it in cells[(1, 1)])


def test_build_split_sizes_and_invariants():
    params = SplitParams(shots=16, n_sets=3, n_test_per_cell=20, min_test_per_cell=5, seed=7)
    split = build_split(PAIR, _cells(), params, source="reviews")
    assert split["available"] and check_split(split) == []
    roles = collections.Counter(it["role"] for it in split["items"])
    # 4 per disagreeing cell per set held out (12 of 40), 40 - 12 = 28 >= 20 test per cell
    assert roles["disambig"] == 24 and roles["test"] == 40
    used = {u for ps in split["prompt_sets"] for u in ps["demos"]}
    demo_uids = {it["uid"] for it in split["items"] if it["role"] == "demo"}
    assert demo_uids == used - {it["uid"] for it in split["items"] if it["role"] == "disambig"}
    assert split["counts"]["test_1_0"] == split["counts"]["test_0_1"] == 20
    plain = [ps for ps in split["prompt_sets"] if ps["kind"] == "plain"]
    assert [ps["set"] for ps in plain] == [0, 1, 2]
    assert len({tuple(sorted(ps["demos"])) for ps in plain}) == 3  # independent samples per prompt set
    assert plain[0]["demos"] != sorted(plain[0]["demos"])  # seeded random order, not sorted


def test_prompt_sets_come_from_the_shared_balanced_sampler():
    from wobble.adapters.icl import balanced_sample
    from wobble.seeding import derive_seed

    params = SplitParams(shots=8, n_sets=2, n_test_per_cell=10, min_test_per_cell=5, seed=5)
    cells = _cells()
    split = build_split(PAIR, cells, params, "reviews")
    agree = [it for c in ((1, 1), (0, 0)) for it in split_order(cells[c], c, params.seed)]
    want = balanced_sample(agree, 8, lambda it: (it["h1"], it["h2"]), derive_seed(5, PAIR.key, "plain", 1),
                           key=lambda it: it["id"], groups=((1, 1), (0, 0)), salt=f"icl_bias/{PAIR.key}")
    got = next(ps for ps in split["prompt_sets"] if ps["kind"] == "plain" and ps["set"] == 1)
    assert got["demos"] == [f"{PAIR.key}:{it['id']}" for it in want]


def split_order(items, cell, seed):
    from wobble.studies.icl_bias.splits import _ordered

    return _ordered(items, PAIR.key, cell, seed)


def test_build_split_is_deterministic_and_seeded():
    params = SplitParams(n_test_per_cell=10, min_test_per_cell=5, seed=3)
    a = build_split(PAIR, _cells(), params, "reviews")
    b = build_split(PAIR, _cells(), params, "reviews")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    c = build_split(PAIR, _cells(), SplitParams(n_test_per_cell=10, min_test_per_cell=5, seed=4), "reviews")
    assert c["prompt_sets"][0]["demos"] != a["prompt_sets"][0]["demos"]


def test_small_agreeing_pool_is_reused_across_prompt_sets():
    split = build_split(PAIR, _cells(n_agree=10), SplitParams(n_test_per_cell=10, min_test_per_cell=5), "reviews")
    assert split["available"] and check_split(split) == []
    assert 8 <= split["counts"]["demo_1_1"] <= 10  # three sets of 8 drawn from the same 10


def test_test_items_shown_as_demonstrations_are_dropped():
    cells = label_cells(PAIR, _pool({(1, 1): 2, (0, 0): 2, (1, 0): 30, (0, 1): 40}))  # shots=4: all 4 agreeing shown
    dup = {**cells[(1, 1)][0], "id": "dup", "h2": 0}  # a disagreeing item with a demonstration's text
    cells[(1, 0)].append(dup)
    split = build_split(PAIR, cells, SplitParams(shots=4, n_sets=1, n_test_per_cell=100, min_test_per_cell=5), "x")
    roles = {it["uid"]: it["role"] for it in split["items"]}
    assert check_split(split) == []
    assert f"{PAIR.key}:dup" not in roles and split["counts"]["dropped_in_demos"] == 1
    assert split["counts"]["test_1_0"] == 29  # 31 (1,0) items - 1 disambiguation - the duplicate


def test_unavailable_with_reason_when_pool_is_too_small():
    small = build_split(PAIR, _cells(n_disagree=15), SplitParams(min_test_per_cell=5), "reviews")
    assert not small["available"] and "pool too small" in small["reason"] and "h1 != h2" in small["reason"]
    assert small["items"] == [] and small["prompt_sets"] == []
    tiny = build_split(PAIR, _cells(n_agree=3), SplitParams(), "reviews")
    assert not tiny["available"] and "h1 = h2" in tiny["reason"]


def test_check_split_reports_violations():
    split = build_split(PAIR, _cells(), SplitParams(n_test_per_cell=10, min_test_per_cell=5), "reviews")
    broken = json.loads(json.dumps(split))
    test_item = next(it for it in broken["items"] if it["role"] == "test")
    test_item["h2"] = test_item["h1"]
    demo_item = next(it for it in broken["items"] if it["role"] == "demo")
    test_item["text"] = demo_item["text"]
    problems = check_split(broken)
    assert any("h1 = h2" in p for p in problems) and any("appears among" in p for p in problems)


def test_demo_label():
    item = {"h1": 1, "h2": 0}
    assert demo_label(item, "plain", "h2") == 1
    assert demo_label(item, "disambig", "h1") == 1 and demo_label(item, "disambig", "h2") == 0
    with pytest.raises(ValueError):
        demo_label(item, "disambig", "h3")


def test_dedupe_texts_drops_conflicting_labels():
    items = [{"id": "a", "text": "x ", "h1": 1}, {"id": "b", "text": "x", "h1": 1},
             {"id": "c", "text": "y", "h1": 1}, {"id": "d", "text": "y", "h1": 0}, {"id": "e", "text": "z", "h1": 0}]
    assert [it["id"] for it in dedupe_texts(items)] == ["a", "e"]


# ---- the mirror: the authors' released splits and the raw pools ---------------------------------


@pytest.fixture(scope="module")
def datasets(mirror):
    return {"ambigprompt": list(ambigprompt.load_examples(mirror / "ambigprompt")),
            "imdb": list(icl_raw.load_imdb(mirror / "icl_raw" / "imdb")),
            "yelp": list(icl_raw.load_yelp(mirror / "icl_raw" / "yelp")),
            "mnli_genre": list(icl_raw.load_mnli(mirror / "icl_raw" / "mnli"))}


RELEASED = sorted(k for k, p in PAIRS.items() if p.released)


@pytest.mark.parametrize("key", RELEASED)
def test_released_splits_have_the_invariants(datasets, key):
    cells = released_cells(datasets["ambigprompt"], key)
    assert all(it["h1"] == it["h2"] for c in ((1, 1), (0, 0)) for it in cells[c])
    assert all(it["h1"] != it["h2"] for c in ((1, 0), (0, 1)) for it in cells[c])
    split = split_for_pair(PAIRS[key], datasets, SplitParams(), prefer="authors")
    assert split["source"] == "authors" and split["available"] and check_split(split) == []


# Share of the released examples whose h2 our feature function reproduces. The identity pair has
# no text feature (annotations); BoolQ overlap: the authors' exact rule is not released.
EXACT = ["boolq_answer_length", "boolq_answer_qword", "boolq_answer_structure", "nli_entailment_overlap",
         "comments_toxicity_uppercase"]


@pytest.mark.parametrize("key, floor", [(k, 1.0) for k in EXACT] + [("boolq_answer_overlap", 0.97)])
def test_feature_functions_reproduce_released_h2(datasets, key, floor):
    recs = [r for r in datasets["ambigprompt"] if r["pair"] == key]
    agree = sum(PAIRS[key].h2({"text": r["text"], "meta": {}}) == r["h2"] for r in recs)
    assert agree / len(recs) >= floor, f"{key}: {agree}/{len(recs)}"


@pytest.mark.parametrize("key", RELEASED)
def test_rebuilt_splits_satisfy_the_same_invariants(datasets, key):
    pair = PAIRS[key]
    split = split_for_pair(pair, datasets, SplitParams(), prefer="rebuild")
    if pair.pool is None:  # the identity pair can only use the released split
        assert split["source"] == "authors"
    else:
        assert split["source"] == pair.pool
    assert split["available"] and check_split(split) == []


def test_every_pair_is_built_or_unavailable_with_a_reason(datasets):
    built = {k: split_for_pair(p, datasets, SplitParams(), prefer="authors") for k, p in PAIRS.items()}
    missing = sorted(k for k, s in built.items() if not s["available"])
    assert missing == ["comments_toxicity_gender", "comments_toxicity_gender_lgbtq",
                       "comments_toxicity_race_black_white", "comments_toxicity_religion_muslim_christian"]
    assert all("identity annotations" in built[k]["reason"] for k in missing)
    assert all(check_split(s) == [] for s in built.values())
    assert built["sa_sentiment_domain"]["counts"]["test_1_0"] == 600  # the paper's 1,200 test items


def test_review_pool_is_cleaned(datasets):
    pool = build_pool("reviews", datasets)
    assert not any("<br" in it["text"] for it in pool)
    assert {it["meta"]["domain"] for it in pool} == {"imdb", "yelp"}


def test_max_words_must_exceed_the_length_threshold():
    with pytest.raises(ValueError, match="40-word"):
        SplitParams(max_words=40)
    with pytest.raises(ValueError, match="multiple of 4"):
        SplitParams(shots=6)
    assert SplitParams(max_words=41).max_words == 41


def test_rebuilt_review_pool_truncates_before_features(datasets):
    pool = build_pool("reviews", datasets, max_words=60)
    assert max(len(it["text"].split()) for it in pool) == 60
