"""Tables and figures of the ``first_token`` study (Wang et al. 2024, "My Answer is C"), ours beside the paper's.

:func:`render` dispatches on a name and writes, through :func:`wobble.report.formats.write_table` /
:func:`wobble.report.figures.save_figure`:

* tables (``results/first_token/tables/<name>.{md,csv,tex}``): ``table1`` (the instruction prompts),
  ``table2`` (evaluator comparison, averaged), ``table3`` (answer-consistency entropy), ``table4``
  (evaluators per annotated model), ``table5`` (label distribution of the annotations), and the
  numbers of each figure beside the paper's (``figure2``: mismatch / refusal, with the paper's
  released ``mapping_result.json`` statistics; ``figure3`` / ``figure7``: choice distributions;
  ``figure4``: temperature sweep);
* figures (``results/first_token/figures/<name>.{png,pdf,csv}``): ``figure2``, ``figure3``,
  ``figure4``, ``figure7``; the ``.csv`` holds the plotted numbers.

Inputs (paths; see :func:`wobble.studies.first_token.pipeline.render_inputs`): ``metrics`` / ``choices`` /
``mapping`` (JSONL written by the pipeline's metrics step), ``classifiers`` (evaluator scores),
``annotated`` (prepared ``opinionqa_annotated``), ``paper_mapping`` (prepared
``opinionqa_paper_mapping``), ``paper_<file>`` (``paper/first_token/<file>.csv``, cells kept as
printed). ``context`` (:func:`wobble.studies.first_token.pipeline.report_context`) feeds the footnotes that
say which models ran, at what scale, on how many questions and shuffles, and with which classifier.

Rates are shown in percent with their 95% bootstrap interval ``value [low, high]``; entropies in
nats. Only the main temperature (the first of ``temperatures``) enters Tables 3 and Figures 2, 3, 7.
Our models are matched to a paper model only through ``context["paper_models"]``; the paper's rows
without a match are listed below ours with "–" in our columns.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.errors import DataError
from wobble.studies.first_token.classify import MULTIPLE, UNKNOWN, gold_label
from wobble.studies.first_token.pipeline import PAPER_MODELS, temp_tag
from wobble.studies.first_token.prompts import CONSTRAINTS, GENERAL_INSTRUCTIONS, LETTERS, PAPER_OUTPUT_DIRS
from wobble.io import atomic_write, read_jsonl
from wobble.report.cells import fmt
from wobble.report.formats import write_table

DASH = "–"
PAPER_SOURCE = "Wang et al. 2024, \"My Answer is C\""
CONSTRAINT_NAMES = {"low": "Low", "medium": "Medium", "high": "High", "example": "Example",
                    "example_abc": "Example (A/B/C)"}
PAPER_CONSTRAINTS = {"Low": "low", "Medium": "medium", "High": "high", "Example": "example"}
#: Annotated-model folder -> the model's name in the paper's Tables 4 and 5.
ANNOTATED_NAMES = {"llama2-7b": ("Llama2-7b", "Llama2-7b"), "llama2-13b": ("Llama2-13b", "Llama2-13b"),
                   "llama2-70b": ("Llama2-70b", "Llama2-70b"), "mistral-7b": ("Mistral-v0.2", "Mistral v0.2"),
                   "mixtral": ("Mixtral", "Mixtral")}
#: Our evaluator kind -> the paper's evaluator row in Table 2 / Table 4.
PAPER_EVALUATORS_T2 = {"string_match": "String Matching", "judge_0shot": "Mistral-7b v0.2 (0 shot)",
                       "judge_4shot": "Mistral-7b v0.2 (4 shot)", "peft_80": "PEFT-Mistral-7b-v0.2 (80 samples)",
                       "peft_1000": "PEFT-Mistral-7b-v0.2 (1000 samples)"}
PAPER_EVALUATORS_T4 = {"string_match": "String Matching", "judge_0shot": "Mistral-7b-Instruct v0.2 (0 shot)",
                       "judge_4shot": "Mistral-7b-Instruct v0.2 (4 shots)",
                       "peft_80": "PEFT-Mistral-7b-Instruct v0.2 (80 samples)",
                       "peft_1000": "PEFT-Mistral-7b-Instruct v0.2 (1000 samples)"}
METRIC_LABELS = {"mismatch_rate": "mismatch", "refusal_mismatch_rate": "mismatch due to refusal",
                 "refusal_rate_text": "refusal (text)", "refusal_rate_first_token": "refusal (first token)",
                 "unmapped_rate": "text names no single option", "entropy_first_token": "entropy (first token)",
                 "entropy_text": "entropy (text)"}


# ------------------------------------------------------------------------------------------ helpers


def read_paper(path: str | Path) -> pd.DataFrame:
    """A paper CSV with every cell kept as printed (strings, "" for empty)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x, digits: int = 1) -> str:
    return DASH if _nan(x) else fmt(100.0 * float(x), digits)


def num(x, digits: int = 2) -> str:
    return DASH if _nan(x) else fmt(float(x), digits)


def with_ci(value, lo, hi, *, percent: bool = True, digits: int | None = None) -> str:
    """``"12.5 [8.0, 17.5]"`` (percent) or ``"0.81 [0.70, 0.92]"``; "–" without a value."""
    f = (lambda v: pct(v, 1 if digits is None else digits)) if percent else (lambda v: num(v, 2 if digits is None else digits))
    if _nan(value):
        return DASH
    if _nan(lo) or _nan(hi):
        return f(value)
    return f"{f(value)} [{f(lo)}, {f(hi)}]"


def _printed(s: Any) -> str:
    s = "" if s is None else str(s).strip()
    return s if s else DASH


def _constraint_name(c: str) -> str:
    return CONSTRAINT_NAMES.get(c, c)


def _tick(c: str) -> str:
    return _constraint_name(c).replace(" (", "\n(")


def _constraint_order(c: str) -> int:
    return CONSTRAINTS.index(c) if c in CONSTRAINTS else len(CONSTRAINTS)


def _main_temperature(context: Mapping) -> float:
    return float(temp_tag(context["temperatures"][0]))


def _paper_id(context: Mapping, model: str) -> str | None:
    return (context.get("paper_models") or {}).get(model)


def _used_classifier(rows: Sequence[Mapping], context: Mapping) -> str:
    names = sorted({r["classifier"] for r in rows if r.get("classifier")})
    if names:
        return ", ".join(names)
    return f"chosen in Table 2 (first_token.classifier: {context.get('classifier', 'auto')})"


def evaluator_label(name: str, context: Mapping) -> str:
    """Display name of an evaluator: String Matching, ``<judge> (k shot)``, ``PEFT-<base> (n samples)``."""
    if name == "string_match":
        return "String Matching"
    if name.startswith("judge_"):
        return f"{context.get('judge_model')} ({name[len('judge_'):-len('shot')]} shot)"
    if name.startswith("peft_"):
        return f"PEFT-{context.get('classifier_base')} ({name[len('peft_'):]} samples)"
    return name


def footnotes(context: Mapping, *, classifier: str | None = None, paper_file: str | None = None,
              runs: bool = True, intervals: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """The footnotes every table carries: which models ran, scale, sample, decoding, classifier."""
    labels = context.get("model_labels", {})
    models = ", ".join(labels.get(m, m) for m in context["models"])
    nq = context.get("n_questions")
    sample = f"{nq} of the paper's 414 OpinionQA questions (seeded sample, seed {context['seed']})" if nq else \
        "all 414 OpinionQA questions of the paper"
    temps = context["temperatures"]
    decoding = f"temperature {fmt(temps[0], 2)}" + (" (greedy)" if float(temps[0]) == 0 else "")
    if len(temps) > 1:
        decoding += (f"; Figure 4 sweeps temperatures {', '.join(fmt(t, 2) for t in temps)} under "
                     f"{', '.join(_constraint_name(c) for c in context['sweep_constraints'])}")
    notes = [f"Ours: model(s) {models}; scale '{context['scale']}'."]
    if runs:
        notes.append(f"Prompts: {sample}; {context['n_shuffles']} option shuffle(s) per question; constraint levels "
                     f"{', '.join(_constraint_name(c) for c in context['constraints'])}; {decoding}; "
                     f"max_new_tokens {context['max_new_tokens']}. First-token answer = argmax of the next-token "
                     "probability over the shown option letters (the refusal letter included; a letter counts as 'A' "
                     "and ' A' where the tokenizer has a token for each).")
    ev = ", ".join(evaluator_label(e, context) for e in context.get("evaluators", []))
    notes.append(f"Text answer -> option: {classifier or _used_classifier([], context)} "
                 f"(first_token.classifier: {context.get('classifier')}; evaluators compared in Table 2: {ev}).")
    if intervals:
        b = context.get("bootstrap", {})
        notes.append(f"[low, high] = 95% percentile bootstrap interval over questions ({b.get('n')} resamples, "
                     f"seed {b.get('seed')}); all shuffles of a question are resampled together.")
    if paper_file:
        notes.append(f"Paper: {PAPER_SOURCE}, paper/first_token/{paper_file} (as printed).")
    notes.extend(extra)
    return notes


def _load(inputs: Mapping[str, Any], key: str) -> list[dict]:
    val = inputs[key]
    if isinstance(val, (list, tuple)) and (not val or isinstance(val[0], Mapping)):
        return [dict(v) for v in val]
    return read_jsonl(val)


def _write_csv(df: pd.DataFrame, path: Path) -> Path:
    with atomic_write(path) as f:
        df.to_csv(f, index=False, lineterminator="\n", float_format="%.6f")
    return path


def _metric_index(rows: Sequence[Mapping]) -> dict[tuple, Mapping]:
    return {(r["model"], r["constraint"], temp_tag(r["temperature"]), r["metric"]): r for r in rows}


# ------------------------------------------------------------------------------------------ table 1


def render_table1(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    paper = read_paper(inputs["paper_table1"])
    printed = dict(zip(paper["constraint"], paper["general_instruction_prompt"]))
    rows, tidy = [], []
    for c in CONSTRAINTS:
        ours = GENERAL_INSTRUCTIONS[c]
        pname = {"example_abc": None}.get(c, CONSTRAINT_NAMES[c])
        p = printed.get(pname) if pname else None
        same = DASH if p is None else ("yes" if p == ours else "no")
        rows.append({"Constraint": _constraint_name(c), "General instruction (ours)": ours,
                     "Paper Table 1": p if p is not None else "– (Figure 3 control: the Example template, answer 'A/B/C')",
                     "Identical": same, "Run": "yes" if c in context["constraints"] else "no"})
        tidy.append({"constraint": c, "ours": ours, "paper": p, "identical": None if p is None else p == ours,
                     "run": c in context["constraints"]})
    notes = footnotes(context, paper_file="table1.csv", extra=[
        "Each prompt (one user turn, rendered with the model's chat template; a model without one gets "
        "'User: ...\\n\\nAssistant:'): '<general instruction> \\nQuestion: <question>\\n\\nA. <option> \\nB. <option> "
        "\\n...Answer:' — the layout of the paper's stored prompts.",
    ])
    return write_table(pd.DataFrame(rows), pd.DataFrame(tidy), out_stem,
                       "Table 1: General instruction prompt per constraint level", notes)


# ------------------------------------------------------------------------------------ tables 2 and 4


def _classifier_rows(inputs) -> tuple[list[dict], str | None]:
    rows = _load(inputs, "classifiers")
    for i, r in enumerate(rows, 1):
        for k in ("evaluator", "model", "accuracy", "macro_f1", "weighted_f1", "n"):
            if k not in r:
                raise DataError(inputs["classifiers"], f"line {i}", f"a classifier-score row with field '{k}'")
    selected = next((r["evaluator"] for r in rows if r.get("selected")), None)
    return rows, selected


def render_table2(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    rows, selected = _classifier_rows(inputs)
    paper = read_paper(inputs["paper_table2"])
    paper_by = {r["evaluator"]: r for r in paper.to_dict("records")}
    display, tidy, used_paper = [], [], set()
    for r in (x for x in rows if x["model"] == "Avg"):
        pname = PAPER_EVALUATORS_T2.get(r["evaluator"])
        p = paper_by.get(pname) if pname else None
        if p:
            used_paper.add(pname)
        display.append({"Evaluator (ours)": evaluator_label(r["evaluator"], context),
                        "Acc % (ours)": pct(r["accuracy"]), "Macro-F1 (ours)": num(r["macro_f1"], 3),
                        "Weighted-F1 (ours)": num(r["weighted_f1"], 3), "n (ours)": str(r["n"]),
                        "Paper evaluator": pname if p else DASH,
                        "Acc % (paper)": _printed(p["acc_pct"]) if p else DASH,
                        "Macro-F1 (paper)": _printed(p["macro_f1"]) if p else DASH,
                        "Weighted-F1 (paper)": _printed(p["weighted_f1"]) if p else DASH,
                        "Used": "yes" if r["evaluator"] == selected else ""})
        tidy.append({"source": "ours", "evaluator": r["evaluator"], "label": evaluator_label(r["evaluator"], context),
                     "accuracy": r["accuracy"], "macro_f1": r["macro_f1"], "weighted_f1": r["weighted_f1"],
                     "n": r["n"], "selected": r["evaluator"] == selected, "paper_evaluator": pname if p else None})
    for pname, p in paper_by.items():
        if pname in used_paper:
            continue
        display.append({"Evaluator (ours)": DASH, "Acc % (ours)": DASH, "Macro-F1 (ours)": DASH,
                        "Weighted-F1 (ours)": DASH, "n (ours)": DASH, "Paper evaluator": pname,
                        "Acc % (paper)": _printed(p["acc_pct"]), "Macro-F1 (paper)": _printed(p["macro_f1"]),
                        "Weighted-F1 (paper)": _printed(p["weighted_f1"]), "Used": ""})
    for pname, p in paper_by.items():
        tidy.append({"source": "paper", "evaluator": pname, "label": pname, "accuracy": _paper_float(p["acc_pct"], 0.01),
                     "macro_f1": _paper_float(p["macro_f1"]), "weighted_f1": _paper_float(p["weighted_f1"]),
                     "n": None, "selected": None, "paper_evaluator": pname})
    notes = footnotes(context, classifier=selected, paper_file="table2.csv", extra=[
        _eval_note(context, rows),
        "Ours vs paper: same kind of evaluator, not the same model — the paper's judge and PEFT base are "
        "Mistral-7b-Instruct-v0.2; ours are named in the first column.",
    ])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem,
                       "Table 2: Text-output evaluators on the annotated test responses (average over annotated models)",
                       notes)


def _paper_float(s: Any, scale: float = 1.0) -> float | None:
    s = "" if s is None else str(s).strip()
    return float(s) * scale if s else None


def _eval_note(context: Mapping, rows: Sequence[Mapping]) -> str:
    models = sorted({r["model"] for r in rows if r["model"] != "Avg"})
    per = context.get("eval_per_model")
    sample = f"a seeded sample of {per} test responses per model" if per else "every test response"
    return (f"Evaluation data: the paper's annotated responses (80/20 train/test split per model), {sample} of "
            f"{', '.join(models) or 'no model'}; gold = the human label (several letters -> 'multiple', "
            "'nan' -> 'unknown'). Avg = mean over the annotated models. The mirror lacks mistral-7b's training split; "
            "judge shots and PEFT training examples come from the other models' training splits.")


def render_table4(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    rows, selected = _classifier_rows(inputs)
    paper = read_paper(inputs["paper_table4"])
    paper_by = {(r["evaluator"], r["model"]): r for r in paper.to_dict("records")}
    display, tidy, used = [], [], set()
    for r in rows:
        pev = PAPER_EVALUATORS_T4.get(r["evaluator"])
        pmodel = "Avg" if r["model"] == "Avg" else ANNOTATED_NAMES.get(r["model"], (None,))[0]
        p = paper_by.get((pev, pmodel)) if pev and pmodel else None
        if p:
            used.add((pev, pmodel))
        display.append({"Evaluator": evaluator_label(r["evaluator"], context), "Model": r["model"],
                        "Acc % (ours)": pct(r["accuracy"]), "Acc % (paper)": _printed(p["acc_pct"]) if p else DASH,
                        "Macro-F1 (ours)": num(r["macro_f1"], 3), "Macro-F1 (paper)": _printed(p["macro_f1"]) if p else DASH,
                        "Weighted-F1 (ours)": num(r["weighted_f1"], 3),
                        "Weighted-F1 (paper)": _printed(p["weighted_f1"]) if p else DASH, "n": str(r["n"])})
        tidy.append({"source": "ours", "evaluator": r["evaluator"], "model": r["model"], "accuracy": r["accuracy"],
                     "macro_f1": r["macro_f1"], "weighted_f1": r["weighted_f1"], "n": r["n"],
                     "paper_evaluator": pev if p else None, "paper_model": pmodel if p else None})
    for (pev, pmodel), p in paper_by.items():
        if (pev, pmodel) not in used:
            display.append({"Evaluator": pev, "Model": pmodel, "Acc % (ours)": DASH, "Acc % (paper)": _printed(p["acc_pct"]),
                            "Macro-F1 (ours)": DASH, "Macro-F1 (paper)": _printed(p["macro_f1"]),
                            "Weighted-F1 (ours)": DASH, "Weighted-F1 (paper)": _printed(p["weighted_f1"]), "n": DASH})
        tidy.append({"source": "paper", "evaluator": pev, "model": pmodel, "accuracy": _paper_float(p["acc_pct"], 0.01),
                     "macro_f1": _paper_float(p["macro_f1"]), "weighted_f1": _paper_float(p["weighted_f1"]), "n": None,
                     "paper_evaluator": pev, "paper_model": pmodel})
    notes = footnotes(context, classifier=selected, paper_file="table4.csv", extra=[
        _eval_note(context, rows),
        "Model = the model whose responses were annotated (paper names: " +
        ", ".join(f"{k} = {v[0]}" for k, v in ANNOTATED_NAMES.items()) + ").",
    ])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem,
                       "Table 4: Text-output evaluators per annotated model", notes)


# ------------------------------------------------------------------------------------------ table 3


def render_table3(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    rows = _load(inputs, "metrics")
    idx = _metric_index(rows)
    t = temp_tag(_main_temperature(context))
    paper = read_paper(inputs["paper_table3"])
    paper_by = {(r["model"], r["constraint"]): r for r in paper.to_dict("records")}
    display, tidy, used = [], [], set()
    cells = sorted({(r["model"], r["constraint"]) for r in rows if temp_tag(r["temperature"]) == t},
                   key=lambda mc: (context["models"].index(mc[0]) if mc[0] in context["models"] else 99,
                                   _constraint_order(mc[1])))
    for model, c in cells:
        ft, tx = idx.get((model, c, t, "entropy_first_token")), idx.get((model, c, t, "entropy_text"))
        pid = _paper_id(context, model)
        pmodel = PAPER_MODELS[pid]["table3"] if pid else None
        p = paper_by.get((pmodel, CONSTRAINT_NAMES.get(c))) if pmodel else None
        if p:
            used.add((pmodel, CONSTRAINT_NAMES[c]))
        display.append({"Model": model, "Constraint": _constraint_name(c),
                        "First token (ours)": with_ci(ft["value"], ft["ci_low"], ft["ci_high"], percent=False) if ft else DASH,
                        "Text (ours)": with_ci(tx["value"], tx["ci_low"], tx["ci_high"], percent=False) if tx else DASH,
                        "Paper model": pmodel or DASH,
                        "First token (paper)": _printed(p["entropy_first_token"]) if p else DASH,
                        "Text (paper)": _printed(p["entropy_text_output"]) if p else DASH,
                        "Questions": str(ft["n_questions"]) if ft else DASH})
        for by, r in (("first_token", ft), ("text", tx)):
            if r:
                tidy.append({"source": "ours", "model": model, "constraint": c, "answer_by": by, "entropy": r["value"],
                             "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n_questions": r["n_questions"]})
    for (pmodel, pc), p in paper_by.items():
        if (pmodel, pc) not in used:
            display.append({"Model": DASH, "Constraint": pc, "First token (ours)": DASH, "Text (ours)": DASH,
                            "Paper model": pmodel, "First token (paper)": _printed(p["entropy_first_token"]),
                            "Text (paper)": _printed(p["entropy_text_output"]), "Questions": DASH})
        for by, col in (("first_token", "entropy_first_token"), ("text", "entropy_text_output")):
            tidy.append({"source": "paper", "model": pmodel, "constraint": PAPER_CONSTRAINTS.get(pc, pc), "answer_by": by,
                         "entropy": _paper_float(p[col]), "ci_low": None, "ci_high": None, "n_questions": None})
    notes = footnotes(context, classifier=_used_classifier(rows, context), paper_file="table3.csv", intervals=True, extra=[
        "Entropy (nats) of the ORIGINAL options a model picks over a question's shuffles, averaged over questions "
        "(lower = more consistent); text answers naming no single option are left out of a question's distribution.",
        "Paper's Medium cells of the Llama2 rows are unreadable in the extraction ('–').",
    ])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem,
                       "Table 3: Answer consistency (entropy over option shuffles), first token vs text", notes)


# ------------------------------------------------------------------------------------------ table 5


def label_distribution(annotated: Sequence[Mapping]) -> dict[str, dict[str, int]]:
    """model -> label -> count of the human annotations (letters A-J, ``multiple``, ``unknown``)."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for i, r in enumerate(annotated, 1):
        if not isinstance(r.get("options_as_shown"), list) or "label_raw" not in r or "model" not in r:
            raise DataError("<opinionqa_annotated>", f"line {i}", "fields 'model', 'options_as_shown', 'label_raw'")
        letters = list(LETTERS[: len(r["options_as_shown"])])
        out[r["model"]][gold_label(r["label_raw"], letters)] += 1
    return {m: dict(v) for m, v in out.items()}


def render_table5(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    dist = label_distribution(_load(inputs, "annotated"))
    paper = read_paper(inputs["paper_table5"])
    paper_counts: dict[str, dict[str, str]] = defaultdict(dict)
    for r in paper.to_dict("records"):
        paper_counts[r["model"]][r["label"]] = r["count"]
    cols = list(LETTERS[:10]) + [MULTIPLE, UNKNOWN]
    display, tidy = [], []
    for model in sorted(dist):
        counts = dist[model]
        row = {"Model": model, "Source": "ours (mirror)"}
        row.update({c if c not in (MULTIPLE, UNKNOWN) else {MULTIPLE: "multiple", UNKNOWN: "nan"}[c]:
                    str(counts.get(c, 0)) for c in cols})
        row["Total"] = str(sum(counts.values()))
        display.append(row)
        for c in cols:
            tidy.append({"source": "ours", "model": model, "label": c, "count": counts.get(c, 0)})
        pname = ANNOTATED_NAMES.get(model, (None, None))[1]
        pc = paper_counts.get(pname) if pname else None
        if pc is not None:
            prow = {"Model": pname, "Source": "paper"}
            prow.update({(c if c not in (MULTIPLE, UNKNOWN) else {MULTIPLE: "multiple", UNKNOWN: "nan"}[c]):
                         _printed(pc.get(c)) for c in cols})
            prow["Total"] = str(sum(int(v) for v in pc.values() if str(v).strip()))
            display.append(prow)
    for pname, pc in paper_counts.items():
        for label, count in pc.items():
            tidy.append({"source": "paper", "model": pname, "label": label, "count": _paper_float(count)})
    splits = "train + test"
    notes = footnotes(context, classifier=None, paper_file="table5.csv", extra=[
        f"Ours: gold labels of every annotated response in the data ({splits}; {sum(map(sum, (d.values() for d in dist.values())))} "
        "responses; the paper annotated 2,070 = 5 x 414, the mirror lacks mistral-7b's training split). "
        "'multiple' = several letters annotated, 'nan' = no option.",
        "Paper: counts as printed (its 'J' column is not explained in the text; the paper prints no multiple/nan "
        "column, '–').",
        "This table does not depend on the models run.",
    ])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem,
                       "Table 5: Label distribution of the annotated responses", notes)


# ------------------------------------------------------------------------------------------ figure 2


def _paper_mapping_means(rows: Sequence[Mapping]) -> dict[tuple[str, str], dict[str, float]]:
    """(paper model name, constraint key) -> mean over shuffles of the released rates."""
    by: dict[tuple[str, str], list[Mapping]] = defaultdict(list)
    dirs = {v: k for k, v in PAPER_OUTPUT_DIRS.items()}
    for r in rows:
        c = dirs.get(r["constraint"])
        if c:
            by[(r["model"], c)].append(r)
    out = {}
    for key, rs in by.items():
        n = len(rs)
        out[key] = {"mismatch": sum(r["total_mis_rate"] for r in rs) / n, "refusal": sum(r["refuse_rate"] for r in rs) / n,
                    "not_first": sum(r["total_first_token_mismatch"] / r["total"] for r in rs) / n, "shuffles": n}
    return out


def _our_mapping_means(rows: Sequence[Mapping], t: str) -> dict[tuple[str, str], dict[str, float]]:
    by: dict[tuple[str, str], list[Mapping]] = defaultdict(list)
    for r in rows:
        if temp_tag(r["temperature"]) == t:
            by[(r["model"], r["constraint"])].append(r)
    return {k: {"not_first": sum(r["total_first_token_mismatch"] / r["total"] for r in rs) / len(rs),
                "shuffles": len(rs)} for k, rs in by.items()}


def render_figure2_table(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    rows = _load(inputs, "metrics")
    idx = _metric_index(rows)
    t = temp_tag(_main_temperature(context))
    paper_means = _paper_mapping_means(_load(inputs, "paper_mapping"))
    ours_map = _our_mapping_means(_load(inputs, "mapping"), t)
    display, tidy, used = [], [], set()
    for model, c in _cells(rows, t, context):
        g = {m: idx.get((model, c, t, m)) for m in ("mismatch_rate", "refusal_mismatch_rate", "refusal_rate_text",
                                                    "refusal_rate_first_token")}
        pid = _paper_id(context, model)
        pname = PAPER_MODELS[pid]["mapping"] if pid else None
        p = paper_means.get((pname, c)) if pname else None
        if p:
            used.add((pname, c))
        display.append({
            "Model": model, "Constraint": _constraint_name(c),
            "Mismatch % (ours)": _ci(g["mismatch_rate"]), "of which refusal %": _ci(g["refusal_mismatch_rate"]),
            "Refusal % text (ours)": _ci(g["refusal_rate_text"]), "Refusal % first token": _ci(g["refusal_rate_first_token"]),
            "Not opening with the letter %": pct(ours_map.get((model, c), {}).get("not_first")),
            "Paper model": pname or DASH, "Mismatch % (paper)": pct(p["mismatch"]) if p else DASH,
            "Refusal % (paper)": pct(p["refusal"]) if p else DASH,
            "Not opening with the letter % (paper)": pct(p["not_first"]) if p else DASH})
        for m, r in g.items():
            if r:
                tidy.append({"source": "ours", "model": model, "constraint": c, "quantity": m, "value": r["value"],
                             "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
    for (pname, c), p in sorted(paper_means.items(), key=lambda kv: (kv[0][0], _constraint_order(kv[0][1]))):
        if (pname, c) not in used:
            display.append({"Model": DASH, "Constraint": _constraint_name(c), "Mismatch % (ours)": DASH,
                            "of which refusal %": DASH, "Refusal % text (ours)": DASH, "Refusal % first token": DASH,
                            "Not opening with the letter %": DASH, "Paper model": pname,
                            "Mismatch % (paper)": pct(p["mismatch"]), "Refusal % (paper)": pct(p["refusal"]),
                            "Not opening with the letter % (paper)": pct(p["not_first"])})
        for q, key in (("mismatch_rate", "mismatch"), ("refusal_rate_text", "refusal"), ("not_first", "not_first")):
            tidy.append({"source": "paper mapping_result.json", "model": pname, "constraint": c, "quantity": q,
                         "value": p[key], "ci_low": None, "ci_high": None})
    quotes = read_paper(inputs["paper_figure2"]).to_dict("records")
    for q in quotes:
        tidy.append({"source": "paper text", "model": q["model"], "constraint": q["constraint"],
                     "quantity": q["quantity"], "value": _paper_float(q["value_pct"], 0.01), "ci_low": None,
                     "ci_high": None})
    stated = "; ".join(f"{q['model']} {q['quantity']} {q['qualifier']} {q['value_pct']}%" for q in quotes)
    notes = footnotes(context, classifier=_used_classifier(rows, context), intervals=True, paper_file="figure2.csv", extra=[
        "Mismatch = first-token option differs from the text option (a text naming no single option counts as a "
        "mismatch); 'of which refusal' = the text refuses while the first token does not. 'Not opening with the "
        "letter' = the generated text does not start with the first-token letter (paper: total_first_token_mismatch).",
        "Paper columns: mean over the 10 shuffles of the released mapping_result.json (prepared dataset "
        "opinionqa_paper_mapping; the paper's own classifier, not human labels).",
        f"Stated in the paper's text (constraint not stated): {stated}.",
    ])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem,
                       "Figure 2 (numbers): mismatch rate (refusal part) and refusal rate per model x constraint", notes)


def _ci(r: Mapping | None) -> str:
    return with_ci(r["value"], r["ci_low"], r["ci_high"]) if r else DASH


def _cells(rows: Sequence[Mapping], t: str, context: Mapping, constraints: Sequence[str] | None = None) -> list[tuple]:
    cells = {(r["model"], r["constraint"]) for r in rows if temp_tag(r["temperature"]) == t
             and (constraints is None or r["constraint"] in constraints)}
    return sorted(cells, key=lambda mc: (context["models"].index(mc[0]) if mc[0] in context["models"] else 99,
                                         mc[0], _constraint_order(mc[1])))


def _figure_models(rows: Sequence[Mapping], context: Mapping) -> list[str]:
    present = {r["model"] for r in rows}
    return [m for m in context["models"] if m in present] + sorted(present - set(context["models"]))


def plot_figure2(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    import matplotlib.pyplot as plt
    import numpy as np

    rows = _load(inputs, "metrics")
    idx = _metric_index(rows)
    t = temp_tag(_main_temperature(context))
    models = _figure_models([r for r in rows if temp_tag(r["temperature"]) == t], context)
    constraints = [c for c in CONSTRAINTS if any(r["constraint"] == c and temp_tag(r["temperature"]) == t for r in rows)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    width = 0.8 / max(1, len(models))
    x = np.arange(len(constraints))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    plotted = []
    for i, m in enumerate(models):
        def val(metric, c):
            r = idx.get((m, c, t, metric))
            return (np.nan, np.nan, np.nan) if r is None or r["value"] is None else \
                (100 * r["value"], 100 * (r["ci_low"] if r["ci_low"] is not None else r["value"]),
                 100 * (r["ci_high"] if r["ci_high"] is not None else r["value"]))
        mis = np.array([val("mismatch_rate", c) for c in constraints]).reshape(-1, 3)
        ref = np.array([val("refusal_mismatch_rate", c) for c in constraints]).reshape(-1, 3)
        rr = np.array([val("refusal_rate_text", c) for c in constraints]).reshape(-1, 3)
        pos = x - 0.4 + width * (i + 0.5)
        col = colors[i % len(colors)]
        axes[0].bar(pos, mis[:, 0] - ref[:, 0], width, bottom=ref[:, 0], color=col, label=m)
        axes[0].bar(pos, ref[:, 0], width, color=col, alpha=0.45, hatch="//", edgecolor="black", linewidth=0.3)
        axes[0].errorbar(pos, mis[:, 0], yerr=_yerr(mis), fmt="none", ecolor="black", capsize=2, linewidth=0.8)
        axes[1].bar(pos, rr[:, 0], width, color=col, label=m)
        axes[1].errorbar(pos, rr[:, 0], yerr=_yerr(rr), fmt="none", ecolor="black", capsize=2, linewidth=0.8)
        for j, c in enumerate(constraints):
            plotted.append({"model": m, "constraint": c, "mismatch_pct": mis[j, 0], "mismatch_lo": mis[j, 1],
                            "mismatch_hi": mis[j, 2], "refusal_part_pct": ref[j, 0], "refusal_rate_pct": rr[j, 0],
                            "refusal_rate_lo": rr[j, 1], "refusal_rate_hi": rr[j, 2]})
    for ax, title in zip(axes, ("(a) mismatch rate (hatched: due to refusal)", "(b) refusal rate (text answer)")):
        ax.set_xticks(x, [_tick(c) for c in constraints])
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
        ax.set_title(title, fontsize=10)
    if models:
        axes[1].legend(fontsize=8, loc="upper right")
    fig.suptitle(f"Figure 2 (ours; temperature {t}; bars: 95% bootstrap CI)", fontsize=10)
    return _save(fig, pd.DataFrame(plotted), out_stem)


def _yerr(a):
    import numpy as np

    lo = np.clip(a[:, 0] - a[:, 1], 0, None)
    hi = np.clip(a[:, 2] - a[:, 0], 0, None)
    return np.nan_to_num(np.vstack([lo, hi]))


def _save(fig, data: pd.DataFrame, out_stem: Path) -> list[Path]:
    from wobble.report.figures import save_figure

    paths = save_figure(fig, out_stem)
    paths.append(_write_csv(data, out_stem.with_suffix(".csv")))
    return paths


# ------------------------------------------------------------------------------------ figures 3 and 7


def _choice_index(rows: Sequence[Mapping]) -> dict[tuple, dict[str, Mapping]]:
    out: dict[tuple, dict[str, Mapping]] = defaultdict(dict)
    for r in rows:
        out[(r["model"], r["constraint"], temp_tag(r["temperature"]), r["answer_by"])][r["letter"]] = r
    return out


def _choice_letters(rows: Sequence[Mapping]) -> list[str]:
    letters = sorted({r["letter"] for r in rows if r["letter"] != "none"})
    return letters + (["none"] if any(r["letter"] == "none" for r in rows) else [])


def render_choice_table(inputs: Mapping[str, Any], out_stem: Path, context: Mapping, *, figure: str,
                        constraints: Sequence[str]) -> list[Path]:
    rows = _load(inputs, "choices")
    t = temp_tag(_main_temperature(context))
    sel = [r for r in rows if temp_tag(r["temperature"]) == t and r["constraint"] in constraints]
    idx = _choice_index(sel)
    letters = _choice_letters(sel) or ["A", "B", "C"]
    display, tidy = [], []
    for model, c in _cells(sel, t, context, constraints):
        for by in ("first_token", "text"):
            d = idx.get((model, c, t, by), {})
            if not d:
                continue
            row = {"Model": model, "Constraint": _constraint_name(c), "Answer by": by.replace("_", " ")}
            for lt in letters:
                r = d.get(lt)
                row[lt] = with_ci(r["share"], r["ci_low"], r["ci_high"]) if r else DASH
            row["Prompts"] = str(next(iter(d.values()))["n_prompts"])
            display.append(row)
            for lt, r in sorted(d.items()):
                tidy.append({"source": "ours", "model": model, "constraint": c, "answer_by": by, "letter": lt,
                             "share": r["share"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "count": r["count"]})
    paper = read_paper(inputs[f"paper_{figure}"]).to_dict("records")
    for p in paper:
        row = {"Model": f"{p['model']} (paper)", "Constraint": p["constraint"], "Answer by": "first token"}
        for lt in letters:
            row[lt] = f"{p['qualifier']} {p['value_pct']}".replace("= ", "") if lt == "C" else DASH
        row["Prompts"] = DASH
        display.append(row)
        tidy.append({"source": "paper text", "model": p["model"], "constraint": p["constraint"],
                     "answer_by": "first_token", "letter": "C", "share": _paper_float(p["value_pct"], 0.01),
                     "ci_low": None, "ci_high": None, "count": None})
    title = {"figure3": "Figure 3 (numbers): choice distribution, first token vs text, Example template "
                        "(answer 'C' vs 'A/B/C')",
             "figure7": "Figure 7 (numbers): choice distribution, first token vs text, High constraint"}[figure]
    notes = footnotes(context, classifier=_used_classifier(rows, context), intervals=True, paper_file=f"{figure}.csv",
                      extra=["Share (%) of prompts whose answer is each letter; 'none' = the text names no single "
                             "option. Letters are positions: each shuffle puts different options under them.",
                             "Paper: the share of 'C' stated in the text for Llama2-70b-Chat."])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem, title, notes)


def plot_choices(inputs: Mapping[str, Any], out_stem: Path, context: Mapping, *, figure: str,
                 constraints: Sequence[str]) -> list[Path]:
    import matplotlib.pyplot as plt
    import numpy as np

    rows = _load(inputs, "choices")
    t = temp_tag(_main_temperature(context))
    sel = [r for r in rows if temp_tag(r["temperature"]) == t and r["constraint"] in constraints]
    idx = _choice_index(sel)
    models = _figure_models(sel, context) or ["(no model ran)"]
    letters = _choice_letters(sel) or ["A", "B", "C"]
    fig, axes = plt.subplots(len(models), len(constraints), figsize=(4.6 * len(constraints), 2.8 * len(models)),
                             squeeze=False)
    x = np.arange(len(letters))
    plotted = []
    for i, m in enumerate(models):
        for j, c in enumerate(constraints):
            ax = axes[i][j]
            for k, by in enumerate(("first_token", "text")):
                d = idx.get((m, c, t, by), {})
                vals = np.array([100 * d[lt]["share"] if lt in d and d[lt]["share"] is not None else 0.0 for lt in letters])
                ax.bar(x + (k - 0.5) * 0.4, vals, 0.4, label=by.replace("_", " "))
                for lt, v in zip(letters, vals):
                    if lt in d:
                        plotted.append({"model": m, "constraint": c, "answer_by": by, "letter": lt, "share_pct": v})
            if not any(idx.get((m, c, t, by)) for by in ("first_token", "text")):
                ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks(x, letters)
            ax.set_ylim(0, 100)
            ax.set_ylabel("% of prompts")
            ax.set_title(f"{m} — {_constraint_name(c)}", fontsize=9)
    axes[0][0].legend(fontsize=8)
    fig.suptitle({"figure3": "Figure 3 (ours): choices under the Example template, answer 'C' vs 'A/B/C'",
                  "figure7": "Figure 7 (ours): choices under the High constraint"}[figure], fontsize=10)
    fig.tight_layout()
    return _save(fig, pd.DataFrame(plotted), out_stem)


# ------------------------------------------------------------------------------------------ figure 4


FIG4_METRICS = ("entropy_first_token", "entropy_text", "refusal_rate_text", "mismatch_rate")


def render_figure4_table(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    rows = _load(inputs, "metrics")
    sweep = list(context["sweep_constraints"])
    sel = [r for r in rows if r["constraint"] in sweep]
    idx = _metric_index(sel)
    cells = sorted({(r["model"], r["constraint"], temp_tag(r["temperature"])) for r in sel},
                   key=lambda k: (context["models"].index(k[0]) if k[0] in context["models"] else 99, k[0],
                                  _constraint_order(k[1]), float(k[2])))
    display, tidy = [], []
    for model, c, t in cells:
        g = {m: idx.get((model, c, t, m)) for m in FIG4_METRICS}
        display.append({"Model": model, "Constraint": _constraint_name(c), "Temperature": t,
                        "Entropy first token": with_ci(*_vals(g["entropy_first_token"]), percent=False),
                        "Entropy text": with_ci(*_vals(g["entropy_text"]), percent=False),
                        "Refusal % (text)": with_ci(*_vals(g["refusal_rate_text"])),
                        "Mismatch %": with_ci(*_vals(g["mismatch_rate"]))})
        for m, r in g.items():
            if r:
                tidy.append({"model": model, "constraint": c, "temperature": float(t), "metric": m, "value": r["value"],
                             "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
    notes = footnotes(context, classifier=_used_classifier(sel, context), intervals=True, extra=[
        "The first-token answer does not depend on the temperature (it is computed once, at the main temperature); "
        "the text answer is sampled at each temperature (seeded per prompt).",
        "Paper: Figure 4 gives no numbers in the text.",
    ])
    return write_table(pd.DataFrame(display), pd.DataFrame(tidy), out_stem,
                       "Figure 4 (numbers): temperature vs consistency, refusal and mismatch", notes)


def _vals(r: Mapping | None) -> tuple:
    return (None, None, None) if r is None else (r["value"], r["ci_low"], r["ci_high"])


def plot_figure4(inputs: Mapping[str, Any], out_stem: Path, context: Mapping) -> list[Path]:
    import matplotlib.pyplot as plt

    rows = _load(inputs, "metrics")
    sweep = list(context["sweep_constraints"])
    sel = [r for r in rows if r["constraint"] in sweep]
    idx = _metric_index(sel)
    series = sorted({(r["model"], r["constraint"]) for r in sel},
                    key=lambda k: (context["models"].index(k[0]) if k[0] in context["models"] else 99, k[0],
                                   _constraint_order(k[1])))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    plotted = []
    panels = ((axes[0], ("entropy_text", "entropy_first_token"), "(a) answer consistency (entropy, nats)", 1.0),
              (axes[1], ("refusal_rate_text",), "(b) refusal rate (text, %)", 100.0),
              (axes[2], ("mismatch_rate",), "(c) mismatch rate (%)", 100.0))
    for i, (model, c) in enumerate(series):
        temps = sorted({temp_tag(r["temperature"]) for r in sel if r["model"] == model and r["constraint"] == c}, key=float)
        xs = [float(t) for t in temps]
        col = colors[i % len(colors)]
        for ax, metrics, _, scale in panels:
            for metric in metrics:
                ys, lo, hi = [], [], []
                for t in temps:
                    r = idx.get((model, c, t, metric))
                    v = r["value"] if r and r["value"] is not None else float("nan")
                    ys.append(scale * v)
                    lo.append(scale * (r["ci_low"] if r and r["ci_low"] is not None else v))
                    hi.append(scale * (r["ci_high"] if r and r["ci_high"] is not None else v))
                    plotted.append({"model": model, "constraint": c, "temperature": float(t), "metric": metric,
                                    "value": scale * v})
                style = "--" if metric == "entropy_first_token" else "-"
                label = f"{model} / {_constraint_name(c)}" + (" (first token)" if metric == "entropy_first_token" else "")
                ax.plot(xs, ys, style, marker="o", color=col, label=label)
                ax.fill_between(xs, lo, hi, color=col, alpha=0.15, linewidth=0)
    for ax, _, title, scale in panels:
        ax.set_xlabel("temperature")
        ax.set_title(title, fontsize=10)
        if scale == 100.0:
            ax.set_ylim(0, 100)
    if series:
        axes[0].legend(fontsize=7)
    else:
        for ax, *_ in panels:
            ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle("Figure 4 (ours): effect of the decoding temperature (shaded: 95% bootstrap CI)", fontsize=10)
    fig.tight_layout()
    return _save(fig, pd.DataFrame(plotted), out_stem)


# ------------------------------------------------------------------------------------------ dispatch


TABLE_RENDERERS = {
    "table1": render_table1, "table2": render_table2, "table3": render_table3, "table4": render_table4,
    "table5": render_table5, "figure2": render_figure2_table, "figure4": render_figure4_table,
    "figure3": lambda i, o, c: render_choice_table(i, o, c, figure="figure3", constraints=("example", "example_abc")),
    "figure7": lambda i, o, c: render_choice_table(i, o, c, figure="figure7", constraints=("high",)),
}
FIGURE_RENDERERS = {
    "figure2": plot_figure2, "figure4": plot_figure4,
    "figure3": lambda i, o, c: plot_choices(i, o, c, figure="figure3", constraints=("example", "example_abc")),
    "figure7": lambda i, o, c: plot_choices(i, o, c, figure="figure7", constraints=("high",)),
}


def render(name: str, inputs: Mapping[str, Any], context: Mapping, *, table_stem: str | Path | None = None,
           figure_stem: str | Path | None = None) -> list[Path]:
    """Render ``name``: its table to ``table_stem`` (.md/.csv/.tex) and, for a figure, the plot to
    ``figure_stem`` (.png/.pdf + the plotted numbers in .csv). Either stem may be left out."""
    if name not in TABLE_RENDERERS:
        raise ValueError(f"no first_token table or figure named {name!r}; expected one of {sorted(TABLE_RENDERERS)}")
    if figure_stem is not None and name not in FIGURE_RENDERERS:
        raise ValueError(f"{name!r} is a table, not a figure; figures: {sorted(FIGURE_RENDERERS)}")
    paths: list[Path] = []
    if table_stem is not None:
        paths += TABLE_RENDERERS[name](inputs, Path(table_stem), context)
    if figure_stem is not None:
        paths += FIGURE_RENDERERS[name](inputs, Path(figure_stem), context)
    return paths


__all__ = ["render", "label_distribution", "evaluator_label", "footnotes", "with_ci"]
