"""The instructions study's headline claims (Gu et al. 2023, §3.1–3.3) and how each is measured.

Every claim is measured on OUR instances — the unit that was sampled, so the unit the bootstrap resamples:
an instance's score is its category's official metric (EM or ROUGE-L, ×100, ``wobble.metrics.superni``)
averaged over seeds, and an instance brings its scores under every condition into each replicate. The
paper's number beside each claim is the same statistic computed from the paper's table over its 12
category means (T5-3B), so the two are comparable in kind though not in sample.

Pre-registered before any run (with the verdict rule of :mod:`wobble.report.claims`):

* an English instance counts when it has a score under every condition the claim needs;
* a measurement is **degenerate** when more than 90 % of its items score 0 under the original instruction
  (a floor: nothing can drop), or when it has no items;
* "close to the original" (Para-Instructions) means a drop smaller than 5 points (``null`` 5, predicted
  below); a rise counts as close;
* DiversePrompt spread = per-task population std of the prompts' mean scores (no examples, as the
  dataset has none); Para-Instructions spread = per-task std over its four instructions (with examples, as
  Table 7); the two task samples are independent and resampled separately.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.metrics.superni import score_instance
from wobble.report.claims import Claim, Measurement
from wobble.stats import item_bootstrap, mean_std, two_sample_difference_ci

STUDY = "instructions"
WORD_LEVEL = ("delete_stopwords", "delete_words", "insert_words", "replace_words", "shuffle_words")
SENTENCE_LEVEL = ("repeat_sentences", "shuffle_sentences")
PERTURBATIONS = WORD_LEVEL + SENTENCE_LEVEL + ("shuffle_instructions",)
PARA_CONDITIONS = ("original", "paraphrase_1", "paraphrase_2", "paraphrase_3")
FLOOR_SHARE = 0.9
PARA_MARGIN = 5.0

CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "shuffle_instructions_largest_drop",
          "‘shuffle instructions’ doesn't work; this is within expectation since a random instruction provides no "
          "useful supervision", "§3.1, Table 4", "",
          "drop(shuffle instructions) − largest other drop, INSTRU-WO-EXAM"),
    Claim(STUDY, "examples_shrink_every_drop",
          "When the instructions contain examples (i.e., INSTRU-W-EXAM): the system is pretty robust among all "
          "perturbations", "§3.1, Table 4", "",
          "smallest over perturbations of [drop without examples − drop with examples]"),
    Claim(STUDY, "shuffle_words_worst_word_level",
          "word-level perturbations degrade the performance slightly, among which the ‘shuffle words’ has the "
          "worst effect", "§3.1, Table 4", "",
          "drop(shuffle words) − largest other word-level drop, INSTRU-WO-EXAM"),
    Claim(STUDY, "sentence_level_less_than_word_level",
          "generally, sentence-level perturbations have less influence than the word-level perturbations",
          "§3.1, Table 4", "", "mean word-level drop − mean sentence-level drop, INSTRU-WO-EXAM"),
    Claim(STUDY, "random_instruction_with_examples_beats_correct_without",
          "‘correct examples+incorrect instruction’ is better than ‘correct instruction without examples’",
          "§3.1, Table 4", "", "score(shuffle instructions, W-EXAM) − score(original, WO-EXAM)"),
    Claim(STUDY, "paraphrase_keeps_performance",
          "providing a paraphrasing instruction can generally keep the performance once demonstrations are "
          "available", "§3.2, Table 7", "", f"original − mean of the 3 paraphrases, W-EXAM (close: < {PARA_MARGIN:g})",
          direction=-1, null=PARA_MARGIN),
    Claim(STUDY, "no_demonstrations_larger_spread",
          "we notice mostly greater standard deviations in Table 8 than that in Table 7. This indicates that even "
          "paraphrasing prompts can not guarantee consistent performance if no demonstrations exist",
          "§3.3, Tables 7–8", "", "mean per-task std over DiversePrompt prompts − over Para-Instructions instructions",
          min_items=5),
)


def instance_score(record: Mapping[str, Any]) -> float:
    """One prediction's score ×100 under its category's official metric (EM or ROUGE-L)."""
    return 100.0 * score_instance(record["output"], record["references"], record.get("language"))[record["metric"]]


def seed_mean_scores(records: Iterable[Mapping[str, Any]], key: Callable[[Mapping], Any]) -> dict[Any, float]:
    """Mean score over seeds (and duplicate records) per ``key(record)``."""
    acc: dict[Any, list[float]] = defaultdict(list)
    for r in records:
        acc[key(r)].append(instance_score(r))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def _instance_key(r: Mapping[str, Any]) -> tuple[str, str]:
    return (r["task"], r["instance_id"])


def score_matrix(runs: Mapping[tuple[str, str], Iterable[Mapping]], columns: Sequence[tuple[str, str]]
                 ) -> tuple[np.ndarray, int]:
    """Items x columns of seed-mean scores for the instances present under every column; and how many
    instances were left out for missing a column. ``runs[(condition, setting)]`` = its prediction records."""
    per_col = [seed_mean_scores(runs.get(c, ()), _instance_key) for c in columns]
    all_items = set().union(*per_col) if per_col else set()
    items = sorted(set.intersection(*(set(p) for p in per_col))) if per_col else []
    matrix = np.array([[p[i] for p in per_col] for i in items], dtype=float).reshape(len(items), len(columns))
    return matrix, len(all_items) - len(items)


def _measure(runs, columns, statistic, *, n_boot: int, seed: int, floor_col: int = 0) -> Measurement:
    matrix, dropped = score_matrix(runs, columns)
    if matrix.shape[0] == 0:
        return Measurement(None, None, None, 0, degenerate=True, note="no instance has every condition")
    point, lo, hi = item_bootstrap(matrix, statistic, n=n_boot, seed=seed)
    floor = float(np.mean(matrix[:, floor_col] == 0.0))
    note = f"{matrix.shape[0]} instance(s)" + (f" ({dropped} lacking a condition left out)" if dropped else "")
    if floor > FLOOR_SHARE:
        note += f"; {floor:.0%} score 0 under the original instruction"
    return Measurement(point, lo, hi, int(matrix.shape[0]), degenerate=floor > FLOOR_SHARE, note=note)


def _drop(c: np.ndarray, orig: int, j: int) -> float:
    return c[orig] - c[j]


def _drop_margin(english, group: Sequence[str], target: str, **kw) -> Measurement:
    """WO-EXAM drop of ``target`` minus the largest drop among the other conditions of ``group``."""
    cols = [("original", "wo_exam")] + [(c, "wo_exam") for c in group]
    t = group.index(target) + 1
    others = [j for j in range(1, len(cols)) if j != t]
    return _measure(english, cols, lambda c: _drop(c, 0, t) - max(_drop(c, 0, j) for j in others), **kw)


def measure(english: Mapping[tuple[str, str], Iterable[Mapping]], para: Mapping[str, Iterable[Mapping]],
            diverse: Iterable[Mapping], *, conditions: Sequence[str], n_boot: int = 1000,
            seed: int = 0) -> dict[str, Measurement | None]:
    """Measure every claim. ``english[(condition, setting)]``: prediction records of the main model on the
    English test tasks (all seeds); ``para[condition]``: Para-Instructions records (W-EXAM); ``diverse``:
    DiversePrompt records (with ``prompt_index``). Claims whose conditions were not run get None."""
    english = {k: list(v) for k, v in english.items()}
    have = set(conditions)
    out: dict[str, Measurement | None] = {c.id: None for c in CLAIMS}
    kw = {"n_boot": n_boot, "seed": seed}
    perts = [c for c in PERTURBATIONS if c in have]
    if "original" in have and "shuffle_instructions" in have and len(perts) > 1:
        out["shuffle_instructions_largest_drop"] = _drop_margin(english, perts, "shuffle_instructions", **kw)
    if "original" in have and perts:
        cols = [("original", "wo_exam"), ("original", "w_exam")]
        cols += [(c, s) for c in perts for s in ("wo_exam", "w_exam")]
        out["examples_shrink_every_drop"] = _measure(
            english, cols, lambda c: min(_drop(c, 0, 2 + 2 * k) - _drop(c, 1, 3 + 2 * k) for k in range(len(perts))),
            **kw)
    words = [c for c in WORD_LEVEL if c in have]
    if "original" in have and "shuffle_words" in words and len(words) > 1:
        out["shuffle_words_worst_word_level"] = _drop_margin(english, words, "shuffle_words", **kw)
    sents = [c for c in SENTENCE_LEVEL if c in have]
    if "original" in have and words and sents:
        cols = [("original", "wo_exam")] + [(c, "wo_exam") for c in words + sents]
        w_idx, s_idx = range(1, 1 + len(words)), range(1 + len(words), len(cols))
        out["sentence_level_less_than_word_level"] = _measure(
            english, cols, lambda c: np.mean([_drop(c, 0, j) for j in w_idx]) - np.mean([_drop(c, 0, j) for j in s_idx]),
            **kw)
    if "original" in have and "shuffle_instructions" in have:
        cols = [("original", "wo_exam"), ("shuffle_instructions", "w_exam")]
        out["random_instruction_with_examples_beats_correct_without"] = _measure(
            english, cols, lambda c: c[1] - c[0], **kw)
    para = {k: list(v) for k, v in para.items()}
    if all(para.get(c) for c in PARA_CONDITIONS):
        runs = {(c, "w_exam"): para[c] for c in PARA_CONDITIONS}
        out["paraphrase_keeps_performance"] = _measure(
            runs, [(c, "w_exam") for c in PARA_CONDITIONS], lambda c: c[0] - float(np.mean(c[1:])), **kw)
    diverse = list(diverse)
    if diverse and all(para.get(c) for c in PARA_CONDITIONS):
        out["no_demonstrations_larger_spread"] = _spread(diverse, para, **kw)
    return out


def _task_spreads(scores: Mapping[tuple[str, Any], float]) -> list[float]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for (task, _), v in sorted(scores.items()):
        by_task[task].append(v)
    return [mean_std(v)[1] for _, v in sorted(by_task.items()) if len(v) > 1]


def _spread(diverse: Sequence[Mapping], para: Mapping[str, Sequence[Mapping]], *, n_boot: int, seed: int) -> Measurement:
    d = _task_spreads(seed_mean_scores(diverse, lambda r: (r["task"], r["prompt_index"])))
    p_scores = {}
    for c in PARA_CONDITIONS:
        for task, v in _per_task(para[c]).items():
            p_scores[(task, c)] = v
    p = _task_spreads(p_scores)
    diff, lo, hi = two_sample_difference_ci(d, p, n=n_boot, seed=seed)
    n = min(len(d), len(p))
    return Measurement(diff, lo, hi, n, degenerate=n == 0,
                       note=f"{len(d)} DiversePrompt tasks vs {len(p)} Para-Instructions tasks")


def _per_task(records: Sequence[Mapping]) -> dict[str, float]:
    inst = seed_mean_scores(records, _instance_key)
    by_task: dict[str, list[float]] = defaultdict(list)
    for (task, _), v in inst.items():
        by_task[task].append(v)
    return {t: float(np.mean(v)) for t, v in by_task.items()}


# ------------------------------------------------------------------------------------ the paper's numbers


def paper_values(table4: pd.DataFrame, table7: pd.DataFrame, table8: pd.DataFrame) -> dict[str, str]:
    """Each claim's statistic computed from the paper's tables (T5-3B; category means), as printed text.

    ``table4``/``table7``/``table8`` are the paper CSVs as read by ``wobble.report.cells.read_paper``.
    """
    t4 = table4[(table4["model"] == "T5-3B")].copy()
    t4["v"] = pd.to_numeric(t4["mean"], errors="coerce")
    mean = t4.groupby(["setting", "condition"])["v"].mean()

    def m(cond, setting="INSTRU-WO-EXAM"):
        return float(mean.get((setting, cond), np.nan))

    def drop(cond, setting="INSTRU-WO-EXAM"):
        return m("original", setting) - m(cond, setting)

    out = {}
    others = [c for c in PERTURBATIONS if c != "shuffle_instructions"]
    out["shuffle_instructions_largest_drop"] = (
        f"{drop('shuffle_instructions') - max(drop(c) for c in others):.1f} "
        f"(drop {drop('shuffle_instructions'):.1f} vs next {max(drop(c) for c in others):.1f})")
    out["examples_shrink_every_drop"] = f"{min(drop(c) - drop(c, 'INSTRU-W-EXAM') for c in PERTURBATIONS):.1f}"
    w_others = [c for c in WORD_LEVEL if c != "shuffle_words"]
    out["shuffle_words_worst_word_level"] = f"{drop('shuffle_words') - max(drop(c) for c in w_others):.1f}"
    out["sentence_level_less_than_word_level"] = (
        f"{np.mean([drop(c) for c in WORD_LEVEL]) - np.mean([drop(c) for c in SENTENCE_LEVEL]):.1f}")
    out["random_instruction_with_examples_beats_correct_without"] = (
        f"{m('shuffle_instructions', 'INSTRU-W-EXAM') - m('original'):.1f}")
    t7 = table7[table7["model"] == "T5-3B"].copy()
    t7["v"] = pd.to_numeric(t7["mean"], errors="coerce")
    p = t7.groupby("instruction")["v"].mean()
    out["paraphrase_keeps_performance"] = f"{p.get('original', np.nan) - p.get('rephrased', np.nan):.1f}"
    t8 = table8[table8["model"] == "T5-3B"]
    s8 = pd.to_numeric(t8["std"], errors="coerce").mean()
    s7 = pd.to_numeric(t7[t7["instruction"] == "rephrased"]["std"], errors="coerce").mean()
    out["no_demonstrations_larger_spread"] = f"{s8 - s7:.1f} (std {s8:.1f} vs {s7:.1f})"
    return out


# ------------------------------------------------------------------------------------ the ledger step

_PRED = re.compile(r"/predictions/(?P<model>[^/]+)/(?P<taskset>[^/]+)/(?P<condition>[^/]+)/(?P<setting>[^/]+)/"
                   r"seed(?P<seed>\d+)\.jsonl$")
LEDGER_TASKSETS = ("english", "para", "diverse")


def findings_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The main model's predictions the claims rest on (English, Para-Instructions, DiversePrompt) and the
    paper tables their paper values come from."""
    from wobble.studies.instructions.runs import PREDICTIONS, runs

    preds = {ts: [] for ts in LEDGER_TASKSETS}
    for model, ts, cond, setting, seed in runs(config, "main"):
        if ts in preds:
            preds[ts].append(PREDICTIONS.format(model=model, taskset=ts, condition=cond, setting=setting, seed=seed))
    return {**preds, **{f"paper_{t}": f"paper/{STUDY}/{t}.csv" for t in ("table4", "table7", "table8")}}


def _by_run(paths: Sequence[str]) -> dict[tuple[str, str], list[dict]]:
    from wobble.io import read_jsonl

    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for p in paths:
        m = _PRED.search(str(p))
        if m is None:
            raise ValueError(f"{p}: not a predictions path of the instructions study")
        out[(m["condition"], m["setting"])].extend(read_jsonl(p))
    return out


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``)."""
    from wobble.models.describe import model_label
    from wobble.report.cells import read_paper
    from wobble.report.claims import Findings

    cfg = config[STUDY]
    english = _by_run(inputs["english"])
    para = {c: recs for (c, _), recs in _by_run(inputs["para"]).items()}
    diverse = [r for recs in _by_run(inputs["diverse"]).values() for r in recs]
    boot = cfg["bootstrap"]
    measured = measure(english, para, diverse, conditions=cfg["conditions"], n_boot=boot["n"], seed=boot["seed"])
    paper = paper_values(read_paper(inputs["paper_table4"]), read_paper(inputs["paper_table7"]),
                         read_paper(inputs["paper_table8"]))
    notes = (f"Ours: {model_label(config['models'], cfg['model'])}; seeds {cfg['seeds']}; items = SuperNI test "
             f"instances (English: {cfg['english']['instances_per_task']} per task, "
             f"{cfg['english']['tasks_per_category']} task(s) per category; Para-Instructions: "
             f"{cfg['para']['instances_per_task']} per task; DiversePrompt: "
             f"{cfg['diverse']['examples_per_task']} per prompt).",
             "Paper: the same statistic over the 12 category means of T5-3B (Tables 4, 7, 8).")
    return Findings(f"Claims ledger: instructions ({'Gu et al. 2023'})", CLAIMS, measured, paper, notes)
