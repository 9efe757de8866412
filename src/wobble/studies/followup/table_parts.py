"""Shared pieces of the followup tables and figures: the models' summaries, which of our models stands in
for which paper model, ours beside the paper's in one frame, and the footnotes every table carries.

``context`` (from the study spec) holds ``models``, ``model_labels``, ``paper_models`` (our key -> the
paper model it stands in for; a model not named there stands in for ChatGPT, the paper's main model),
``temperatures`` (our key -> its sampling temperature), ``extra_temperatures``, ``datasets``,
``n_items``, ``n_heldout``, ``shots``, ``seed``, ``sample_seed``, ``gate``, ``max_new_tokens``,
``bootstrap_n`` and ``scale``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.report.cells import DASH, is_missing, printed, read_paper, with_ci
from wobble.report.spec import Table
from wobble.studies.followup.layout import temperature_label

MAIN_PAPER_MODEL = "ChatGPT"
MEASURES = {"before": "Before", "after": "After", "modification": "M.", "modification_rate_pct": "M. Rate (%)",
            "error_rate_pct": "Error Rate (%)", "e_to_r_rate_pct": "E→R Rate (%)"}
QTYPE_LABELS = {"closed-ended": "Closed-ended", "open-ended": "Open-ended", "leading": "Leading",
                "emotional": "Emotional"}


def paths(inputs: Mapping[str, Any], name: str) -> list[str]:
    value = inputs.get(name, [])
    return [value] if isinstance(value, str) else [str(v) for v in value]


def load_summary(inputs: Mapping[str, Any]) -> pd.DataFrame:
    """Every model's summary rows (``scores/<model>/summary.csv``) in one frame; labels as strings."""
    frames = [pd.read_csv(p, dtype={"temperature": str, "round": str, "prompt_set": str, "variant": str})
              for p in paths(inputs, "summaries")]
    if not frames:
        return pd.DataFrame(columns=["model", "dataset", "run", "temperature", "form", "mitigation", "prompt_set",
                                     "round", "question_type", "variant", "paper_dataset", "task_type", *MEASURES])
    df = pd.concat(frames, ignore_index=True)
    for col in ("prompt_set", "variant", "round"):
        df[col] = df[col].fillna("")
    return df


def paper(inputs: Mapping[str, Any], stem: str) -> pd.DataFrame:
    return read_paper(inputs[f"paper_{stem}"])


def twin(context: Mapping[str, Any], model: str) -> str:
    """The paper model ``model`` stands in for."""
    return context.get("paper_models", {}).get(model, MAIN_PAPER_MODEL)


def default_temperature(context: Mapping[str, Any], model: str) -> str:
    return temperature_label(context["temperatures"][model])


def at_model_temperature(df: pd.DataFrame, context: Mapping[str, Any]) -> pd.DataFrame:
    """The rows run at each model's own temperature (§3.1)."""
    keep = [default_temperature(context, m) == t for m, t in zip(df["model"], df["temperature"])]
    return df[keep] if len(df) else df


def pairs(context: Mapping[str, Any], paper_models: Sequence[str]) -> list[tuple[str | None, str | None]]:
    """(our model or None, paper model or None) rows of a table: each paper model with the models standing
    in for it (or none), then our models standing in for a paper model the table does not have."""
    models = list(context.get("models", []))
    out: list[tuple[str | None, str | None]] = []
    for p in paper_models:
        ours = [m for m in models if twin(context, m) == p]
        out += [(m, p) for m in ours] or [(None, p)]
    out += [(m, None) for m in models if twin(context, m) not in paper_models]
    return out


def side_by_side(ours: pd.DataFrame, theirs: pd.DataFrame, keys: Sequence[tuple[str, str]],
                 measures: Sequence[str], pairing: Sequence[tuple[str | None, str | None]], *,
                 with_n: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ours beside the paper's, one row per (our model, paper model, key): the display frame and the tidy
    frame (one row per number: side, model, keys, measure, value, lo, hi).

    ``ours`` has ``model``, the key columns, each measure and (optionally) ``<measure>_lo/_hi`` and
    ``n``; ``theirs`` (the paper CSV, cells as printed) has ``model``, the key columns and the measures.
    ``keys`` = (column, display label). Rows follow the paper's order, then keys only ours has.
    """
    kcols = [k for k, _ in keys]
    display, tidy = [], []
    for model, paper_model in pairing:
        o = ours[ours["model"] == model] if model is not None else ours.iloc[0:0]
        p = theirs[theirs["model"] == paper_model] if paper_model is not None else theirs.iloc[0:0]
        o_by = {tuple(str(r[k]) for k in kcols): r for _, r in o.iterrows()}
        p_by = {tuple(str(r[k]) for k in kcols): r for _, r in p.iterrows()}
        order = list(dict.fromkeys(list(p_by) + list(o_by)))
        for key in order:
            orow, prow = o_by.get(key), p_by.get(key)
            row = {"Model (ours)": DASH if orow is None else model, **{label: k for (_, label), k in zip(keys, key)}}
            for m in measures:
                row[f"{MEASURES[m]} (ours)"] = DASH if orow is None else _ci(orow, m)
                if orow is not None and not is_missing(orow.get(m)):
                    tidy.append({"side": "ours", "model": model, **dict(zip(kcols, key)), "measure": m,
                                 "value": float(orow[m]), "lo": _float(orow.get(f"{m}_lo")),
                                 "hi": _float(orow.get(f"{m}_hi")), "n": _float(orow.get("n"))})
            if with_n:
                row["Items"] = DASH if orow is None or is_missing(orow.get("n")) else str(int(orow["n"]))
            row["Paper model"] = paper_model or DASH
            for m in measures:
                cell = printed(prow.get(m)) if prow is not None else DASH
                row[f"{MEASURES[m]} (paper)"] = cell
                if prow is not None and cell != DASH:
                    tidy.append({"side": "paper", "model": paper_model, **dict(zip(kcols, key)), "measure": m,
                                 "value": float(cell), "lo": None, "hi": None, "n": None})
            display.append(row)
    tidy_cols = ["side", "model", *kcols, "measure", "value", "lo", "hi", "n"]
    return pd.DataFrame(display), pd.DataFrame(tidy, columns=tidy_cols)


def _float(x) -> float | None:
    return None if x is None or is_missing(x) else float(x)


def _ci(row: Mapping, measure: str) -> str:
    """A percent value with its interval, both already in percent."""
    v = row.get(measure)
    if is_missing(v):
        return DASH
    lo, hi = row.get(f"{measure}_lo"), row.get(f"{measure}_hi")
    return with_ci(_share(v), _share(lo), _share(hi), digits=2)


def _share(x) -> float | None:
    """A percent value as the share ``with_ci`` prints in percent."""
    return None if x is None or is_missing(x) else float(x) / 100.0


def comparison_table(title: str, ours: pd.DataFrame, theirs: pd.DataFrame, keys, measures, pairing,
                     notes: Sequence[str], *, with_n: bool = True) -> Table:
    display, tidy = side_by_side(ours, theirs, keys, measures, pairing, with_n=with_n)
    return Table(title, display, tidy, tuple(notes))


def model_notes(context: Mapping[str, Any]) -> list[str]:
    """Which models, at which temperature, stand in for which paper model."""
    parts = []
    for m in context.get("models", []):
        label = context.get("model_labels", {}).get(m, m)
        parts.append(f"{label} for {twin(context, m)} (temperature {default_temperature(context, m)})")
    return [f"Ours: {'; '.join(parts)} (followup.paper_models; a model not named there stands in for ChatGPT, the "
            f"paper's main model); top-p 1, sampling seed {context.get('sample_seed', 0)}, at most "
            f"{context.get('max_new_tokens')} new tokens per reply; scale '{context.get('scale', '?')}'."]


def common_notes(context: Mapping[str, Any]) -> list[str]:
    """What every table says: models, items, how answers and metrics are read, the deviations."""
    n = context.get("n_items")
    items = f"{n} test items per dataset (seeded sample)" if n else "every test item"
    gate = context.get("gate", "all")
    asked = ("every item is questioned further (gate 'all'): M. and M. Rate count only the initially correct "
             "ones, as the paper questions only those, and E→R only the initially wrong ones"
             if gate == "all" else "only initially correct items are questioned further (gate 'correct', §3.1)")
    return model_notes(context) + [
        f"Items: {items}; {context.get('n_heldout', 0)} held-out items per dataset (never evaluated) supply the "
        f"few-shot demonstrations; seed {context.get('seed', 0)} (items, {{MA}}, demonstrations).",
        "Metrics (A.1): Before = accuracy of the initial answer; M. = points of accuracy lost after the follow-up; "
        f"M. Rate = M. / Before; {asked}. Values in percent with 95% percentile bootstrap intervals over items "
        f"({context.get('bootstrap_n', 1000)} resamples).",
        "Answers: read after the last 'Answer:' marker as Zero-shot-CoT's answer cleansing does (a reply with no "
        "marker: its last answer); no answer counts as wrong. {MA}: another option / the other boolean / a reordered "
        "letter string / a number of the problem or its intermediate results, seeded, never the gold (ours: the "
        "paper does not say how it drew them).",
        "Data: the benchmarks' standard evaluation sets from Zero-shot-CoT's files (the paper's exact subsets are "
        "not published); Last Letters is the 4-word version (the paper: 2 words, first 500); MMLU is a stratified "
        "sample of 500 test questions. '–': no such run here (ours) or no such cell in the paper.",
    ]
