"""Shared pieces of the icl_bias tables and figures: reading the summaries and split metadata, the
status of a pair in this run, cell formats, the paper's labels and the footnotes every table carries.

``context`` (from the study spec) holds: ``models`` (our model keys; tables name models by key),
``model_labels`` (key -> its description, for the footnotes),
``paper_models`` (our key -> "Davinci" / "Text-Davinci-002", the paper model it stands in for),
``pairs`` (pairs of this run), ``shots``, ``n_sets``, ``n_test_per_cell``, ``calibrate``,
``split_prefer``, ``max_words``, ``scale``.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from wobble.report.cells import DASH, fmt, is_missing, printed, read_paper
from wobble.studies.icl_bias.pairs import PAIRS, Pair

PAPER_MODELS = ("Davinci", "Text-Davinci-002")
# Intervention labels as printed: Tables 4-5 ("DisAmbig", "Verbalizers") and Tables 2-3 ("Disambig", "Verbalizer").
LABELS_45 = {"baseline": "Baseline", "disambig": "DisAmbig", "verbalizer": "Verbalizers",
             "instruction": "Instruction", "explanation": "Explanation"}
LABELS_23 = {"baseline": "Baseline", "verbalizer": "Verbalizer", "instruction": "Instruction",
             "explanation": "Explanation", "disambig": "Disambig"}
UNAVAILABLE = "unavailable here"
NOT_RUN = "not in this run"


def paths(inputs: Mapping[str, Any], name: str) -> list[str]:
    value = inputs.get(name, [])
    return [value] if isinstance(value, str) else [str(v) for v in value]


def load_summary(inputs: Mapping[str, Any]) -> pd.DataFrame:
    """Every model's summary rows (``scores/<model>/summary.csv``), one frame."""
    frames = [pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in paths(inputs, "summaries")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["model", "level", "group", "condition", "measure", "value", "ci_low", "ci_high"])


def load_splits(inputs: Mapping[str, Any]) -> dict[str, dict]:
    """``pair -> {"available", "reason", "source", "counts"}`` from the split files of this run."""
    out = {}
    for p in paths(inputs, "splits"):
        with open(p, encoding="utf-8") as fh:
            s = json.load(fh)
        out[s["pair"]] = {k: s[k] for k in ("available", "reason", "source", "counts")}
    return out


def paper(inputs: Mapping[str, Any], stem: str) -> pd.DataFrame:
    return read_paper(inputs[f"paper_{stem}"])


def pair_status(key: str, splits: Mapping[str, Mapping]) -> str:
    """What this run did with a pair: its split source and test size, or why it has no numbers."""
    s = splits.get(key)
    if s is None:
        return f"{NOT_RUN} (icl_bias.pairs)"
    if not s["available"]:
        return f"{UNAVAILABLE}: {s['reason']}"
    n = s["counts"].get("test_1_0", 0)
    src = "the authors' split" if s["source"] == "authors" else f"rebuilt from the {s['source']} pool"
    return f"{src}; {2 * n} test items ({n} per cell)"


def group_members(level: str, group: str, pairs: Iterable[Pair] = PAIRS.values()) -> list[str]:
    """The pairs a summary group stands for (all 22, whether run or not)."""
    if level == "pair":
        return [group]
    if level == "row":
        code, row = group.split("/", 1)
        return [p.key for p in pairs if p.code == code and p.row == row]
    if level == "dataset":
        return [p.key for p in pairs if p.code == group]
    return [p.key for p in pairs]


def gap_notes(level: str, group: str, splits: Mapping[str, Mapping], label: str) -> list[str]:
    """Footnotes for the pairs of a group that have no numbers here (never dropped silently), one per reason."""
    by_status: dict[str, list[str]] = {}
    for k in group_members(level, group):
        if not splits.get(k, {}).get("available"):
            by_status.setdefault(pair_status(k, splits), []).append(k)
    return [f"{label}: {', '.join(keys)}: {status}." for status, keys in by_status.items()]


def missing_cell(level: str, group: str, splits: Mapping[str, Mapping]) -> str | None:
    """The text of a cell whose pairs all lack numbers ("unavailable here" / "not in this run"), else None."""
    members = group_members(level, group)
    if any(splits.get(k, {}).get("available") for k in members):
        return None
    return UNAVAILABLE if any(k in splits for k in members) else NOT_RUN


class Cells:
    """Lookup of summary values: ``get(model, level, group, condition, measure) -> (value, lo, hi)``."""

    def __init__(self, summary: pd.DataFrame):
        self._d = {(r.model, r.level, r.group, r.condition, r.measure): (r.value, r.ci_low, r.ci_high)
                   for r in summary.itertuples(index=False)}

    def get(self, model: str, level: str, group: str, condition: str, measure: str) -> tuple | None:
        return self._d.get((model, level, group, condition, measure))


def value(triple: tuple | None) -> float | None:
    return None if triple is None or is_missing(triple[0]) else float(triple[0])


def pm(triple: tuple | None, digits: int = 1, sign: bool = False) -> str:
    """``"12.3 [8.1, 16.0]"`` (already in % / points); "+" on changes when ``sign``; "–" when missing."""
    if triple is None or is_missing(triple[0]):
        return DASH
    v = fmt(float(triple[0]), digits)
    if sign and float(triple[0]) > 0:
        v = "+" + v
    if is_missing(triple[1]) or is_missing(triple[2]):
        return v
    return f"{v} [{fmt(float(triple[1]), digits)}, {fmt(float(triple[2]), digits)}]"


def printed_change(text: str, is_change: bool) -> str:
    """A paper cell as printed, with the "+" the CSVs drop restored on a positive change."""
    text = (text or "").strip()
    return printed(("+" + text) if is_change and text and not text.startswith("-") else text)


def h_pair(h1: tuple | None, h2: tuple | None, neither: tuple | None = None) -> str:
    """``"57.1 / 42.9"`` (+ the neither share when any answer was neither)."""
    if value(h1) is None or value(h2) is None:
        return DASH
    out = f"{fmt(value(h1))} / {fmt(value(h2))}"
    if value(neither):
        out += f" ({fmt(value(neither))} neither)"
    return out


def model_label(context: Mapping[str, Any], model: str) -> str:
    return context.get("model_labels", {}).get(model, model)


def paper_pairs(context: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """``(paper model, our model or None)`` in the paper's order, then our models with no paper twin."""
    ours = dict((v, k) for k, v in context.get("paper_models", {}).items())
    out: list[tuple[str, str | None]] = [(pm_, ours.get(pm_)) for pm_ in PAPER_MODELS]
    out += [("", m) for m in context.get("models", []) if m not in context.get("paper_models", {})]
    return out


def common_notes(context: Mapping[str, Any], splits: Mapping[str, Mapping]) -> list[str]:
    """What every table says: models, scale, scoring, the deviations from the paper."""
    twins = ", ".join(f"{m} for {p}" for m, p in context.get("paper_models", {}).items())
    models = ", ".join(model_label(context, m) for m in context.get("models", []))
    run = [k for k in splits if splits[k]["available"]]
    notes = [
        f"Ours: model(s) {models}" + (f" (standing in for the paper's models: {twins})" if twins else "") + f"; scale '{context.get('scale', '?')}'.",
        f"Prompts: {context.get('shots', 16)} demonstrations (balanced over h1 = h2 = 1 / 0, seeded random order), "
        f"{context.get('n_sets', 3)} prompt set(s); up to {context.get('n_test_per_cell', 600)} disambiguating test items "
        f"per cell (1,0) and (0,1); {len(run)} of 22 pairs have numbers here.",
        "Scoring: the label word with the higher next-token probability"
        + (", contextually calibrated (Zhao et al. 2021; content-free inputs [MASK], N/A, empty)"
           if context.get("calibrate", True) else " (calibration switched off)")
        + "; Explanation: the model generates its explanation and the label after 'answer is' is read (not calibrated), "
          "any other text counts as neither.",
        "Values: mean over prompt sets, 95% percentile bootstrap interval over test items; averages over pairs "
        "resample each pair's items independently; an aggregate is the plain mean over the available pairs.",
        "Deviations: nli_negation h2 = 1 when the hypothesis contains not/no/n't (the authors' label map); the "
        "paper's negation instruction (Table 8) says the opposite, so ours swaps its two answer clauses. The QA "
        "'Passage length (0)' explanation is unreadable in the paper and is ours. Sentiment and QA answer verbalizers "
        "keep the 'Category:' prefix (Table 6 prints none; the authors' code used 'Answer?' for QA).",
    ]
    if context.get("max_words"):
        notes.append(f"Rebuilt review / comment texts keep their last {context['max_words']} words (features computed "
                     "on the shortened text).")
    return notes


def tidy(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=list(columns))
