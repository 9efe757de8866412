"""wobble.extract.pipeline: behaviour the mutation run (tests/tools/mutate.py) found untested: a bad
pipeline entry is reported at its place in the spec, nested alternatives included."""

from __future__ import annotations

import pytest

from wobble.errors import ConfigError
from wobble.extract import Pipeline, Regex, TakeFirst, build_pipeline


@pytest.mark.parametrize("entry", [{"select": "last"}, 3, ["number"]])
def test_an_entry_without_a_filter_name_is_a_config_error(entry):
    with pytest.raises(ConfigError, match=r"at 'extract\[0\]': a filter name or a mapping with 'filter'"):
        build_pipeline([entry])


def test_nested_alternatives_name_their_place():
    with pytest.raises(ConfigError, match=r"at 'extract\[0\]\.alternatives\[1\]\[0\]\.filter'"):
        build_pipeline([{"filter": "take_first", "alternatives": [["number"], ["numbr"]]}])


def test_no_answer_from_a_step_is_the_pipelines_result_whatever_follows():
    # a step is any callable; once a step finds nothing, later steps are not asked
    assert Pipeline(Regex(r"answer: (\d+)"), lambda value: "guessed")("no answer line") is None
    assert TakeFirst(lambda value: "guessed")(None) is None


def test_take_first_takes_exactly_one_key_alternatives_as_a_non_empty_list():
    for entry in ({"filter": "take_first", "alternatives": [["number"]], "select": "last"},
                  {"filter": "take_first", "alternatives": "number"},
                  {"filter": "take_first", "alternatives": []}):
        with pytest.raises(ConfigError, match="take_first with exactly one key 'alternatives'"):
            build_pipeline([entry])


@pytest.mark.parametrize("spec", ["number", 5, {"filter": "number"}])
def test_a_pipeline_spec_must_be_a_list(spec):
    with pytest.raises(ConfigError, match="a non-empty list of filters"):
        build_pipeline(spec)
