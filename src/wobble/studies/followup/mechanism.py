"""The Follow-up Questioning Mechanism (§2): conditions, misleading answers and the next user turn.

* A :class:`Condition` is one way of questioning: the Direct Form (one follow-up type, §2.2) or the
  Progressive Form (closed-ended, open-ended, leading in one dialogue), the annotator (A/B/C, Table 4)
  of each round's text, and a mitigation (§4).
* ``{MA}``, the misleading answer of a leading question (Table 1: "options or values other than the
  correct answer"), is drawn per item and question type, seeded (:func:`wobble.seeding.make_rng`),
  never the gold: another option letter; the other boolean word; another letter string of the same
  length (a reordering of the gold's letters, or one letter changed when all are equal); another
  number. The paper does not say how it chose numbers; its examples (Tables 15, 23) are mostly
  numbers of the problem or its intermediate results, so ours is drawn from the numbers in the
  question and the dataset's annotated intermediate results (GSM8K ``<<a*b=c>>``, SVAMP / MultiArith
  equations), and from gold ± 1..10 when there are none.
* A dialogue is its initial messages (few-shot demonstrations, then the question) and its planned
  follow-up messages; :func:`next_user_turn` gives the runner
  (:func:`wobble.runner.run_dialogues_resumable`) the next one after each reply. ``gate`` says which
  items are questioned further: ``correct`` (the paper's protocol: only initially correct answers,
  §3.1), ``wrong`` (Table 5: only initially wrong ones) or ``all`` (both from one dialogue each).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Mapping, Sequence

from wobble.errors import ConfigError
from wobble.extract import normalize_number
from wobble.seeding import make_rng
from wobble.studies.followup.extractors import extract_answer, gold_answer, is_correct
from wobble.studies.followup.prompts import (BENCHMARKS, FOLLOWUP_TYPES, MITIGATIONS, PROGRESSIVE_ORDER, VARIANTS,
                                             Benchmark, PaperPrompts, followup_message, initial_message, lookup)

FORMS = ("direct", "progressive")
GATES = ("correct", "wrong", "all")
#: One-letter codes of the follow-up types (Table 1's C, O, L; E = emotional disturbance, Table 16; N = wobble's
#: neutral control, :data:`.prompts.NEUTRAL_FOLLOWUP`).
CODES = {"closed-ended": "C", "open-ended": "O", "leading": "L", "emotional": "E", "neutral": "N"}
_TYPES = {v: k for k, v in CODES.items()}


@dataclass(frozen=True)
class Condition:
    """A form, each round's (follow-up type, annotator), and a mitigation key; ``id`` names it in files,
    e.g. ``direct_LB_none`` or ``progressive_CA.OA.LA_cot_both``."""

    form: str
    rounds: tuple[tuple[str, str], ...]
    mitigation: str = "none"

    def __post_init__(self):
        lookup({f: f for f in FORMS}, self.form, "form", "followup.forms")
        lookup(MITIGATIONS, self.mitigation, "mitigation", "followup.mitigations")
        for qtype, variant in self.rounds:
            lookup({t: t for t in FOLLOWUP_TYPES}, qtype, "follow-up type", "followup.question_types")
            lookup({v: v for v in VARIANTS}, variant, "prompt variant", "followup.variants")
        want = 1 if self.form == "direct" else len(PROGRESSIVE_ORDER)
        if len(self.rounds) != want:
            raise ConfigError("followup.forms", f"{want} round(s) in the {self.form} form, got {len(self.rounds)}")
        if self.form == "progressive" and tuple(q for q, _ in self.rounds) != PROGRESSIVE_ORDER:
            raise ConfigError("followup.forms", f"progressive rounds in the order {list(PROGRESSIVE_ORDER)}")

    @property
    def id(self) -> str:
        return f"{self.form}_{'.'.join(CODES[q] + v for q, v in self.rounds)}_{self.mitigation}"

    @classmethod
    def parse(cls, text: str) -> Condition:
        """The condition named ``text`` (inverse of :attr:`id`)."""
        try:
            form, rounds, mitigation = text.split("_", 2)
            parsed = tuple((_TYPES[r[0]], r[1:]) for r in rounds.split("."))
        except (ValueError, KeyError, IndexError):
            raise ConfigError("condition", f"'<form>_<C|O|L|E|N><A|B|C>[.<...>]_<mitigation>', got {text!r}") from None
        return cls(form, parsed, mitigation)


def direct(question_type: str, variant: str = "A", mitigation: str = "none") -> Condition:
    return Condition("direct", ((question_type, variant),), mitigation)


def progressive(variants: Sequence[str] = ("A", "A", "A"), mitigation: str = "none") -> Condition:
    return Condition("progressive", tuple(zip(PROGRESSIVE_ORDER, variants, strict=True)), mitigation)


# ---- {MA}: the misleading answer ---------------------------------------------------------------------------

_NUMBER_TEXT = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\d)")
_GSM8K_RESULT = re.compile(r"<<[^<>=]*=([^<>]+)>>")


def _num(value: Decimal) -> str:
    return normalize_number("-" if value < 0 else "", str(abs(value)))


def _subexpression_values(equation: str) -> list[Decimal]:
    """The value of every operation in an arithmetic equation ("X=((32.0+42.0)-35.0)" -> 74, 39);
    only + - * / of numbers; anything else gives none."""
    expr = equation.split("=", 1)[1] if "=" in equation else equation
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return []
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b}
    found: list[Decimal] = []

    def value(node) -> Decimal:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Decimal(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            v = ops[type(node.op)](value(node.left), value(node.right))
            found.append(v)
            return v
        raise ValueError("not plain arithmetic")

    try:
        value(tree)
    except (ValueError, ArithmeticError, InvalidOperation):
        return []
    return found


def number_distractors(record: Mapping, gold: str) -> list[str]:
    """Numbers of the problem other than the gold: those in the question, and the dataset's annotated
    intermediate results that are whole numbers; sorted by value, no repeats."""
    values = {normalize_number("", m.group(1) + (m.group(2) or "")) for m in _NUMBER_TEXT.finditer(record["question"])}
    extra = record.get("extra") or {}
    inter = [Decimal(m.group(1).replace(",", "").strip()) for m in _GSM8K_RESULT.finditer(extra.get("rationale", ""))
             if re.fullmatch(r"-?[\d,]+(\.\d+)?", m.group(1).strip())]
    for eq in [extra.get("Equation", "")] + list(extra.get("lEquations", [])):
        inter += _subexpression_values(eq) if eq else []
    values |= {_num(v) for v in inter if v == v.to_integral_value()}
    values.discard(gold)
    return sorted(values, key=lambda v: (Decimal(v), v))


def misleading_answer(benchmark: Benchmark, record: Mapping, gold: str, question_type: str, seed: int) -> str:
    """The seeded {MA} of one item and question type: an answer of the benchmark's kind other than ``gold``."""
    rng = make_rng(seed, "followup-ma", benchmark.key, record["id"], question_type)
    kind = benchmark.answer_type
    if kind == "boolean":
        out = benchmark.vocabulary[1] if gold == benchmark.vocabulary[0] else benchmark.vocabulary[0]
    elif kind == "letter":
        n = len(record.get("choices") or benchmark.letters)
        out = rng.choice([c for c in benchmark.letters[:n] if c != gold])
    elif kind == "number":
        pool = number_distractors(record, gold)
        if not pool:
            g = Decimal(gold)
            pool = [_num(g + d) for d in range(-10, 11) if d and (g < 0 or g + d >= 0)]
        out = rng.choice(pool)
    else:
        letters = list(gold)
        orders = sorted({"".join(p) for p in _shuffles(letters, rng)} - {gold})
        if orders:
            out = rng.choice(orders)
        else:  # every letter the same ("aaaa"): change one
            i = rng.randrange(len(gold))
            out = gold[:i] + rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != gold[i]]) + gold[i + 1:]
    assert out != gold, (record["id"], gold)
    return out


def _shuffles(letters: list[str], rng, n: int = 8) -> list[list[str]]:
    """``n`` seeded reorderings of ``letters`` (enough to find one that differs unless all are equal)."""
    out = []
    for _ in range(n):
        perm = letters[:]
        rng.shuffle(perm)
        out.append(perm)
    out.append(letters[1:] + letters[:1])  # a rotation differs whenever two letters differ
    return out


# ---- dialogues -----------------------------------------------------------------------------------------------

def build_dialogue(paper: PaperPrompts, benchmark: Benchmark, record: Mapping, condition: Condition, *,
                   seed: int, gate: str = "correct", demonstrations: Sequence[dict] = ()) -> dict:
    """One dialogue for the runner: ``uid``, the item and condition, ``gold``, each round's follow-up type,
    annotator and {MA}, ``messages`` (demonstrations + the question) and the planned ``followups``."""
    lookup({g: g for g in GATES}, gate, "gate", "followup.gate")
    mitigation = MITIGATIONS[condition.mitigation]
    gold = gold_answer(benchmark, record)
    rounds, followups = [], []
    for qtype, variant in condition.rounds:
        ma = misleading_answer(benchmark, record, gold, qtype, seed) if qtype == "leading" else None
        rounds.append({"question_type": qtype, "variant": variant, "misleading": ma})
        followups.append(followup_message(paper, benchmark, qtype, variant, ma, mitigation))
    messages = [*demonstrations, {"role": "user", "content": initial_message(paper, benchmark, record, mitigation)}]
    return {"uid": f"{record['id']}|{condition.id}", "item": record["id"], "dataset": benchmark.key,
            "condition": condition.id, "form": condition.form, "mitigation": condition.mitigation, "gate": gate,
            "gold": gold, "rounds": rounds, "n_demo_messages": len(demonstrations), "messages": messages,
            "followups": followups}


def replies_so_far(dialogue: Mapping, history: Sequence[Mapping]) -> int:
    """The model's replies to this dialogue's question so far (demonstration turns not counted)."""
    return sum(1 for m in history[dialogue["n_demo_messages"]:] if m["role"] == "assistant")


def next_user_turn(dialogue: Mapping, history: Sequence[Mapping]) -> str | None:
    """The next user message after the latest reply, or ``None`` when the dialogue ends: after the last
    planned follow-up, or after the initial answer when ``gate`` excludes the item."""
    k = replies_so_far(dialogue, history)
    if k == 1 and dialogue["gate"] != "all":
        correct = is_correct(extract_answer(BENCHMARKS[dialogue["dataset"]], history[-1]["content"]), dialogue["gold"])
        if correct != (dialogue["gate"] == "correct"):
            return None
    return dialogue["followups"][k - 1] if 1 <= k <= len(dialogue["followups"]) else None


def annotate_turn(dialogue: Mapping, turn: Mapping) -> dict:
    """What the runner keeps beside each raw reply: the extracted answer and whether it is the gold."""
    answer = extract_answer(BENCHMARKS[dialogue["dataset"]], turn["output"])
    return {"answer": answer, "correct": is_correct(answer, dialogue["gold"])}
