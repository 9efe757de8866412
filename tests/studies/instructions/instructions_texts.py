"""The instruction texts the perturbation tests edit (task1557 of paper Tables 1 and 3, a longer SuperNI-style
definition) and the made-up proposers the insert, replace and condition tests share."""

from __future__ import annotations

from pathlib import Path

PAPER = Path(__file__).resolve().parents[4] / "shared" / "paper" / "instructions"

# task1557's definition: paper Table 1 / Table 3 "original instruction".
TASK1557 = ("In this task, you will be shown an incorrect English sentence. "
            "You need to generate a corrected form of the input sentence.")
# Table 3 "delete stopwords" with the <del>...</del> spans removed.
TASK1557_NO_STOPWORDS = ("task, shown incorrect English sentence. need generate corrected form input sentence.")
# A longer realistic definition (SuperNI task200 style) with contractions, hyphens, brackets and newlines.
LONG = ("In this task, you're given a statement and three sentences as choices. Your job is to determine which "
        "sentence can be inferred from the statement. Incorrect choices change the meaning in important ways or "
        "have details that are not mentioned in the statement. Indicate your answer as 1, 2, or 3 corresponding "
        "to the choice number of the selected sentence (e.g. a key-value pair).\nDon't add anything else.")


def zebra(left_words, right_words):
    return "zebra"


def flaky(left, right):
    """Rejected proposals at every other position: not a word, two words, the left or the right neighbour."""
    n = len(left)
    return ["zebra", "", "zebra", "two words", "zebra", ",", "zebra", (left or [""])[-1], "zebra",
            (right or [""])[0]][n % 10]


TEXT = ("In this task, you will be shown an incorrect English sentence. "
        "You need to generate a corrected form of the input sentence.")
