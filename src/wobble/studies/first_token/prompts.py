"""Prompt construction for the ``first_token`` study (Wang et al. 2024, "My Answer is C").

An OpinionQA question is shown as a multiple-choice question whose options (the ``"Refused"`` option
included) are shuffled ten times; the model answers each shuffled prompt once by its first-token
log-probabilities over the option letters and once by its generated text.

Prompt format
-------------
Reconstructed character for character from the prompts stored in the paper's data repository
(mainlp/MCQ-Mismatch ``labeled_model_output/*/*_labeled.json``, field ``shuffle_0.question``, mirrored
in ``shared/data/opinionqa/annotated_responses``)::

    {general instruction} \\nQuestion: {question}\\n\\nA. {option} \\nB. {option} \\n...Answer:

i.e. the general instruction, a space and a newline, ``Question: `` and the question text, a blank
line, one line per option written ``"<LETTER>. <option> "`` (note the space before each newline) and
finally ``Answer:`` with no trailing space. The prompt is the single user turn of a chat (the
stored responses show the Llama-2 template ``[INST] {prompt} [/INST]`` with no system prompt); the
backend applies the model's own chat template.

Constraint levels (paper Table 1, ``shared/paper/first_token/table1.csv``)
--------------------------------------------------------------------------
``low``, ``medium``, ``high`` and ``example`` use the general-instruction text of Table 1 verbatim.
The ``example`` text is kept exactly as printed (one line): the paper text is a PDF extraction, so
any line breaks inside the example cannot be recovered and none are invented.

``example_abc`` is the control of the paper's Figure 3: the same example template, but its example
answer ``C`` (which could itself cause the bias towards "C") is replaced by ``A/B/C``. Everything
else is identical to ``example``; only the final ``Answer: C`` becomes ``Answer: A/B/C``.

Shuffling
---------
The ``"Refused"`` option is shuffled like every other option. This is what the paper's data show:
in ``subset_414.jsonl`` (``mcq_mismatch_options_as_listed``) and in the ten stored shuffles of the
mistral-7b test file the refusal appears at every position (last in only 167 of 830 mistral
prompts). Permutations are a pure function of ``(seed, shuffle_index, options, key)`` through
sha256, independent of Python's ``hash()`` randomisation and of the ``random`` module.
"""

from __future__ import annotations

from typing import Sequence

from wobble.adapters import mcq
from wobble.adapters.mcq import LETTERS, apply_permutation, letter_to_option, option_letters, option_to_letter

CONSTRAINTS: list[str] = ["low", "medium", "high", "example", "example_abc"]

#: Paper Table 1 label of each constraint key (``example_abc`` is the Figure-3 variant of Example).
CONSTRAINT_LABELS: dict[str, str] = {
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "example": "Example",
    "example_abc": "Example",
}

#: Directory names of the paper's per-constraint outputs (``outputs/<name>/<model>/mapping_result.json``).
PAPER_OUTPUT_DIRS: dict[str, str] = {
    "low": "Low Constraint",
    "medium": "Middle Constraint",
    "high": "High Constraint",
    "example": "Example Templates",
}

_BASE = "Please read the multiple-choice question below carefully and select ONE of the listed options"
_EXAMPLE = (
    _BASE + ". Here is an example of the format: Question: Question 1 A. Option 1 B. Option 2 C. Option 3 Answer: "
)

GENERAL_INSTRUCTIONS: dict[str, str] = {
    "low": _BASE + ".",
    "medium": _BASE + " and only give a single letter.",
    "high": _BASE + " and start your answer with a single letter.",
    "example": _EXAMPLE + "C",
    "example_abc": _EXAMPLE + "A/B/C",
}

#: The option text OpinionQA uses for a refusal; it is one of the options of all 414 paper questions.
REFUSED = "Refused"



#: Salt of the option shuffles (kept from the first release: the same permutations).
SHUFFLE_SALT = "wobble.first_token.shuffle"


def shuffle_options(options: Sequence[str], seed: int, shuffle_index: int, key: str = "") -> list[int]:
    """Seeded permutation of ``range(len(options))``: ``shown[i] = options[perm[i]]``.

    :func:`wobble.adapters.mcq.shuffle_options` with this study's salt: Fisher-Yates driven by sha256 of
    ``(seed, shuffle_index, key, options)``, the same on every machine. ``key`` (the question uid)
    separates questions that share an option list; "Refused" is shuffled like the others.
    """
    return mcq.shuffle_options(options, seed, shuffle_index, key, salt=SHUFFLE_SALT)


def prompt_text(question: str, options_in_order: Sequence[str], constraint: str) -> str:
    """The exact user-turn text (see the module docstring for the format)."""
    if constraint not in GENERAL_INSTRUCTIONS:
        raise ValueError(f"unknown constraint {constraint!r}; expected one of {CONSTRAINTS}")
    lines = mcq.format_options(options_in_order, line="{letter}. {option} \n")
    return f"{GENERAL_INSTRUCTIONS[constraint]} \nQuestion: {question}\n\n{lines}Answer:"


def build_prompt(
    question: str, options_in_order: Sequence[str], constraint: str
) -> tuple[list[dict[str, str]], list[str]]:
    """Chat messages (one user turn) and the option letters ``A, B, C, ...`` in shown order."""
    text = prompt_text(question, options_in_order, constraint)
    return [{"role": "user", "content": text}], option_letters(len(options_in_order))


def is_refusal_option(option: str | None) -> bool:
    return option is not None and option.strip().lower() == REFUSED.lower()


def refusal_letter(letters: Sequence[str], shown_options: Sequence[str]) -> str | None:
    """The letter of the ``"Refused"`` option in this prompt, or ``None`` if it is not shown."""
    for lt, opt in zip(letters, shown_options):
        if is_refusal_option(opt):
            return lt
    return None


def shuffled_prompt(
    question: str, options: Sequence[str], constraint: str, seed: int, shuffle_index: int, key: str = ""
) -> dict:
    """Everything one inference record needs about a shuffled prompt.

    Returns ``{"messages", "letters", "shown_options", "permutation", "refusal_letter"}``; the
    permutation maps shown position -> index in ``options``.
    """
    perm = shuffle_options(options, seed, shuffle_index, key)
    shown = apply_permutation(options, perm)
    messages, letters = build_prompt(question, shown, constraint)
    return {
        "messages": messages,
        "letters": letters,
        "shown_options": shown,
        "permutation": perm,
        "refusal_letter": refusal_letter(letters, shown),
    }


__all__ = ["CONSTRAINTS", "GENERAL_INSTRUCTIONS", "LETTERS", "REFUSED", "apply_permutation", "build_prompt",
           "is_refusal_option", "letter_to_option", "option_letters", "option_to_letter", "prompt_text",
           "refusal_letter", "shuffle_options", "shuffled_prompt"]
