"""wobble.adapters.icl: the class-balanced demonstration sampler and the ICL template; expected strings by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from wobble.adapters.icl import ICLTemplate, balanced_sample
from wobble.errors import WobbleError


POOL = [{"text": f"t{i}", "h1": i % 2, "h2": (i // 2) % 2} for i in range(40)]


def test_balanced_sample_equal_counts_seeded_and_stable():
    demos = balanced_sample(POOL, 16, lambda x: x["h1"], seed=1, key=lambda x: x["text"])
    assert len(demos) == 16 and Counter(d["h1"] for d in demos) == {0: 8, 1: 8}
    assert len({d["text"] for d in demos}) == 16
    assert demos == balanced_sample(list(reversed(POOL)), 16, lambda x: x["h1"], seed=1, key=lambda x: x["text"])
    assert demos != balanced_sample(POOL, 16, lambda x: x["h1"], seed=2, key=lambda x: x["text"])
    # four (h1, h2) groups, 4 each
    quad = balanced_sample(POOL, 16, lambda x: (x["h1"], x["h2"]), seed=1, key=lambda x: x["text"])
    assert Counter((d["h1"], d["h2"]) for d in quad) == {(0, 0): 4, (0, 1): 4, (1, 0): 4, (1, 1): 4}


def test_balanced_sample_only_the_named_groups():
    agree = balanced_sample(POOL, 8, lambda x: (x["h1"], x["h2"]), seed=0, key=lambda x: x["text"],
                            groups=[(0, 0), (1, 1)])
    assert Counter((d["h1"], d["h2"]) for d in agree) == {(0, 0): 4, (1, 1): 4}


def test_balanced_sample_refuses_an_imbalance():
    with pytest.raises(WobbleError, match="k=15 .* 2 groups"):
        balanced_sample(POOL, 15, lambda x: x["h1"], seed=0, key=lambda x: x["text"])
    with pytest.raises(WobbleError, match="group 1 has 0 items, 2 needed"):
        balanced_sample([p for p in POOL if p["h1"] == 0], 4, lambda x: x["h1"], seed=0, key=lambda x: x["text"],
                        groups=[0, 1])


def test_icl_template_writes_the_prompt_and_label_words():
    t = ICLTemplate(instance="Input: {text}\nLabel:", answer=" {label}", verbalizer={1: "1", 0: "0"},
                    instructions="Classify.")
    demos = [({"text": "good film"}, 1), ({"text": "dull"}, 0)]
    assert t.prompt(demos, {"text": "great"}) == ("Classify.\n\nInput: good film\nLabel: 1\n\n"
                                                  "Input: dull\nLabel: 0\n\nInput: great\nLabel:")
    assert t.candidates() == {1: " 1", 0: " 0"}
    semantic = ICLTemplate(verbalizer={1: "positive", 0: "negative"}, answer=" {label}\n", separator="\n")
    assert semantic.prompt([({"text": "ok"}, 0)], {"text": "N/A"}) == "Input: ok\nLabel: negative\n\nInput: N/A\nLabel:"
    assert semantic.candidates() == {1: " positive", 0: " negative"}
    with pytest.raises(WobbleError, match="no verbalizer word for label 2"):
        t.demonstration({"text": "x"}, 2)
    with pytest.raises(WobbleError, match="needs field 'text'"):
        t.prompt([], {"sentence": "x"})


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
