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
