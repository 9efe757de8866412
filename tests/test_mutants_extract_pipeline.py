"""wobble.extract.pipeline: behaviour the mutation run (tests/tools/mutate.py) found untested: a bad
pipeline entry is reported at its place in the spec, nested alternatives included."""

from __future__ import annotations

import pytest

from wobble.errors import ConfigError
from wobble.extract import build_pipeline


@pytest.mark.parametrize("entry", [{"select": "last"}, 3, ["number"]])
def test_an_entry_without_a_filter_name_is_a_config_error(entry):
    with pytest.raises(ConfigError, match=r"at 'extract\[0\]': a filter name or a mapping with 'filter'"):
        build_pipeline([entry])


def test_nested_alternatives_name_their_place():
    with pytest.raises(ConfigError, match=r"at 'extract\[0\]\.alternatives\[1\]\[0\]\.filter'"):
        build_pipeline([{"filter": "take_first", "alternatives": [["number"], ["numbr"]]}])
