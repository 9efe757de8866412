"""Every claims-ledger row quotes its paper: the quote is found in the paper's full text (../shared/papers).

The papers are text extracted from PDFs: line-break hyphens ("ef- fects"), markdown emphasis, straight or
curly quotes and a lost italic letter ("-accuracy" for "h-accuracy") differ from a clean quote, and a quote
may leave out a list marker ("i)"). So both sides are reduced to lower-case letters, digits and "%", the
quote's opening and closing 20 characters must occur verbatim, in order and close together, and the text
between them must match the quote to a similarity ratio of at least 0.9.
"""

from __future__ import annotations

import difflib
import importlib
import re
from pathlib import Path

import pytest

PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"
PAPER_OF = {"instructions": "instructions-gu2023.md", "first_token": "first_token-wang2024.md",
            "icl_bias": "icl_bias-si2023.md", "followup": "followup-ask-again-2024.md"}
EDGE = 20


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9%]", "", text.lower())


def _claims():
    for study in PAPER_OF:
        for claim in importlib.import_module(f"wobble.studies.{study}.claims").CLAIMS:
            yield pytest.param(study, claim, id=f"{study}-{claim.id}")


def found_in(quote: str, paper: str) -> bool:
    """Whether ``quote`` occurs in ``paper`` up to PDF-extraction noise (see the module docstring)."""
    q, p = _alnum(quote), _alnum(paper)
    head, tail = q[:EDGE], q[-EDGE:]
    start = p.find(head)
    while start >= 0:
        end = p.find(tail, start, start + len(q) + 3 * EDGE)
        if end >= 0:
            window = p[start:end + len(tail)]
            if difflib.SequenceMatcher(None, window, q, autojunk=False).ratio() >= 0.9:
                return True
        start = p.find(head, start + 1)
    return False


def test_found_in_tolerates_extraction_noise_but_not_other_words():
    paper = "We notice that the mitigating ef- fects of *Zero-shot CoT* are more pronounced. Then"
    assert found_in("the mitigating effects of Zero-shot CoT are more pronounced", paper)
    assert not found_in("the mitigating effects of Zero-shot CoT are less pronounced", paper)
    assert not found_in("XXthe mitigating effects of Zero-shot CoT are more pronouncedXX", paper)


@pytest.mark.parametrize("study, claim", list(_claims()))
def test_claim_quote_is_in_the_paper(study, claim):
    path = PAPERS / PAPER_OF[study]
    if not path.is_file():
        pytest.skip(f"the papers' full text {PAPERS} is not present")
    assert found_in(claim.quote, path.read_text(encoding="utf-8")), (claim.id, claim.quote)
