"""The instructions study's headline claims (Gu et al. 2023: Introduction, §3.1–3.3) and their statistics.

Measured per model (one ledger row per model that ran the claim's conditions) on OUR tasks, the unit the run
samples and the claims speak about: a 95 % cluster bootstrap over tasks (:mod:`.claims_measure`). The paper's
effect is the SAME statistic function applied to the paper's category (or task) means — T5-3B, Tables 4, 7
and 8, restricted to the conditions the run measures — and must pass its own row.

Pre-registered (with the verdict rule of :mod:`wobble.report.claims`), before any run:

* **Precondition, every claim — off the floor**: the original instruction scores above 0 on at least half of
  the claim's tasks, in every setting (and task set) the claim compares; DiversePrompt's spread also needs
  the DiversePrompt tasks (mean over prompts) off the floor. Otherwise the row is "not applicable": a model
  that scores 0 has nothing to lose, which is a floor, not robustness.
* "drop" = original − perturbed (points); perturbations = those of the 8 the run has.
* ``shuffle_instructions_largest_drop``, WO-EXAM: drop(shuffle instructions) − drop(p) for EVERY other
  perturbation p (intersection–union: reproduced only if each contrast's interval is above 0).
* ``shuffle_words_worst_word_level``, WO-EXAM: drop(shuffle words) − drop(p) for every other word-level p.
* ``sentence_level_less_than_word_level``, WO-EXAM: mean word-level drop − mean sentence-level drop > 0.
* ``examples_robust_all_perturbations``, W-EXAM: the mean drop over the perturbations is "close": below 5
  points (null 5, predicted below). The mean over perturbations, not each one: the paper calls shuffle
  instructions' W-EXAM drop (8.4 points in Table 4) "a small extent" (§3.1), and a minimum or maximum of 8
  noisy contrasts is biased. Both models (the second runs W-EXAM only, as the paper's T5-11B).
* ``demonstrations_minimize_perturbations`` (Introduction): mean over perturbations of drop(WO-EXAM) −
  drop(W-EXAM) > 0.
* ``random_instruction_with_examples_beats_correct_without``: score(shuffle instructions, W-EXAM) −
  score(original, WO-EXAM) > 0.
* ``paraphrase_keeps_performance`` (Para-Instructions, W-EXAM): original − mean of the 3 new instructions
  below 5 points (a rise counts as close).
* ``no_demonstrations_larger_spread``: mean per-task population std over DiversePrompt prompts (no
  examples) − mean per-task std over the 3 new Para-Instructions instructions (as Table 7's "reph." std) > 0.
* ``plm_prompts_work_poorly`` (Introduction; §3.3): mean DiversePrompt task score (PLM-oriented prompts, no
  demonstrations) − mean Para-Instructions task score (its 4 human-oriented instructions, W-EXAM, as Table 7,
  which §3.3 compares against) < 0. The two sides differ in tasks and in demonstrations too, as in the paper.
* Population (caps "units needed"): 119 English test tasks (§3.1), 23 Para-Instructions tasks (§3.2), 24
  DiversePrompt tasks (§3.3).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.claims import Claim, Measurement
from wobble.studies.instructions.claims_measure import (
    Column, Contrast, floor_note, instance_score, mean_gap, measure_contrast, measure_two_sample, prompt_scores,
    score_matrix, seed_mean_scores, task_values, version_scores, cut_text,
)

__all__ = ["CLAIMS", "PERTURBATIONS", "findings", "findings_inputs", "instance_score", "measure_model",
           "paper_effects", "score_matrix", "seed_mean_scores"]

STUDY = "instructions"
WORD_LEVEL = ("delete_stopwords", "delete_words", "insert_words", "replace_words", "shuffle_words")
SENTENCE_LEVEL = ("repeat_sentences", "shuffle_sentences")
PERTURBATIONS = WORD_LEVEL + SENTENCE_LEVEL + ("shuffle_instructions",)
PARA_CONDITIONS = ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")
CLOSE = 5.0
#: Tasks that exist (§3.1: 119 English test tasks; §3.2: 23 Para-Instructions tasks; §3.3: 24 DiversePrompt).
ENGLISH_TASKS, PARA_TASKS, DIVERSE_TASKS = 119, 23, 24
FLOOR = ("off the floor: the original instruction scores above 0 on at least half of the tasks{where} "
         "(below it, scores sit at 0 with nothing to lose or to vary: a floor, not robustness)")
WO, W = "wo_exam", "w_exam"


def _claim(id_, quote, section, effect, floor_where, **kw) -> Claim:
    return Claim(STUDY, id_, quote, section, "", effect, unit_name="tasks", per_model=True,
                 precondition=FLOOR.format(where=floor_where), **kw)


CLAIMS: tuple[Claim, ...] = (
    _claim("shuffle_instructions_largest_drop",
           "“shuffle instructions” doesn’t work; this is within expectation since a random instruction provides no "
           "useful supervision for the target task", "§3.1, Table 4",
           "drop(shuffle instructions) − drop(p) for every other perturbation p, INSTRU-WO-EXAM (smallest shown)",
           ", INSTRU-WO-EXAM"),
    _claim("shuffle_words_worst_word_level",
           "word-level perturbations degrade the performance slightly, among which the “shuffle words” has the "
           "worst effect", "§3.1, Table 4",
           "drop(shuffle words) − drop(p) for every other word-level p, INSTRU-WO-EXAM (smallest shown)",
           ", INSTRU-WO-EXAM"),
    _claim("sentence_level_less_than_word_level",
           "generally, sentence-level perturbations have less influence than the word-level perturbations",
           "§3.1, Table 4", "mean word-level drop − mean sentence-level drop, INSTRU-WO-EXAM", ", INSTRU-WO-EXAM"),
    _claim("examples_robust_all_perturbations",
           "When the instructions contain examples (i.e., INSTRU-W-EXAM): i) the system is pretty robust among all "
           "perturbations", "§3.1, Tables 4–5",
           f"mean drop over the perturbations, INSTRU-W-EXAM (close: < {CLOSE:g}; the mean, as the paper calls "
           "shuffle instructions' 8.4-point drop 'a small extent')", ", INSTRU-W-EXAM",
           direction=-1, null=CLOSE),
    _claim("demonstrations_minimize_perturbations",
           "The presence of demonstrations minimizes the impact of instruction perturbations and paraphrasing",
           "Introduction; §3.1, Table 4",
           "mean over perturbations of drop(INSTRU-WO-EXAM) − drop(INSTRU-W-EXAM) (perturbations only: the run "
           "has no Para-Instructions without examples)", " in both settings"),
    _claim("random_instruction_with_examples_beats_correct_without",
           "“correct examples+incorrect instruction” is better than “correct instruction without examples”",
           "§3.1, Table 4", "score(shuffle instructions, INSTRU-W-EXAM) − score(original, INSTRU-WO-EXAM)",
           ", INSTRU-WO-EXAM"),
    _claim("paraphrase_keeps_performance",
           "providing a paraphrasing instruction can generally keep the performance once demonstrations are "
           "available", "§3.2, Table 7",
           f"original − mean of the 3 new instructions, Para-Instructions, INSTRU-W-EXAM (close: < {CLOSE:g})",
           " (Para-Instructions)", direction=-1, null=CLOSE),
    _claim("no_demonstrations_larger_spread",
           "we notice mostly greater standard deviations in Table 8 than that in Table 7. This indicates that even "
           "paraphrasing prompts can not guarantee consistent performance if no demonstrations exist",
           "§3.3, Tables 7–8",
           "mean per-task std over DiversePrompt prompts − over the 3 new Para-Instructions instructions",
           " (Para-Instructions), and DiversePrompt (mean over prompts) too"),
    _claim("plm_prompts_work_poorly",
           "When demonstrations are absent, applying a model that learns from training tasks with human-oriented "
           "instructions to unseen tasks with PLM-oriented prompts works poorly", "Introduction; §3.3, Tables 7–8",
           "mean DiversePrompt task score (prompts, no examples) − mean Para-Instructions task score (its 4 "
           "human-oriented instructions, with examples, as Table 7 that §3.3 compares with)",
           " (Para-Instructions)", direction=-1),
)


# ------------------------------------------------------------------------------------ the statistics


def _drop(m: Mapping[Column, float], cond: str, setting: str) -> float:
    return m[("original", setting)] - m[(cond, setting)]


def english_contrasts(conditions: Sequence[str]) -> dict[str, Contrast]:
    """The English claims' statistics over the perturbations among ``conditions`` (claims whose conditions
    are not there are left out)."""
    have = set(conditions)
    if "original" not in have:
        return {}
    perts = [c for c in PERTURBATIONS if c in have]
    words = [c for c in WORD_LEVEL if c in have]
    sents = [c for c in SENTENCE_LEVEL if c in have]

    def cols(conds, settings):
        return tuple((c, s) for s in settings for c in ["original", *conds])

    out: dict[str, Contrast] = {}
    others = [c for c in perts if c != "shuffle_instructions"]
    if "shuffle_instructions" in have and others:
        out["shuffle_instructions_largest_drop"] = Contrast(cols(perts, (WO,)), lambda m: [
            _drop(m, "shuffle_instructions", WO) - _drop(m, c, WO) for c in others], every=True)
    w_others = [c for c in words if c != "shuffle_words"]
    if "shuffle_words" in have and w_others:
        out["shuffle_words_worst_word_level"] = Contrast(cols(words, (WO,)), lambda m: [
            _drop(m, "shuffle_words", WO) - _drop(m, c, WO) for c in w_others], every=True)
    if words and sents:
        out["sentence_level_less_than_word_level"] = Contrast(cols(words + sents, (WO,)), lambda m: (
            np.mean([_drop(m, c, WO) for c in words]) - np.mean([_drop(m, c, WO) for c in sents])))
    if perts:
        out["examples_robust_all_perturbations"] = Contrast(cols(perts, (W,)), lambda m: np.mean(
            [_drop(m, c, W) for c in perts]))
        out["demonstrations_minimize_perturbations"] = Contrast(cols(perts, (WO, W)), lambda m: np.mean(
            [_drop(m, c, WO) - _drop(m, c, W) for c in perts]))
    if "shuffle_instructions" in have:
        out["random_instruction_with_examples_beats_correct_without"] = Contrast(
            (("original", WO), ("shuffle_instructions", W)), lambda m: m[("shuffle_instructions", W)] - m[("original", WO)])
    return out


PARA_CONTRAST = Contrast(tuple((c, W) for c in PARA_CONDITIONS),
                         lambda m: m[("original", W)] - np.mean([m[(c, W)] for c in PARA_CONDITIONS[1:]]))


# ------------------------------------------------------------------------------------ measuring one model


def measure_model(english: Mapping[Column, Sequence[Mapping]], para: Mapping[Column, Sequence[Mapping]],
                  diverse: Sequence[Mapping], *, conditions: Sequence[str], n_boot: int = 1000, seed: int = 0,
                  cap: int | None = None) -> dict[str, Measurement | None]:
    """Every claim for one model. ``english[(condition, setting)]``: its prediction records on the English test
    tasks (all seeds); ``para[(condition, "w_exam")]``: Para-Instructions records; ``diverse``: DiversePrompt
    records (with ``prompt_index``). A claim whose runs are missing gets None."""
    out: dict[str, Measurement | None] = {c.id: None for c in CLAIMS}
    kw = {"n_boot": n_boot, "seed": seed, "cap": cap}
    for cid, contrast in english_contrasts(conditions).items():
        if all(english.get(c) for c in contrast.columns):
            out[cid] = measure_contrast(english, contrast, population=ENGLISH_TASKS, **kw)
    if all(para.get(c) for c in PARA_CONTRAST.columns):
        out["paraphrase_keeps_performance"] = measure_contrast(para, PARA_CONTRAST, population=PARA_TASKS,
                                                                   where="Para-Instructions ", **kw)
        if diverse:
            out.update(_diverse_claims(para, list(diverse), n_boot=n_boot, seed=seed, cap=cap))
    return out


def _diverse_claims(para, diverse, *, n_boot: int, seed: int, cap: int | None) -> dict[str, Measurement]:
    scores = version_scores({c: para[(c, W)] for c in PARA_CONDITIONS}, PARA_CONDITIONS)
    para_orig = {t: v for (t, c), v in scores.items() if c == "original"}
    para_new = {k: v for k, v in scores.items() if k[1] != "original"}
    d_scores = prompt_scores(diverse)
    d_means = task_values(d_scores, spread=False)
    diag = cut_text({**para, ("diverse_prompt", ""): diverse}, [*PARA_CONTRAST.columns, ("diverse_prompt", "")], cap)
    kw = {"population": min(PARA_TASKS, DIVERSE_TASKS), "n_boot": n_boot, "seed": seed, "diagnostics": diag}
    d_std, p_std = task_values(d_scores, spread=True), task_values(para_new, spread=True)
    p_means = task_values(scores, spread=False)
    return {
        "no_demonstrations_larger_spread": measure_two_sample(
            d_std, p_std, mean_gap, floor=floor_note([("Para-Instructions original", para_orig),
                                                      ("DiversePrompt", d_means)]),
            note=f"{len(d_std)} DiversePrompt tasks vs {len(p_std)} Para-Instructions tasks", **kw),
        "plm_prompts_work_poorly": measure_two_sample(
            d_means, p_means, mean_gap, floor=floor_note([("Para-Instructions original", para_orig)]),
            note=f"{len(d_means)} DiversePrompt tasks vs {len(p_means)} Para-Instructions tasks", **kw),
    }


# ------------------------------------------------------------------------------------ the paper's effects


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce")


def _condition_means(table: pd.DataFrame, model: str) -> dict[Column, float]:
    t = table[table["model"] == model].assign(v=lambda d: _num(d, "mean"))
    setting = {"INSTRU-WO-EXAM": WO, "INSTRU-W-EXAM": W}
    return {(c, setting[s]): float(v) for (s, c), v in t.groupby(["setting", "condition"])["v"].mean().items()
            if s in setting}


def paper_effects(table4: pd.DataFrame, table5: pd.DataFrame, table7: pd.DataFrame, table8: pd.DataFrame,
                  conditions: Sequence[str]) -> tuple[dict[str, float], dict[str, str]]:
    """Each claim's statistic computed from the paper's tables (T5-3B; the same functions as ours, over the
    paper's category or task means and the run's ``conditions``) and the text shown for it. Tables as read by
    ``wobble.report.cells.read_paper``."""
    m4, m5 = _condition_means(table4, "T5-3B"), _condition_means(table5, "T5-11B")
    effects, texts = {}, {}
    for cid, contrast in english_contrasts(conditions).items():
        if all(c in m4 for c in contrast.columns):
            effects[cid] = contrast.point(m4)
            texts[cid] = f"{effects[cid]:.1f} (T5-3B, Table 4)"
    robust = english_contrasts(conditions).get("examples_robust_all_perturbations")
    if robust is not None and "examples_robust_all_perturbations" in effects and all(c in m5 for c in robust.columns):
        texts["examples_robust_all_perturbations"] += f"; T5-11B, Table 5: {robust.point(m5):.1f}"
    t7 = table7[table7["model"] == "T5-3B"].assign(v=lambda d: _num(d, "mean"), s=lambda d: _num(d, "std"))
    orig = t7[t7["instruction"] == "original"].set_index("category")["v"]
    reph = t7[t7["instruction"] == "rephrased"].set_index("category")
    m7 = {("original", W): float(orig.mean()), **{(c, W): float(reph["v"].mean()) for c in PARA_CONDITIONS[1:]}}
    effects["paraphrase_keeps_performance"] = PARA_CONTRAST.point(m7)
    t8 = table8[table8["model"] == "T5-3B"]
    d_std, d_mean = list(_num(t8, "std")), list(_num(t8, "mean"))
    effects["no_demonstrations_larger_spread"] = mean_gap(d_std, list(reph["s"]))
    p_means = [(orig[c] + 3 * reph["v"][c]) / 4 for c in orig.index]  # the mean over its 4 instructions
    effects["plm_prompts_work_poorly"] = mean_gap(d_mean, p_means)
    texts["paraphrase_keeps_performance"] = f"{effects['paraphrase_keeps_performance']:.1f} (T5-3B, Table 7)"
    texts["no_demonstrations_larger_spread"] = (f"{effects['no_demonstrations_larger_spread']:.1f} (T5-3B: std "
                                                f"{np.mean(d_std):.1f} in Table 8 vs {reph['s'].mean():.1f} in Table 7)")
    texts["plm_prompts_work_poorly"] = (f"{effects['plm_prompts_work_poorly']:.1f} (T5-3B: {np.mean(d_mean):.1f} "
                                        f"in Table 8 vs {np.mean(p_means):.1f} in Table 7)")
    return effects, texts


# ------------------------------------------------------------------------------------ the ledger step

_PRED = re.compile(r"/predictions/(?P<model>[^/]+)/(?P<taskset>[^/]+)/(?P<condition>[^/]+)/(?P<setting>[^/]+)/"
                   r"seed(?P<seed>\d+)\.jsonl$")
_FIELDS = ("task", "instance_id", "output", "references", "metric")
PAPER_TABLES = ("table4", "table5", "table7", "table8")


def findings_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The predictions the claims rest on — the main model's English, Para-Instructions and DiversePrompt
    runs, the second model's English runs (``second_english``, when there is one) — and the paper tables."""
    from wobble.studies.instructions.layout import PREDICTIONS, runs, study_file

    pattern = study_file(config, PREDICTIONS)
    preds: dict[str, list[str]] = {"english": [], "para": [], "diverse": [], "second_english": []}
    for role, prefix in (("main", ""), ("second", "second_")):
        for model, ts, cond, setting, seed in runs(config, role):
            if prefix + ts in preds:
                preds[prefix + ts].append(pattern.format(model=model, taskset=ts, condition=cond, setting=setting,
                                                         seed=seed))
    out: dict[str, Any] = {k: v for k, v in preds.items() if v or k != "second_english"}
    return {**out, **{f"paper_{t}": f"paper/{STUDY}/{t}.csv" for t in PAPER_TABLES}}


def _by_run(paths: Sequence[str]) -> dict[Column, list[dict]]:
    from wobble.errors import DataError
    from wobble.io import iter_jsonl

    out: dict[Column, list[dict]] = defaultdict(list)
    for p in paths:
        m = _PRED.search(str(p))
        if m is None:
            raise DataError(p, "path", "a predictions path of the instructions study "
                                       "(.../predictions/<model>/<taskset>/<condition>/<setting>/seed<n>.jsonl)")
        for line, rec in iter_jsonl(p):
            lacking = [f for f in _FIELDS + (("prompt_index",) if m["taskset"] == "diverse" else ())
                       if f not in rec]
            if lacking:
                raise DataError(p, f"line {line}", f"a prediction with fields {', '.join(lacking)}")
            out[(m["condition"], m["setting"])].append(rec)
    return out


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``): one row per claim and model."""
    from wobble.models.describe import model_label
    from wobble.report.cells import read_paper
    from wobble.report.claims import Findings
    from wobble.studies.instructions.layout import main_model, second_model

    cfg = config[STUDY]
    kw = {"conditions": cfg["conditions"], "n_boot": cfg["bootstrap"]["n"], "seed": cfg["bootstrap"]["seed"],
          "cap": cfg["max_new_tokens"]}
    para = _by_run(inputs["para"])
    diverse = [r for recs in _by_run(inputs["diverse"]).values() for r in recs]
    main = measure_model(_by_run(inputs["english"]), para, diverse, **kw)
    measured: dict[str, dict[str, Measurement | None]] = {cid: {main_model(cfg): m} for cid, m in main.items()}
    second = second_model(cfg)
    if second and inputs.get("second_english"):
        for cid, m in measure_model(_by_run(inputs["second_english"]), {}, [], **kw).items():
            if m is not None:
                measured[cid][second] = m
    effects, texts = paper_effects(*(read_paper(inputs[f"paper_{t}"]) for t in PAPER_TABLES), cfg["conditions"])
    models = "; ".join(model_label(config["models"], k) for k in (main_model(cfg), second) if k)
    notes = (f"Ours: {models}; seeds {cfg['seeds']}; the second model runs INSTRU-W-EXAM on the English tasks only "
             "(as the paper's T5-11B), so it has rows for the claims measured there.",
             f"Unit: tasks (English: {cfg['english']['n_tasks_per_category']} per category x "
             f"{cfg['english']['n_instances_per_task']} instances; Para-Instructions: "
             f"{cfg['para']['n_instances_per_task']} instances per task; DiversePrompt: "
             f"{cfg['diverse']['n_examples_per_task']} example(s) per prompt); 95% intervals resample tasks, a task "
             "bringing all its instances and conditions. Population: 119 English test tasks, 23 Para-Instructions "
             "tasks, 24 DiversePrompt tasks.",
             "Precondition 'off the floor' (fixed before any run): the original instruction scores above 0 on at "
             "least half of the claim's tasks in every setting it compares; a model below it gets 'not applicable'.",
             "Paper: the same statistic function over the paper's category (Tables 4, 7) or task (Table 8) means of "
             "T5-3B, restricted to the conditions this run has; its verdict is the rule applied to that point.")
    return Findings(f"Claims ledger: {STUDY} (Gu et al. 2023)", CLAIMS, measured, texts, notes, effects)
