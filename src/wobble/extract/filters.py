"""Answer extraction filters: each maps a text (or the previous filter's result) to an answer or None.

Models answer in prose: "a rationale ... Answer: 18", "the answer is (B)", "**Answer:** true",
"Answer: $1,080.00". A study reads its answer by chaining small filters (lm-evaluation-harness
keeps filter lists the same way, e.g. regex then take-first), see :mod:`wobble.extract.pipeline`.
Every filter is a frozen dataclass (its fields are its whole configuration, so a pipeline can be
written to a predictions file and rebuilt) and returns ``None`` when it finds no answer; ``None``
passes through every filter unchanged. ``select`` is ``"first"`` or ``"last"`` (the followup study
reads the final answer of a reply that changes its mind, e.g. "(A) ... actually (C)": ``"last"``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import ClassVar

SELECT = ("first", "last")


def _check_select(select: str) -> None:
    if select not in SELECT:
        raise ValueError(f"select must be one of {SELECT}, got {select!r}")


def _pick(hits: list[tuple[int, str]], select: str) -> str | None:
    """The hit at the smallest (``first``) or largest (``last``) text position."""
    if not hits:
        return None
    hits = sorted(hits, key=lambda h: h[0])
    return hits[0][1] if select == "first" else hits[-1][1]


class Filter:
    """Base class: ``filter(value)`` is ``None`` for ``None`` and ``self.apply(value)`` otherwise."""

    name: ClassVar[str] = ""

    def __call__(self, value: str | None) -> str | None:
        return None if value is None else self.apply(str(value))

    def apply(self, text: str) -> str | None:
        raise NotImplementedError

    def spec(self) -> dict:
        """``{"filter": name, **fields}``: what :func:`wobble.extract.pipeline.build_pipeline` reads."""
        return {"filter": self.name, **{k: v for k, v in asdict(self).items()}}


@dataclass(frozen=True)
class Regex(Filter):
    """The first / last match of ``pattern``: its ``group`` (default: group 1 if the pattern has groups,
    else the whole match), stripped; ``None`` when there is no match or the group is empty."""

    pattern: str
    group: int | None = None
    select: str = "first"
    ignore_case: bool = True
    name: ClassVar[str] = "regex"

    def __post_init__(self):
        _check_select(self.select)
        rx = re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)
        if self.group is not None and not 0 <= self.group <= rx.groups:
            raise ValueError(f"regex {self.pattern!r} has {rx.groups} groups, asked for group {self.group}")

    def apply(self, text: str) -> str | None:
        rx = re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)
        g = self.group if self.group is not None else (1 if rx.groups else 0)
        hits = [(m.start(), (m.group(g) or "").strip()) for m in rx.finditer(text)]
        return _pick([h for h in hits if h[1]], self.select)


# A number: optional minus (ASCII or U+2212) and dollar sign, digits with optional thousands commas,
# optional decimals; not glued to a preceding letter, digit, '.' or ','.
_NUMBER = re.compile(r"(?<![\w.,])([-\u2212]?)\$?([-\u2212]?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?!\d)")


def normalize_number(sign: str, digits: str) -> str:
    """``"-", "1,080.00"`` -> ``"-1080"``: no commas, no leading zeros, no trailing decimal zeros."""
    whole, _, frac = digits.replace(",", "").partition(".")
    whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
    value = f"{whole}.{frac}" if frac else whole
    return value if value == "0" or not sign else "-" + value


@dataclass(frozen=True)
class Number(Filter):
    """The first / last number in the text, normalised: "$1,080.00" -> "1080", "-3.50" -> "-3.5"."""

    select: str = "first"
    name: ClassVar[str] = "number"

    def __post_init__(self):
        _check_select(self.select)

    def apply(self, text: str) -> str | None:
        hits = [(m.start(), normalize_number(m.group(1) or m.group(2), m.group(3))) for m in _NUMBER.finditer(text)]
        return _pick(hits, self.select)


def _letter_patterns(letters: str) -> list[re.Pattern]:
    """Where an option letter stands in prose, each pattern's group 1 being the letter."""
    L = f"([{re.escape(letters)}])"
    return [re.compile(p, re.MULTILINE) for p in (
        rf"\(\s*{L}\s*\)",                                                     # (B)
        rf"(?i:answer)(?:\s+(?i:is|would be|should be))?\s*:?\s*[*_]*\s*\(?{L}(?![\w])",  # answer is B / Answer: B
        rf"(?i:option|choice)\s+\(?{L}(?![\w])",                              # option B
        rf"[*_]{{1,2}}\(?{L}\)?[.):]?[*_]{{1,2}}",                            # **B**, **(B)**
        rf"^\s*\(?{L}[.):](?=\s|$)",                                           # B. text / B) text at a line start
        rf"^\s*{L}\s*$",                                                       # a letter alone on its line
    )]


@dataclass(frozen=True)
class OptionLetter(Filter):
    """An option letter written as "(B)", "answer is B", "Answer: B", "option B", "**B**", "B." / "B)"
    at a line start, or alone on a line; the first / last such place in the text. Letters are
    upper case (an article "a" is never an option)."""

    letters: str = "ABCDE"
    select: str = "first"
    name: ClassVar[str] = "option_letter"

    def __post_init__(self):
        _check_select(self.select)
        if not self.letters or not self.letters.isalpha() or not self.letters.isupper():
            raise ValueError(f"letters must be upper-case letters, got {self.letters!r}")

    def apply(self, text: str) -> str | None:
        hits = [(m.start(1), m.group(1)) for rx in _letter_patterns(self.letters) for m in rx.finditer(text)]
        return _pick(hits, self.select)


_BOOL = re.compile(r"\b(yes|no|true|false)\b", re.IGNORECASE)
BOOL_STYLES = {"yes/no": ("yes", "no"), "true/false": ("true", "false")}


@dataclass(frozen=True)
class YesNo(Filter):
    """The first / last of the words yes / no / true / false (any case), written in ``style``:
    ``"yes/no"`` gives "yes" or "no", ``"true/false"`` gives "true" or "false" (yes = true)."""

    style: str = "yes/no"
    select: str = "first"
    name: ClassVar[str] = "yes_no"

    def __post_init__(self):
        _check_select(self.select)
        if self.style not in BOOL_STYLES:
            raise ValueError(f"style must be one of {sorted(BOOL_STYLES)}, got {self.style!r}")

    def apply(self, text: str) -> str | None:
        pos, neg = BOOL_STYLES[self.style]
        hits = [(m.start(), pos if m.group(1).lower() in ("yes", "true") else neg) for m in _BOOL.finditer(text)]
        return _pick(hits, self.select)


_QUOTED_LETTERS = re.compile(r"[\"'\u201c\u2018`]([A-Za-z]+)[\"'\u201d\u2019`]")
_LETTERS = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class LetterString(Filter):
    """A string of letters (e.g. a last-letter concatenation "nk"): the first / last quoted one when
    the text quotes one, else the first / last run of letters; lower-cased unless ``lower=False``."""

    select: str = "first"
    lower: bool = True
    name: ClassVar[str] = "letter_string"

    def __post_init__(self):
        _check_select(self.select)

    def apply(self, text: str) -> str | None:
        hits = [(m.start(), m.group(1)) for m in _QUOTED_LETTERS.finditer(text)]
        if not hits:
            hits = [(m.start(), m.group(0)) for m in _LETTERS.finditer(text)]
        found = _pick(hits, self.select)
        return found.lower() if found is not None and self.lower else found


@dataclass(frozen=True)
class Strip(Filter):
    """Strip whitespace and ``chars`` from both ends; ``None`` when nothing is left."""

    chars: str = ""
    name: ClassVar[str] = "strip"

    def apply(self, text: str) -> str | None:
        return text.strip().strip(self.chars + " \t\r\n") or None


_MARKDOWN = re.compile(r"[*_`]+")
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = " \t\r\n.,;:!?\"'()[]{}\u201c\u201d\u2018\u2019"


@dataclass(frozen=True)
class Normalize(Filter):
    """Lower-case, drop markdown emphasis (``*``, ``_``, backticks), collapse whitespace, strip
    punctuation at both ends: "**Paris.**" -> "paris"; ``None`` when nothing is left."""

    name: ClassVar[str] = "normalize"

    def apply(self, text: str) -> str | None:
        text = _SPACES.sub(" ", _MARKDOWN.sub("", text.lower()))
        return text.strip(_EDGE_PUNCT) or None


FILTERS: dict[str, type[Filter]] = {cls.name: cls for cls in (Regex, Number, OptionLetter, YesNo, LetterString,
                                                                Strip, Normalize)}


def filter_fields(cls: type[Filter]) -> list[str]:
    """The configuration fields of a filter class (what a spec may set)."""
    return [f.name for f in fields(cls)]
