"""instructions' rows of the per-model scorecard (:mod:`wobble.report.scorecard`): on the English test instances,
the score under the original instruction and the mean drop over the run's perturbations, without and with
examples (INSTRU-WO-EXAM / INSTRU-W-EXAM; the second model runs with examples only, as Tables 5/11) — each with
its 95 % interval over instances (an instance brings its scores under every condition: the claims' unit). Paper:
the same statistic over the 12 category means of T5-3B (Table 4; the main model) or T5-11B (Table 5)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from wobble.io import read_jsonl
from wobble.report.scorecard import Row
from wobble.stats import item_bootstrap
from wobble.studies.instructions.claims import PERTURBATIONS, score_matrix
from wobble.studies.instructions.layout import runs, scorecard_role, section

STUDY = "instructions"
SETTINGS = {"wo_exam": ("INSTRU-WO-EXAM", "without examples"), "w_exam": ("INSTRU-W-EXAM", "with examples")}


def _paper_stats(paper: pd.DataFrame, setting: str, conditions: list[str]) -> tuple[float, float]:
    t = paper[paper["setting"] == SETTINGS[setting][0]].copy()
    t["v"] = pd.to_numeric(t["mean"], errors="coerce")
    mean = t.groupby("condition")["v"].mean()
    orig = float(mean.get("original", np.nan))
    drops = [orig - float(mean[c]) for c in conditions if c in mean]
    return orig, float(np.mean(drops)) if drops else float("nan")


def rows(inputs: Mapping[str, Any], config: Mapping[str, Any], model: str) -> list[Row]:
    cfg = section(config)
    by_run: dict[tuple[str, str], list] = {}
    for (_, ts, cond, setting, _), path in zip([r for r in runs(config, scorecard_role(config, model)) if r[1] == "english"],
                                               inputs["english"]):
        by_run.setdefault((cond, setting), []).extend(read_jsonl(path))
    paper = pd.read_csv(inputs["paper"], dtype=str)
    paper_model = paper["model"].iloc[0] if len(paper) else "paper"
    perturbs = [c for c in PERTURBATIONS if c in cfg["conditions"]]
    boot = cfg["bootstrap"]
    out = []
    for setting in SETTINGS:
        if ("original", setting) not in by_run:
            continue
        cols = [("original", setting)] + [(c, setting) for c in perturbs]
        matrix, _ = score_matrix(by_run, cols)
        orig, lo, hi = item_bootstrap(matrix[:, :1], lambda c: c[0], n=boot["n"], seed=boot["seed"])
        drop = item_bootstrap(matrix, lambda c: float(c[0] - np.mean(c[1:])), n=boot["n"], seed=boot["seed"])
        p_orig, p_drop = _paper_stats(paper, setting, perturbs)
        where = f"English, {SETTINGS[setting][1]}"
        out.append(Row(STUDY, "score, original instruction", where, orig, lo, hi, "points", int(matrix.shape[0]),
                       f"{p_orig:.1f} ({paper_model})"))
        out.append(Row(STUDY, f"mean drop over {len(perturbs)} perturbations", where, *drop, "points",
                       int(matrix.shape[0]), f"{p_drop:.1f} ({paper_model})"))
    return out
