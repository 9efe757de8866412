"""What a model is asked for one pair: every condition's prompts, as records a runner can score.

A **condition** is the baseline or an intervention steering towards h1 or h2 (§5.1; the baseline is
shared by both targets). For each condition and prompt set the instruction and demonstrations form one
shared prefix (encoded once per set where the backend allows; stored once, under its ``prefix_id``),
and each test item adds its ``query``. Label-word conditions ask for the next-token scores of the two ``candidates`` and come with
the three content-free prompts of contextual calibration; the explanation conditions ask for a
generation (``generate: true``) and are not calibrated (as the authors' script).

A request record: ``{"uid", "pair", "condition", "intervention", "target", "set", "item" (test item
uid, or None for a content-free prompt), "content_free" (index or None), "prefix_id", "query",
"candidates" (label words for 0 and 1), "generate"}``; the prompt is ``prefixes[prefix_id] + query``.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from wobble.errors import ConfigError
from wobble.studies.icl_bias.interventions import INTERVENTIONS, TARGETS
from wobble.studies.icl_bias.prompts import CONTENT_FREE, PromptStyle, query_block, shared_prefix
from wobble.studies.icl_bias.splits import demo_label


def conditions(interventions: Sequence[str], targets: Sequence[str] = TARGETS) -> list[tuple[str, str | None]]:
    """``[("baseline", None), (intervention, target), ...]`` in the paper's column order."""
    for name in interventions:
        if name not in INTERVENTIONS:
            raise ConfigError("icl_bias.interventions", f"unknown intervention {name!r}; expected one of "
                              f"{list(INTERVENTIONS)}")
    for t in targets:
        if t not in TARGETS:
            raise ConfigError("icl_bias.targets", f"unknown target {t!r}; expected one of {list(TARGETS)}")
    out: list[tuple[str, str | None]] = [("baseline", None)]
    out += [(iv, t) for t in targets for iv in INTERVENTIONS[1:] if iv in interventions]
    return out


def condition_key(intervention: str, target: str | None) -> str:
    """``"baseline"`` or ``"<intervention>-<target>"`` (e.g. ``"verbalizer-h2"``)."""
    return intervention if target is None else f"{intervention}-{target}"


def _demos(split: Mapping, prompt_set: Mapping, style: PromptStyle) -> list[tuple[str, int]]:
    items = {it["uid"]: it for it in split["items"]}
    target = style.target or "h1"
    return [(items[u]["text"], demo_label(items[u], prompt_set["kind"], target)) for u in prompt_set["demos"]]


def condition_requests(split: Mapping, style: PromptStyle) -> tuple[dict[str, str], list[dict]]:
    """``(prefixes, requests)`` of one condition of one pair's split: every prompt set x test item, and the
    content-free prompts of calibration; ``prefixes`` maps ``prefix_id`` to the shared prefix text."""
    kind = "disambig" if style.disambig else "plain"
    cond = condition_key(style.intervention, style.target)
    tests = [it for it in split["items"] if it["role"] == "test"]
    base = {"pair": split["pair"], "condition": cond, "intervention": style.intervention, "target": style.target,
            "candidates": list(style.label_words), "generate": style.generates}
    prefixes: dict[str, str] = {}
    out: list[dict] = []
    for ps in (p for p in split["prompt_sets"] if p["kind"] == kind):
        pid = f"{split['pair']}/{cond}/{ps['set']}"
        prefixes[pid] = shared_prefix(style, _demos(split, ps, style))
        head = {**base, "set": ps["set"], "prefix_id": pid}
        if not style.generates:
            out += [{**head, "uid": f"{cond}/{ps['set']}/content_free/{i}", "item": None, "content_free": i,
                     "query": query_block(cf, style.label_prefix)} for i, cf in enumerate(CONTENT_FREE)]
        out += [{**head, "uid": f"{cond}/{ps['set']}/{it['uid']}", "item": it["uid"], "content_free": None,
                 "query": query_block(it["text"], style.label_prefix)} for it in tests]
    return prefixes, out
