"""icl_bias's rows of the per-model scorecard (:mod:`wobble.report.scorecard`): the model's feature bias (baseline
accuracy of the task feature h1 and of the distractor h2 on the disambiguating sets) and each intervention's
effect on the intended feature's accuracy, towards h1 and towards h2 — Table 2's numbers with their 95 % intervals
over test items, beside the paper's value for the model this one stands in for (Davinci / Text-Davinci-002)."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from wobble.report.scorecard import Row, number

STUDY = "icl_bias"


def rows(inputs: Mapping[str, Any], config: Mapping[str, Any], model: str) -> list[Row]:
    t2 = pd.read_csv(inputs["table2"], keep_default_na=False)
    out = []
    for r in t2[t2["model"] == model].to_dict("records"):
        baseline = r["intervention"] == "Baseline"
        quantity = (f"accuracy of {r['steer_towards']} (baseline: {'task feature' if r['steer_towards'] == 'h1' else 'distractor'})"
                    if baseline else f"{r['intervention']} effect on {r['steer_towards']}-accuracy")
        paper = number(r.get("paper"))
        out.append(Row(STUDY, quantity, "mean over the run's pairs", number(r["value"]), number(r["ci_low"]),
                       number(r["ci_high"]), "%" if baseline else "points", None,
                       "" if paper is None else f"{paper:g} ({r['paper_model']})"))
    return out
