"""The first_token ledger's inputs: the labelled predictions (checked for the fields the claims read) and the
paper's released numbers, turned into the paper's effect of every table-backed claim by the claim's own
statistic (:func:`.claims_measure.paper_effect`)."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from wobble.errors import DataError
from wobble.report.engine import ClaimSpec
from wobble.studies.first_token.claims_counts import paper_c_shares, paper_mapping_table, paper_table3
from wobble.studies.first_token.claims_measure import paper_effect
from wobble.studies.first_token.layout import PAPER_MODELS

_REQUIRED = ("model", "constraint", "question_uid", "shuffle", "letters", "first_token_letter",
             "first_token_option", "text_option")
#: Which paper table each table-backed claim's effect is taken on, and the name column of PAPER_MODELS there.
SOURCES = {"mismatch_over_60_percent": ("mapping", "mapping"),
           "mismatch_persists_when_constrained": ("mapping", "mapping"),
           "mismatch_decreases_low_to_high": ("mapping", "mapping"),
           "example_more_mismatch_than_high": ("mapping", "mapping"),
           "example_pulls_first_token_to_C": ("figures", "mapping"),
           "text_more_consistent": ("table3", "table3")}


def read_labeled(paths) -> list[dict]:
    """The labelled predictions; a record missing a field the claims read is one clear error naming it."""
    from wobble.io import read_jsonl

    records = []
    for path in ([paths] if isinstance(paths, str) else paths):
        for i, r in enumerate(read_jsonl(path), start=1):
            gone = [k for k in _REQUIRED if k not in r]
            if gone:
                raise DataError(path, r.get("uid", f"line {i}"), f"labelled prediction without {', '.join(gone)}")
            records.append(r)
    return records


def _stated(path: str, panel: str, quantity: str) -> float:
    """The one ``value_pct`` of a paper figure CSV's row with this panel and quantity, as a share."""
    from wobble.report.cells import read_paper

    rows = read_paper(path)
    hits = rows[(rows["panel"] == panel) & (rows["quantity"] == quantity)]
    if len(hits) != 1 or not str(hits.iloc[0]["value_pct"]).strip():
        raise DataError(path, f"panel {panel}", f"exactly one row with {quantity!r} and a value_pct, got {len(hits)}")
    return float(hits.iloc[0]["value_pct"]) / 100


def paper_tables(inputs: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """The paper's numbers as unit tables: ``paper_mapping`` (prepared ``opinionqa_paper_mapping``, the released
    per-shuffle rates), ``paper_table3``, ``paper_figure3`` and ``paper_figure7``."""
    from wobble.io import read_jsonl
    from wobble.report.cells import read_paper

    mapping = paper_mapping_table(read_jsonl(inputs["paper_mapping"]))
    if mapping.empty:
        raise DataError(inputs["paper_mapping"], "(file)", "the released mapping_result.json rates of the levels")
    try:
        t3 = paper_table3(read_paper(inputs["paper_table3"]).to_dict("records"))
    except (KeyError, ValueError) as e:
        raise DataError(inputs["paper_table3"], "entropy columns", f"numbers in entropy_first_token and "
                        f"entropy_text_output ({e})") from None
    c = "share of first-token answers = 'C'"
    figures = paper_c_shares(_stated(inputs["paper_figure3"], "a", c), _stated(inputs["paper_figure7"], "c", c),
                             PAPER_MODELS["llama2-70b-chat"]["mapping"])
    return {"mapping": mapping, "table3": t3, "figures": figures}


def refusal_bounds(inputs: Mapping[str, str]) -> str:
    """The refusal claim's paper column (``"≤ 0.76 Llama2 7b, …"``): per paper model, the released text refusals over the released mismatches
    of the four levels (``total_refuse`` / ``total_mis`` summed over levels and shuffles). A mismatch caused by a
    refusal has a refusing text, so this bounds refusals' share of the mismatches from above; the released files
    do not say which mismatches the refusing texts are."""
    from wobble.io import read_jsonl
    from wobble.studies.first_token.claims_counts import LEVELS
    from wobble.studies.first_token.prompts import PAPER_OUTPUT_DIRS

    dirs = {PAPER_OUTPUT_DIRS[k] for k in LEVELS}
    sums: dict[str, list[float]] = {}
    for r in read_jsonl(inputs["paper_mapping"]):
        if r["constraint"] in dirs:
            s = sums.setdefault(r["model"], [0.0, 0.0])
            s[0] += float(r["total_refuse"])
            s[1] += float(r["total_mis"])
    order = [v["mapping"] for v in PAPER_MODELS.values()]
    short = {v["mapping"]: v["table3"] for v in PAPER_MODELS.values()}
    parts = [f"{sums[m][0] / sums[m][1]:.2f} {short.get(m, m)}"
             for m in sorted(sums, key=lambda m: order.index(m) if m in order else len(order)) if sums[m][1]]
    if not parts:
        raise DataError(inputs["paper_mapping"], "(file)", "total_refuse and total_mis of the four levels")
    return "≤ " + ", ".join(parts) + " (released)"


def paper_effects(inputs: Mapping[str, str], claims: Sequence[ClaimSpec], covered: Mapping[str, Sequence[str]]
                  ) -> tuple[dict[str, float], dict[str, str]]:
    """``({claim id: the paper's effect}, {claim id: the paper column's text})`` of every table-backed claim."""
    frames = paper_tables(inputs)
    effects, shown = {}, {}
    for c in claims:
        if c.id not in SOURCES:
            continue
        table, names = SOURCES[c.id]
        label = {PAPER_MODELS[k][names]: PAPER_MODELS[k]["label"] for k in covered[c.id]}
        value, model = paper_effect(c, frames[table], list(label))
        effects[c.id] = value
        which = "max" if c.scope == "exists" else "min"
        shown[c.id] = f"{value:.3g} ({label[model]}" + (f"; {which} of {len(label)} stated)" if len(label) > 1 else ")")
    return effects, shown
