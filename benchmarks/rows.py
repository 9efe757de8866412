"""What every benchmark script reports besides its timings: the run's facts and rows (``emit``), and how far
one engine's outputs are from a reference's (``text_agreement``, ``score_agreement``), so the agreement
columns mean the same in every README table."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence


def emit(meta: dict, rows: list[dict], json_path: str | None) -> None:
    """Print the run's facts and one JSON line per row; also write both to ``json_path`` when given."""
    print(json.dumps(meta))
    for r in rows:
        print(json.dumps(r))
    if json_path:
        Path(json_path).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


def text_agreement(ref: Sequence[tuple[str, list[float]]], got: Sequence[tuple[str, list[float]]]):
    """``("k/n", max |Δ log-prob|)``: how many texts equal the reference's, and the largest log-prob difference
    over the tokens of the equal ones (None when none is equal); each item is ``(text, token log-probs)``.
    "(counts differ)" is added when the two lists are not the same length (only the common part is compared)."""
    same = [a[0] == b[0] for a, b in zip(ref, got)]
    dlp = [abs(x - y) for a, b, s in zip(ref, got, same) if s for x, y in zip(a[1], b[1])]
    counts = "" if len(ref) == len(got) else " (counts differ)"
    return f"{sum(same)}/{len(same)}{counts}", (max(dlp) if dlp else None)


def generations(gens) -> list[tuple[str, list[float]]]:
    """``Generation`` s as ``text_agreement`` items."""
    return [(g.text, g.token_logprobs) for g in gens]


def score_agreement(ref: Sequence[dict], got: Sequence[dict], keys: Sequence[str]):
    """``(max |Δ log-prob|, argmax agreements)`` of per-item candidate scores (``{candidate: log-prob}``) over
    ``keys``: the difference over the candidates ``got`` scores finitely, the argmax over those each side has."""
    diffs = [abs(g[k] - r[k]) for g, r in zip(got, ref) for k in keys if g.get(k) is not None and math.isfinite(g[k])]
    same = sum(_best(g, keys) == _best(r, keys) for g, r in zip(got, ref))
    return (max(diffs) if diffs else None), same


def _best(scores: dict, keys: Sequence[str]):
    return max((k for k in keys if scores.get(k) is not None), key=scores.get, default=None)
