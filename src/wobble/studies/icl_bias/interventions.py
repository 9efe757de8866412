"""The interventions of Si et al. (2023), §5.1, each steering towards h1 or h2, with their texts read
at run time from the paper's tables (``paper/icl_bias/table6.csv`` .. ``table10.csv``), not retyped.

* ``baseline``: no instruction, label words "1" / "0" after ``Category:``;
* ``verbalizer``: Table 6's label prefix and label words of the intended feature (Sentiment and
  Answer print no prefix there: the baseline's ``Category:`` is kept);
* ``instruction``: Table 7 / 8's instruction of the intended feature, prepended;
* ``explanation``: Table 9 / 10's template explanation of the demonstration's label after each
  demonstration; the model generates its explanation and answer (no calibration, as the authors);
* ``disambig``: half the demonstrations replaced by examples where h1 and h2 disagree, labelled by
  the intended feature (:mod:`.splits`).

Texts that name two pairs' values ("food / nice", "Christian/Jewish", "fiction/telephone") are
resolved to the pair's own value (:func:`resolve_alternatives`). Two texts are ours, and say so in
the style's ``notes``: the unreadable QA "Passage length (0)" explanation, written from its
"(1)" twin; and the nli_negation instruction, whose two answer clauses we swap so that it describes
the h2 the label map, verbalizer and explanation use (1 = contains a negation word; Table 8 prints
"1" for NOT having negations).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Mapping

from wobble.errors import ConfigError, DataError
from wobble.studies.icl_bias.pairs import Pair
from wobble.studies.icl_bias.prompts import BASE_PREFIX, PromptStyle

INTERVENTIONS = ("baseline", "verbalizer", "instruction", "explanation", "disambig")
TARGETS = ("h1", "h2")
TABLES = {"verbalizer": ("table6",), "instruction": ("table7", "table8"), "explanation": ("table9", "table10")}
NEGATION_PAIR = "nli_entailment_negation"
NEGATION_PRINTED = "“1” for not having negations and “0” for having negations"
NEGATION_OURS = "“1” for having negations and “0” for not having negations"
_VERBALIZER = re.compile(r"^(?:“(?P<prefix>[^”]*)”\s*)?1\s*-\s*(?P<one>.+?),\s*0\s*-\s*(?P<zero>.+)$")
_QUOTED = re.compile(r"“([^”]*)”")
_ALTERNATIVE = re.compile(r"([“‘]?)(\w+)([”’]?)\s*/\s*([“‘]?)(\w+)([”’]?)")


def load_paper_texts(paper_dir: str | Path) -> dict[str, dict[tuple[str, str], str]]:
    """``{"verbalizer"|"instruction"|"explanation": {(task lower-cased, feature): text}}`` from the CSVs."""
    out: dict[str, dict[tuple[str, str], str]] = {}
    for kind, stems in TABLES.items():
        rows: dict[tuple[str, str], str] = {}
        for stem in stems:
            path = Path(paper_dir) / f"{stem}.csv"
            if not path.is_file():
                raise DataError(path, "(file)", f"the paper's {kind} table ({stem}.csv)")
            with open(path, newline="", encoding="utf-8") as fh:
                for i, row in enumerate(csv.DictReader(fh), start=2):
                    if not {"task", "feature", kind}.issubset(row):
                        raise DataError(path, f"line {i}", f"columns task, feature, {kind}")
                    rows[(row["task"].strip().lower(), row["feature"].strip())] = row[kind] or ""
        out[kind] = rows
    return out


def resolve_alternatives(text: str, choose: tuple[str, str] | None) -> str:
    """``text`` with every "a / b" naming the two pairs' values replaced by this pair's value.

    ``choose = (ours, other)``; quotes are kept (“nice”/“food” -> “food”); a leftover standalone
    ``other`` (Table 8 prints "“0” for fiction" for both genre pairs) becomes ``ours``.
    """
    if choose is None:
        return text
    ours, other = choose
    pair = {ours.lower(), other.lower()}

    def pick(m: re.Match) -> str:
        a, b = m.group(2), m.group(5)
        if {a.lower(), b.lower()} != pair:
            return m.group(0)
        return (m.group(1) + a + m.group(3)) if a.lower() == ours.lower() else (m.group(4) + b + m.group(6))

    text = _ALTERNATIVE.sub(pick, text)
    return re.sub(rf"\b{re.escape(other)}\b", ours, text)


def _lookup(texts: Mapping, kind: str, pair: Pair, feature: str) -> str:
    key = (pair.task.lower(), feature)
    if key not in texts[kind]:
        raise DataError(f"paper/icl_bias/{'/'.join(TABLES[kind])}", f"{pair.task} / {feature}",
                        f"a {kind} row for this task and feature")
    return texts[kind][key]


def _feature(pair: Pair, target: str) -> str:
    return pair.h1_name if target == "h1" else pair.feature_name


def verbalizer(texts: Mapping, pair: Pair, target: str) -> tuple[str, tuple[str, str]]:
    """``(label prefix, (word for 0, word for 1))`` of the intended feature from Table 6."""
    raw = _lookup(texts, "verbalizer", pair, _feature(pair, target))
    m = _VERBALIZER.match(raw.strip())
    if not m:
        raise DataError("paper/icl_bias/table6.csv", f"{pair.task} / {_feature(pair, target)}",
                        f"a verbalizer like '“Prefix?” 1 - “a”, 0 - “b”', got {raw!r}")
    prefix = resolve_alternatives(m.group("prefix"), pair.choose) if m.group("prefix") else BASE_PREFIX
    words = []
    for part in (m.group("zero"), m.group("one")):
        options = _QUOTED.findall(part)
        if len(options) > 1 and pair.choose:
            options = [o for o in options if o.lower() == pair.choose[0].lower()]
        if len(options) != 1:
            raise DataError("paper/icl_bias/table6.csv", f"{pair.task} / {_feature(pair, target)}",
                            f"one label word per value for pair {pair.key}, got {part!r}")
        words.append(options[0])
    return prefix, (words[0], words[1])


def instruction(texts: Mapping, pair: Pair, target: str) -> tuple[str, tuple[str, ...]]:
    """The intended feature's instruction (Tables 7-8) and notes on what we changed."""
    text = resolve_alternatives(_lookup(texts, "instruction", pair, _feature(pair, target)), pair.choose)
    if pair.key == NEGATION_PAIR and target == "h2":
        if NEGATION_PRINTED not in text:
            raise DataError("paper/icl_bias/table8.csv", "Natural language inference / Hypothesis negation",
                            f"the printed clause {NEGATION_PRINTED!r} (ours swaps it)")
        return text.replace(NEGATION_PRINTED, NEGATION_OURS), (
            "negation instruction: answer clauses swapped to match h2 = 1 for a negation word (Table 8 says the "
            "opposite)",)
    return text, ()


def complement_explanation(text_for_1: str) -> str:
    """The "(0)" explanation written from its "(1)" twin: "longer" <-> "shorter", answer 1 -> 0."""
    swapped = re.sub(r"\b(longer|shorter)\b", lambda m: "shorter" if m.group(1) == "longer" else "longer", text_for_1)
    if swapped == text_for_1 or "the answer is 1." not in swapped:
        raise ValueError(f"cannot derive the (0) explanation from {text_for_1!r}")
    return swapped.replace("the answer is 1.", "the answer is 0.")


def explanations(texts: Mapping, pair: Pair, target: str) -> tuple[tuple[str, str], tuple[str, ...]]:
    """``((explanation for 0, for 1), notes)`` of the intended feature from Tables 9-10."""
    feature = _feature(pair, target)
    one = resolve_alternatives(_lookup(texts, "explanation", pair, f"{feature} (1)"), pair.choose)
    zero = resolve_alternatives(_lookup(texts, "explanation", pair, f"{feature} (0)"), pair.choose)
    if not one.strip():
        raise DataError("paper/icl_bias/table9-10", f"{pair.task} / {feature} (1)", "a non-empty explanation")
    if zero.strip():
        same = zero.split("Therefore")[0] == one.split("Therefore")[0]
        same = (f"explanations '{feature} (0)' and '(1)' give the same reason as printed (kept)",) if same else ()
        return (zero, one), same
    return (complement_explanation(one), one), (f"explanation '{feature} (0)' is unreadable in the paper; ours, "
                                                "written from its (1) twin",)


def style(texts: Mapping, pair: Pair, intervention: str, target: str | None = None) -> PromptStyle:
    """The prompt style of ``intervention`` steering ``pair`` towards ``target`` ("h1" / "h2")."""
    if intervention not in INTERVENTIONS:
        raise ConfigError("icl_bias.interventions", f"unknown intervention {intervention!r}; expected one of "
                          f"{list(INTERVENTIONS)}")
    if intervention == "baseline":
        return PromptStyle("baseline")
    if target not in TARGETS:
        raise ValueError(f"intervention {intervention!r} needs a target in {TARGETS}, got {target!r}")
    if intervention == "verbalizer":
        prefix, words = verbalizer(texts, pair, target)
        return PromptStyle(intervention, target, label_prefix=prefix, label_words=words)
    if intervention == "instruction":
        text, notes = instruction(texts, pair, target)
        return PromptStyle(intervention, target, instruction=text, notes=notes)
    if intervention == "explanation":
        exps, notes = explanations(texts, pair, target)
        return PromptStyle(intervention, target, explanations=exps, notes=notes)
    return PromptStyle(intervention, target, disambig=True)
