"""Made-up score records for the icl_bias claims tests: prompt sets answering by a feature, two models' pairs
under the interventions, the frame of unit tables and the ledger rows by claim id."""

from __future__ import annotations

import pandas as pd

from wobble.studies.icl_bias import claims_measure as M


NEG, QW, SA = "nli_entailment_negation", "boolq_answer_qword", "sa_sentiment_punctuation"


MODELS = {"b": "Davinci", "t": "Text-Davinci-002"}


def answers(pair: str, condition: str, follow: str, s: int = 0) -> list[dict]:
    """One prompt set's score records: item i has h1 = 1 for even i, 0 for odd (h2 = 1 - h1) and answers by h1
    where ``follow[i] == "1"``, by h2 otherwise ("1010" answers '1' every time: a constant classifier)."""
    target = condition.split("-")[1] if "-" in condition else None
    out = []
    for i, f in enumerate(follow):
        h1 = 1 - i % 2
        out.append({"pair": pair, "condition": condition, "intervention": condition.split("-")[0],
                    "target": target, "set": s, "uid": f"i{i}", "h1": h1, "h2": 1 - h1,
                    "pred": h1 if f == "1" else 1 - h1})
    return out


def drawn(pair: str, condition: str, follow: str, k: int = 3) -> list[dict]:
    """:func:`answers` under ``k`` prompt sets (demonstration draws), every set answering alike."""
    return [r for s in range(k) for r in answers(pair, condition, follow, s)]


def _two_models(n: int = 1, k: int = 3) -> dict[str, list[dict]]:
    """Two pairs of 4 x ``n`` items under ``k`` prompt sets. Base: baseline h1 50 %; instruction and disambig +25
    towards either target. Tuned: baseline h1 75 %; towards h1 100 % (+25), towards h2 100 % (from 25: +75)."""
    base, tuned = [], []
    for pair in (NEG, QW):
        base += drawn(pair, "baseline", "1100" * n, k)
        tuned += drawn(pair, "baseline", "1110" * n, k)
        for iv in ("instruction", "disambig"):
            base += drawn(pair, f"{iv}-h1", "1110" * n, k) + drawn(pair, f"{iv}-h2", "0001" * n, k)
            tuned += drawn(pair, f"{iv}-h1", "1111" * n, k) + drawn(pair, f"{iv}-h2", "0000" * n, k)
    return {"b": base, "t": tuned}


def frame(recs=None, n: int = 1, k: int = 3) -> pd.DataFrame:
    return M.item_frame(recs or _two_models(n, k), MODELS)


def rows_by_id(rows) -> dict[str, dict]:
    return {r["row_id"]: r for r in rows}
