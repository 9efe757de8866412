"""The instructions study's headline claims (Gu et al. 2023: Introduction, §3.1–3.3), declared for the ledger's
measurement engine (:mod:`wobble.report.engine`), which computes every interval, check and verdict.

* **Unit: the task.** Every claim is about tasks (SuperNI test tasks, §3.1; Para-Instructions, §3.2;
  DiversePrompt, §3.3), and the run samples tasks with a few instances each, so the interval resamples tasks (a
  task brings all its instances, seeds and conditions). One row per model of the run; a model that did not run
  a claim's conditions gets "not measured" (the second model runs INSTRU-W-EXAM only, as the paper's T5-11B).
* **Statistics** (:mod:`.claims_measure`), in points: "drop" = original − perturbed; the perturbations are those
  of the paper's 8 the run has. Where a claim says one perturbation is worse than *each* other, the row is the
  smallest contrast (:class:`~.claims_measure.Smallest`: the smallest 95 % low, the smallest Bonferroni high).
  "Close" (§3.1 "pretty robust", §3.2 "keep the performance") is within 5 points: §3.1 calls the 8.4-point
  INSTRU-W-EXAM drop of shuffle instructions "a small extent" and the system "pretty robust" at a mean drop of
  1.6 (Table 4). "Robust among all perturbations" is read on average over the perturbations (the row says so):
  one perturbation may collapse under a small mean. Both close claims are tested two-sided, |mean drop| below 5
  (a rise is no robustness either: :func:`~.claims_robust.within`); the paraphrase claim's drop is from the
  original instruction to the mean of the 3 new ones.
  Spreads are standard deviations over versions with n − 1 in the denominator (DiversePrompt's prompts and
  Para-Instructions' 3 new instructions differ in number).
* **Claims read as the paper states them**: each is about one model's behaviour (the paper's T5-3B; T5-11B for
  the robustness with examples, Table 5), so each is tested per model; none is an existence claim. Nine claims
  on two models are tested without a family-wise correction (the ledger's notes say so).
* **Floors and ceilings on every arm** (:func:`~.claims_measure.arm_checks`): each cell the statistic reads must
  have its mean over tasks above 5 points (room for a drop) and below 95. On the same tasks a bound censors every
  arm alike, so it can tie two arms but not reverse them: its failure biases the simple paired differences
  (shuffle instructions, shuffle words, sentence vs word level, random instruction with examples) toward the
  null, and the two "close" claims (|drop| predicted below 5) toward the claim — both read their floor per task
  too (more than half the tasks of a cell at 0 fails: :func:`~.claims_robust.per_task_floors`);
  for the demonstrations claim a bound in a without-examples arm shrinks the drops examples could shrink
  (against the claim) and one in a with-examples arm shrinks the drops they leave (toward the claim). Between two
  task sets (the spread and the PLM prompts) the bound favours the side the arm is on.
* **Premises**: the drop claims without examples (shuffle instructions, shuffle words, sentence vs word level,
  demonstrations) presuppose a working instruction (§3.1), so their original/WO floor is a premise of unknown
  bias. "PLM-oriented prompts work poorly" needs the human-written instruction without examples (English
  original/WO) off the floor — else "no demonstrations → floor" is what the row shows (toward the claim) — and a
  model finetuned on SuperNI's human-oriented instructions (the model spec's finetune data; unknown bias). The
  spread claim needs both arms' versions to rest on as many instances each (a version mean over fewer instances
  varies more): fewer on DiversePrompt biases toward the claim, fewer on Para-Instructions against it.
* **Gates in every cell**: at least half of the answers non-empty; at most 10 % of the ROUGE-L answers cut at
  ``max_new_tokens`` (a cut can move ROUGE-L either way; an exact-match answer at the cap is wrong either way).
* **The paper's effect**: the same statistic over a unit table of the paper's T5-3B category (Tables 4, 7) or
  task (Table 8) means (:mod:`.claims_paper`); the second model's row of the robustness with examples gets
  T5-11B's (Table 5).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from typing import Any, Mapping, Sequence

import pandas as pd

from wobble.report.engine import ClaimSpec, UnitTable, measure_all
from wobble.report.gates import Precondition, mapped
from wobble.report.rules import Bias
from wobble.studies.instructions.claims_measure import (
    Arm, Column, Linear, Smallest, TwoSets, arm_checks, cell_name, cut, instance_score, no_fewer_instances,
    off_floor, score_matrix, seed_mean_scores, trained_on, unit_frame,
)
from wobble.studies.instructions.claims_robust import per_task_floors, with_signed_drop, within

__all__ = ["CLAIMS", "PERTURBATIONS", "claims", "findings", "findings_inputs", "instance_score", "score_matrix",
           "seed_mean_scores"]

STUDY = "instructions"
#: The commit whose definitions these are (each claim's ledger section prints it; a re-render applies them).
FREEZE = "e713e57"
WORD_LEVEL = ("delete_stopwords", "delete_words", "insert_words", "replace_words", "shuffle_words")
SENTENCE_LEVEL = ("repeat_sentences", "shuffle_sentences")
PERTURBATIONS = WORD_LEVEL + SENTENCE_LEVEL + ("shuffle_instructions",)
PARA_CONDITIONS = ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")
CLOSE = 5.0
#: The "close" claims (|mean drop| below :data:`CLOSE`, :func:`~.claims_robust.within`) and what their drops come
#: from, as their rows' notes name it (:func:`~.claims_robust.with_signed_drop`).
CLOSE_WHO = {"examples_robust_all_perturbations": "the perturbations",
             "paraphrase_keeps_performance": "the new instructions"}
#: Tasks that exist (§3.1: 119 English test tasks; §3.2: 23 Para-Instructions tasks; §3.3: 24 DiversePrompt).
ENGLISH_TASKS, PARA_TASKS, DIVERSE_TASKS = 119, 23, 24
WO, W = "wo_exam", "w_exam"
SI, SW = "shuffle_instructions", "shuffle_words"
GATES = (mapped(0.5, column="answered"), cut(0.1))
#: The training the PLM-prompts claim is about: SuperNI's human-oriented instructions (§3.3).
SUPERNI = "superni_train"
NULL, CLAIM, AGAINST = "toward the null", "toward the claim", "against the claim"
DIVERSE = cell_name("diverse", "", "")
PARA = tuple(cell_name("para", c, W) for c in PARA_CONDITIONS)


def en(condition: str, setting: str) -> str:
    return cell_name("english", condition, setting)


def _weights(*terms: tuple[str, float]) -> tuple[tuple[str, float], ...]:
    """Summed weights per cell, in order of first mention (a cell whose weights cancel stays, at 0)."""
    out: dict[str, float] = defaultdict(float)
    for c, w in terms:
        out[c] += w
    return tuple(out.items())


def _drop(cond: str, setting: str, k: float = 1.0) -> tuple[tuple[str, float], ...]:
    """k · drop(cond) = k · (original − cond), in one setting."""
    return ((en("original", setting), k), (en(cond, setting), -k))


def _worst(target: str, others: Sequence[str], what: str) -> tuple[Smallest, tuple[Arm, ...]]:
    """drop(target) − drop(p) for every other p, INSTRU-WO-EXAM: the smallest."""
    parts = tuple(Linear(_weights(*_drop(target, WO), *_drop(p, WO, -1.0)), f"drop({target}) − drop({p})")
                  for p in others)
    stat = Smallest(parts, f"drop({target}) − drop(p) for each of the {len(others)} other {what} p, INSTRU-WO-EXAM "
                           "(the smallest)")
    arms = (Arm(en(target, WO), (en(target, WO),), -1, bias=NULL),
            Arm(f"the other {what}/WO", tuple(en(p, WO) for p in others), 1, bias=NULL),
            _original_wo(NULL))
    return stat, arms


def _subtracted_floor(checks):
    """The correct instruction alone is subtracted: a task at 0 there can only add zero or more to the difference,
    so its floor (read per task) biases toward the claim; its ceiling still shrinks the difference (toward the null).
    The paper's T5-3B scores about 50 on that arm: the claim presupposes a working instruction."""
    return tuple(replace(p, bias=CLAIM) if p.name == f"floor in {en('original', WO)}" else p for p in checks)


def _original_wo(bias: Bias) -> Arm:
    """The original instruction without examples: the base of the drops, whose floor is the premise."""
    return Arm(en("original", WO), (en("original", WO),), 0, bias=bias, premise=True)


def _among(have: set[str], pool: Sequence[str], target: str | None = None) -> list[str]:
    """The conditions of ``pool`` the run has, when with the original (and ``target``) they form the contrast;
    else the whole pool (the claim's rows then name the cells not run)."""
    got = [c for c in pool if c in have]
    ok = "original" in have and (target is None or target in have) and any(c != target for c in got)
    return got if ok else list(pool)


def _spec(id_, name, quote, section, stat, arms, paper_value, *, direction=1, null=0.0,
          more: tuple[Precondition, ...] = (), retouch=None) -> tuple[ClaimSpec, tuple]:
    """``retouch``: what the claim reads differently in its arms' checks (:mod:`.claims_robust`)."""
    checks = arm_checks(arms, direction)
    spec = ClaimSpec(STUDY, id_, name, quote, section, paper_value, stat, unit="task", direction=direction,
                     freeze=FREEZE,
                     null=null, scale="points", min_units=10, gates=GATES,
                     preconditions=(retouch(checks) if retouch else checks) + more,
                     observation=("version", "instance", "seed"))
    return spec, tuple(arms)


Trained = Mapping[str, str | None]


def claims(conditions: Sequence[str] = ("original", *PERTURBATIONS),
           trained: Trained | None = None) -> tuple[ClaimSpec, ...]:
    """The claims over the perturbations among ``conditions``; a claim the run's conditions cannot form reads the
    paper's (so its rows say which cells were not run). ``trained``: each model's finetune data (its model spec),
    which the PLM-prompts claim's precondition reads (a model it lacks fails that precondition)."""
    return tuple(spec for spec, _ in _declared(conditions, trained))


def claim_arms(conditions: Sequence[str] = ("original", *PERTURBATIONS)) -> dict[str, tuple[Arm, ...]]:
    """Each claim's arms: the side of its statistic each cell it reads is on (its checks' biases follow)."""
    return {spec.id: arms for spec, arms in _declared(conditions, None)}


#: Cells a claim's preconditions read beyond its statistic's (the PLM prompts' control: human-written
#: instructions without examples).
CONTROL_CELLS = {"plm_prompts_work_poorly": (en("original", WO),)}


def _declared(conditions: Sequence[str], trained: Trained | None) -> tuple[tuple[ClaimSpec, tuple[Arm, ...]], ...]:
    have = set(conditions)
    perts = _among(have, PERTURBATIONS)
    si_others = [p for p in _among(have, PERTURBATIONS, SI) if p != SI]
    sw_others = [p for p in _among(have, WORD_LEVEL, SW) if p != SW]
    words, sents = _among(have, WORD_LEVEL), _among(have, SENTENCE_LEVEL)
    if any(c not in have for c in (*words, *sents)):  # the run lacks one level: the paper's, not run
        words, sents = list(WORD_LEVEL), list(SENTENCE_LEVEL)
    k = len(perts)
    si_stat, si_arms = _worst(SI, si_others, "perturbations")
    sw_stat, sw_arms = _worst(SW, sw_others, "word-level perturbations")
    sent = Linear(_weights(*(t for p in words for t in _drop(p, WO, 1 / len(words))),
                           *(t for p in sents for t in _drop(p, WO, -1 / len(sents)))),
                  "mean word-level drop − mean sentence-level drop, INSTRU-WO-EXAM")
    robust = within(_weights(*(t for p in perts for t in _drop(p, W, 1 / k))), "mean drop",
                    f"over the {k} perturbations, INSTRU-W-EXAM", "robust", CLOSE)
    demo = Linear(_weights(*(t for p in perts for t in _drop(p, WO, 1 / k)),
                           *(t for p in perts for t in _drop(p, W, -1 / k))),
                  f"mean over the {k} perturbations of drop(INSTRU-WO-EXAM) − drop(INSTRU-W-EXAM) (perturbations "
                  "only: the run has no Para-Instructions without examples)")
    rnd = Linear(((en(SI, W), 1.0), (en("original", WO), -1.0)),
                 "score(shuffle instructions, INSTRU-W-EXAM) − score(original, INSTRU-WO-EXAM)")
    para = within(((PARA[0], 1.0), *((c, -1 / 3) for c in PARA[1:])), "mean drop",
                  "from the original to the 3 new instructions, Para-Instructions, INSTRU-W-EXAM",
                  "the performance kept", CLOSE)
    spread = TwoSets((DIVERSE,), PARA[1:], spread=True,
                     description="mean per-task std over DiversePrompt prompts (no examples) − over the 3 new "
                                 "Para-Instructions instructions (with examples)")
    plm = TwoSets((DIVERSE,), PARA, description=(
        "mean DiversePrompt task score (prompts, no examples) − mean Para-Instructions task score (its 4 "
        "human-oriented instructions, with examples, as Table 7 that §3.3 compares with)"))
    t4 = "T5-3B, Table 4"
    wo_perts = Arm("the perturbations/WO", tuple(en(p, WO) for p in perts), -1, bias=AGAINST)
    w_perts = Arm("the perturbations/W", tuple(en(p, W) for p in perts), 1, bias=CLAIM)
    robust_arms = (Arm(en("original", W), (en("original", W),), 1, bias=CLAIM),
                   Arm(w_perts.label, w_perts.cells, -1, bias=CLAIM))
    para_arms = (Arm(PARA[0], PARA[:1], 1, bias=CLAIM), Arm("the new instructions", PARA[1:], -1, bias=CLAIM))
    rnd_arms = (Arm(en(SI, W), (en(SI, W),), 1, bias=NULL),
                Arm(en("original", WO), (en("original", WO),), -1, bias=NULL))
    diverse, new = Arm("DiversePrompt", (DIVERSE,), 1), Arm("the new instructions", PARA[1:], -1)
    return (
        _spec("shuffle_instructions_largest_drop", "shuffle instructions: the largest drop",
              "“shuffle instructions” doesn’t work; this is within expectation since a random instruction provides "
              "no useful supervision for the target task", "§3.1, Table 4", si_stat, si_arms, t4),
        _spec("shuffle_words_worst_word_level", "shuffle words: the worst word-level perturbation",
              "word-level perturbations degrade the performance slightly, among which the “shuffle words” has the "
              "worst effect", "§3.1, Table 4", sw_stat, sw_arms, t4),
        _spec("sentence_level_less_than_word_level", "sentence-level drops below word-level drops",
              "generally, sentence-level perturbations have less influence than the word-level perturbations",
              "§3.1, Table 4", sent,
              (Arm("the sentence-level perturbations/WO", tuple(en(p, WO) for p in sents), 1, bias=NULL),
               Arm("the word-level perturbations/WO", tuple(en(p, WO) for p in words), -1, bias=NULL),
               _original_wo(NULL)), t4),
        _spec("examples_robust_all_perturbations", "with examples: robust on average over the perturbations",
              "When the instructions contain examples (i.e., INSTRU-W-EXAM): i) the system is pretty robust among "
              "all perturbations", "§3.1, Tables 4–5", robust, robust_arms, f"{t4}; T5-11B, Table 5",
              direction=-1, null=CLOSE, retouch=lambda checks: per_task_floors(checks, robust_arms)),
        _spec("demonstrations_minimize_perturbations", "demonstrations shrink the perturbations' drops",
              "The presence of demonstrations minimizes the impact of instruction perturbations and paraphrasing",
              "Introduction; §3.1, Table 4", demo,
              (Arm(en("original", WO), (en("original", WO),), 1, bias=AGAINST, premise=True), wo_perts,
               Arm(en("original", W), (en("original", W),), -1, bias=CLAIM), w_perts), t4),
        _spec("random_instruction_with_examples_beats_correct_without",
              "random instruction + examples beats correct instruction alone",
              "“correct examples+incorrect instruction” is better than “correct instruction without examples”",
              "§3.1, Table 4", rnd, rnd_arms, t4,
              retouch=lambda checks: _subtracted_floor(per_task_floors(checks, rnd_arms[1:]))),
        _spec("paraphrase_keeps_performance", "paraphrases keep the performance (with examples)",
              "providing a paraphrasing instruction can generally keep the performance once demonstrations are "
              "available", "§3.2, Table 7", para, para_arms, "T5-3B, Table 7", direction=-1, null=CLOSE,
              retouch=lambda checks: per_task_floors(checks, para_arms)),
        _spec("no_demonstrations_larger_spread", "no demonstrations: larger spread over prompts",
              "we notice mostly greater standard deviations in Table 8 than that in Table 7. This indicates that "
              "even paraphrasing prompts can not guarantee consistent performance if no demonstrations exist",
              "§3.3, Tables 7–8", spread,
              (replace(diverse, spread=True), replace(new, spread=True)), "T5-3B, Tables 7–8",
              more=(no_fewer_instances(diverse.label, diverse.cells, new.label, new.cells, CLAIM),
                    no_fewer_instances(new.label, new.cells, diverse.label, diverse.cells, AGAINST))),
        _spec("plm_prompts_work_poorly", "PLM-oriented prompts work poorly without demonstrations",
              "When demonstrations are absent, applying a model that learns from training tasks with human-oriented "
              "instructions to unseen tasks with PLM-oriented prompts works poorly", "Introduction; §3.3, Tables 7–8",
              plm, (diverse, Arm("Para-Instructions", PARA, -1)), "T5-3B, Tables 7–8", direction=-1,
              more=(off_floor(f"control: {en('original', WO)} off the floor",
                              "human-written instructions without examples (English original/WO) score above the "
                              "floor: where they do not, no demonstrations puts any instruction at the floor",
                              CONTROL_CELLS["plm_prompts_work_poorly"], CLAIM),
                    trained_on(SUPERNI, trained))),
    )


CLAIMS: tuple[ClaimSpec, ...] = claims()

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


def unit_tables(frame: pd.DataFrame, specs: Sequence[ClaimSpec]) -> dict[str, UnitTable]:
    """Each claim's table: the rows of the cells its statistic reads and of its control cells (read by its
    preconditions only: the engine's statistic and gates read the statistic's cells), every model."""
    return {c.id: UnitTable(frame[frame["cell"].isin((*c.cells, *CONTROL_CELLS.get(c.id, ())))]
                            .reset_index(drop=True), "task") for c in specs}


def measure(frame: pd.DataFrame, models: Sequence[str], conditions: Sequence[str], paper: Sequence[pd.DataFrame],
            *, trained: Trained | None = None, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """The engine's rows of every claim, from the unit rows of every model (:func:`.claims_measure.unit_frame`),
    the paper's tables 4, 5, 7, 8 (as read by ``wobble.report.cells.read_paper``) and each model's finetune data
    (``trained``). ``models``: the main model first, then the second (the paper's T5-11B)."""
    from wobble.studies.instructions.claims_paper import paper_effects

    specs = claims(conditions, trained)
    effects, texts = paper_effects(specs, *paper, models=models)
    specs = tuple(replace(c, paper_value=texts.get(c.id, c.paper_value)) for c in specs)
    rows = measure_all(specs, unit_tables(frame, specs), models, paper_effects=effects, n_boot=n_boot, seed=seed)
    close = {c.id: c for c in specs if c.id in CLOSE_WHO}
    return [with_signed_drop(r, close[r["claim"]], frame, CLOSE_WHO[r["claim"]]) if r.get("claim") in close else r
            for r in rows]


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``): a :class:`~wobble.report.findings.Ledger`."""
    from wobble.models.describe import model_label
    from wobble.report.cells import read_paper
    from wobble.report.findings import Ledger
    from wobble.studies.instructions.layout import main_model, second_model

    cfg = config[STUDY]
    main, second = main_model(cfg), second_model(cfg)
    parts = [unit_frame(_by_run(inputs["english"]), main, "english"),
             unit_frame(_by_run(inputs["para"]), main, "para"), unit_frame(_by_run(inputs["diverse"]), main, "diverse")]
    if second and inputs.get("second_english"):
        parts.append(unit_frame(_by_run(inputs["second_english"]), second, "english"))
    frame = pd.concat(parts, ignore_index=True)
    models = [m for m in (main, second) if m]
    paper = [read_paper(inputs[f"paper_{t}"]) for t in PAPER_TABLES]
    trained = {m: ((config["models"].get(m) or {}).get("finetune") or {}).get("data") for m in models}
    rows = measure(frame, models, cfg["conditions"], paper, trained=trained, n_boot=cfg["bootstrap"]["n"],
                   seed=cfg["bootstrap"]["seed"])
    labels = "; ".join(model_label(config["models"], k) for k in models)
    notes = (f"Ours: {labels}; seeds {cfg['seeds']}; the second model runs INSTRU-W-EXAM on the English tasks only "
             "(as the paper's T5-11B), so its other rows are not measured.",
             f"Unit: tasks (English: {cfg['english']['n_tasks_per_category']} per category x "
             f"{cfg['english']['n_instances_per_task']} instances; Para-Instructions: "
             f"{cfg['para']['n_instances_per_task']} instances per task; DiversePrompt: "
             f"{cfg['diverse']['n_examples_per_task']} example(s) per prompt); a task brings all its instances, "
             f"seeds and conditions. Population: {ENGLISH_TASKS} English test tasks, {PARA_TASKS} Para-Instructions "
             f"tasks, {DIVERSE_TASKS} DiversePrompt tasks.",
             "Floors and ceilings are read in every cell a claim reads (the cell's mean over tasks above 5 and below "
             "95 points). On the same tasks a bound can tie two arms, not reverse them: it biases a paired difference "
             "toward the null and a drop predicted small toward the claim; each check states its bias.",
             f"Generations are capped at {cfg['max_new_tokens']} new tokens (paper: 128); the gate reads the share "
             "of each cell's ROUGE-L answers cut at the cap.",
             "Paper: the same statistic over the paper's T5-3B category (Tables 4, 7) or task (Table 8) means "
             "(T5-11B's, Table 5, for the second model's robustness with examples), restricted to the conditions "
             "this run has; its verdict is the rule applied to that point.",
             f"Multiple comparisons: {len(rows) // max(len(models), 1)} claims x {len(models)} model(s), each row "
             "at 95 %, with no family-wise correction across rows; the smallest-contrast rows correct within "
             "themselves (Bonferroni over their contrasts).")
    return Ledger(f"Claims ledger: {STUDY} (Gu et al. 2023)", rows, notes)
