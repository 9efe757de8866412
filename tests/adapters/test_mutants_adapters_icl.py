"""wobble.adapters.icl: behaviour the mutation run (tests/tools/mutate.py) found untested."""

from __future__ import annotations

import pytest

from wobble.adapters.icl import ICLTemplate, balanced_sample
from wobble.errors import WobbleError

POOL = [{"text": f"t{i}", "h1": i % 2} for i in range(20)]


def test_a_negative_number_of_demonstrations_is_refused_even_when_it_divides_evenly():
    with pytest.raises(WobbleError, match="k=-2 demonstrations cannot be split equally"):
        balanced_sample(POOL, -2, lambda x: x["h1"], seed=0, key=lambda x: x["text"])


def test_a_candidate_keeps_the_verbalizers_case_and_loses_only_trailing_whitespace():
    t = ICLTemplate(answer=" {label} \n", verbalizer={1: "Positive", 0: "Negative"})
    assert t.candidates() == {1: " Positive", 0: " Negative"}


def test_the_sample_is_each_groups_seeded_share_in_a_seeded_order():
    from wobble.seeding import seeded_order, seeded_sample

    def key(x):
        return x["text"]

    got = balanced_sample(POOL, 4, lambda x: x["h1"], seed=3, key=key)
    share = [x for g in (0, 1) for x in seeded_sample([p for p in POOL if p["h1"] == g], 2, 3, key,
                                                        salt=f"wobble.icl.demos|{g!r}")]
    assert got == seeded_order(share, 3, key, salt="wobble.icl.demos|order")


def test_groups_of_any_kind_and_the_edges_of_k():
    items = [{"text": f"t{i}", "h": (None, 0, 1)[i % 3]} for i in range(9)]
    demos = balanced_sample(items, 3, lambda x: x["h"], seed=0, key=lambda x: x["text"])  # None sorts beside ints
    assert sorted(str(d["h"]) for d in demos) == ["0", "1", "None"]
    assert balanced_sample(items, 0, lambda x: x["h"], seed=0, key=lambda x: x["text"]) == []
    assert len(balanced_sample(items, 9, lambda x: x["h"], seed=0, key=lambda x: x["text"])) == 9  # every item
    with pytest.raises(WobbleError, match="no groups to sample from"):
        balanced_sample([], 2, lambda x: x["h"], seed=0, key=lambda x: x["text"])


def test_the_default_template_and_which_template_lacks_a_field():
    t = ICLTemplate()
    assert t.candidates() == {1: " 1", 0: " 0"}
    assert t.prompt([({"text": "good"}, 1)], {"text": "bad"}) == "Input: good\nLabel: 1\n\nInput: bad\nLabel:"
    with pytest.raises(WobbleError, match="instance template .* needs field 'text'"):
        t.demonstration({"sentence": "x"}, 1)
    with pytest.raises(WobbleError, match="instance template .* needs field 'text'"):
        t.prompt([], {"sentence": "x"})
    with pytest.raises(WobbleError, match="answer template .* needs field 'word'"):
        ICLTemplate(answer=" {word}").demonstration({"text": "x"}, 1)
    with pytest.raises(WobbleError, match="answer template .* needs field 'word'"):
        ICLTemplate(answer=" {word}").candidates()
    with pytest.raises(WobbleError, match=r"no verbalizer word for label 2; it has \[1, None\]"):
        ICLTemplate(verbalizer={None: "n/a", 1: "1"}).verbalize(2)
