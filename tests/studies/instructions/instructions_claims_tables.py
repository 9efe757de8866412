"""Hand-made predictions and unit tables for the instructions claims tests (EM: 100 when output == reference):
a prediction record, the English runs of ten tasks, a unit table from per-task cell scores and the unit rows of
predictions."""

from __future__ import annotations

import pandas as pd

from wobble.studies.instructions import claims as C
from wobble.studies.instructions.claims_measure import COLUMNS


CONDS = ["original", *C.PERTURBATIONS]
SI, SW = "shuffle_instructions", "shuffle_words"


SPEC = {c.id: c for c in C.CLAIMS}


def rec(i, correct, task=None, seed=1, **extra):
    task = task or f"t{i // 2}"
    return {"task": task, "instance_id": f"{task}-{i}", "output": "yes" if correct else "no", "references": ["yes"],
            "metric": "exact_match", "language": "English", "seed": seed, "finish_reason": "stop", **extra}


def runs_from(correct_by: dict, n=20):
    """``correct_by[(condition, setting)]``: the indices answered correctly, or k for the first k of n."""
    out = {}
    for col, ok in correct_by.items():
        ok = set(range(ok)) if isinstance(ok, int) else set(ok)
        out[col] = [rec(i, i in ok) for i in range(n)]
    return out


def english_fixture():
    # WO-EXAM: original right on 0..17 (tasks t0-t8), shuffle instructions on 0..1 (t0), every other
    # perturbation on 0..13 (t0-t6). W-EXAM: original and 7 perturbations on 0..17, shuffle instructions on 0..15.
    correct = {(c, "wo_exam"): 14 for c in C.PERTURBATIONS}
    correct.update({(c, "w_exam"): 18 for c in C.PERTURBATIONS})
    correct.update({("original", "wo_exam"): 18, ("original", "w_exam"): 18, ("shuffle_instructions", "wo_exam"): 2,
                    ("shuffle_instructions", "w_exam"): 16})
    return runs_from(correct)


def table(cells: dict[str, list[float]], model: str = "m", prefix: str = "t") -> pd.DataFrame:
    """Unit rows: task ``{prefix}{i}`` scores ``cells[cell][i]`` in each cell (one instance, one seed)."""
    rows = [(f"{prefix}{i}", model, c, c, "i0", 1, float(v), 1.0, 0.0, 1.0) for c, vs in cells.items()
            for i, v in enumerate(vs)]
    return pd.DataFrame(rows, columns=COLUMNS)


WO, W = "wo_exam", "w_exam"


def rows(spec: list[tuple]) -> pd.DataFrame:
    """(task, cell, version, instance, seed, score) -> unit rows of model m."""
    return pd.DataFrame([(t, "m", c, v, i, s, x, 1.0, 0.0, 1.0) for t, c, v, i, s, x in spec], columns=COLUMNS)
