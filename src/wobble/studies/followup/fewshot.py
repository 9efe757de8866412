"""Evaluation items, held-out items and the few-shot (4-shot) demonstration dialogues (§4, Tables 21-23).

The paper draws its demonstrations "from the training set"; the mirror has no training splits (see
``shared/data/followup/README.md``), so demonstrations come from held-out items that are never
evaluated in ANY condition (so the evaluated items are the same with and without the few-shot
mitigation): MMLU's dev split where a dataset has one, else a seeded sample of its test set.

A demonstration is a whole dialogue of the condition it is shown with: the question (with the
condition's mitigation prompt and the format prompt), a reply ending in ``Answer: <gold>``, then each
of the condition's follow-up questions answered the way the paper's demonstrations are: "Please wait
for a moment ... approach this step by step." then the reasoning and the same, correct answer. The
paper's demonstration replies are hand-written reasoning; ours reuse the dataset's own human-written
rationale where it has one (GSM8K solutions without their ``<<calc>>`` marks, StrategyQA's
explanation), and give only the answer line elsewhere (the table footnote says so).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from wobble.adapters.chat import message
from wobble.seeding import seeded_sample
from wobble.studies.followup.extractors import gold_answer
from wobble.studies.followup.mechanism import Condition, misleading_answer
from wobble.studies.followup.prompts import (MITIGATIONS, RECONSIDER, Benchmark, PaperPrompts, followup_message,
                                             initial_message, render_answer)

EVAL_SPLIT = "test"
_CALC = re.compile(r"<<[^<>]*>>")
_VERDICT = re.compile(r"^\s*(yes|no)\.\s*", re.IGNORECASE)


def split_items(records: Sequence[Mapping], n_eval: int | None, n_heldout: int, seed: int
                ) -> tuple[list[Mapping], list[Mapping]]:
    """(evaluated items, held-out demonstration pool), disjoint, both in input order.

    Held out: every non-test record when there are at least ``n_heldout`` (MMLU dev), else
    ``n_heldout`` test records by seeded rank. Evaluated: ``n_eval`` of the remaining test records by
    seeded rank (``None`` = all of them).
    """
    test = [r for r in records if r.get("split", EVAL_SPLIT) == EVAL_SPLIT]
    other = [r for r in records if r.get("split", EVAL_SPLIT) != EVAL_SPLIT]
    if n_heldout and len(other) >= n_heldout:
        heldout_items = other
    else:
        heldout_items = (seeded_sample(test, n_heldout, seed, key=lambda r: r["id"], salt="followup-heldout")
                         if n_heldout else [])
    held = {r["id"] for r in heldout_items}
    rest = [r for r in test if r["id"] not in held]
    return seeded_sample(rest, n_eval, seed, key=lambda r: r["id"], salt="followup-eval"), heldout_items


def rationale(benchmark: Benchmark, record: Mapping) -> str | None:
    """The dataset's human-written reasoning for an item, or ``None`` where it has none."""
    extra = record.get("extra") or {}
    if benchmark.key == "gsm8k" and extra.get("rationale"):
        return _CALC.sub("", extra["rationale"]).strip()
    if benchmark.key == "strategyqa" and extra.get("target"):
        return _VERDICT.sub("", extra["target"]).strip() or None
    return None


def demonstration(paper: PaperPrompts, benchmark: Benchmark, record: Mapping, condition: Condition,
                  seed: int) -> list[dict]:
    """One demonstration dialogue (user / assistant messages) of ``condition`` on a held-out item."""
    mitigation = MITIGATIONS[condition.mitigation]
    gold = gold_answer(benchmark, record)
    why = rationale(benchmark, record)
    answer = f"Answer: {render_answer(benchmark, gold)}"
    msgs = [message("user", initial_message(paper, benchmark, record, mitigation)),
            message("assistant", "\n".join(p for p in (why, answer) if p))]
    for qtype, variant in condition.rounds:
        ma = misleading_answer(benchmark, record, gold, qtype, seed) if qtype == "leading" else None
        msgs.append(message("user", followup_message(paper, benchmark, qtype, variant, ma, mitigation)))
        msgs.append(message("assistant", "\n".join(p for p in (RECONSIDER, why, answer) if p)))
    return msgs


def demonstrations(paper: PaperPrompts, benchmark: Benchmark, heldout_items: Sequence[Mapping],
                   condition: Condition, seed: int, shots: int = 4) -> list[dict]:
    """The messages of ``shots`` demonstration dialogues (seeded choice from the held-out pool ``heldout_items``,
    in pool order) when the condition's mitigation is few-shot; no messages otherwise."""
    if not MITIGATIONS[condition.mitigation].fewshot:
        return []
    chosen = seeded_sample(heldout_items, shots, seed, key=lambda r: r["id"], salt=f"followup-shots-{benchmark.key}")
    if len(chosen) < shots:
        raise ValueError(f"{benchmark.key}: {shots} demonstrations needed, {len(chosen)} held-out items")
    return [m for rec in chosen for m in demonstration(paper, benchmark, rec, condition, seed)]
