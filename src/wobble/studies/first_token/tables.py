"""Tables 1-5 of the ``first_token`` study (Wang et al. 2024, "My Answer is C"), ours beside the paper's.

:func:`render` dispatches on a name and writes, through :func:`wobble.report.formats.write_table` /
:func:`wobble.report.figures.save_figure`:

* tables (``<root>/first_token/tables/<name>.{md,csv,tex}``): ``table1`` (the instruction prompts),
  ``table2`` (evaluator comparison, averaged), ``table3`` (answer-consistency entropy), ``table4``
  (evaluators per annotated model), ``table5`` (label distribution of the annotations), and the
  numbers of each figure beside the paper's (``figure2``: mismatch / refusal, with the paper's
  released ``mapping_result.json`` statistics; ``figure3`` / ``figure7``: choice distributions;
  ``figure4``: temperature sweep);
* figures (``<root>/first_token/figures/<name>.{png,pdf,csv}``): ``figure2``, ``figure3``,
  ``figure4``, ``figure7``; the ``.csv`` holds the plotted numbers.

Inputs (paths; see :data:`wobble.studies.first_token.spec.OUTPUTS`): ``metrics`` / ``choices`` /
``mapping`` (JSONL written by the pipeline's metrics step), ``classifiers`` (evaluator scores),
``annotated`` (prepared ``opinionqa_annotated``), ``paper_mapping`` (prepared
``opinionqa_paper_mapping``), ``paper_<file>`` (``paper/first_token/<file>.csv``, cells kept as
printed). ``context`` (:func:`wobble.studies.first_token.spec.context`) feeds the footnotes that
say which models ran, at what scale, on how many questions and shuffles, and with which classifier.

Rates are shown in percent with their 95% bootstrap interval ``value [low, high]``; entropies in
nats. Only the main temperature (``first_token.temperature``) enters Tables 3 and Figures 2, 3, 7.
Our models are matched to a paper model only through ``context["paper_models"]``; the paper's rows
without a match are listed below ours with "–" in our columns.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.errors import DataError
from wobble.studies.first_token.classify import MULTIPLE, UNKNOWN, gold_label
from wobble.studies.first_token.layout import PAPER_MODELS, temp_tag
from wobble.studies.first_token.aggregate import MIN_MAPPED_SHARE
from wobble.studies.first_token.prompts import CONSTRAINTS, GENERAL_INSTRUCTIONS, LETTERS
from wobble.report.cells import DASH, num, pct, read_paper, with_ci
from wobble.report.cells import printed as _printed
from wobble.report.spec import Table
from wobble.studies.first_token.table_parts import (
    ANNOTATED_NAMES,
    CONSTRAINT_NAMES,
    PAPER_CONSTRAINTS,
    PAPER_EVALUATORS_T2,
    PAPER_EVALUATORS_T4,
    constraint_name,
    constraint_order,
    context_main_temperature,
    evaluator_label,
    footnotes,
    load_rows,
    metric_index,
    paper_float,
    paper_id,
    used_classifier,
)


# ------------------------------------------------------------------------------------------ table 1


def render_table1(inputs: Mapping[str, Any], context: Mapping) -> Table:
    paper = read_paper(inputs["paper_table1"])
    printed = dict(zip(paper["constraint"], paper["general_instruction_prompt"]))
    rows, tidy = [], []
    for c in CONSTRAINTS:
        ours = GENERAL_INSTRUCTIONS[c]
        pname = {"example_abc": None}.get(c, CONSTRAINT_NAMES[c])
        p = printed.get(pname) if pname else None
        same = DASH if p is None else ("yes" if p == ours else "no")
        rows.append({"Constraint": constraint_name(c), "General instruction (ours)": ours,
                     "Paper Table 1": p if p is not None else "– (Figure 3 control: the Example template, answer 'A/B/C')",
                     "Identical": same, "Run": "yes" if c in context["constraints"] else "no"})
        tidy.append({"constraint": c, "ours": ours, "paper": p, "identical": None if p is None else p == ours,
                     "run": c in context["constraints"]})
    notes = footnotes(context, paper_file="table1.csv", extra=[
        "Each prompt (one user turn, rendered with the model's chat template; a model without one gets "
        "'User: ...\\n\\nAssistant:'): '<general instruction> \\nQuestion: <question>\\n\\nA. <option> \\nB. <option> "
        "\\n...Answer:' — the layout of the paper's stored prompts.",
    ])
    return Table("Table 1: General instruction prompt per constraint level", pd.DataFrame(rows), pd.DataFrame(tidy), tuple(notes))


# ------------------------------------------------------------------------------------ tables 2 and 4


def _classifier_rows(inputs) -> tuple[list[dict], str | None]:
    rows = load_rows(inputs, "classifiers")
    for i, r in enumerate(rows, 1):
        for k in ("evaluator", "model", "accuracy", "macro_f1", "weighted_f1", "n"):
            if k not in r:
                raise DataError(inputs["classifiers"], f"line {i}", f"a classifier-score row with field '{k}'")
    selected = next((r["evaluator"] for r in rows if r.get("selected")), None)
    return rows, selected


def render_table2(inputs: Mapping[str, Any], context: Mapping) -> Table:
    rows, selected = _classifier_rows(inputs)
    sel_acc = {r["evaluator"]: r["accuracy"] for r in load_rows(inputs, "selection") if r["model"] == "Avg"} \
        if inputs.get("selection") else {}
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
                        "Acc % on training responses (choice)": pct(sel_acc[r["evaluator"]]) if r["evaluator"] in sel_acc else DASH,
                        "Paper evaluator": pname if p else DASH,
                        "Acc % (paper)": _printed(p["acc_pct"]) if p else DASH,
                        "Macro-F1 (paper)": _printed(p["macro_f1"]) if p else DASH,
                        "Weighted-F1 (paper)": _printed(p["weighted_f1"]) if p else DASH,
                        "Used": "yes" if r["evaluator"] == selected else ""})
        tidy.append({"source": "ours", "evaluator": r["evaluator"], "label": evaluator_label(r["evaluator"], context),
                     "accuracy": r["accuracy"], "macro_f1": r["macro_f1"], "weighted_f1": r["weighted_f1"],
                     "n": r["n"], "selected": r["evaluator"] == selected, "paper_evaluator": pname if p else None,
                     "selection_accuracy": sel_acc.get(r["evaluator"])})
    for pname, p in paper_by.items():
        if pname in used_paper:
            continue
        display.append({"Evaluator (ours)": DASH, "Acc % (ours)": DASH, "Macro-F1 (ours)": DASH,
                        "Weighted-F1 (ours)": DASH, "n (ours)": DASH, "Acc % on training responses (choice)": DASH,
                        "Paper evaluator": pname,
                        "Acc % (paper)": _printed(p["acc_pct"]), "Macro-F1 (paper)": _printed(p["macro_f1"]),
                        "Weighted-F1 (paper)": _printed(p["weighted_f1"]), "Used": ""})
    for pname, p in paper_by.items():
        tidy.append({"source": "paper", "evaluator": pname, "label": pname, "accuracy": paper_float(p["acc_pct"], 0.01),
                     "macro_f1": paper_float(p["macro_f1"]), "weighted_f1": paper_float(p["weighted_f1"]),
                     "n": None, "selected": None, "paper_evaluator": pname, "selection_accuracy": None})
    notes = footnotes(context, classifier=selected, paper_file="table2.csv", extra=[
        _eval_note(context, rows),
        "Ours vs paper: same kind of evaluator, not the same model — the paper's judge and PEFT base are "
        "Mistral-7b-Instruct-v0.2; ours are named in the first column.",
    ])
    return Table("Table 2: Text-output evaluators on the annotated test responses (average over annotated models)", pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


def _eval_note(context: Mapping, rows: Sequence[Mapping]) -> str:
    models = sorted({r["model"] for r in rows if r["model"] != "Avg"})
    per = context.get("n_eval_per_model")
    sample = f"a seeded sample of {per} test responses per model" if per else "every test response"
    return (f"Evaluation data: the paper's annotated responses (80/20 train/test split per model, appendix A.2) of "
            f"{', '.join(models) or 'no model'}; the rule-based evaluators (String Matching, wobble rules) are scored "
            f"on every test response, the model-based ones on {sample} (n says which). Gold = the human label "
            "(several letters -> 'multiple', 'nan' -> 'unknown'). Avg = mean over the annotated models. The study's "
            "own classifier is chosen (first_token.classifier: auto) on held-out TRAINING responses (not the PEFT "
            "training examples, not the judge shots), never on these test items. wobble rules were written while "
            "reading these annotated responses, so their score here is in-sample. The mirror lacks mistral-7b's "
            "training split; judge shots, PEFT training examples and the choice come from the other models' "
            "training splits. The paper's String Matching is reproduced exactly for the three Llama2 models; "
            "for Mistral-v0.2 and Mixtral ours differ by 5 and 1 responses — the mirror's Mistral test file is a "
            "later format (10 shuffles, only shuffle 0 labelled), and we could not find which responses the "
            "paper scored.")


def render_table4(inputs: Mapping[str, Any], context: Mapping) -> Table:
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
        tidy.append({"source": "paper", "evaluator": pev, "model": pmodel, "accuracy": paper_float(p["acc_pct"], 0.01),
                     "macro_f1": paper_float(p["macro_f1"]), "weighted_f1": paper_float(p["weighted_f1"]), "n": None,
                     "paper_evaluator": pev, "paper_model": pmodel})
    notes = footnotes(context, classifier=selected, paper_file="table4.csv", extra=[
        _eval_note(context, rows),
        "Model = the model whose responses were annotated (paper names: " +
        ", ".join(f"{k} = {v[0]}" for k, v in ANNOTATED_NAMES.items()) + ").",
    ])
    return Table("Table 4: Text-output evaluators per annotated model", pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


# ------------------------------------------------------------------------------------------ table 3


def _thin(r: Mapping) -> bool:
    n, k = r.get("n_prompts"), r.get("n_text_mapped")
    return bool(n) and k is not None and k < MIN_MAPPED_SHARE * n


def _text_entropy_cell(r: Mapping | None) -> str:
    if not r:
        return DASH
    cell = with_ci(r["value"], r["ci_low"], r["ci_high"], percent=False)
    return f"{cell} THIN" if _thin(r) else cell


def _mapped_cell(r: Mapping | None) -> str:
    if not r or r.get("n_text_mapped") is None:
        return DASH
    return f"{r['n_text_mapped']}/{r['n_prompts']}"


def render_table3(inputs: Mapping[str, Any], context: Mapping) -> Table:
    rows = load_rows(inputs, "metrics")
    idx = metric_index(rows)
    t = temp_tag(context_main_temperature(context))
    paper = read_paper(inputs["paper_table3"])
    paper_by = {(r["model"], r["constraint"]): r for r in paper.to_dict("records")}
    display, tidy, used = [], [], set()
    cells = sorted({(r["model"], r["constraint"]) for r in rows if temp_tag(r["temperature"]) == t},
                   key=lambda mc: (context["models"].index(mc[0]) if mc[0] in context["models"] else 99,
                                   constraint_order(mc[1])))
    for model, c in cells:
        ft, tx = idx.get((model, c, t, "entropy_first_token")), idx.get((model, c, t, "entropy_text"))
        txn = idx.get((model, c, t, "entropy_text_none"))
        pid = paper_id(context, model)
        pmodel = PAPER_MODELS[pid]["table3"] if pid else None
        p = paper_by.get((pmodel, CONSTRAINT_NAMES.get(c))) if pmodel else None
        if p:
            used.add((pmodel, CONSTRAINT_NAMES[c]))
        display.append({"Model": model, "Constraint": constraint_name(c),
                        "First token (ours)": with_ci(ft["value"], ft["ci_low"], ft["ci_high"], percent=False) if ft else DASH,
                        "Text (ours)": _text_entropy_cell(tx),
                        "Text, no option counted (ours)": with_ci(txn["value"], txn["ci_low"], txn["ci_high"], percent=False)
                        if txn else DASH,
                        "Text answers naming an option": _mapped_cell(tx),
                        "Paper model": pmodel or DASH,
                        "First token (paper)": _printed(p["entropy_first_token"]) if p else DASH,
                        "Text (paper)": _printed(p["entropy_text_output"]) if p else DASH,
                        "Questions": str(ft["n_questions"]) if ft else DASH})
        for by, r in (("first_token", ft), ("text", tx), ("text_no_option_counted", txn)):
            if r:
                tidy.append({"source": "ours", "model": model, "constraint": c, "answer_by": by, "entropy": r["value"],
                             "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n_questions": r["n_questions"],
                             "n_prompts": r["n_prompts"], "n_text_mapped": r.get("n_text_mapped"),
                             "thin": by == "text" and _thin(r)})
    for (pmodel, pc), p in paper_by.items():
        if (pmodel, pc) not in used:
            display.append({"Model": DASH, "Constraint": pc, "First token (ours)": DASH, "Text (ours)": DASH,
                            "Text, no option counted (ours)": DASH, "Text answers naming an option": DASH,
                            "Paper model": pmodel, "First token (paper)": _printed(p["entropy_first_token"]),
                            "Text (paper)": _printed(p["entropy_text_output"]), "Questions": DASH})
        for by, col in (("first_token", "entropy_first_token"), ("text", "entropy_text_output")):
            tidy.append({"source": "paper", "model": pmodel, "constraint": PAPER_CONSTRAINTS.get(pc, pc), "answer_by": by,
                         "entropy": paper_float(p[col]), "ci_low": None, "ci_high": None, "n_questions": None,
                         "n_prompts": None, "n_text_mapped": None, "thin": None})
    notes = footnotes(context, classifier=used_classifier(rows, context), paper_file="table3.csv", intervals=True, extra=[
        "Entropy (nats) of the ORIGINAL options a model picks over a question's shuffles, averaged over questions "
        "(lower = more consistent). Text (ours) leaves text answers naming no single option out of a question's "
        "distribution, as the paper does; 'no option counted' makes them one more outcome. 'Text answers naming an "
        f"option' = mapped/all prompts of the cell; THIN marks a text entropy resting on fewer than "
        f"{round(100 * MIN_MAPPED_SHARE)}% mapped answers (it then describes those few answers, not the model).",
        "Paper's Medium cells of the Llama2 rows are unreadable in the extraction ('–').",
    ])
    return Table("Table 3: Answer consistency (entropy over option shuffles), first token vs text", pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


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


def render_table5(inputs: Mapping[str, Any], context: Mapping) -> Table:
    dist = label_distribution(load_rows(inputs, "annotated"))
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
            tidy.append({"source": "paper", "model": pname, "label": label, "count": paper_float(count)})
    splits = "train + test"
    notes = footnotes(context, classifier=None, paper_file="table5.csv", extra=[
        f"Ours: gold labels of every annotated response in the data ({splits}; {sum(map(sum, (d.values() for d in dist.values())))} "
        "responses; the paper annotated 2,070 = 5 x 414, the mirror lacks mistral-7b's training split). "
        "'multiple' = several letters annotated, 'nan' = no option.",
        "Paper: counts as printed (its 'J' column is not explained in the text; the paper prints no multiple/nan "
        "column, '–').",
        "This table does not depend on the models run.",
    ])
    return Table("Table 5: Label distribution of the annotated responses", pd.DataFrame(display), pd.DataFrame(tidy), tuple(notes))


build_table1, build_table2, build_table3 = render_table1, render_table2, render_table3
build_table4, build_table5 = render_table4, render_table5
