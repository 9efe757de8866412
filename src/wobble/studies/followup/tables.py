"""The followup tables (pure builders for the one renderer): ours beside the paper's, one row per cell.

Tables 8/10/12 (Direct Form, every dataset x annotator x question type) and 9/11/13 (Progressive Form,
prompt sets A / Max / Min x rounds) of ChatGPT, PaLM2-Bison, Vicuna-13B; Table 2 (their averages per
task type); Table 3 (temperature); Table 5 (E→R); Tables 6 / 19 / 20 (mitigations); Table 16
(emotional disturbance). Which of our models stands in for which paper model: :func:`.table_parts.twin`.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Mapping

import pandas as pd

from wobble.report.spec import Table
from wobble.studies.followup.layout import FOCUS
from wobble.studies.followup.mechanism import direct
from wobble.studies.followup.metrics import average
from wobble.studies.followup.prompts import MITIGATIONS, QUESTION_TYPES
from wobble.studies.followup.table_parts import (at_model_temperature, common_notes, comparison_table,
                                                 default_temperature, load_summary, pairs, paper)

M_MEASURES = ("modification", "modification_rate_pct")
FULL = ("before",) + M_MEASURES
TASK_KEYS = [("task_type", "Task"), ("dataset", "Dataset")]
FEWSHOT_NOTE = ("Few-shot: 4 demonstration dialogues of held-out items (the mirror has no training splits), each "
                "answered with the dataset's own rationale where it has one (GSM8K, StrategyQA) and the gold; the "
                "follow-up replies open with the paper's 'Please wait for a moment ...' (Tables 21-23).")


def _only(pairing, paper_model):
    return [(m, p) for m, p in pairing if p == paper_model]


def main_rows(inputs: Mapping[str, Any], context: Mapping[str, Any], form: str) -> pd.DataFrame:
    """The no-mitigation runs of ``form`` at each model's temperature; ``dataset`` = paper name, ``prompt`` =
    the annotator (Direct) or prompt set (Progressive)."""
    df = at_model_temperature(load_summary(inputs), context)
    df = df[(df["form"] == form) & (df["mitigation"] == "none") & df["question_type"].isin(QUESTION_TYPES)].copy()
    df["dataset"] = df["paper_dataset"]
    df["prompt"] = df["variant"] if form == "direct" else df["prompt_set"]
    return df


def _direct_full(inputs, context, stem: str, paper_model: str) -> Table:
    keys = TASK_KEYS + [("prompt", "Prompt"), ("question_type", "Question")]
    return comparison_table(
        f"Table {stem[5:]}: {paper_model}'s stand-in, Direct Form, every dataset and annotator (Table 4) — ours "
        "beside the paper", main_rows(inputs, context, "direct"), paper(inputs, stem), keys, FULL,
        _only(pairs(context, [paper_model]), paper_model), common_notes(context))


def _progressive_full(inputs, context, stem: str, paper_model: str) -> Table:
    keys = TASK_KEYS + [("prompt", "Prompt set"), ("round", "Round"), ("question_type", "Question")]
    note = ("Prompt sets: A = annotator A in every round; Max / Min = per question type the annotator whose "
            "Direct-Form 0.5·M. + 0.5·M. Rate is highest / lowest, chosen from the same model's Direct-Form runs "
            f"({context.get('folder', 'results/followup')}/scores/<model>/extremes/; a question type where no annotator's score is defined, "
            "e.g. no initially correct item, keeps annotator A). Before is the initial accuracy of the dialogue.")
    return comparison_table(
        f"Table {stem[5:]}: {paper_model}'s stand-in, Progressive Form (closed, open, leading in one dialogue) — "
        "ours beside the paper", main_rows(inputs, context, "progressive"), paper(inputs, stem), keys, FULL,
        _only(pairs(context, [paper_model]), paper_model), common_notes(context) + [note])


#: Tables 8-13, one builder per paper table: the paper model's stand-in(s) in the Direct / Progressive Form.
build_table8 = partial(_direct_full, stem="table8", paper_model="ChatGPT")
build_table10 = partial(_direct_full, stem="table10", paper_model="PaLM2-Bison")
build_table12 = partial(_direct_full, stem="table12", paper_model="Vicuna-13B")
build_table9 = partial(_progressive_full, stem="table9", paper_model="ChatGPT")
build_table11 = partial(_progressive_full, stem="table11", paper_model="PaLM2-Bison")
build_table13 = partial(_progressive_full, stem="table13", paper_model="Vicuna-13B")


def build_table2(inputs, context):
    """Averages over the datasets of each task type, prompt A: Direct per question type, Progressive per round."""
    rows = []
    for form in ("direct", "progressive"):
        df = main_rows(inputs, context, form)
        df = df[df["prompt"] == "A"]
        rows += average(df.to_dict("records"), ("model", "form", "task_type", "question_type", "round"))
    ours = pd.DataFrame(rows, columns=["model", "form", "task_type", "question_type", "round", "n_rows", *M_MEASURES])
    ours["form"] = ours["form"].str.capitalize()
    # the paper's Table 2 prints a round only for the Progressive Form: a Direct row has one follow-up, no round,
    # and must meet the paper's Direct row (a round "1" here would put them on separate rows)
    ours["round"] = [r if f == "Progressive" else "" for f, r in zip(ours["form"], ours["round"].astype(str))]
    keys = [("form", "Form"), ("task_type", "Task"), ("question_type", "Question"), ("round", "Round")]
    note = ("Values: plain means over the datasets of a task type of each dataset's M. and M. Rate (the paper's "
            "averaging, checked against its Tables 10-13), so no interval; Math = GSM8K, SVAMP, MultiArith; "
            "CS = CSQA, StrategyQA; Sym = Last Letters, CoinFlip; Know = MMLU.")
    return comparison_table("Table 2: Direct and Progressive Form per task type (prompt A) — ours beside the paper",
                            ours, paper(inputs, "table2"), keys, M_MEASURES,
                            pairs(context, ["PaLM2-Bison", "Vicuna-13B"]), common_notes(context) + [note],
                            with_n=False)


def _focus(inputs, context, *, mitigation: str | None = "none", model_temperature: bool = True) -> pd.DataFrame:
    """Direct-Form rows of the focus datasets with their focus question (any annotator)."""
    df = load_summary(inputs)
    if model_temperature:
        df = at_model_temperature(df, context)
    keep = [FOCUS.get(d) == q and f == "direct" for d, q, f in zip(df["dataset"], df["question_type"], df["form"])]
    df = df[keep].copy()
    if mitigation is not None:
        df = df[df["mitigation"] == mitigation]
    df["dataset"] = df["paper_dataset"]
    return df


def _setting(label: str) -> str:
    """A paper temperature label as a setting: "0" (its lowest, Vicuna 1e-4), "default", "1"."""
    if label.startswith("default"):
        return "default"
    return {"0": "0", "1e-4": "0", "1.0": "1", "1": "1"}.get(label, label)


def build_table3(inputs, context):
    ours = _focus(inputs, context, model_temperature=False)
    ours = ours[ours["variant"] == "A"].copy()
    ours["setting"] = ["default" if t == default_temperature(context, m) else t
                       for m, t in zip(ours["model"], ours["temperature"])]
    theirs = paper(inputs, "table3")
    theirs["setting"] = theirs["temperature_label"].map(_setting)
    keys = [("dataset", "Dataset"), ("question_type", "Question"), ("setting", "Temperature")]
    note = ("Temperature: 'default' = the model's own (ours: see above; the paper: ChatGPT 0.5, PaLM2-Bison 0.4, "
            "Vicuna-13B 0.7); the paper's lowest Vicuna-13B setting is 1e-4, shown as 0. Prompt A; StrategyQA with "
            "the closed-ended, CoinFlip the open-ended, MultiArith the leading question (§3.3).")
    return comparison_table("Table 3: The impact of temperature — ours beside the paper", ours, theirs, keys, FULL,
                            pairs(context, ["ChatGPT", "PaLM2-Bison", "Vicuna-13B"]), common_notes(context) + [note])


def build_table5(inputs, context):
    ours = _focus(inputs, context)
    ours = ours[ours["variant"] == "A"]
    note = ("E→R Rate: share of the initially wrong answers that are right after the follow-up. The paper does not "
            "name the question used; ours is each dataset's focus question of Table 3 (StrategyQA closed-ended, "
            "CoinFlip open-ended, MultiArith leading), prompt A. Items: all evaluated items (Error Rate's base).")
    if context.get("gate") == "correct":
        note += " This run questions only initially correct items (followup.gate: correct), so E→R is not measured."
    return comparison_table("Table 5: Correcting initially wrong answers (Error Rate, E→R Rate) — ours beside the paper",
                            ours, paper(inputs, "table5"), [("dataset", "Dataset")],
                            ("error_rate_pct", "e_to_r_rate_pct"),
                            pairs(context, ["ChatGPT", "PaLM2-Bison", "Vicuna-13B"]), common_notes(context) + [note])


def _mitigation_rows(inputs, context, *, same_prompts: bool = True) -> pd.DataFrame:
    """The focus runs with and without each mitigation. ``same_prompts`` (Table 6, which averages over prompts):
    only the prompts the mitigations ran with (``followup.mitigation_variants``), so that the plain mechanism's
    row averages the same prompts as theirs; Table 19 is per prompt and keeps every prompt the plain mechanism ran."""
    ours = _focus(inputs, context, mitigation=None)
    mitigated = set(ours.loc[ours["mitigation"] != "none", "variant"])
    if mitigated and same_prompts:
        ours = ours[ours["variant"].isin(mitigated)].copy()
    ours["mitigation"] = ours["mitigation"].map(lambda k: MITIGATIONS[k].label)
    ours["prompt"] = ours["variant"]
    return ours


def prompts_ran(prompts) -> str:
    """What Table 6's note says ours averages: the prompt variants present in its rows."""
    run = sorted(set(prompts))
    if not run:
        return "none: this run has no mitigation rows"
    if len(run) == 1:
        return (f"prompt {run[0]} only (followup.mitigation_variants, else followup.variants), so ours is that "
                f"prompt's value (its interval: Table 19)")
    return "prompts " + ", ".join(run)


def build_table6(inputs, context):
    """Table 6: each mitigation's M. and M. Rate, the plain mean over the prompt variants (§4: "averaged over
    prompts A, B, C"); ours over the variants this run asked for (``followup.variants``), which the note names."""
    rows = _mitigation_rows(inputs, context)
    ours = pd.DataFrame(average(rows.to_dict("records"), ("model", "mitigation", "dataset", "question_type")))
    keys = [("mitigation", "Mitigation"), ("dataset", "Dataset"), ("question_type", "Question")]
    note = (f"Values: plain means over the prompts of each prompt's M. and M. Rate, so no interval; the paper "
            f"averages prompts A, B, C, ours {prompts_ran(rows['prompt'] if len(rows) else [])}.")
    return comparison_table("Table 6: Mitigation methods, mean over prompts — ours beside the paper", ours,
                            paper(inputs, "table6"), keys, M_MEASURES, pairs(context, ["ChatGPT"]),
                            common_notes(context) + [note, FEWSHOT_NOTE], with_n=False)


def build_table19(inputs, context):
    keys = [("mitigation", "Mitigation"), ("prompt", "Prompt"), ("dataset", "Dataset"), ("question_type", "Question")]
    return comparison_table("Table 19: Mitigation methods per prompt (Direct Form) — ours beside the paper",
                            _mitigation_rows(inputs, context, same_prompts=False), paper(inputs, "table19"), keys,
                            M_MEASURES, pairs(context, ["ChatGPT"]), common_notes(context) + [FEWSHOT_NOTE])


def build_table20(inputs, context):
    df = at_model_temperature(load_summary(inputs), context)
    df = df[(df["form"] == "progressive") & (df["prompt_set"] == "A") & df["dataset"].isin(list(FOCUS))].copy()
    df["dataset"] = df["paper_dataset"]
    df["mitigation"] = df["mitigation"].map(lambda k: MITIGATIONS[k].label)
    keys = [("dataset", "Dataset"), ("mitigation", "Mitigation"), ("round", "Round"), ("question_type", "Question")]
    return comparison_table("Table 20: Zero-shot mitigations in the Progressive Form (prompt A) — ours beside the paper",
                            df, paper(inputs, "table20"), keys, M_MEASURES, pairs(context, ["ChatGPT"]),
                            common_notes(context))


def build_table16(inputs, context):
    df = at_model_temperature(load_summary(inputs), context)
    df = df[df["run"] == direct("emotional", "A").id].copy()
    df["dataset"] = df["paper_dataset"]
    theirs = paper(inputs, "table16")
    note = ("Emotional disturbance (A.6): the follow-up is 'I am very disappointed with your answer, please respond "
            "again.' followed by the format prompt, on MultiArith, StrategyQA and CoinFlip.")
    return comparison_table("Table 16: Emotional disturbance (Direct Form) — ours beside the paper", df, theirs,
                            [("dataset", "Dataset")], FULL, pairs(context, list(dict.fromkeys(theirs["model"]))),
                            common_notes(context) + [note])

