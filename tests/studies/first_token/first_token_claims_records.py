"""Hand-made labelled predictions for the first_token claims tests and the ledger rows the claims machinery gives
them."""

from __future__ import annotations

from pathlib import Path

from wobble.studies.first_token import claims as C
from wobble.studies.first_token import claims_counts as K
from wobble.studies.first_token import claims_measure as M

REPO = Path(__file__).resolve().parents[3]
PAPER = REPO / "paper" / "first_token"
MAIN = "0.00"
OPTIONS = ("Yes", "No", "Refused")
BY = {c.id: c for c in C.CLAIMS}


def rec(q, level, shuffle, ft, tx, *, opens=False, letter=None, text_letter=None, t=0.0, model="m", finish="stop"):
    """One labelled prediction. By default the letters follow the options as the shuffles move them (content,
    not position); ``opens``: the text starts with the first-token letter."""
    letter = letter or "ABC"[(OPTIONS.index(ft) + shuffle) % 3]
    text_letter = text_letter or (None if tx is None else "ABC"[(OPTIONS.index(tx) + shuffle) % 3])
    return {"question_uid": f"q{q:02d}", "model": model, "constraint": level, "shuffle": shuffle, "letters": list("ABC"),
            "first_token_option": ft, "first_token_letter": letter, "text_option": tx, "text_letter": text_letter,
            "response": f"{letter}. {ft}" if opens else "Sure! I think so.", "gen_params": {"temperature": t},
            "finish_reason": finish}


def agree(q, level, shuffle=0, **kw):
    """Text and first token say "Yes", the text opening with the letter."""
    return rec(q, level, shuffle, "Yes", "Yes", opens=True, **kw)


def rows_of(recs, cid, models=("m",), n_boot=200):
    tables, _ = K.tables(recs, MAIN, C.TABLES)
    claims = {c.id: c for c in C.declare(len(models), n_boot)}
    return M.measure([claims[cid]], {cid: tables[cid]}, list(models), n_boot=n_boot)


def row(recs, cid, model="m"):
    return next(r for r in rows_of(recs, cid) if r["model"] == model)
