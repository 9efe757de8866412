"""Text answer -> option classifiers for the ``first_token`` study.

The "text answer" of a prompt is the option the generated response chooses. Three classifiers map a
response to a label (the evaluators of the paper's Tables 2 and 4):

* :func:`paper_string_match` - the paper's string matching (appendix A.4: the first "[A-Z]." in the answer);
* :func:`string_match` - wobble's richer rules (no model), written while reading the annotated responses;
* an LLM judge, 0-shot or k-shot: :func:`judge_prompt` builds the chat, :func:`parse_judge_output`
  reads its answer;
* a finetuned (PEFT/LoRA) classifier: :func:`classifier_examples` formats its training/eval data
  (training runs elsewhere); its single-token output is read with :func:`parse_judge_output`.

Label space
-----------
A label is one of the shown option letters (``"A"``, ``"B"``, ...), :data:`REFUSAL`, :data:`MULTIPLE`
or :data:`UNKNOWN`. The paper's annotators label a refusal with the letter of the ``"Refused"``
option (e.g. ``"A. Refused"``); :func:`canonical_label` maps :data:`REFUSAL` onto that letter when the
prompt shows a ``"Refused"`` option so that predictions and gold live in one label space, and
:func:`label_to_option` maps any label to the ORIGINAL option identity (refusal -> ``"Refused"``,
multiple/unknown -> ``None``) for the mismatch metrics.

Chat templates: a stored response may contain the whole decoded conversation
(``"[INST] ... [/INST] answer"``); only the text after the last ``[/INST]`` (or another known
assistant marker) is the model's answer (:func:`strip_chat_template`).
"""

from __future__ import annotations

import re
from typing import Sequence

from wobble.studies.first_token.prompts import REFUSED, letter_to_option, refusal_letter

REFUSAL = "refusal"
MULTIPLE = "multiple"
UNKNOWN = "unknown"
SPECIAL_LABELS = (REFUSAL, MULTIPLE, UNKNOWN)

# Markers after which the assistant's turn starts, for responses stored with their prompt.
_ASSISTANT_MARKERS = ("[/INST]", "<|im_start|>assistant", "<start_of_turn>model", "<|assistant|>",
                      "<|start_header_id|>assistant<|end_header_id|>")
_END_MARKERS = ("</s>", "<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>")


def strip_chat_template(text: str) -> str:
    """The assistant's answer: the text after the last assistant marker, end-of-turn tokens removed."""
    if text is None:
        return ""
    cut = -1
    marker_len = 0
    for m in _ASSISTANT_MARKERS:
        i = text.rfind(m)
        if i > cut:
            cut, marker_len = i, len(m)
    out = text[cut + marker_len:] if cut >= 0 else text
    for m in _END_MARKERS:
        out = out.replace(m, "")
    return out


# ----------------------------------------------------------------------------------------------
# Gold labels of the paper's annotation
# ----------------------------------------------------------------------------------------------

_GOLD_SINGLE = re.compile(r"^\s*([A-Z])\s*(?:[.:)]|$)")
_GOLD_MULTI = re.compile(r"^\s*([A-Z]{2,})\s*$")


def gold_label(label_raw: object, letters: Sequence[str]) -> str:
    """Normalise one human annotation of MCQ-Mismatch ``labeled_model_output``.

    * ``"C. Rarely"``, ``"D: A fair amount"``, ``"C"`` -> ``"C"`` (the letter decides; in one row the
      annotated text disagrees with the option at that letter, ``"A. Minor reason"``);
    * several letters run together (``"CD"``, ``"ABEF"``) -> :data:`MULTIPLE`;
    * ``"nan"`` / empty / ``None`` / a letter that is not shown -> :data:`UNKNOWN`.

    A refusal keeps the letter of the ``"Refused"`` option, as annotated.
    """
    if label_raw is None:
        return UNKNOWN
    if isinstance(label_raw, float):  # a real NaN from pandas
        return UNKNOWN
    s = str(label_raw).strip()
    if not s or s.lower() in {"nan", "none", "null"}:
        return UNKNOWN
    m = _GOLD_MULTI.match(s)
    if m:
        distinct = {c for c in m.group(1) if c in letters}
        if len(distinct) > 1:
            return MULTIPLE
        if len(distinct) == 1:
            return distinct.pop()
        return UNKNOWN
    m = _GOLD_SINGLE.match(s)
    if m and m.group(1) in letters:
        return m.group(1)
    return UNKNOWN


def canonical_label(label: str, letters: Sequence[str], shown_options: Sequence[str]) -> str:
    """Put a predicted label into the annotation's label space (refusal -> the Refused letter)."""
    if label == REFUSAL:
        return refusal_letter(letters, shown_options) or REFUSAL
    if label in SPECIAL_LABELS:
        return label
    label = label.strip().upper()
    return label if label in letters else UNKNOWN


def label_to_option(label: str, letters: Sequence[str], shown_options: Sequence[str]) -> str | None:
    """ORIGINAL option identity of a label: option text, ``"Refused"`` for a refusal, else ``None``."""
    if label == REFUSAL:
        return REFUSED
    if label in (MULTIPLE, UNKNOWN):
        return None
    return letter_to_option(letters, shown_options, label)


# ----------------------------------------------------------------------------------------------
# Rule-based string matching
# ----------------------------------------------------------------------------------------------

_PAPER_PATTERN = re.compile(r"[A-Z]\.")


def paper_string_match(response_text: str) -> str:
    """The paper's string matching (appendix A.4): "We use RegEx to search for the option letter pattern
    "[A-Z]." in the answer."

    The answer is the text after the chat template (:func:`strip_chat_template`); the first match decides
    and its letter is the label, shown or not ("U.S." gives "U", a wrong answer, as the paper's regex
    would); no match -> :data:`UNKNOWN`. On the mirror's annotated test splits this gives the paper's
    Table 4 accuracies for the three Llama2 models exactly (21/83, 60/83, 51/83).
    """
    m = _PAPER_PATTERN.search(strip_chat_template(response_text))
    return m.group(0)[0] if m else UNKNOWN

_L = r"([A-Z])"
_NOT_WORD_AFTER = r"(?![\w'’])"
# "the answer is C", "Answer: D. A fair amount", "I would answer:\n\nC. Rarely", "my choice would be (B)"
_ANSWER_STMT = re.compile(
    r"\b(?:answer|choice|selection|response)\s*(?:is|would be|will be|=|:)?\s*:?\s*"
    r"(?:option\s+|letter\s+)?[\"'“(*\[]*" + _L + _NOT_WORD_AFTER,
    re.IGNORECASE,
)
# continuation of a letter list: ", C", " or E", ", and (F)", "/D"
_LIST_CONT = re.compile(r"\s*(?:,|;|/|\bor\b|\band\b)\s*(?:,\s*)?(?:or\s+|and\s+)?(?:option\s+)?[\"'“(*]*" + _L
                        + _NOT_WORD_AFTER)
# letter references anywhere in the text
_REF_PATTERNS = [
    re.compile(r"(?<![\w.'’])" + _L + r"[.)](?=\s|$|[\"'”*])"),          # "C. Rarely", "B) ..."
    re.compile(r"\(" + _L + r"\)"),                                     # "(B)"
    re.compile(r"(?<![\w.'’])" + _L + r"\s?:(?!\w)"),                   # "E: ...", "D : ..."
    re.compile(r"\b(?:option|options|letter|choice)\s+[\"'“(*]*" + _L + _NOT_WORD_AFTER, re.IGNORECASE),
    re.compile(r"(?<![\w.'’])" + _L + r"(?=\s*(?:,|/)\s*(?:or\s+|and\s+)?[A-Z]" + _NOT_WORD_AFTER + ")"),
    re.compile(r"(?<![\w.'’])" + _L + r"(?=\s+(?:or|and)\s+(?:option\s+)?[A-Z]" + _NOT_WORD_AFTER + ")"),  # "B or C"
    re.compile(r"(?:(?<=\bor )|(?<=\band )|(?<=, )|(?<=/))" + _L + _NOT_WORD_AFTER),
    re.compile(r"[\"'“*]" + _L + r"[\"'”*]"),                            # "'C'", "*C*"
]
_LEADING = re.compile(r"^[\s\"'“(*\[]*" + _L + r"(?=$|[\s.):,;\]\"'”*-])")

_REFUSAL_PHRASES = re.compile(
    r"\b(?:I\s+(?:cannot|can't|can not|won't|will not|do not feel comfortable|don't feel comfortable)"
    r"|I(?:'m|\s+am)\s+(?:not able|unable|not in a position)\s+to"
    r"|I\s+do(?:n't|\s+not)\s+(?:have|hold|provide)\s+(?:any\s+)?(?:personal|the ability|an? opinion|opinions|beliefs)"
    r"|as an (?:AI|artificial intelligence|assistant|language model)"
    r"|I(?:'m|\s+am)\s+(?:just\s+|only\s+)?an?\s+(?:AI|artificial intelligence|assistant|language model)"
    r"|I apologi[sz]e|not (?:appropriate|possible) (?:for me )?to (?:answer|select|choose|provide)"
    r"|(?:decline|refuse) to (?:answer|select|choose|respond))",
    re.IGNORECASE,
)
# "I would select option E", "I choose B" (not preceded by a negation)
_SELECT_STMT = re.compile(
    r"(?<!not )(?<!n't )(?<!cannot )(?<!never )\b(?:select|choose|pick|go with)\s+(?:the\s+)?(?:option\s+|letter\s+|answer\s+)?"
    r"[\"'“(*\[]*" + _L + _NOT_WORD_AFTER,
    re.IGNORECASE,
)


def _is_article(text: str, pos: int, letter: str, shown_options: Sequence[str]) -> bool:
    """Whether the capital at ``pos`` is a word, not an option letter.

    "A"/"I" followed by a lower-case word ("A lot of people", "I think") are words; so is a capital
    that starts one of the option texts ("A fair amount" when that is an option).
    """
    if letter in ("A", "I") and re.match(r"[ \t]+[a-z]", text[pos + 1:]):
        return True
    rest = text[pos:].lower()
    for opt in shown_options:
        o = opt.strip().lower()
        if o[:1] == letter.lower() and len(o) > 1 and not o[1].isalnum() and rest.startswith(o):
            return True
    return False


def _letters_after(text: str, m: re.Match, letters: Sequence[str], shown_options: Sequence[str]) -> list[str]:
    """The letter matched by ``m`` plus those of a following list ("A, C, F, or E")."""
    found: list[str] = []
    if m.group(1) in letters and not _is_article(text, m.start(1), m.group(1), shown_options):
        found.append(m.group(1))
    pos = m.end()
    while True:
        c = _LIST_CONT.match(text, pos)
        if not c or c.group(1) not in letters or _is_article(text, c.start(1), c.group(1), shown_options):
            break
        found.append(c.group(1))
        pos = c.end()
    return found


def letter_references(text: str, letters: Sequence[str], shown_options: Sequence[str] = ()) -> list[str]:
    """Distinct shown letters the text refers to as options, in order of first mention."""
    hits: list[tuple[int, str]] = []
    m = _LEADING.match(text)
    if m and m.group(1) in letters and not _is_article(text, m.start(1), m.group(1), shown_options):
        hits.append((m.start(1), m.group(1)))
    for pat in _REF_PATTERNS:
        for m in pat.finditer(text):
            lt = m.group(1)
            if lt in letters and not _is_article(text, m.start(1), lt, shown_options):
                hits.append((m.start(1), lt))
    out: list[str] = []
    for _, lt in sorted(hits):
        if lt not in out:
            out.append(lt)
    return out


def option_text_mentions(text: str, shown_options: Sequence[str], letters: Sequence[str]) -> list[str]:
    """Letters of the options whose full text occurs in ``text`` (case-insensitive, whole words).

    A match inside a longer matched option ("Important" inside "Very important") does not count.
    """
    low = text.lower()
    spans: list[tuple[int, int, str]] = []
    for lt, opt in zip(letters, shown_options):
        o = opt.strip().lower()
        if not o:
            continue
        for m in re.finditer(r"(?<!\w)" + re.escape(o) + r"(?!\w)", low):
            spans.append((m.start(), m.end(), lt))
    keep = []
    for s, e, lt in spans:
        inside = any((s2 <= s and e <= e2) and (e2 - s2) > (e - s) for s2, e2, _ in spans)
        if not inside:
            keep.append((s, lt))
    out: list[str] = []
    for _, lt in sorted(keep):
        if lt not in out:
            out.append(lt)
    return out


def looks_like_refusal(text: str) -> bool:
    """Whether the text contains a typical refusal / "as an AI" disclaimer phrase."""
    return bool(_REFUSAL_PHRASES.search(text))


def string_match(
    response_text: str,
    shown_options: Sequence[str],
    letters: Sequence[str],
    *,
    detect_refusal: bool = True,
) -> str:
    """Rule-based text answer: a shown letter, :data:`REFUSAL`, :data:`MULTIPLE` or :data:`UNKNOWN`.

    Rules, first that applies wins (only the text after the chat template's last ``[/INST]`` counts):

    1. an explicit answer statement ("the answer is C", "Answer: D. A fair amount", "I would answer:
       \\n\\nC.") names exactly one letter -> that letter; it names a list of letters ("would be
       A, C, F, or E") -> :data:`MULTIPLE`;
    2. the response opens with a letter ("C. Rarely ...") and its first sentence names no other
       letter -> that letter (the letter wins over a contradicting option text: the annotators
       label "E. Strongly favor." with E even where E is "Somewhat favor");
    3. letter references anywhere ("C. Rarely", "(B)", "option B", "E:", "A, B, E", "B or C", or
       a response that starts with a letter): one distinct letter -> it; several -> :data:`MULTIPLE`;
       a capital "A" that begins an option text ("A fair amount") is a word, not a letter;
    4. the full text of exactly one option occurs (longest match wins) -> its letter; several ->
       :data:`MULTIPLE`;
    5. a refusal phrase ("I cannot", "As an AI", "I don't have personal opinions", ...) and
       ``detect_refusal`` -> :data:`REFUSAL`;
    6. otherwise :data:`UNKNOWN`.

    Selecting the ``"Refused"`` option explicitly ("A. Refused") is returned as its letter, like
    any other option; :func:`canonical_label` maps :data:`REFUSAL` to that letter when comparing
    with the annotation.
    """
    text = strip_chat_template(response_text).strip()
    if not text:
        return UNKNOWN
    letters = list(letters)

    # 1. explicit answer statements
    stated: list[str] = []
    for m in [*_ANSWER_STMT.finditer(text), *_SELECT_STMT.finditer(text)]:
        for lt in _letters_after(text, m, letters, shown_options):
            if lt not in stated:
                stated.append(lt)
    if len(stated) == 1:
        return stated[0]
    if len(stated) > 1:
        return MULTIPLE

    # 2. a leading answer whose first sentence names no other letter ("B. Not a reason. ... The other
    #    options (A, C, and D) would not ..."); "A. Somewhat good or C. Somewhat bad" stays multiple
    lead = _LEADING.match(text)
    if lead and lead.group(1) in letters and not _is_article(text, lead.start(1), lead.group(1), shown_options):
        after = text[lead.end(1):]
        after = re.sub(r"^[.):\]\"'”*]+", "", after)  # the letter's own punctuation
        first = text[: lead.end(1)] + re.split(r"[.!?\n]", after, maxsplit=1)[0]
        if letter_references(first, letters, shown_options) == [lead.group(1)]:
            return lead.group(1)

    # 3. letter references
    refusing = detect_refusal and looks_like_refusal(text)
    refs = letter_references(text, letters, shown_options)
    if len(refs) == 1:
        return refs[0]
    if len(refs) > 1:
        return REFUSAL if refusing else MULTIPLE

    # 4. option texts
    mentions = option_text_mentions(text, shown_options, letters)
    if len(mentions) == 1:
        return mentions[0]
    if len(mentions) > 1:
        return REFUSAL if refusing else MULTIPLE

    # 5. refusal phrases
    if refusing:
        return REFUSAL
    return UNKNOWN
