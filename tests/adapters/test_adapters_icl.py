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
