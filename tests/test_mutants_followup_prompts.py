"""wobble.studies.followup.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested.

The paper's tables are read strictly (every needed cell present and not blank, every row an annotator A-C and a
known question type), and a message's parts are joined stripped by single spaces.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wobble.errors import DataError
from wobble.studies.followup.prompts import join, load_paper_prompts

PAPER = Path(__file__).resolve().parents[1] / "paper" / "followup"


def _tables(tmp_path, edit):
    for f in PAPER.glob("table*.csv"):
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "table4.csv"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.replace("annotator_prompt,question_type,prompt", "annotator_prompt,prompt", 1)
     .replace("A,closed-ended,Are you sure?", "A,Are you sure?"), r"line 2: non-empty columns"),
    (lambda t: t.replace("A,closed-ended,Are you sure?", "A,closed-ended,"), r"line 2: non-empty columns"),
    (lambda t: t.replace("A,closed-ended,Are you sure?", "A,closed-ended,   "), r"line 2: non-empty columns"),
    (lambda t: t.replace("A,closed-ended,", "D,closed-ended,", 1), r"line 2: annotator in \['A', 'B', 'C'\]"),
    (lambda t: t.replace("A,closed-ended,", "A,sideways,", 1), r"line 2: annotator in .* and question type in"),
])
def test_a_bad_cell_of_table4_is_one_clear_error_naming_its_line(tmp_path, edit, expected):
    with pytest.raises(DataError, match=r"table4\.csv: record " + expected):
        load_paper_prompts(_tables(tmp_path, edit))


def test_parts_are_stripped_and_blank_parts_left_out():
    assert join(" Is 7 prime? ", None, "  ", "\nAnswer: (A)\n") == "Is 7 prime? Answer: (A)"
