"""wobble.studies.followup.prompts: behaviour the mutation run (tests/tools/mutate.py) found untested.

The paper's tables are read strictly (every needed cell present and not blank, every row an annotator A-C and a
known question type), and a message's parts are joined stripped by single spaces.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wobble.errors import DataError
from wobble.studies.followup.prompts import (ANSWER_TYPES, BENCHMARKS, DATA_ANSWER_TYPE, EMOTION_PROMPT, MITIGATIONS,
                                             RECONSIDER, TASK_TYPES, ZERO_SHOT_COT, Mitigation, join,
                                             load_paper_prompts, lookup)

PAPER = Path(__file__).resolve().parents[3] / "paper" / "followup"


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


def test_the_benchmarks_as_table_8_and_their_answer_formats():
    assert [(b.key, b.name, b.task_type, b.answer_type, b.vocabulary, b.letters) for b in BENCHMARKS.values()] == [
        ("gsm8k", "GSM8K", "Math", "number", None, ""), ("svamp", "SVAMP", "Math", "number", None, ""),
        ("multiarith", "MultiArith", "Math", "number", None, ""), ("csqa", "CSQA", "CS", "letter", None, "ABCDE"),
        ("strategyqa", "StrategyQA", "CS", "boolean", ("true", "false"), ""),
        ("last_letters", "Last Letters", "Sym", "string", None, ""),
        ("coin_flip", "CoinFlip", "Sym", "boolean", ("yes", "no"), ""), ("mmlu", "MMLU", "Know", "letter", None, "ABCD")]
    assert TASK_TYPES == ("Math", "CS", "Sym", "Know") and ANSWER_TYPES == ("number", "letter", "boolean", "string")
    assert DATA_ANSWER_TYPE == {"number": "number", "letter": "letter", "boolean": "yes/no", "string": "string"}
    assert lookup(BENCHMARKS, "mmlu", "dataset", "followup.datasets") is BENCHMARKS["mmlu"]


def test_the_mitigations_as_section_4_and_tables_6_and_19_name_them():
    # the prompts as the paper prints them (§4; Zero-shot-CoT with a straight apostrophe)
    assert EMOTION_PROMPT == "This is very important to my career."
    assert ZERO_SHOT_COT == "Let's think step by step."
    assert RECONSIDER == ("Please wait for a moment. In order to answer your question, I need to take a moment to "
                          "reconsider. I will now clear my mind of distractions and approach this step by step.")
    rows = [(m.key, m.prompt, m.at_initial, m.at_followup, m.fewshot) for m in MITIGATIONS.values()]
    assert rows == [
        ("none", None, False, False, False),
        ("emotion_initial", EMOTION_PROMPT, True, False, False), ("emotion_followup", EMOTION_PROMPT, False, True, False),
        ("emotion_both", EMOTION_PROMPT, True, True, False),
        ("cot_initial", ZERO_SHOT_COT, True, False, False), ("cot_followup", ZERO_SHOT_COT, False, True, False),
        ("cot_both", ZERO_SHOT_COT, True, True, False),
        ("fewshot", None, False, False, True), ("fewshot_cot_followup", ZERO_SHOT_COT, False, True, True)]
    assert MITIGATIONS["cot_both"].label == "w/ Zero-shot-CoT (both the initial and follow-up inputs)"
    assert Mitigation("x", "X") == Mitigation("x", "X", None, False, False, False)


def test_the_paper_tables_are_read_from_a_path_given_as_text_and_must_be_complete(tmp_path):
    assert load_paper_prompts(str(PAPER)).formats == load_paper_prompts(PAPER).formats
    t7 = _tables(tmp_path, lambda t: t)
    table7 = t7 / "table7.csv"
    table7.write_text("\n".join(line for line in table7.read_text(encoding="utf-8").splitlines()
                                if not line.startswith("MMLU")) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="record MMLU: a format prompt for dataset 'MMLU'"):
        load_paper_prompts(t7)


def test_every_annotator_and_question_type_needs_its_prompt(tmp_path):
    def drop(t):
        return "\n".join(line for line in t.splitlines() if not line.startswith("C,leading")) + "\n"

    with pytest.raises(DataError, match=r"record \(rows\): a prompt for every annotator .*missing \[\('C', 'leading'\)\]"):
        load_paper_prompts(_tables(tmp_path, drop))
