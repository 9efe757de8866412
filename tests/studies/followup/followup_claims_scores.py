"""Made-up item scores for the followup claims tests (one score record per item and arm), the ledger rows the
claims machinery gives them, and the Direct Form and mitigation fixtures."""

from __future__ import annotations

from pathlib import Path

from wobble.studies.followup import claims

ROOT = Path(__file__).resolve().parents[3]
PAPER = ROOT / "paper" / "followup"
OWN = {"m": "0.5"}


def _score(item, qtype, correct, *, form="direct", mitigation="none", temperature="0.5", variant="A", gate="all",
           dataset="strategyqa", model="m", answers=("yes", "no"), cut_turns=None):
    rounds = ([{"question_type": q, "variant": variant} for q in ("closed-ended", "open-ended", "leading")]
              if form == "progressive" else [{"question_type": qtype, "variant": variant}])
    return {"model": model, "dataset": dataset, "item": item, "form": form, "mitigation": mitigation,
            "temperature": temperature, "rounds": rounds, "correct": list(correct), "gate": gate,
            "answers": list(answers), "asked_rounds": len(answers) - 1,
            "cut_turns": [False] * len(answers) if cut_turns is None else list(cut_turns)}


def _arm(qtype, flipped, n=20, **kw):
    """``n`` initially correct items; items < ``flipped`` are wrong after the follow-up."""
    return [_score(i, qtype, [True, i >= flipped], **kw) for i in range(n)]


def _rows(scores, own=OWN, n_boot=40, **kw):
    return {r["row_id"]: r for r in claims.measure(scores, own, n_boot=n_boot, **kw)}


def _direct_fixture():
    s = _arm("closed-ended", 2) + _arm("open-ended", 4) + _arm("leading", 10) + _arm("neutral", 3)
    s += _arm("closed-ended", 0, variant="B") + _arm("open-ended", 1, variant="B") + _arm("leading", 2, variant="B")
    return s


def _mitigation_fixture():
    return (_arm("closed-ended", 10) + _arm("closed-ended", 6, mitigation="emotion_both")
            + _arm("closed-ended", 2, mitigation="cot_both") + _arm("closed-ended", 4, mitigation="fewshot"))
