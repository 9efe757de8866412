"""The followup workflow steps behind ``rules/followup.smk`` (the scripts only read and write):

items (per dataset: evaluated and held-out item ids) -> dialogues of one run, asked through the shared
dialogue runner (per model x temperature x dataset x run label: every turn's rendered prompt, raw reply
and extracted answer) -> extremes (per model x dataset: the Max / Min Progressive prompt sets from the
Direct-Form runs) -> summary (per model: every run's metrics per round with intervals) -> tables; and
judge (per model: error types of the focus runs' error examples, when ``followup.judge_model`` names a model).
Paths and run labels: :mod:`.layout`.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping, Sequence

from wobble.backends.base import Backend, GenParams
from wobble.errors import DataError
from wobble.runner import generate_resumable, run_dialogue_sets_resumable
from wobble.studies.followup.fewshot import demonstrations, split_items
from wobble.studies.followup.judge import error_examples, parse_label
from wobble.studies.followup.layout import resolve, temperature_label
from wobble.studies.followup.mechanism import annotate_turn, build_dialogue, next_user_turn
from wobble.studies.followup.metrics import extreme_variants, score_dialogue, summarize
from wobble.studies.followup.prompts import BENCHMARKS, PaperPrompts

SUMMARY_KEYS = ("model", "dataset", "run", "temperature", "condition", "form", "mitigation", "prompt_set")


def select_items(dataset: str, records: Sequence[Mapping], *, n_items: int | None, n_heldout: int, seed: int
                 ) -> dict:
    """``{"dataset", "eval", "heldout", "seed"}``: the ids evaluated and the ids held out (``n_heldout`` of them, or
    a dev split; :func:`.fewshot.split_items`)."""
    ev, held = split_items(records, n_items, n_heldout, seed)
    return {"dataset": dataset, "seed": seed, "eval": [r["id"] for r in ev], "heldout": [r["id"] for r in held]}


def items_of(selection: Mapping, records: Sequence[Mapping], path: str = "(items)") -> tuple[list, list]:
    """The evaluated and held-out records a selection names (a vanished id is a DataError)."""
    by_id = {r["id"]: r for r in records}
    missing = [i for i in list(selection["eval"]) + list(selection["heldout"]) if i not in by_id]
    if missing:
        raise DataError(path, missing[0], f"an item of the prepared {selection['dataset']} data")
    return [by_id[i] for i in selection["eval"]], [by_id[i] for i in selection["heldout"]]


def run_dialogues(paper: PaperPrompts, dataset: str, label: str, evaluated: Sequence[Mapping],
                  heldout_items: Sequence[Mapping], *, seed: int, gate: str, shots: int,
                  extremes: Mapping[str, Any] | None = None) -> list[dict]:
    """Every dialogue of one run: one per evaluated item, ``run`` and ``prompt_set`` recorded."""
    benchmark = BENCHMARKS[dataset]
    condition, prompt_set = resolve(label, extremes)
    demos = demonstrations(paper, benchmark, heldout_items, condition, seed, shots)
    return [{**build_dialogue(paper, benchmark, r, condition, seed=seed, gate=gate, demonstrations=demos),
             "run": label, "prompt_set": prompt_set} for r in evaluated]


def infer(backend: Backend, dialogues: Sequence[dict], out_path: str | os.PathLike, **options) -> int:
    """One run's dialogues: :func:`infer_runs` with one output."""
    return infer_runs(backend, {out_path: dialogues}, **options)


def infer_runs(backend: Backend, runs: Mapping[str | os.PathLike, Sequence[dict]], *, temperature: float,
               sample_seed: int, max_new_tokens: int, chunk_size: int = 8, desc: str = "followup") -> int:
    """Ask every run's dialogues (output path -> dialogues) as one set through
    :func:`wobble.runner.run_dialogue_sets_resumable` (resumable per turn; the initial question the runs share
    asked once); top-p 1 (§3.1); the sampling seed is recorded in each record's ``gen_params``."""
    params = GenParams(max_new_tokens=max_new_tokens, temperature=float(temperature), top_p=1.0, seed=sample_seed)
    return run_dialogue_sets_resumable(backend, runs, next_user_turn, params, chunk_size=chunk_size, desc=desc,
                                       annotate_turn=annotate_turn)


def scores(records: Iterable[Mapping]) -> list[dict]:
    """Item scores of finished dialogues, with their run label, prompt set and temperature label."""
    out = []
    for r in records:
        s = score_dialogue(r)
        s.update(run=r["run"], prompt_set=r.get("prompt_set"), temperature=temperature_label(s["temperature"]))
        out.append(s)
    return out


def summary_rows(records: Iterable[Mapping], *, n_boot: int, seed: int) -> list[dict]:
    """One model's metrics per run and round (:func:`.metrics.summarize`), with task type and paper name."""
    rows = summarize(scores(records), SUMMARY_KEYS, n_boot=n_boot, seed=seed)
    for row in rows:
        b = BENCHMARKS[row["dataset"]]
        row.update(paper_dataset=b.name, task_type=b.task_type)
    return rows


def extremes(direct_records: Iterable[Mapping]) -> dict:
    """``{"Max": [C, O, L annotators], "Min": [...], "undefined": [types], "scores": {run: {M., M. Rate}}}``
    from one dataset's Direct-Form runs (point values; no interval is needed to rank); null for an undefined
    value; a type with no defined score gets annotator A (:func:`.metrics.extreme_variants`)."""
    rows = summarize(scores(direct_records), ("run",), n_boot=0)
    chosen = extreme_variants(rows)

    def plain(x: float):
        return None if math.isnan(x) else x

    return {"Max": list(chosen["Max"]), "Min": list(chosen["Min"]), "undefined": list(chosen["undefined"]),
            "scores": {r["run"]: {"modification": plain(r["modification"]),
                                  "modification_rate_pct": plain(r["modification_rate_pct"])} for r in rows}}


def judge(backend: Backend, dialogues: Iterable[Mapping], out_path: str | os.PathLike, *, n: int, seed: int,
          max_new_tokens: int, chunk_size: int = 8) -> int:
    """Label up to ``n`` error examples per model and dataset (:mod:`.judge`) with a greedy judge, resumably;
    each record keeps the judge's prompt, raw ``output`` and the parsed ``label``."""
    requests = error_examples(dialogues, n, seed)
    params = GenParams(max_new_tokens=max_new_tokens, temperature=0.0, seed=seed)
    return generate_resumable(backend, requests, params, out_path, chunk_size=chunk_size, desc="followup judge",
                              annotate=lambda r, g: {"label": parse_label(g.text)})
