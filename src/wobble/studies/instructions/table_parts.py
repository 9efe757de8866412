"""The pieces every table of the ``instructions`` study is built from: reading inputs and score files,
aggregating over seeds, naming models, and the footnotes ("–" reasons, scale, data, deviations).

Inputs of a build function (``build(inputs, context)``, declared in :mod:`wobble.studies.instructions.spec`):

* ``scores``: score files (JSON paths, or already-loaded dicts), one per (model, taskset, condition,
  setting, seed), as written by :func:`wobble.studies.instructions.pipeline.score_predictions`: ``overall``,
  ``by_task``, ``by_category`` (keyed by the paper's abbreviation), ``tasks``, and for DiversePrompt
  ``by_prompt`` / ``prompts`` keyed ``"<task>::<i>"``. Values are percent.
* ``paper_<stem>``: the paper's CSV (``paper/instructions/<stem>.csv``), cells kept as printed.
* ``tasks`` / ``instances`` / ``para`` (prepared JSONL), ``perturbations`` (``{condition: text}`` of
  task1557's definition), ``selection`` (``{taskset: [tasks], "missing": {taskset: {category_or_task: why}}}``).
* ``context``: ``{"scale", "models": {key: label} (main model first, second next), "seeds", "data_note",
  "deviations", "model_deviations": {key: [text]}}``; optional ``"model"`` forces the model of a table.

A category's number for one run is ``by_category[cat][CATEGORY_METRIC[cat]]`` (EM for TE, CEC, CR, DAR, AC,
WA; ROUGE-L otherwise, the paper's Table 2). Over seeds: ``mean_std(values, ddof=0)`` (population std, as
the authors' fork); the std is omitted when there is one seed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from wobble.errors import DataError
from wobble.io import iter_jsonl, read_json
from wobble.metrics.superni import CATEGORY_METRIC, CATEGORY_NAMES, category_abbrev
from wobble.report.cells import DASH, read_paper
from wobble.stats import mean_std
from wobble.studies.instructions.prompts import SETTING_LABELS

SETTINGS = ("wo_exam", "w_exam")
PAPER_SETTINGS = {v: k for k, v in SETTING_LABELS.items()}
METRIC_LABELS = {"exact_match": "EM", "rougeL": "ROUGE-L"}
METRIC_NAMES = {"exact_match": "Exact Match", "rougeL": "ROUGE-L"}
PAPER_METRICS = {"EM": "exact_match", "Exact Match": "exact_match", "ROUGE-L": "rougeL"}
#: Category order of the paper's Tables 4/5 (EM block, then ROUGE-L block).
CATEGORY_ORDER = ("AC", "CEC", "CR", "DAR", "WA", "TE", "DTT", "GEC", "TG", "KT", "OE", "QR")
TASKSET_LABELS = {"english": "English SuperNI test tasks", "xlingual": "non-English SuperNI test tasks",
                  "para": "Para-Instructions tasks", "diverse": "DiversePrompt tasks"}
PAPER_SOURCE = "Gu et al. 2023"
REQUIRED_SCORE_FIELDS = ("model", "taskset", "condition", "setting", "seed")


# ------------------------------------------------------------------------------------------ inputs

def paper_frame(inputs: Mapping[str, Any], stem: str) -> tuple[pd.DataFrame, str]:
    """(the paper CSV ``paper_<stem>`` as printed, its file name for the footnote)."""
    path = inputs.get(f"paper_{stem}")
    if path is None:
        raise KeyError(f"instructions: the build needs the named input 'paper_{stem}' "
                       f"(got: {', '.join(sorted(inputs)) or 'none'})")
    return read_paper(path), Path(path).name


def score_list(inputs: Mapping[str, Any]) -> list[dict]:
    """The ``scores`` input (one path, a list of paths or dicts, or absent) loaded by :func:`load_scores`."""
    value = inputs.get("scores")
    if value is None:
        return []
    return load_scores([value] if isinstance(value, (str, Path)) else list(value))


def load_scores(items: Iterable[Any] | None) -> list[dict]:
    """Load score files (paths or dicts), check the identifying fields, sort them; duplicates raise."""
    out: list[dict] = []
    seen: dict[tuple, str] = {}
    for item in items or []:
        if isinstance(item, Mapping):
            s, src = dict(item), "<score dict>"
        else:
            s, src = read_json(item), str(item)
        if not isinstance(s, dict):
            raise DataError(src, "top level", "a JSON object (a score file)")
        for key in REQUIRED_SCORE_FIELDS:
            if key not in s:
                raise DataError(src, "top level", f"field '{key}' is missing (a score file needs "
                                                  f"{', '.join(REQUIRED_SCORE_FIELDS)})")
        s["seed"] = int(s["seed"])
        key = tuple(s[k] for k in REQUIRED_SCORE_FIELDS)
        if key in seen:
            raise DataError(src, "top level", f"a unique (model, taskset, condition, setting, seed); {key} is "
                                              f"also in {seen[key]}")
        seen[key] = src
        out.append(s)
    return sorted(out, key=lambda s: tuple(str(s[k]) if k != "seed" else f"{s[k]:012d}"
                                             for k in REQUIRED_SCORE_FIELDS))


def json_object(obj: Any) -> dict:
    """A JSON object given as a dict or a path ({} for None)."""
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return dict(obj)
    return read_json(obj)


def records(path_or_records: Any) -> list[dict]:
    """JSONL records given as a path or a list ([] for None)."""
    if path_or_records is None:
        return []
    if isinstance(path_or_records, (str, Path)):
        return [obj for _, obj in iter_jsonl(path_or_records)]
    return [dict(r) for r in path_or_records]


# ------------------------------------------------------------------------------------------- cells

def norm(text: Any) -> str:
    """Whitespace-normalised text (runs collapsed, stripped)."""
    return " ".join(str(text).split())


def yes_no(flag: bool | None) -> str:
    return DASH if flag is None else ("yes" if flag else "no")


def paper_float(s: Any) -> float:
    """A float from a paper CSV cell ("" -> nan)."""
    if s is None:
        return math.nan
    s = str(s).strip()
    return float(s) if s else math.nan


def paper_pm(mean: str, std: str) -> str:
    """The paper's number as printed: ``mean ± std`` or ``mean``; "–" when absent."""
    mean, std = str(mean or "").strip(), str(std or "").strip()
    if not mean:
        return DASH
    return f"{mean} ± {std}" if std else mean


def unique(seq: Iterable) -> list:
    """The items of ``seq`` in first-seen order, each once."""
    return list(dict.fromkeys(seq))


def tidy_frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Tidy rows as a DataFrame; count columns (``n_*``) as nullable integers so the CSV reads "4", not "4.0"."""
    df = pd.DataFrame(list(rows), columns=list(columns) if columns else None)
    for col in df.columns:
        if str(col).startswith("n_"):
            df[col] = pd.to_numeric(df[col], errors="coerce").round().astype("Int64")
    return df


# -------------------------------------------------------------------------------- models and seeds

def context_models(context: Mapping[str, Any]) -> dict[str, str]:
    return dict(context.get("models") or {})


def pick_model(scores: Sequence[dict], context: Mapping[str, Any], rank: int) -> str | None:
    """The model of a one-model table: ``context["model"]``, else the ``rank``-th of ``context["models"]``
    (0 = main, 1 = second), else (no models in the context) the ``rank``-th model found in the scores."""
    if context.get("model"):
        return context["model"]
    keys = list(context_models(context)) or sorted({s["model"] for s in scores})
    return keys[rank] if len(keys) > rank else None


def models_with_runs(scores: Sequence[dict], context: Mapping[str, Any], taskset: str) -> list[str]:
    """Models of a multi-model table (7-9): every context model with runs on ``taskset``, in context order."""
    if context.get("model"):
        return [context["model"]]
    present = unique(s["model"] for s in scores if s["taskset"] == taskset)
    keys = list(context_models(context))
    chosen = [m for m in keys if m in present] + sorted(m for m in present if m not in keys)
    return chosen or keys[:1] or ["ours"]


def model_text(model: str | None, context: Mapping[str, Any], scores: Sequence[dict] = ()) -> str:
    """The footnote label of a model: the context's, else the one its score files carry, else the key."""
    if model is None:
        return "no model configured"
    label = context_models(context).get(model)
    if not label:
        label = next((s.get("model_label") for s in scores if s["model"] == model and s.get("model_label")), None)
    return label or model


def pick_setting(runs: Sequence[dict], preferred: str = "w_exam") -> str | None:
    settings = sorted({s["setting"] for s in runs})
    if not settings:
        return None
    return preferred if preferred in settings else settings[0]


def seeds_of(runs: Iterable[dict]) -> list[int]:
    return sorted({s["seed"] for s in runs})


def seed_text(seeds: Sequence[int]) -> str:
    if not seeds:
        return "n=0 seeds (no runs)"
    return f"n={len(seeds)} seed(s) ({', '.join(map(str, seeds))})"


# ------------------------------------------------------------------------------- category numbers

def abbr(cat: Any) -> str:
    """The paper's abbreviation of a category ("DT" / "Data to Text" -> "DTT")."""
    return category_abbrev(str(cat))


def by_category(score: Mapping[str, Any]) -> dict[str, Any]:
    """``by_category`` of a score file keyed by the paper's abbreviations."""
    return {abbr(k): v for k, v in (score.get("by_category") or {}).items()}


def category_value(score: Mapping[str, Any], cat: str) -> tuple[float | None, int | None]:
    """(value, n instances) of one category in one score file, or (None, None)."""
    metric = CATEGORY_METRIC.get(cat)
    entry = by_category(score).get(cat)
    if not metric or not isinstance(entry, Mapping) or entry.get(metric) is None:
        return None, None
    return float(entry[metric]), entry.get("n")


def seed_values(runs: Iterable[dict], cat: str) -> tuple[list[float], list[int | None]]:
    """(values, instance counts) of ``cat`` in each run that has it."""
    vals, ns = [], []
    for s in runs:
        v, n = category_value(s, cat)
        if v is not None:
            vals.append(v)
            ns.append(n)
    return vals, ns


def aggregate(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and population std (None for a single value)."""
    mean, std = mean_std(values, ddof=0)
    return mean, (std if len(values) > 1 else None)


def data_per_category_note(runs: Sequence[dict], categories: Sequence[str]) -> str:
    tasks: dict[str, set[str]] = defaultdict(set)
    inst: dict[str, set[int]] = defaultdict(set)
    for s in runs:
        for task, meta in (s.get("tasks") or {}).items():
            cat = (meta or {}).get("category_abbrev")
            if cat:
                tasks[abbr(cat)].add(task)
        for cat, entry in by_category(s).items():
            if isinstance(entry, Mapping) and entry.get("n") is not None:
                inst[cat].add(int(entry["n"]))
    parts = []
    for cat in categories:
        if cat not in inst:
            parts.append(f"{cat} {DASH}")
            continue
        n = inst[cat]
        n_txt = str(next(iter(n))) if len(n) == 1 else f"{min(n)}-{max(n)}"
        parts.append(f"{cat} {len(tasks.get(cat, ()))}/{n_txt}")
    return "Our data per category (tasks/instances per run): " + "; ".join(parts) + "."


# ---------------------------------------------------------------------------------------- footnotes

def missing_reasons(selection: Mapping[str, Any], taskset: str) -> tuple[dict[str, str], dict[str, str]]:
    """(category -> why, task -> why) of ``selection["missing"][taskset]``."""
    miss = ((selection.get("missing") or {}).get(taskset) or {})
    cats = {abbr(k): str(v) for k, v in miss.items() if abbr(k) in CATEGORY_NAMES}
    tasks = {k: str(v) for k, v in miss.items() if abbr(k) not in CATEGORY_NAMES}
    return cats, tasks


class Reasons:
    """Collects the "why is this cell –" footnotes: items grouped by reason, each once, in first-seen order."""

    def __init__(self):
        self._groups: dict[str, dict[str, None]] = {}

    def add(self, group: str, item: str | None = None) -> None:
        items = self._groups.setdefault(group, {})
        if item is not None:
            items.setdefault(item, None)

    def add_category(self, cat: str, cat_missing: Mapping[str, str]) -> None:
        """Why category ``cat`` has no number of ours."""
        if cat in cat_missing:
            self.add("category without usable data in the mirror", f"{cat} ({cat_missing[cat]})")
        elif cat not in CATEGORY_METRIC:
            self.add("unknown category (no metric)", cat)
        else:
            self.add("no task of the category in our runs", cat)

    def notes(self) -> list[str]:
        return [f"{DASH} = no number of ours: {g}{(': ' + ', '.join(items)) if items else ''}."
                for g, items in self._groups.items()]


def common_notes(context: Mapping[str, Any], scores: Sequence[dict], models: Sequence[str] | None = None
                 ) -> list[str]:
    """Scale, data and deviations: what every table of the study states, then the deviations of the models
    whose numbers it shows (``models``; default: those of ``scores``)."""
    notes = [f"Scale: {context.get('scale', '?')}."]
    scales = sorted({str(s["scale"]) for s in scores if s.get("scale") is not None})
    if scales and scales != [str(context.get("scale"))]:
        notes.append(f"Scale written in the score files: {', '.join(scales)}.")
    if context.get("data_note"):
        notes.append(f"Data: {str(context['data_note']).rstrip('.')}.")
    notes += [f"Deviation: {d}" for d in context.get("deviations") or []]
    per_model = context.get("model_deviations") or {}
    for m in unique(s["model"] for s in scores if s.get("model")) if models is None else models:
        notes += [f"Deviation ({m}): {d}" for d in per_model.get(m) or []]
    return notes


def paper_note(table_no: int, paper_file: str) -> str:
    return f"Paper: {PAPER_SOURCE} Table {table_no} ({paper_file})."
