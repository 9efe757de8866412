"""first_token prompts: exact Table-1 instructions, exact stored prompt format, seeded shuffles."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from wobble.studies.first_token.judge import parse_shown_options
from wobble.studies.first_token.prompts import (CONSTRAINT_LABELS, CONSTRAINTS, GENERAL_INSTRUCTIONS, PAPER_OUTPUT_DIRS,
                                                REFUSED, apply_permutation, build_prompt, is_refusal_option,
                                                letter_to_option, option_letters, option_to_letter, prompt_text,
                                                refusal_letter, shuffle_options, shuffled_prompt)

PAPER = Path(__file__).resolve().parents[3] / "paper" / "first_token"  # committed; a missing file is a failure

Q = "How often, if ever, do you worry about losing your job?"
OPTS = ["Every day", "Almost every day", "Sometimes", "Rarely", "Never", "Refused"]


def test_constraints_listed():
    assert CONSTRAINTS == ["low", "medium", "high", "example", "example_abc"]
    assert set(GENERAL_INSTRUCTIONS) == set(CONSTRAINTS)


def test_general_instructions_equal_table1():
    path = PAPER / "table1.csv"
    with open(path, encoding="utf-8", newline="") as f:
        table = {row["constraint"]: row["general_instruction_prompt"] for row in csv.DictReader(f)}
    assert GENERAL_INSTRUCTIONS["low"] == table["Low"]
    assert GENERAL_INSTRUCTIONS["medium"] == table["Medium"]
    assert GENERAL_INSTRUCTIONS["high"] == table["High"]
    assert GENERAL_INSTRUCTIONS["example"] == table["Example"]
    # the Figure-3 control: the same template, the example's answer "C" replaced by "A/B/C"
    assert table["Example"].endswith("Answer: C")
    assert GENERAL_INSTRUCTIONS["example_abc"] == table["Example"][: -len("C")] + "A/B/C"


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_prompt_layout_each_constraint(constraint):
    messages, letters = build_prompt(Q, OPTS[:3], constraint)
    assert letters == ["A", "B", "C"]
    assert messages == [{"role": "user", "content": (
        GENERAL_INSTRUCTIONS[constraint]
        + f" \nQuestion: {Q}\n\nA. Every day \nB. Almost every day \nC. Sometimes \nAnswer:"
    )}]


def test_prompt_matches_the_papers_stored_prompts(mirror):
    """prompt_text reproduces, byte for byte, every Medium prompt stored in MCQ-Mismatch."""
    n = 0
    for f in sorted((mirror / "opinionqa" / "annotated_responses").glob("*/*.jsonl")):
        model = f.parent.name
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for key, s in row.items():
                if not key.startswith("shuffle_"):
                    continue
                letters, shown = parse_shown_options(s["question"])
                assert sorted(shown) == sorted(row["references"])
                ours = prompt_text(row["original_question"], shown, "medium")
                if model == "mixtral":
                    # the authors' Mixtral run has a typo in its instruction ("give a single.")
                    ours = ours.replace("single letter.", "single.")
                assert ours == s["question"], (f, key)
                n += 1
    assert n >= 2400


def test_shuffle_is_a_seeded_permutation():
    p = shuffle_options(OPTS, seed=13, shuffle_index=4, key="q1")
    assert sorted(p) == list(range(len(OPTS)))
    assert p == shuffle_options(OPTS, seed=13, shuffle_index=4, key="q1")
    perms = {tuple(shuffle_options(OPTS, 13, i, "q1")) for i in range(10)}
    assert len(perms) >= 8  # 720 permutations: ten shuffles are (almost surely) distinct
    assert shuffle_options(OPTS, 14, 4, "q1") != p or shuffle_options(OPTS, 15, 4, "q1") != p
    assert shuffle_options(["x"], 0, 0) == [0]
    assert shuffle_options([], 0, 0) == []


def test_shuffle_is_pinned_and_independent_of_hash_seed():
    """sha256-derived: the same permutation in another interpreter with another PYTHONHASHSEED."""
    here = shuffle_options(OPTS, seed=7, shuffle_index=3, key="WORRYB_W26")
    code = ("from wobble.studies.first_token.prompts import shuffle_options;"
            f"print(shuffle_options({OPTS!r}, seed=7, shuffle_index=3, key='WORRYB_W26'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout.strip()
    assert out == str(here)
    # pinned value: changing the derivation would silently change every stored prompt
    assert here == PINNED


PINNED = [1, 3, 2, 0, 5, 4]


def test_refused_is_shuffled_to_every_position():
    pos = Counter()
    for i in range(600):
        shown = apply_permutation(OPTS, shuffle_options(OPTS, 0, i, "q"))
        pos[shown.index(REFUSED)] += 1
    assert set(pos) == set(range(len(OPTS)))
    assert min(pos.values()) > 600 / len(OPTS) / 2  # roughly uniform, not kept last


def test_shuffled_letters_map_back_to_the_same_option():
    for i in range(10):
        sp = shuffled_prompt(Q, OPTS, "high", seed=1, shuffle_index=i, key="q")
        text = sp["messages"][0]["content"]
        for pos, letter in enumerate(sp["letters"]):
            original = OPTS[sp["permutation"][pos]]
            assert letter_to_option(sp["letters"], sp["shown_options"], letter) == original
            assert f"\n{letter}. {original} \n" in text  # the letter is printed next to that option
            assert option_to_letter(sp["letters"], sp["shown_options"], original) == letter
        rl = sp["refusal_letter"]
        assert letter_to_option(sp["letters"], sp["shown_options"], rl) == REFUSED
        assert refusal_letter(sp["letters"], sp["shown_options"]) == rl
    assert letter_to_option(["A", "B"], ["x", "y"], "C") is None
    assert letter_to_option(["A", "B"], ["x", "y"], " b ") == "y"
    assert letter_to_option(["A", "B"], ["x", "y"], None) is None
    assert refusal_letter(["A", "B"], ["x", "y"]) is None


def test_letters_and_bad_inputs():
    assert option_letters(10)[-1] == "J"  # one paper question has 10 options (Table 5's "J")
    with pytest.raises(ValueError):
        option_letters(0)
    with pytest.raises(ValueError):
        prompt_text(Q, OPTS, "extreme")
    with pytest.raises(ValueError):
        apply_permutation(OPTS, [0, 0, 1, 2, 3, 4])


def test_the_refused_option_is_found_in_any_case_and_spacing():
    # option texts read back from a stored prompt keep the space before the line break ("B. Refused \n")
    assert is_refusal_option("Refused ") and is_refusal_option(" REFUSED") and is_refusal_option("refused")
    assert not is_refusal_option("Refused to say") and not is_refusal_option(None)
    assert refusal_letter(["A", "B", "C"], ["Yes", "Refused ", "No"]) == "B"


def test_the_constraint_levels_as_table_1_and_the_authors_output_folders_name_them():
    assert CONSTRAINT_LABELS == {"low": "Low", "medium": "Medium", "high": "High", "example": "Example",
                                 "example_abc": "Example"}
    assert PAPER_OUTPUT_DIRS == {"low": "Low Constraint", "medium": "Middle Constraint", "high": "High Constraint",
                                 "example": "Example Templates"}


def test_the_default_question_key_is_empty():
    opts = [f"option {i}" for i in range(8)] + ["Refused"]  # 9! orders: another key gives another one
    assert shuffle_options(opts, 0, 3) == shuffle_options(opts, 0, 3, "") != shuffle_options(opts, 0, 3, "q")
    assert shuffled_prompt("Q?", opts, "low", 0, 3) == shuffled_prompt("Q?", opts, "low", 0, 3, "")
