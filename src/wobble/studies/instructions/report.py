"""Tables 1-11 and the drop figure of the ``instructions`` study (Gu et al. 2023), ours beside the paper's.

Each ``render_tableN(..., out_stem, context)`` writes ``out_stem.md`` / ``.csv`` (tidy) / ``.tex`` through
:func:`wobble.report.formats.write_table` and returns the paths; :func:`render_figure_drop` writes ``.png`` /
``.pdf`` (:func:`wobble.report.figures.save_figure`) and a tidy ``.csv``. :func:`render` dispatches on a table id
(``table1`` .. ``table11``, ``figure_drop``) and a dict of named inputs, as the workflow's script does.

Inputs
------
* ``scores``: score files (JSON paths, or already-loaded dicts), one per (model, taskset, condition,
  setting, seed), as written by ``wobble.studies.instructions.pipeline.score_predictions``: ``overall``,
  ``by_task``, ``by_category`` (keyed by the paper's abbreviation), ``tasks``, and for DiversePrompt
  ``by_prompt`` / ``prompts`` keyed ``"<task>::<i>"``. Values are percent.
* ``paper``: the paper's CSV for the table (``paper/instructions/tableN.csv``).
* ``tasks`` (superni_tasks JSONL), ``instances`` (superni_test JSONL), ``para`` (para_instructions JSONL),
  ``perturbations`` (``{condition_key: text}`` of task1557's definition), ``selection`` (``{taskset:
  [tasks], "missing": {taskset: {category_or_task: why}}}``).
* ``context``: ``{"scale", "models": {key: label} (ordered: the main model first, the second model next),
  "seeds", "data_note", "deviations": [...]}``; optional ``"model"`` forces the model of a table.

Aggregation
-----------
* A category's number for one run is ``by_category[cat][CATEGORY_METRIC[cat]]`` (EM for TE, CEC, CR, DAR,
  AC, WA; ROUGE-L otherwise). Over seeds: ``mean_std(values, ddof=0)`` (population std, as the paper's
  fork); the std is omitted when there is one seed.
* Table 7: ``original`` = mean over seeds; ``rephrased`` = mean ± std over the 3 paraphrase conditions of
  their seed means (the std is over the paraphrases, as in the paper).
* Table 8: per task, each prompt's seed mean, then mean ± std over the task's prompts. The metric of a
  task is the one the paper's Table 8 gives it.
* Table 9: each prompt's seed mean, joined to the paper's prompt on the text after whitespace
  normalisation.
* Figure: drop = ``original`` − perturbed (seed means), per setting, condition and category.

A cell we have no number for shows "–" and a footnote says why (category without data in the mirror,
condition not run, ...); a table never disappears because a category or run is missing.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from wobble.errors import DataError
from wobble.studies.instructions.conditions import PAPER_CONDITIONS, PARAPHRASE_CONDITIONS
from wobble.io import atomic_write, iter_jsonl, read_json
from wobble.metrics.superni import CATEGORY_METRIC, CATEGORY_NAMES, category_abbrev
from wobble.stats import mean_std
from wobble.report.cells import fmt, fmt_pm
from wobble.report.formats import write_table

DASH = "–"
SETTINGS = ("wo_exam", "w_exam")
SETTING_LABELS = {"wo_exam": "INSTRU-WO-EXAM", "w_exam": "INSTRU-W-EXAM"}
PAPER_SETTINGS = {v: k for k, v in SETTING_LABELS.items()}
METRIC_LABELS = {"exact_match": "EM", "rougeL": "ROUGE-L"}
METRIC_NAMES = {"exact_match": "Exact Match", "rougeL": "ROUGE-L"}
PAPER_METRICS = {"EM": "exact_match", "Exact Match": "exact_match", "ROUGE-L": "rougeL"}
#: Category order of the paper's Tables 4/5 (EM block, then ROUGE-L block).
CATEGORY_ORDER = ("AC", "CEC", "CR", "DAR", "WA", "TE", "DTT", "GEC", "TG", "KT", "OE", "QR")
TASKSET_LABELS = {"english": "English SuperNI test tasks", "xlingual": "non-English SuperNI test tasks",
                  "para": "Para-Instructions tasks", "diverse": "DiversePrompt tasks"}
#: DiversePrompt task key -> the label of the paper's Table 8 where it is not ``key.replace("_", " ")``.
DIVERSE_PAPER_NAMES = {"orthography_starts_with": "orthography"}
PAPER_SOURCE = "Gu et al. 2023"

REQUIRED_SCORE_FIELDS = ("model", "taskset", "condition", "setting", "seed")


# ------------------------------------------------------------------------------------------ helpers

def _norm(text: Any) -> str:
    """Whitespace-normalised text (runs collapsed, stripped)."""
    return " ".join(str(text).split())


_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def _typo_norm(text: Any) -> str:
    return _norm(str(text).translate(_QUOTES))


def _yes_no(flag: bool | None) -> str:
    return DASH if flag is None else ("yes" if flag else "no")


def _num(s: Any) -> float:
    """A float from a paper CSV cell ("" -> nan)."""
    if s is None:
        return math.nan
    s = str(s).strip()
    return float(s) if s else math.nan


def _paper_pm(mean: str, std: str) -> str:
    """The paper's number as printed: ``mean ± std`` or ``mean``; "–" when absent."""
    mean, std = str(mean or "").strip(), str(std or "").strip()
    if not mean:
        return DASH
    return f"{mean} ± {std}" if std else mean


def read_paper(path: str | Path) -> pd.DataFrame:
    """A paper CSV with every cell kept as printed (strings, "" for empty)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _unique(seq: Iterable) -> list:
    out, seen = [], set()
    for x in seq:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def _paper_name(path: str | Path | None) -> str:
    return Path(path).name if path else "?"


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


def _load_json_obj(obj: Any) -> dict:
    """A JSON object given as a dict or a path ({} for None)."""
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return dict(obj)
    return read_json(obj)


def _read_records(path_or_records: Any) -> list[dict]:
    if path_or_records is None:
        return []
    if isinstance(path_or_records, (str, Path)):
        return [obj for _, obj in iter_jsonl(path_or_records)]
    return [dict(r) for r in path_or_records]


def _models(context: Mapping[str, Any]) -> dict[str, str]:
    return dict(context.get("models") or {})


def _pick_model(scores: Sequence[dict], context: Mapping[str, Any], rank: int) -> str | None:
    """The model of a one-model table: ``context["model"]``, else the ``rank``-th of ``context["models"]``
    (0 = main, 1 = second), else (no models in the context) the ``rank``-th model found in the scores."""
    if context.get("model"):
        return context["model"]
    keys = list(_models(context)) or sorted({s["model"] for s in scores})
    return keys[rank] if len(keys) > rank else None


def _models_with_runs(scores: Sequence[dict], context: Mapping[str, Any], taskset: str) -> list[str]:
    """Models of a multi-model table (7-9): every context model with runs on ``taskset``, in context order."""
    if context.get("model"):
        return [context["model"]]
    present = _unique(s["model"] for s in scores if s["taskset"] == taskset)
    keys = list(_models(context))
    chosen = [m for m in keys if m in present] + sorted(m for m in present if m not in keys)
    return chosen or keys[:1] or ["ours"]


def _label(model: str | None, context: Mapping[str, Any], scores: Sequence[dict] = ()) -> str:
    if model is None:
        return "no model configured"
    label = _models(context).get(model)
    if not label:
        label = next((s.get("model_label") for s in scores if s["model"] == model and s.get("model_label")), None)
    return label or model


def _pick_setting(runs: Sequence[dict], preferred: str = "w_exam") -> str | None:
    settings = sorted({s["setting"] for s in runs})
    if not settings:
        return None
    return preferred if preferred in settings else settings[0]


def _seeds(runs: Iterable[dict]) -> list[int]:
    return sorted({s["seed"] for s in runs})


def _seed_text(seeds: Sequence[int]) -> str:
    if not seeds:
        return "n=0 seeds (no runs)"
    return f"n={len(seeds)} seed(s) ({', '.join(map(str, seeds))})"


def _common_notes(context: Mapping[str, Any], scores: Sequence[dict]) -> list[str]:
    notes = [f"Scale: {context.get('scale', '?')}."]
    scales = sorted({str(s["scale"]) for s in scores if s.get("scale") is not None})
    if scales and scales != [str(context.get("scale"))]:
        notes.append(f"Scale written in the score files: {', '.join(scales)}.")
    if context.get("data_note"):
        notes.append(f"Data: {str(context['data_note']).rstrip('.')}.")
    notes += [f"Deviation: {d}" for d in context.get("deviations") or []]
    return notes


def _metric_of(cat: str) -> str | None:
    return CATEGORY_METRIC.get(cat)


def _abbr(cat: Any) -> str:
    """The paper's abbreviation of a category ("DT" / "Data to Text" -> "DTT")."""
    return category_abbrev(str(cat))


def _by_category(score: Mapping[str, Any]) -> dict[str, Any]:
    """``by_category`` of a score file keyed by the paper's abbreviations."""
    return {_abbr(k): v for k, v in (score.get("by_category") or {}).items()}


def _cat_value(score: Mapping[str, Any], cat: str) -> tuple[float | None, int | None]:
    """(value, n instances) of one category in one score file, or (None, None)."""
    metric = _metric_of(cat)
    entry = _by_category(score).get(cat)
    if not metric or not isinstance(entry, Mapping) or entry.get(metric) is None:
        return None, None
    return float(entry[metric]), entry.get("n")


def _agg(values: Sequence[float]) -> tuple[float, float | None]:
    mean, std = mean_std(values, ddof=0)
    return mean, (std if len(values) > 1 else None)


def _tasks_per_category(runs: Iterable[dict]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for s in runs:
        for task, meta in (s.get("tasks") or {}).items():
            cat = (meta or {}).get("category_abbrev")
            if cat:
                out[_abbr(cat)].add(task)
    return out


def _instances_per_category(runs: Iterable[dict]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for s in runs:
        for cat, entry in _by_category(s).items():
            if isinstance(entry, Mapping) and entry.get("n") is not None:
                out[cat].add(int(entry["n"]))
    return out


def _data_per_category_note(runs: Sequence[dict], categories: Sequence[str]) -> str:
    tasks, inst = _tasks_per_category(runs), _instances_per_category(runs)
    parts = []
    for cat in categories:
        if cat not in inst:
            parts.append(f"{cat} {DASH}")
            continue
        n = inst[cat]
        n_txt = str(next(iter(n))) if len(n) == 1 else f"{min(n)}-{max(n)}"
        parts.append(f"{cat} {len(tasks.get(cat, ()))}/{n_txt}")
    return "Our data per category (tasks/instances per run): " + "; ".join(parts) + "."


def _missing_reasons(selection: Mapping[str, Any], taskset: str) -> tuple[dict[str, str], dict[str, str]]:
    """(category -> why, task -> why) of ``selection["missing"][taskset]``."""
    miss = ((selection.get("missing") or {}).get(taskset) or {})
    cats = {_abbr(k): str(v) for k, v in miss.items() if _abbr(k) in CATEGORY_NAMES}
    tasks = {k: str(v) for k, v in miss.items() if _abbr(k) not in CATEGORY_NAMES}
    return cats, tasks


class _Reasons:
    """Collects the "why is this cell –" footnotes: items grouped by reason, each once, in first-seen order."""

    def __init__(self):
        self._groups: dict[str, dict[str, None]] = {}

    def add(self, group: str, item: str | None = None) -> None:
        items = self._groups.setdefault(group, {})
        if item is not None:
            items.setdefault(item, None)

    def notes(self) -> list[str]:
        return [f"{DASH} = no number of ours: {g}{(': ' + ', '.join(items)) if items else ''}."
                for g, items in self._groups.items()]


def _add_missing_cat(reasons: _Reasons, cat: str, cat_missing: Mapping[str, str]) -> None:
    if cat in cat_missing:
        reasons.add("category without usable data in the mirror", f"{cat} ({cat_missing[cat]})")
    elif cat not in CATEGORY_METRIC:
        reasons.add("unknown category (no metric)", cat)
    else:
        reasons.add("no task of the category in our runs", cat)


# ------------------------------------------------------------------------------------ Tables 4/5/10/11

def _condition_table(table_no: int, scores: Any, paper: str | Path, out_stem, context: Mapping[str, Any], *,
                     selection: Any, taskset: str, rank: int, settings: Sequence[str]) -> list[Path]:
    scores = load_scores(scores)
    sel = _load_json_obj(selection)
    pdf = read_paper(paper)
    model = _pick_model(scores, context, rank)
    runs = [s for s in scores if s["model"] == model and s["taskset"] == taskset and s["setting"] in settings]
    cat_missing, _ = _missing_reasons(sel, taskset)

    ours_cats = sorted({c for s in runs for c in _by_category(s)})
    categories = _unique(list(pdf["category"]) + [c for c in ours_cats if c not in set(pdf["category"])])
    paper_cells = {(PAPER_SETTINGS.get(r.setting, r.setting), r.condition, r.category): r
                   for r in pdf.itertuples(index=False)}
    paper_model = _unique(pdf["model"])[0] if len(pdf) else "paper"
    paper_subset = _unique(pdf["language_subset"])[0] if "language_subset" in pdf and len(pdf) else ""

    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for s in runs:
        by_cell[(s["setting"], s["condition"])].append(s)
    known = {c.key for c in PAPER_CONDITIONS}
    extra_conditions = sorted({s["condition"] for s in runs} - known)

    reasons = _Reasons()
    display, tidy = [], []
    for setting in settings:
        for cond in PAPER_CONDITIONS:
            cell_runs = by_cell.get((setting, cond.key), [])
            row = {"Setting": SETTING_LABELS[setting], "Level": cond.paper_level, "Condition": cond.label}
            if not cell_runs:
                reasons.add(f"condition not run in {SETTING_LABELS[setting]}", cond.key)
            for cat in categories:
                metric = _metric_of(cat)
                vals, ns = [], []
                for s in cell_runs:
                    v, n = _cat_value(s, cat)
                    if v is not None:
                        vals.append(v)
                        ns.append(n)
                if vals:
                    mean, std = _agg(vals)
                    ours = fmt_pm(mean, std)
                    tidy.append(_tidy_row(table_no, model, taskset, setting, cond, cat, metric, "ours", mean, std,
                                          len(vals), ns[0] if ns and ns[0] is not None else None))
                else:
                    ours = DASH
                    if cell_runs or cat in cat_missing:
                        _add_missing_cat(reasons, cat, cat_missing)
                p = paper_cells.get((setting, cond.key, cat))
                if p is not None:
                    paper_txt = _paper_pm(p.mean, p.std)
                    pstd = _num(p.std)
                    tidy.append(_tidy_row(table_no, p.model, taskset, setting, cond, cat,
                                          PAPER_METRICS.get(p.metric, metric), "paper", _num(p.mean), pstd,
                                          3 if not math.isnan(pstd) else None, None))
                else:
                    paper_txt = DASH
                row[f"{cat} ({METRIC_LABELS.get(metric, '?')})"] = f"{ours} ({paper_txt})"
            display.append(row)

    seeds = _seeds(runs)
    settings_txt = " and ".join(SETTING_LABELS[s] for s in settings)
    notes = [f"Each cell: ours (paper). Ours = {_label(model, context, scores)}, {TASKSET_LABELS[taskset]}, "
             f"{settings_txt}; mean ± population std (ddof=0) over {_seed_text(seeds)}; the std is omitted "
             f"where a cell has one seed (n_seeds per cell in the CSV).",
             f"Paper = {paper_model}{f', {paper_subset}' if paper_subset else ''}, {PAPER_SOURCE} Table "
             f"{table_no} ({_paper_name(paper)}), mean ± std over 3 runs where printed.",
             "Metric: EM for TE, CEC, CR, DAR, AC, WA; ROUGE-L for OE, KT, QR, TG, DTT, GEC (Table 2).",
             _data_per_category_note(runs, categories)]
    if model is None:
        reasons.add("no model is configured for this table (context 'models' has no "
                    f"{'second' if rank else 'main'} model)")
    if extra_conditions:
        notes.append(f"Conditions of ours not in the paper's table, left out: {', '.join(extra_conditions)}.")
    notes += reasons.notes() + _common_notes(context, runs)
    lang = "English" if taskset == "english" else "non-English"
    title = (f"Table {table_no}: {lang} SuperNI test tasks, instruction conditions x categories, {settings_txt} "
             f"— ours ({model or DASH}) beside the paper ({paper_model})")
    tidy_df = _tidy_frame(tidy, _TIDY_COLUMNS)
    return write_table(pd.DataFrame(display), tidy_df, out_stem, title, notes)


_TIDY_COLUMNS = ["table", "model", "taskset", "setting", "level", "condition", "condition_label", "category",
                 "metric", "source", "mean", "std", "n_seeds", "n_instances"]


def _tidy_frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Tidy rows as a DataFrame; count columns (``n_*``) as nullable integers so the CSV reads "4", not "4.0"."""
    df = pd.DataFrame(list(rows), columns=list(columns) if columns else None)
    for col in df.columns:
        if str(col).startswith("n_"):
            df[col] = pd.to_numeric(df[col], errors="coerce").round().astype("Int64")
    return df


def _tidy_row(table_no, model, taskset, setting, cond, cat, metric, source, mean, std, n_seeds, n_instances):
    return {"table": table_no, "model": model, "taskset": taskset, "setting": setting, "level": cond.paper_level,
            "condition": cond.key, "condition_label": cond.label, "category": cat, "metric": metric,
            "source": source, "mean": mean, "std": std, "n_seeds": n_seeds, "n_instances": n_instances}


def render_table4(scores, paper, out_stem, context, *, selection=None) -> list[Path]:
    """Table 4: main model, English test tasks, 9 conditions x 12 categories, both settings."""
    return _condition_table(4, scores, paper, out_stem, context, selection=selection, taskset="english", rank=0,
                            settings=SETTINGS)


def render_table5(scores, paper, out_stem, context, *, selection=None) -> list[Path]:
    """Table 5: second model, English test tasks, INSTRU-W-EXAM only."""
    return _condition_table(5, scores, paper, out_stem, context, selection=selection, taskset="english", rank=1,
                            settings=("w_exam",))


def render_table10(scores, paper, out_stem, context, *, selection=None) -> list[Path]:
    """Table 10: main model, non-English test tasks (AC, CEC, TE, TG), both settings."""
    return _condition_table(10, scores, paper, out_stem, context, selection=selection, taskset="xlingual",
                            rank=0, settings=SETTINGS)


def render_table11(scores, paper, out_stem, context, *, selection=None) -> list[Path]:
    """Table 11: second model, non-English test tasks, INSTRU-W-EXAM only."""
    return _condition_table(11, scores, paper, out_stem, context, selection=selection, taskset="xlingual",
                            rank=1, settings=("w_exam",))


# -------------------------------------------------------------------------------------------- Table 1

def _find_task(records: Sequence[Mapping[str, Any]], paper_task: str) -> Mapping[str, Any] | None:
    """The record of ``paper_task``, matched by name or by its number prefix (``task1557_...``)."""
    for r in records:
        if r.get("task") == paper_task:
            return r
    prefix = paper_task.split("_", 1)[0] + "_"
    return next((r for r in records if str(r.get("task", "")).startswith(prefix)), None)


def _task_instances(path_or_records: Any, task: str) -> list[dict]:
    if path_or_records is None:
        return []
    if isinstance(path_or_records, (str, Path)):
        out, needle = [], f'"{task}"'
        with open(path_or_records, encoding="utf-8") as f:
            for line in f:
                if needle in line:
                    obj = json.loads(line)
                    if obj.get("task") == task:
                        out.append(obj)
        return out
    return [dict(r) for r in path_or_records if r.get("task") == task]


def render_table1(paper, tasks, out_stem, context, *, instances=None) -> list[Path]:
    """Table 1: the task sample (task1557) from our prepared data beside the paper's text."""
    pdf = read_paper(paper)
    paper_task = _unique(pdf["task"])[0]
    rec = _find_task(_read_records(tasks), paper_task)
    notes: list[str] = []
    inst_note = None
    instance = None
    if rec is not None:
        insts = _task_instances(instances, rec["task"])
        paper_in = pdf[(pdf["component"] == "Instance") & (pdf["field"] == "input")]["text"]
        want = _norm(paper_in.iloc[0]) if len(paper_in) else None
        match = next((i for i in insts if want is not None and _norm(i.get("input", "")) == want), None)
        instance = match or (insts[0] if insts else None)
        if instance is not None:
            pos = insts.index(instance)
            why = ("chosen because its input equals the paper's" if match
                   else "the first one (no instance of ours has the paper's input)")
            inst_note = (f"Instance: our instance {instance.get('id')} (position {pos + 1} of {len(insts)} in our "
                         f"prepared data), {why}.")
        elif instances is None:
            notes.append(f"{DASH} Instance: no instances file was given to the renderer.")
        else:
            notes.append(f"{DASH} Instance: task {rec['task']} has no instances in our prepared data.")

    def ours_text(component: str, field: str) -> str | None:
        if rec is None:
            return None
        if component == "Definition":
            return rec.get("definition")
        if component in ("Positive example", "Negative example"):
            exs = rec.get("pos_examples" if component.startswith("Positive") else "neg_examples") or []
            return exs[0].get(field) if exs else None
        if component == "Instance" and instance is not None:
            if field == "input":
                return instance.get("input")
            if field == "output":
                outs = instance.get("outputs") or []
                paper_out = pdf[(pdf["component"] == "Instance") & (pdf["field"] == "output")]["text"]
                want = _norm(paper_out.iloc[0]) if len(paper_out) else None
                return next((o for o in outs if _norm(o) == want), outs[0] if outs else None)
        return None

    display, tidy, typo_only = [], [], []
    for r in pdf.itertuples(index=False):
        ours = ours_text(r.component, r.field)
        same = None if ours is None else (str(ours).strip() == str(r.text).strip())
        if same is False and _typo_norm(ours) == _typo_norm(r.text):
            typo_only.append(f"{r.component} {r.field}")
        display.append({"Component": r.component, "Field": r.field, "Ours": DASH if ours is None else ours,
                        "Paper": r.text, "Matches paper": _yes_no(same)})
        tidy.append({"table": 1, "task_paper": r.task, "task_ours": rec["task"] if rec else None,
                     "component": r.component, "field": r.field, "ours": ours, "paper": r.text,
                     "matches_paper": same})
    if rec is None:
        notes.insert(0, f"{DASH}: task {paper_task} (or any task with its number) is not in our prepared data.")
    else:
        notes.insert(0, f"Ours: task {rec['task']} from our prepared superni_tasks data "
                        f"(data status: {rec.get('data_status', '?')}); the paper names it {paper_task}. "
                        f"Examples: the first positive and the first negative example of the task file.")
    if inst_note:
        notes.append(inst_note + " Its output: the reference equal to the paper's output if there is one, else "
                     "the first reference.")
    notes.append("Matches paper: exact string comparison after stripping leading/trailing whitespace.")
    if typo_only:
        notes.append(f"Differs from the paper only in quote characters (’ vs '): {', '.join(typo_only)}.")
    notes.append(f"Paper: {PAPER_SOURCE} Table 1 ({_paper_name(paper)}).")
    notes += _common_notes(context, [])
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       f"Table 1: a SuperNI task sample ({paper_task}) — ours beside the paper", notes)


# -------------------------------------------------------------------------------------------- Table 2

def render_table2(paper, tasks, out_stem, context, *, selection=None) -> list[Path]:
    """Table 2: the 12 categories and their metric, with the number of test tasks per category in our data."""
    pdf = read_paper(paper)
    recs = _read_records(tasks)
    sel = _load_json_obj(selection)
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in recs:
        if r.get("split") not in ("default", "xlingual") or not r.get("category_abbrev"):
            continue
        c = counts[(r["split"], _abbr(r["category_abbrev"]))]
        c[0] += 1
        c[1] += int(r.get("data_status") != "missing" and r.get("n_instances", 0) > 0)
    split_of = {r["task"]: r.get("split") for r in recs}
    cat_of = {r["task"]: _abbr(r["category_abbrev"]) for r in recs if r.get("category_abbrev")}
    used = defaultdict(int)
    for t in sel.get("english") or []:
        if split_of.get(t) == "default":
            used[cat_of.get(t)] += 1

    cats = _unique(list(pdf["abbr"]) + [c for c in CATEGORY_NAMES if c not in set(pdf["abbr"])])
    paper_rows = {r.abbr: r for r in pdf.itertuples(index=False)}
    display, tidy = [], []
    for cat in cats:
        p = paper_rows.get(cat)
        metric = CATEGORY_METRIC.get(cat)
        ours_metric = METRIC_NAMES.get(metric, DASH)
        en, xl = counts.get(("default", cat), [0, 0]), counts.get(("xlingual", cat), [0, 0])
        same = None if p is None else (CATEGORY_NAMES.get(cat) == p.category and ours_metric == p.metric)
        row = {"Abbr": cat, "Category (ours)": CATEGORY_NAMES.get(cat, DASH),
               "Category (paper)": p.category if p is not None else DASH, "Metric (ours)": ours_metric,
               "Metric (paper)": p.metric if p is not None else DASH, "Matches paper": _yes_no(same),
               "English test tasks (with data / all)": f"{en[1]} / {en[0]}",
               "non-English test tasks (with data / all)": f"{xl[1]} / {xl[0]}" if xl[0] else DASH}
        if sel:
            row["English tasks in our run"] = str(used.get(cat, 0))
        display.append(row)
        tidy.append({"table": 2, "abbr": cat, "category_ours": CATEGORY_NAMES.get(cat),
                     "category_paper": p.category if p is not None else None, "metric_ours": metric,
                     "metric_paper": PAPER_METRICS.get(p.metric) if p is not None else None,
                     "matches_paper": same, "english_tasks": en[0], "english_tasks_with_data": en[1],
                     "xlingual_tasks": xl[0], "xlingual_tasks_with_data": xl[1],
                     "english_tasks_in_run": used.get(cat, 0) if sel else None})
    n_en = sum(v[0] for (s, _), v in counts.items() if s == "default")
    n_xl = sum(v[0] for (s, _), v in counts.items() if s == "xlingual")
    d_en = sum(v[1] for (s, _), v in counts.items() if s == "default")
    d_xl = sum(v[1] for (s, _), v in counts.items() if s == "xlingual")
    notes = [f"Ours: category names and metrics from wobble.metrics.superni (CATEGORY_NAMES, CATEGORY_METRIC); "
             f"task counts from our prepared superni_tasks data: {n_en} English test tasks ({d_en} with data in "
             f"the mirror), {n_xl} non-English ({d_xl} with data); the paper uses 119 English and 35 non-English.",
             f"Paper: {PAPER_SOURCE} Table 2 ({_paper_name(paper)})."]
    if sel:
        notes.append("English tasks in our run: tasks per category chosen by the study's selection.")
        cat_missing, _ = _missing_reasons(sel, "english")
        notes += [f"{cat}: no English task usable in our run ({why})." for cat, why in sorted(cat_missing.items())]
    notes += _common_notes(context, [])
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       "Table 2: SuperNI test categories and their metrics — ours beside the paper", notes)


# -------------------------------------------------------------------------------------------- Table 3

_TAG_DEL = re.compile(r"<del>.*?</del>", re.S)
_TAG_ANY = re.compile(r"</?(?:u|del)>")


def paper_result_text(example: str) -> str:
    """The perturbed text a Table 3 example describes: ``<del>…</del>`` spans removed, ``<u>`` tags dropped."""
    return _norm(_TAG_ANY.sub("", _TAG_DEL.sub("", example)))


def _perturbation_key(name: str) -> str:
    name = _norm(name).lower()
    return "original" if name in ("original instruction", "original") else name.replace(" ", "_")


def render_table3(paper, perturbations, out_stem, context) -> list[Path]:
    """Table 3: every perturbation of our code applied to task1557's definition, beside the paper's example."""
    pdf = read_paper(paper)
    ours_all = _load_json_obj(perturbations)
    by_key = {c.key: c for c in PAPER_CONDITIONS}
    display, tidy, missing = [], [], []
    for r in pdf.itertuples(index=False):
        key = _perturbation_key(r.perturbation)
        val = ours_all.get(key)
        if isinstance(val, Mapping):
            val = val.get("text")
        ours = val if isinstance(val, str) else None
        if ours is None:
            missing.append(key)
        same = None if ours is None else (_norm(ours) == paper_result_text(r.example_instruction))
        cond = by_key.get(key)
        display.append({"Level": r.perturbation_level, "Perturbation": r.perturbation,
                        "Ours (our code)": DASH if ours is None else ours, "Paper": r.example_instruction,
                        "Same text as paper": _yes_no(same)})
        tidy.append({"table": 3, "perturbation_level": r.perturbation_level, "perturbation": r.perturbation,
                     "condition": key, "random": cond.is_random if cond else None, "ours": ours,
                     "paper": r.example_instruction, "paper_result": paper_result_text(r.example_instruction),
                     "same_as_paper": same})
    seeds = context.get("seeds") or []
    notes = ["Ours: each perturbation applied by wobble.studies.instructions.conditions to task1557's definition "
             f"from our prepared data{f' (run seed {seeds[0]})' if seeds else ''}.",
             "Same text as paper: our text equals the paper's perturbed text (its <del>…</del> spans removed, "
             "<u> tags dropped) after whitespace normalisation. The random perturbations (delete/insert/replace/"
             "shuffle words, repeat/shuffle sentences, shuffle instructions) are seeded draws and are not "
             "expected to reproduce the paper's draw.",
             "Paper text keeps the typeset markup: <del>…</del> = deleted words, <u>…</u> = repeated sentence."]
    if missing:
        notes.append(f"{DASH} = no text of ours: perturbation(s) {', '.join(missing)} missing from the "
                     "perturbation examples file.")
    notes.append(f"Paper: {PAPER_SOURCE} Table 3 ({_paper_name(paper)}).")
    notes += _common_notes(context, [])
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       "Table 3: perturbations of task1557's definition — ours beside the paper", notes)


# -------------------------------------------------------------------------------------------- Table 6

def render_table6(paper, para, out_stem, context) -> list[Path]:
    """Table 6: the Para-Instructions example (original + 3 new instructions) beside the paper's."""
    pdf = read_paper(paper)
    paper_task = _unique(pdf["task"])[0]
    rec = _find_task(_read_records(para), paper_task)
    ours_versions: dict[str, str | None] = {"Original Instruction": None}
    if rec is not None:
        ours_versions["Original Instruction"] = rec.get("original_definition")
        for i, text in enumerate(rec.get("new_definitions") or [], 1):
            ours_versions[f"New Instruction {i}"] = text
    paper_versions = {r.instruction_version: r.text for r in pdf.itertuples(index=False)}
    versions = _unique(list(paper_versions) + list(ours_versions))
    display, tidy, reordered = [], [], []
    for v in versions:
        ours, ptxt = ours_versions.get(v), paper_versions.get(v)
        same = None if ours is None or ptxt is None else str(ours).strip() == str(ptxt).strip()
        equal_to = next((pv for pv, pt in paper_versions.items()
                         if ours is not None and str(pt).strip() == str(ours).strip()), None)
        if equal_to and equal_to != v:
            reordered.append(f"our {v} = paper's {equal_to}")
        display.append({"Version": v, "Ours": DASH if ours is None else ours, "Paper": DASH if ptxt is None else ptxt,
                        "Matches paper": _yes_no(same), "Equal to paper's": equal_to or DASH})
        tidy.append({"table": 6, "task_paper": paper_task, "task_ours": rec["task"] if rec else None,
                     "version": v, "ours": ours, "paper": ptxt, "matches_paper": same, "equal_to_paper": equal_to})
    notes = []
    if rec is None:
        notes.append(f"{DASH}: task {paper_task} is not in our prepared para_instructions data.")
    else:
        notes.append(f"Ours: task {rec['task']} from our prepared para_instructions data (new_definitions in "
                     f"file order); the paper names it {paper_task}.")
    notes.append("Matches paper: exact string comparison (whitespace-stripped) with the same version of the "
                 "paper; 'Equal to paper's' names the paper version with the same text, if any.")
    if reordered:
        notes.append("The new instructions are numbered differently: " + "; ".join(reordered) + ".")
    notes.append(f"Paper: {PAPER_SOURCE} Table 6 ({_paper_name(paper)}).")
    notes += _common_notes(context, [])
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       "Table 6: a Para-Instructions example — ours beside the paper", notes)


# -------------------------------------------------------------------------------------------- Table 7

def render_table7(scores, paper, out_stem, context, *, selection=None) -> list[Path]:
    """Table 7: Para-Instructions per category, original vs rephrased (mean ± std over the 3 paraphrases)."""
    scores = load_scores(scores)
    sel = _load_json_obj(selection)
    pdf = read_paper(paper)
    models = _models_with_runs(scores, context, "para")
    cat_missing, task_missing = _missing_reasons(sel, "para")
    paper_models = _unique(pdf["model"])
    ours_cats = sorted({c for s in scores if s["taskset"] == "para" for c in _by_category(s)})
    categories = _unique(list(pdf["category"]) + [c for c in ours_cats if c not in set(pdf["category"])])
    paper_cells = {(r.model, r.instruction, r.category): r for r in pdf.itertuples(index=False)}
    para_keys = [c.key for c in PARAPHRASE_CONDITIONS]

    reasons = _Reasons()
    partial_para = False
    per_model: dict[str, dict] = {}
    settings_used = {}
    for m in models:
        runs_m = [s for s in scores if s["model"] == m and s["taskset"] == "para"]
        setting = _pick_setting(runs_m)
        settings_used[m] = setting
        runs_m = [s for s in runs_m if s["setting"] == setting]
        per_model[m] = {"runs": runs_m, "by_cond": defaultdict(list)}
        for s in runs_m:
            per_model[m]["by_cond"][s["condition"]].append(s)
        if not runs_m:
            reasons.add(f"no Para-Instructions runs of model {m}")
        for key in ["original"] + para_keys:
            if runs_m and not per_model[m]["by_cond"].get(key):
                reasons.add(f"condition not run{f' (model {m})' if len(models) > 1 else ''}", key)

    display, tidy = [], []
    for cat in categories:
        metric = _metric_of(cat)
        row = {"Category": cat, "Metric": METRIC_LABELS.get(metric, DASH)}
        for m in models:
            by_cond = per_model[m]["by_cond"]
            col = f" ({m})" if len(models) > 1 else ""

            def seed_mean(key):
                vals = [v for v, _ in (_cat_value(s, cat) for s in by_cond.get(key, [])) if v is not None]
                ns = [n for v, n in (_cat_value(s, cat) for s in by_cond.get(key, [])) if v is not None]
                return (vals, ns[0] if ns else None)

            vals, n_inst = seed_mean("original")
            if vals:
                mean, std = _agg(vals)
                row[f"Ours original{col}"] = fmt_pm(mean, std)
                tidy.append({"table": 7, "model": m, "source": "ours", "instruction": "original", "category": cat,
                             "metric": metric, "mean": mean, "std": std, "n_seeds": len(vals),
                             "n_paraphrases": None, "n_instances": n_inst})
            else:
                row[f"Ours original{col}"] = DASH
                if per_model[m]["runs"]:
                    _add_missing_cat(reasons, cat, cat_missing)
            para_means = []
            for key in para_keys:
                pv, pn = seed_mean(key)
                if pv:
                    pm, pstd = _agg(pv)
                    para_means.append(pm)
                    tidy.append({"table": 7, "model": m, "source": "ours", "instruction": key, "category": cat,
                                 "metric": metric, "mean": pm, "std": pstd, "n_seeds": len(pv),
                                 "n_paraphrases": None, "n_instances": pn})
            if para_means:
                mean, std = mean_std(para_means, ddof=0)
                std = std if len(para_means) > 1 else None
                txt = fmt_pm(mean, std)
                if len(para_means) < len(para_keys):
                    txt += f" [{len(para_means)} of {len(para_keys)}]"
                    partial_para = True
                row[f"Ours rephrased{col}"] = txt
                tidy.append({"table": 7, "model": m, "source": "ours", "instruction": "rephrased", "category": cat,
                             "metric": metric, "mean": mean, "std": std, "n_seeds": None,
                             "n_paraphrases": len(para_means), "n_instances": None})
            else:
                row[f"Ours rephrased{col}"] = DASH
                if per_model[m]["runs"]:
                    _add_missing_cat(reasons, cat, cat_missing)
        for pm_name in paper_models:
            for instr in ("original", "rephrased"):
                p = paper_cells.get((pm_name, instr, cat))
                row[f"Paper {pm_name} {instr}"] = _paper_pm(p.mean, p.std) if p is not None else DASH
                if p is not None:
                    tidy.append({"table": 7, "model": pm_name, "source": "paper", "instruction": instr,
                                 "category": cat, "metric": PAPER_METRICS.get(p.metric, metric), "mean": _num(p.mean),
                                 "std": _num(p.std), "n_seeds": None,
                                 "n_paraphrases": 3 if instr == "rephrased" else None, "n_instances": None})
        display.append(row)

    all_runs = [s for m in models for s in per_model[m]["runs"]]
    notes = []
    for m in models:
        runs_m = per_model[m]["runs"]
        st = settings_used[m]
        notes.append(f"Ours{f' ({m})' if len(models) > 1 else ''} = {_label(m, context, scores)}, "
                     f"{TASKSET_LABELS['para']}, {SETTING_LABELS.get(st, 'no runs')}, {_seed_text(_seeds(runs_m))}.")
    notes += ["Original: mean over seeds (± population std over seeds when there are several). Rephrased: each "
              "new instruction's seed mean, then mean ± population std (ddof=0) over the 3 new instructions, as "
              "the paper's std is over the 3 paraphrases (per-paraphrase numbers in the CSV).",
              f"Paper: T5-3B and T5-11B, INSTRU-W-EXAM (setting from the paper's text), {PAPER_SOURCE} Table 7 "
              f"({_paper_name(paper)}).",
              _data_per_category_note(all_runs, categories)]
    if partial_para:
        notes.append("[k of 3] = only k of the 3 new instructions have a number for this category.")
    if task_missing:
        notes.append("Para-Instructions tasks without data in the mirror (left out): "
                     + "; ".join(f"{t} ({why})" for t, why in sorted(task_missing.items())) + ".")
    notes += reasons.notes() + _common_notes(context, all_runs)
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       "Table 7: Para-Instructions, original vs rephrased instructions — ours beside the paper",
                       notes)


# ----------------------------------------------------------------------------------------- Tables 8/9

def diverse_paper_name(task: str, meta: Mapping[str, Any] | None = None) -> str:
    """The paper's Table 8 label of a DiversePrompt task key."""
    if meta and meta.get("paper_name"):
        return str(meta["paper_name"])
    return DIVERSE_PAPER_NAMES.get(task, task.replace("_", " "))


def _prompt_values(runs: Sequence[dict]) -> dict[str, dict[int, dict[str, Any]]]:
    """task -> prompt index -> {"values": {metric: [per-seed]}, "n": [...], "text": prompt}."""
    out: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for s in runs:
        prompts = s.get("prompts") or {}
        for key, entry in (s.get("by_prompt") or {}).items():
            if "::" not in key or not isinstance(entry, Mapping):
                continue
            task, idx = key.rsplit("::", 1)
            slot = out[task].setdefault(int(idx), {"values": defaultdict(list), "n": [], "text": None})
            for metric in ("exact_match", "rougeL"):
                if entry.get(metric) is not None:
                    slot["values"][metric].append(float(entry[metric]))
            if entry.get("n") is not None:
                slot["n"].append(int(entry["n"]))
            if slot["text"] is None and key in prompts:
                slot["text"] = prompts[key]
    return out


def _task_meta(runs: Sequence[dict]) -> dict[str, dict]:
    meta: dict[str, dict] = {}
    for s in runs:
        for task, m in (s.get("tasks") or {}).items():
            meta.setdefault(task, dict(m or {}))
    return meta


def _diverse_runs(scores: Sequence[dict], models: Sequence[str]) -> tuple[dict[str, list[dict]], dict[str, str]]:
    runs, settings = {}, {}
    for m in models:
        rm = [s for s in scores if s["model"] == m and s["taskset"] == "diverse"]
        st = _pick_setting(rm)
        settings[m] = st
        runs[m] = [s for s in rm if s["setting"] == st]
    return runs, settings


def render_table8(scores, paper, out_stem, context) -> list[Path]:
    """Table 8: DiversePrompt per task, mean ± std over the task's prompts, beside T5-3B and T5-11B."""
    scores = load_scores(scores)
    pdf = read_paper(paper)
    models = _models_with_runs(scores, context, "diverse")
    runs, settings = _diverse_runs(scores, models)
    paper_models = _unique(pdf["model"])
    paper_cells = {(r.model, r.task): r for r in pdf.itertuples(index=False)}
    paper_metric = {r.task: PAPER_METRICS.get(r.metric, r.metric) for r in pdf.itertuples(index=False)}

    ours: dict[str, dict[str, dict]] = {}  # model -> paper task name -> {task, values...}
    names: list[str] = []
    for m in models:
        pv, meta = _prompt_values(runs[m]), _task_meta(runs[m])
        ours[m] = {}
        for task in sorted(pv):
            name = diverse_paper_name(task, meta.get(task))
            ours[m][name] = {"task": task, "prompts": pv[task], "meta": meta.get(task, {})}
            names.append(name)
    tasks_order = _unique(list(pdf["task"]) + sorted(n for n in set(names) if n not in set(pdf["task"])))

    reasons = _Reasons()
    display, tidy = [], []
    for name in tasks_order:
        metric = paper_metric.get(name)
        row = {"Task": name}
        first = next((ours[m][name] for m in models if name in ours[m]), None)
        if metric is None and first is not None:
            metric = first["meta"].get("metric")
        row["Metric"] = METRIC_LABELS.get(metric, DASH)
        for m in models:
            col = f" ({m})" if len(models) > 1 else ""
            entry = ours[m].get(name)
            prompt_means, ns, n_seeds = [], [], set()
            if entry is not None and metric:
                for idx in sorted(entry["prompts"]):
                    vals = entry["prompts"][idx]["values"].get(metric) or []
                    if vals:
                        prompt_means.append(math.fsum(vals) / len(vals))
                        n_seeds.add(len(vals))
                        ns.extend(entry["prompts"][idx]["n"][:1])
            if prompt_means:
                mean, std = mean_std(prompt_means, ddof=0)
                std = std if len(prompt_means) > 1 else None
                row[f"Ours{col}"] = fmt_pm(mean, std)
                row[f"Prompts{col}"] = str(len(prompt_means))
                tidy.append({"table": 8, "model": m, "source": "ours", "task": entry["task"], "paper_task": name,
                             "metric": metric, "mean": mean, "std": std, "n_prompts": len(prompt_means),
                             "n_seeds": max(n_seeds), "n_instances_per_prompt": ns[0] if ns else None})
            else:
                row[f"Ours{col}"] = DASH
                row[f"Prompts{col}"] = DASH
                if not runs[m]:
                    reasons.add(f"no DiversePrompt runs of model {m}")
                else:
                    why = "task not run" if entry is None else f"no {metric} values"
                    reasons.add(f"{why}{f' (model {m})' if len(models) > 1 else ''}", name)
        for pm_name in paper_models:
            p = paper_cells.get((pm_name, name))
            row[f"Paper {pm_name}"] = _paper_pm(p.mean, p.std) if p is not None else DASH
            if p is not None:
                tidy.append({"table": 8, "model": pm_name, "source": "paper", "task": None, "paper_task": name,
                             "metric": PAPER_METRICS.get(p.metric, metric), "mean": _num(p.mean), "std": _num(p.std),
                             "n_prompts": None, "n_seeds": None, "n_instances_per_prompt": None})
        display.append(row)

    all_runs = [s for m in models for s in runs[m]]
    notes = [f"Ours{f' ({m})' if len(models) > 1 else ''} = {_label(m, context, scores)}, DiversePrompt, "
             f"{SETTING_LABELS.get(settings[m], 'no runs')}, {_seed_text(_seeds(runs[m]))}." for m in models]
    notes += ["Per task: each prompt's mean over seeds, then mean ± population std (ddof=0) over the task's "
              "prompts (as the paper: std over prompts). Metric per task as the paper's Table 8 (EM block / "
              "ROUGE-L block).",
              f"Paper: T5-3B and T5-11B trained on SuperNI, {PAPER_SOURCE} Table 8 ({_paper_name(paper)})."]
    notes += reasons.notes() + _common_notes(context, all_runs)
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       "Table 8: DiversePrompt, mean ± std over each task's prompts — ours beside the paper", notes)


def render_table9(scores, paper, out_stem, context) -> list[Path]:
    """Table 9: ROUGE-L per prompt for four DiversePrompt tasks, joined to the paper's prompts by text."""
    scores = load_scores(scores)
    pdf = read_paper(paper)
    models = _models_with_runs(scores, context, "diverse")
    runs, settings = _diverse_runs(scores, models)
    paper_model = _unique(pdf["model_inferred"])[0] if len(pdf) else "paper"
    metric = PAPER_METRICS.get(_unique(pdf["metric"])[0], "rougeL") if len(pdf) else "rougeL"
    values = {m: _prompt_values(runs[m]) for m in models}
    metas = {m: _task_meta(runs[m]) for m in models}

    display, tidy = [], []
    n_matched = 0
    for name in _unique(pdf["task"]):
        prow = pdf[pdf["task"] == name]
        paper_by_text = {_norm(r.prompt): r for r in prow.itertuples(index=False)}
        # our prompts of this task: (normalised text) -> (index, text, {model: (value, n_seeds, n)})
        ours_rows: dict[str, dict] = {}
        for m in models:
            for task, prompts in values[m].items():
                if diverse_paper_name(task, metas[m].get(task)) != name:
                    continue
                for idx in sorted(prompts):
                    slot = prompts[idx]
                    text = slot["text"]
                    key = _norm(text) if text is not None else f"#{idx}"
                    r = ours_rows.setdefault(key, {"task": task, "index": idx, "text": text, "vals": {}})
                    vals = slot["values"].get(metric) or []
                    if vals:
                        r["vals"][m] = (math.fsum(vals) / len(vals), len(vals), slot["n"][0] if slot["n"] else None)
        matched = set()
        for key, r in sorted(ours_rows.items(), key=lambda kv: kv[1]["index"]):
            p = paper_by_text.get(key)
            if p is not None:
                matched.add(key)
            row = {"Task": name, "Prompt # (ours)": str(r["index"]), "Prompt": r["text"] if r["text"] else DASH}
            for m in models:
                v = r["vals"].get(m)
                row[f"Ours ROUGE-L{f' ({m})' if len(models) > 1 else ''}"] = fmt(v[0], 2) if v else DASH
                if v:
                    tidy.append({"table": 9, "source": "ours", "model": m, "task": r["task"], "paper_task": name,
                                 "prompt_index": r["index"], "paper_rank": int(p.prompt_rank_in_table) if p else None,
                                 "prompt": r["text"], "metric": metric, "value": v[0], "n_seeds": v[1],
                                 "n_instances": v[2]})
            row[f"Paper ({paper_model})"] = p.value if p is not None else DASH
            row["Paper rank"] = p.prompt_rank_in_table if p is not None else DASH
            display.append(row)
        for key, p in paper_by_text.items():
            if key not in matched:
                row = {"Task": name, "Prompt # (ours)": DASH, "Prompt": p.prompt}
                for m in models:
                    row[f"Ours ROUGE-L{f' ({m})' if len(models) > 1 else ''}"] = DASH
                row[f"Paper ({paper_model})"] = p.value
                row["Paper rank"] = p.prompt_rank_in_table
                display.append(row)
        for p in prow.itertuples(index=False):
            tidy.append({"table": 9, "source": "paper", "model": paper_model, "task": None, "paper_task": name,
                         "prompt_index": None, "paper_rank": int(p.prompt_rank_in_table), "prompt": p.prompt,
                         "metric": metric, "value": _num(p.value), "n_seeds": None, "n_instances": None})
        n_matched += len(matched)

    all_runs = [s for m in models for s in runs[m]]
    notes = [f"Ours{f' ({m})' if len(models) > 1 else ''} = {_label(m, context, scores)}, DiversePrompt, "
             f"{SETTING_LABELS.get(settings[m], 'no runs')}, ROUGE-L per prompt, mean over "
             f"{_seed_text(_seeds(runs[m]))}." for m in models]
    notes += [f"Join: our prompt text and the paper's after whitespace normalisation; {n_matched} of {len(pdf)} "
              f"paper prompts matched. {DASH} in a paper column = the prompt is not in the paper's table; "
              f"{DASH} in an ours column = not a prompt of our data (or not run), listed after our prompts.",
              f"Paper: model {paper_model} (inferred, see paper/README.md), {PAPER_SOURCE} Table 9 "
              f"({_paper_name(paper)}); 'Paper rank' = the row order within the task in the paper."]
    if not all_runs:
        notes.append(f"{DASH} = no number of ours: no DiversePrompt runs.")
    notes += _common_notes(context, all_runs)
    return write_table(pd.DataFrame(display), _tidy_frame(tidy), out_stem,
                       "Table 9: ROUGE-L per prompt for four DiversePrompt tasks — ours beside the paper", notes)


# --------------------------------------------------------------------------------------------- figure

_FIG_COLUMNS = ["source", "model", "setting", "level", "condition", "condition_label", "category", "metric",
                "original_mean", "perturbed_mean", "drop", "n_seeds_original", "n_seeds_perturbed"]


def drop_frame(scores: Sequence[dict], model: str | None, taskset: str = "english",
               categories: Sequence[str] = CATEGORY_ORDER) -> pd.DataFrame:
    """Drop from ``original`` (original − perturbed, seed means) per setting, condition and category (ours)."""
    runs = [s for s in scores if s["model"] == model and s["taskset"] == taskset]
    rows = []
    for setting in SETTINGS:
        def seed_mean(cond_key, cat):
            vals = [v for v, _ in (_cat_value(s, cat) for s in runs
                                   if s["setting"] == setting and s["condition"] == cond_key) if v is not None]
            return (math.fsum(vals) / len(vals), len(vals)) if vals else (math.nan, 0)

        for cond in PAPER_CONDITIONS[1:]:
            for cat in categories:
                o, no = seed_mean("original", cat)
                p, npp = seed_mean(cond.key, cat)
                rows.append({"source": "ours", "model": model, "setting": setting, "level": cond.level,
                             "condition": cond.key, "condition_label": cond.label, "category": cat,
                             "metric": _metric_of(cat), "original_mean": o, "perturbed_mean": p, "drop": o - p,
                             "n_seeds_original": no, "n_seeds_perturbed": npp})
    return _tidy_frame(rows, _FIG_COLUMNS)


def paper_drop_frame(paper: str | Path, categories: Sequence[str] = CATEGORY_ORDER) -> pd.DataFrame:
    """The same drop from the paper's Table 4 (original − perturbed means)."""
    pdf = read_paper(paper)
    val = {(PAPER_SETTINGS.get(r.setting, r.setting), r.condition, r.category): _num(r.mean)
           for r in pdf.itertuples(index=False)}
    model = _unique(pdf["model"])[0] if len(pdf) else "paper"
    rows = []
    for setting in SETTINGS:
        for cond in PAPER_CONDITIONS[1:]:
            for cat in categories:
                o = val.get((setting, "original", cat), math.nan)
                p = val.get((setting, cond.key, cat), math.nan)
                rows.append({"source": "paper", "model": model, "setting": setting, "level": cond.level,
                             "condition": cond.key, "condition_label": cond.label, "category": cat,
                             "metric": _metric_of(cat), "original_mean": o, "perturbed_mean": p, "drop": o - p,
                             "n_seeds_original": None, "n_seeds_perturbed": None})
    return _tidy_frame(rows, _FIG_COLUMNS)


def render_figure_drop(scores, out_stem, context, *, paper=None, selection=None) -> list[Path]:
    """Heatmaps of the drop from ``original`` per perturbation and category: wo_exam and w_exam panels
    (ours; a second row with the paper's Table 4 when ``paper`` is given). Writes .png, .pdf and a tidy .csv."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from wobble.report.figures import save_figure

    scores = load_scores(scores)
    model = _pick_model(scores, context, 0)
    categories = list(CATEGORY_ORDER)
    frames = [drop_frame(scores, model, "english", categories)]
    if paper:
        frames.append(paper_drop_frame(paper, categories))
    tidy = pd.concat(frames, ignore_index=True)

    sources = _unique(tidy["source"])
    finite = tidy["drop"][np.isfinite(tidy["drop"].astype(float))]
    vmax = max(1.0, float(np.abs(finite).max())) if len(finite) else 1.0
    conds = list(PAPER_CONDITIONS[1:])
    fig, axes = plt.subplots(len(sources), 2, figsize=(13, 3.4 * len(sources) + 0.8), squeeze=False)
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#dddddd")
    label = _label(model, context, scores)
    im = None
    for i, src in enumerate(sources):
        sub = tidy[tidy["source"] == src]
        for j, setting in enumerate(SETTINGS):
            ax = axes[i][j]
            grid = np.full((len(conds), len(categories)), np.nan)
            ss = sub[sub["setting"] == setting]
            lookup = {(r.condition, r.category): r.drop for r in ss.itertuples(index=False)}
            for a, cond in enumerate(conds):
                for b, cat in enumerate(categories):
                    v = lookup.get((cond.key, cat))
                    grid[a, b] = np.nan if v is None else float(v)
            im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto")
            for a in range(len(conds)):
                for b in range(len(categories)):
                    v = grid[a, b]
                    ax.text(b, a, DASH if np.isnan(v) else f"{v:.1f}", ha="center", va="center", fontsize=6.5,
                            color="black")
            ax.set_xticks(range(len(categories)), categories, fontsize=7)
            ax.set_yticks(range(len(conds)), [c.label for c in conds] if j == 0 else [], fontsize=7)
            who = f"ours: {model or DASH}" if src == "ours" else f"paper: {_unique(sub['model'])[0]}"
            ax.set_title(f"{SETTING_LABELS[setting]} — {who}", fontsize=9)
    fig.suptitle(f"Drop from the original instruction (original − perturbed; EM or ROUGE-L points), English "
                 f"test tasks; ours = {label}, scale {context.get('scale', '?')}", fontsize=9)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="drop (points); grey = no number")
    stem = Path(out_stem)
    paths = save_figure(fig, stem)
    csv_path = stem.with_suffix(".csv")
    with atomic_write(csv_path) as f:
        tidy.to_csv(f, index=False, lineterminator="\n", float_format="%.4f")
    return paths + [csv_path]


# ------------------------------------------------------------------------------------------- dispatch

#: table id -> (renderer, required named inputs, optional named inputs).
RENDERERS: dict[str, tuple[Callable[..., list[Path]], tuple[str, ...], tuple[str, ...]]] = {
    "table1": (render_table1, ("paper", "tasks"), ("instances",)),
    "table2": (render_table2, ("paper", "tasks"), ("selection",)),
    "table3": (render_table3, ("paper", "perturbations"), ()),
    "table4": (render_table4, ("scores", "paper"), ("selection",)),
    "table5": (render_table5, ("scores", "paper"), ("selection",)),
    "table6": (render_table6, ("paper", "para"), ()),
    "table7": (render_table7, ("scores", "paper"), ("selection",)),
    "table8": (render_table8, ("scores", "paper"), ()),
    "table9": (render_table9, ("scores", "paper"), ()),
    "table10": (render_table10, ("scores", "paper"), ("selection",)),
    "table11": (render_table11, ("scores", "paper"), ("selection",)),
    "figure_drop": (render_figure_drop, ("scores",), ("paper", "selection")),
}


def render(table_id: str, inputs: Mapping[str, Any], out_stem: str | Path, context: Mapping[str, Any]) -> list[Path]:
    """Render one table or figure from named inputs (see :data:`RENDERERS`); returns the written paths.

    ``scores`` may be an empty list (every number of ours is then "–"); other required inputs must be given.
    Unknown named inputs are ignored.
    """
    if table_id not in RENDERERS:
        raise KeyError(f"unknown instructions table {table_id!r}; known: {', '.join(RENDERERS)}")
    fn, required, optional = RENDERERS[table_id]
    args = []
    for name in required:
        value = inputs.get(name)
        if value is None and name != "scores":
            raise ValueError(f"{table_id} needs the named input {name!r} (got: {', '.join(sorted(inputs)) or 'none'})")
        if name == "scores":
            value = [] if value is None else ([value] if isinstance(value, (str, Path)) else list(value))
        args.append(value)
    kwargs = {name: inputs.get(name) for name in optional if inputs.get(name) is not None}
    return fn(*args, out_stem, dict(context or {}), **kwargs)


__all__ = ["render", "RENDERERS", "load_scores", "read_paper", "paper_result_text", "diverse_paper_name",
           "drop_frame", "paper_drop_frame", "render_figure_drop"] + [f"render_table{i}" for i in range(1, 12)]
