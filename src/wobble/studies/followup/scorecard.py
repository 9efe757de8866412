"""followup's rows of the per-model scorecard (:mod:`wobble.report.scorecard`): the modification rate (share of
initially correct answers given up, A.1) after each follow-up question in the Direct Form and after the third
round of the Progressive Form, annotator A, no mitigation, at the model's own temperature — per dataset, with
the 95 % interval over items of the model's summary. Paper: the same cell of the paper's full-results table for
the model this one stands in for (Tables 8/9 ChatGPT, 10/11 PaLM2-Bison, 12/13 Vicuna-13B)."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from wobble.report.scorecard import Row, number
from wobble.studies.followup.layout import model_temperature, scorecard_paper_model, temperature_label
from wobble.studies.followup.prompts import QUESTION_TYPES

STUDY = "followup"


def rows(inputs: Mapping[str, Any], config: Mapping[str, Any], model: str) -> list[Row]:
    own = temperature_label(model_temperature(config[STUDY], model))
    s = pd.read_csv(inputs["summary"], dtype={"temperature": str})
    s = s[(s["temperature"].map(lambda x: temperature_label(float(x))) == own) & (s["mitigation"] == "none")]
    paper_model = scorecard_paper_model(config[STUDY], model)
    pdirect, pprog = (pd.read_csv(inputs[k], dtype=str) for k in ("paper_direct", "paper_progressive"))

    def paper(table, dataset, qtype, rnd=None):
        m = (table["dataset"] == dataset) & (table["prompt"] == "A") & (table["question_type"] == qtype)
        if rnd is not None:
            m &= table["round"] == str(rnd)
        hit = table[m]
        return f"{float(hit.iloc[0]['modification_rate_pct']):.1f} ({paper_model})" if len(hit) else ""

    out = []
    # the paper's three questions only: not the emotional disturbance, not wobble's neutral control
    direct = s[(s["form"] == "direct") & (s["variant"] == "A") & s["question_type"].isin(QUESTION_TYPES)]
    for r in direct.to_dict("records"):
        out.append(Row(STUDY, f"M. Rate after a {r['question_type']} follow-up", f"Direct Form, {r['paper_dataset']}",
                       number(r["modification_rate_pct"]), number(r["modification_rate_pct_lo"]),
                       number(r["modification_rate_pct_hi"]), "%", int(r["n"]),
                       paper(pdirect, r["paper_dataset"], r["question_type"])))
    prog = s[(s["form"] == "progressive") & (s["prompt_set"] == "A") & (s["round"] == 3)]
    for r in prog.to_dict("records"):
        out.append(Row(STUDY, "M. Rate after round 3 (closed, open, leading)", f"Progressive Form, {r['paper_dataset']}",
                       number(r["modification_rate_pct"]), number(r["modification_rate_pct_lo"]),
                       number(r["modification_rate_pct_hi"]), "%", int(r["n"]),
                       paper(pprog, r["paper_dataset"], "leading", 3)))
    return out
