"""The LLM judge and the finetuned classifier of the first_token study (Wang et al. 2024, §3 and appendix
A.4): the judge's 0-/k-shot prompt and the parsing of its answer, the classifier's input text, and the
paper's annotated responses as (prompt, options, response, gold) examples."""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from wobble.studies.first_token.classify import MULTIPLE, UNKNOWN, gold_label, string_match, strip_chat_template


JUDGE_INSTRUCTION = (
    "You are given a multiple-choice question, its answer options and a response written by an AI "
    "assistant. Decide which ONE option the response chooses. If the response refuses to answer, or "
    "does not choose any option, answer with the letter of the option \"Refused\". Reply with a single "
    "letter only."
)


def _options_block(shown_options: Sequence[str], letters: Sequence[str]) -> str:
    return "".join(f"{lt}. {opt}\n" for lt, opt in zip(letters, shown_options))


def _judge_user_turn(question: str, shown_options: Sequence[str], letters: Sequence[str], response: str) -> str:
    return (
        f"Question: {question}\n\nOptions:\n{_options_block(shown_options, letters)}\n"
        f"Response: {strip_chat_template(response).strip()}\n\nWhich option does the response choose?"
    )


def judge_prompt(
    question: str,
    shown_options: Sequence[str],
    letters: Sequence[str],
    response: str,
    shots: Sequence[Mapping] = (),
) -> list[dict[str, str]]:
    """Chat messages for an LLM judge; ``shots`` makes it k-shot.

    Each shot is a mapping with ``question``, ``shown_options``, ``letters``, ``response`` and
    ``label`` (a letter; a refusal is the letter of the Refused option, as annotated). The
    instruction opens the first user turn; each shot is one user turn and the gold letter as the
    assistant's reply, then the response to classify.
    """
    messages: list[dict[str, str]] = []
    for i, shot in enumerate(shots):
        for key in ("question", "shown_options", "letters", "response", "label"):
            if key not in shot:
                raise ValueError(f"shot {i} lacks {key!r}")
        user = _judge_user_turn(shot["question"], shot["shown_options"], shot["letters"], shot["response"])
        if i == 0:
            user = JUDGE_INSTRUCTION + "\n\n" + user
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": str(shot["label"])})
    user = _judge_user_turn(question, shown_options, letters, response)
    if not shots:
        user = JUDGE_INSTRUCTION + "\n\n" + user
    messages.append({"role": "user", "content": user})
    return messages


_JUDGE_LEAD = re.compile(r"^[\s\"'“(*\[]*(?:(?:the\s+)?(?:answer|option|letter)\s*(?:is)?\s*:?\s*)?[\"'“(*\[]*"
                         r"([A-Z])(?![A-Za-z])", re.IGNORECASE)


def parse_judge_output(text: str, letters: Sequence[str]) -> str:
    """Label from a judge's or classifier's output: its leading letter, else string matching.

    ``"C"``, ``" C. Rarely"``, ``"Answer: (B)"`` -> the letter; a letter that is not shown, or an
    output naming no or several letters, falls back to :func:`string_match` against the letters
    alone (no option texts) and may return :data:`MULTIPLE` or :data:`UNKNOWN`.
    """
    t = strip_chat_template(text or "").strip()
    m = _JUDGE_LEAD.match(t)
    if m:
        lt = m.group(1).upper()
        # a lower-case single "a" is an article unless it is the whole output
        if m.group(1).islower() and len(t) > 1 and t[m.end(1):m.end(1) + 1] == " ":
            lt = ""
        if lt in letters:
            return lt
    label = string_match(t, [], letters, detect_refusal=False)
    return label


CLASSIFIER_INSTRUCTION = "Classify the response."


def classifier_input(response: str, shown_options: Sequence[str], letters: Sequence[str]) -> str:
    """Input text of the finetuned classifier: response, the shown options, ``Answer:``.

    Same layout as the authors' released MCQ classifiers (mainlp/MCQ-Robustness README):
    ``"Classify the response." + " " + response + "\\nReferences:" + " \\nA. opt" ... + " \\nAnswer:"``.
    The chat template is applied by the training/inference code.
    """
    refs = "".join(f" \n{lt}. {opt}" for lt, opt in zip(letters, shown_options))
    return f"{CLASSIFIER_INSTRUCTION} {strip_chat_template(response).strip()}\nReferences:{refs} \nAnswer:"


def parse_shown_options(prompt: str) -> tuple[list[str], list[str]]:
    """Letters and option texts from a stored prompt (``"...\\n\\nA. opt \\nB. opt \\nAnswer:"``)."""
    body = prompt.split("\n\n", 1)[1] if "\n\n" in prompt else prompt
    letters, options = [], []
    for line in body.split("\n"):
        m = re.match(r"^([A-Z])\. (.*?) ?$", line)
        if m:
            letters.append(m.group(1))
            options.append(m.group(2))
    return letters, options


def annotated_view(row: Mapping, shuffle: str = "shuffle_0") -> dict:
    """One MCQ-Mismatch annotated row (``annotated_responses/<model>/*.jsonl``) as a flat record.

    Returns ``question``, ``shown_options``, ``letters``, ``response`` (the answer text, template
    stripped), ``label_raw``, ``gold`` (:func:`gold_label`), ``first_token_letter`` (the stored
    restricted argmax ``choice_letter``) and ``top_first_token`` (the unrestricted argmax token, or
    ``None`` where the file lacks it, e.g. mixtral).
    """
    s = row[shuffle]
    letters, shown = parse_shown_options(s["question"])
    return {
        "question": row.get("original_question"),
        "shown_options": shown,
        "letters": letters,
        "response": strip_chat_template(s.get("response", "")),
        "label_raw": s.get("label"),
        "gold": gold_label(s.get("label"), letters),
        "first_token_letter": s.get("choice_letter"),
        "top_first_token": s.get("max_first_token"),
    }


def classifier_examples(annotated_records: Iterable[Mapping], *, keep_ambiguous: bool = False) -> list[dict]:
    """``[{"text", "label"}]`` for training/evaluating the PEFT classifier.

    ``annotated_records`` are MCQ-Mismatch annotated rows (see :func:`annotated_view`) or flat
    records with ``response``, ``shown_options``, ``letters`` and ``label_raw`` (or ``gold``). Rows
    whose gold is :data:`MULTIPLE` or :data:`UNKNOWN` are dropped unless ``keep_ambiguous``; kept,
    their label is that string.
    """
    out = []
    for rec in annotated_records:
        view = annotated_view(rec) if "shuffle_0" in rec else rec
        gold = view.get("gold") or gold_label(view.get("label_raw"), view["letters"])
        if gold in (MULTIPLE, UNKNOWN) and not keep_ambiguous:
            continue
        out.append({"text": classifier_input(view["response"], view["shown_options"], view["letters"]),
                    "label": gold})
    return out
