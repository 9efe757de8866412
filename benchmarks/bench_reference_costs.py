"""What a reference run costs per item with Qwen2.5-Coder-1.5B-Instruct beside the default run's models, and
whether the 1.5B meets each study's precondition: the numbers configs/reference.yaml's plan is sized by.

    .venv/bin/python benchmarks/bench_reference_costs.py first_token --run RUN_DIR \\
        --model-dir qwen2.5-coder-1.5b-instruct=DIR --json benchmarks/reference-costs-first_token.json

One invocation times one study's workload: the call the study's inference job makes (first_token: greedy
generation with the first token's letter log-probs; followup: a run group's dialogues, ``infer_runs``;
instructions: greedy generation of the English original split; icl_bias: label-word scoring with prefix reuse)
on the SAME few real items of the default run in RUN_DIR (its prompts, items, request bundles), by each model,
interleaved round by round (``--repeats``, median): model loading is outside the timings, each job's one thread
(``--threads``, config.yaml's ``model_threads``). A model runs with its spec from config.yaml (``--config``: the run's own config; batch size, shared-
prefix reuse, float32 output layer, cross-turn KV reuse); ``KEY:B`` runs KEY at batch size B instead. Reported
per model: wall seconds (median, min, max) with the other processes' load during each run (``measure.ForeignLoad``),
the process's CPU seconds of each run, per item and as a ratio to the first model's (with one thread, CPU time is
what the run costs a job on an idle core, so the CPU-time RATIO of two models timed in one run is the number to
scale the default run's job times by, even on a shared machine; never a seconds figure from a loaded one), and
each model's load time and the process's peak RSS after it.

The precondition each study's claims ledger checks, on the same outputs (greedy; followup: sampled as the study
does), to choose a study's model and never to look at a claim's effect: first_token, the share of text answers
not opening with the first-token letter per constraint level (the ledger wants >= 5 % in some level);
instructions, on how many tasks the original instruction scores above 0 (the ledger wants half); followup
(``--precondition-items``), the initial accuracy per dataset over that many items against chance (one-sided
exact binomial, as the ledger); icl_bias, how many of the scored conditions' calibrated answers are one label.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from rows import emit  # noqa: E402

from wobble.paths import study_root  # noqa: E402

STUDIES = ("first_token", "followup", "instructions", "icl_bias")
DEFAULT_MODELS = {"first_token": ["qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct"],
                  "followup": ["qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct"],
                  "instructions": ["qwen2.5-coder-0.5b-instruct", "gemma-270m-ni", "qwen2.5-coder-1.5b-instruct"],
                  "icl_bias": ["gemma-270m", "qwen2.5-coder-1.5b-instruct"]}


def _config(path: Path) -> dict:
    import yaml

    from wobble.config import validate_config

    cfg = yaml.safe_load(path.read_text())
    validate_config(cfg, ROOT / "schemas" / "config.schema.yaml")  # fills the schema's defaults
    return cfg


def _rss_gb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2)


def load_models(cfg: dict, run: Path, names: list[str], dirs: dict[str, str]) -> tuple[dict, dict]:
    """``{name: backend}`` (``KEY:B`` shares KEY's weights at batch size B) and ``{key: load facts}``."""
    from wobble.backends import backend_from_spec
    from wobble.paths import model_dir

    backends, loads = {}, {}
    for name in names:
        key, _, batch = name.partition(":")
        if key not in loads:
            spec = cfg["models"][key]
            t0 = time.perf_counter()
            backend = backend_from_spec(key, spec, dirs.get(key) or run / model_dir(cfg, key),
                                        batch_size=spec.get("batch_size"))
            loads[key] = {"load_s": round(time.perf_counter() - t0, 1), "peak_rss_gb_after": _rss_gb(),
                          "batch_size": backend.batch_size}
            backends[key] = backend
        if batch:
            import copy

            variant = copy.copy(backends[key])
            variant.batch_size = int(batch)
            backends[name] = variant
    return {n: backends[n] for n in names}, loads


def _chat(name: str) -> bool:
    return not name.startswith("gemma")


# ------------------------------------------------------------------------------------------------ workloads

def first_token_work(cfg: dict, run: Path, n_questions: int):
    """n questions x every constraint level x their first 2 shuffles of the default run's prompts (greedy)."""
    from wobble.io import read_jsonl
    from wobble.studies.first_token.answers import infer

    rows = read_jsonl(run / study_root(cfg, "first_token") / "splits" / "prompts.jsonl")
    questions = list(dict.fromkeys(r["question_uid"] for r in rows))[:n_questions]
    items = [r for r in rows if r["question_uid"] in questions and r["shuffle"] < 2
             and r["constraint"] in cfg["first_token"]["constraints"]]
    ft = cfg["first_token"]

    def call(backend, out: Path):
        infer(backend, items, out, temperature=0.0, max_new_tokens=ft["max_new_tokens"], seed=ft["seed"])
        return read_jsonl(out)

    return items, call


def first_token_precondition(records: list[dict]) -> dict:
    from wobble.studies.first_token.claims_measure import CAN_DISAGREE
    from wobble.studies.first_token.metrics import first_token_is_letter

    per = defaultdict(lambda: [0, 0])
    for r in records:
        per[r["constraint"]][0] += not first_token_is_letter({**r, "response": r["output"]})
        per[r["constraint"]][1] += 1
    shares = {c: f"{k}/{n}" for c, (k, n) in per.items()}
    return {"not_opening_with_first_token_letter": shares,
            "meets": any(k / n >= CAN_DISAGREE for k, n in per.values() if n),
            "rule": f"some level with >= {CAN_DISAGREE:.0%} of text answers not opening with the first-token letter"}


def followup_work(cfg: dict, run: Path, dataset: str, n_items: int, only_initial: bool = False):
    """The run group of ``dataset`` at the models' temperature (every run config.yaml asks there), on the default
    run's first ``n_items`` evaluated items; ``only_initial``: the initial question of the plain closed-ended
    prompt-A run alone, on the study's seeded sample of ``n_items`` (``followup_items``' draw)."""
    from wobble.io import read_json, read_jsonl
    from wobble.studies.followup import layout
    from wobble.studies.followup.pipeline import infer_runs, items_of, run_dialogues, select_items
    from wobble.studies.followup.prompts import load_paper_prompts

    fu = cfg["followup"]
    (runs,) = [rs for m, d, rs in layout.run_groups(fu) if (m, d) == (fu["models"][0], dataset)]
    prepared = read_jsonl(run / "resources" / "prepared" / f"{dataset}.jsonl")
    if only_initial:
        runs = [r for r in runs if r.label == "direct_CA_none"]
        selection = select_items(dataset, prepared, n_items=n_items, n_heldout=fu["n_heldout"], seed=fu["seed"])
        evaluated, heldout_items = items_of(selection, prepared)
    else:
        selection = read_json(run / layout.items_path(layout.results_dir(cfg), dataset))
        evaluated, heldout_items = items_of(selection, prepared)
        evaluated = evaluated[:n_items]
    paper = load_paper_prompts(ROOT / "paper" / "followup")
    asked = {r.label: run_dialogues(paper, dataset, r.label, evaluated, heldout_items, seed=fu["seed"],
                                    gate=fu["gate"], shots=fu["shots"]) for r in runs}
    if only_initial:
        asked = {label: [{**d, "followups": []} for d in ds] for label, ds in asked.items()}
    gen = {"temperature": float(runs[0].temperature), "sample_seed": fu["sample_seed"],
           "max_new_tokens": fu["max_new_tokens"], "chunk_size": fu["chunk_size"]}

    def call(backend, out: Path):
        outs = {out.with_name(f"{out.name}-{label}.jsonl"): d for label, d in asked.items()}
        infer_runs(backend, outs, desc=f"{dataset}", **gen)
        return [rec for p in outs for rec in read_jsonl(p)]

    return evaluated, call


def followup_precondition(records: list[dict]) -> dict:
    from wobble.stats import binomial_p_above
    from wobble.studies.followup.claims_measure import ALPHA, chance
    from wobble.studies.followup.pipeline import scores

    acc = defaultdict(lambda: [0, 0])
    for s in scores(records):
        if s["run"] == "direct_CA_none":
            acc[s["dataset"]][0] += bool(s["correct"][0])
            acc[s["dataset"]][1] += 1
    out = {}
    for d, (k, n) in sorted(acc.items()):
        p = binomial_p_above(k, n, chance(d))
        out[d] = {"initially_correct": f"{k}/{n}", "chance": chance(d), "p": round(float(p), 4), "meets": p < ALPHA}
    return out


def instructions_work(cfg: dict, run: Path, setting: str, n_tasks: int, chat: bool):
    from wobble.backends import GenParams
    from wobble.io import read_jsonl
    from wobble.runner import generate_resumable
    from wobble.studies.instructions.prompts import as_chat_turn, plain_prompt

    split = read_jsonl(run / study_root(cfg, "instructions") / "splits" / "english" / "original" / setting / "seed1.jsonl")
    items = split[:n_tasks]
    params = GenParams(max_new_tokens=cfg["instructions"]["max_new_tokens"], temperature=0.0)

    def call(backend, out: Path):
        generate_resumable(backend, items, params, out, prompt_of=as_chat_turn if chat else plain_prompt,
                           desc=f"{setting}")
        return read_jsonl(out)

    return items, call


def instructions_precondition(records: list[dict]) -> dict:
    from wobble.studies.instructions.claims_measure import instance_score

    per_task = defaultdict(list)
    for r in records:
        per_task[r["task"]].append(instance_score(r))
    above = sum(max(v) > 0 for v in per_task.values())
    return {"tasks_above_0": f"{above}/{len(per_task)}", "meets": above * 2 >= len(per_task),
            "rule": "the original instruction scores above 0 on at least half of the tasks"}


def icl_bias_work(cfg: dict, run: Path, pair: str, n_items: int):
    """Every scored condition of the default run's bundle for one pair, on ``n_items`` of its test items (half
    from each disagreeing cell), with each condition's content-free requests (the calibration's)."""
    from wobble.io import read_json, read_jsonl
    from wobble.studies.icl_bias.pipeline import infer, scores

    root = run / study_root(cfg, "icl_bias")
    bundle = read_json(root / "requests" / f"{pair}.json")
    split = read_json(root / "splits" / f"{pair}.json")
    test = [it for it in split["items"] if it["uid"] in {r["item"] for r in bundle["requests"]}]
    chosen = {it["uid"] for h1 in (1, 0) for it in [t for t in test if t["h1"] == h1][:n_items // 2]}
    reqs = [r for r in bundle["requests"] if not r["generate"] and (r["item"] in chosen or r["content_free"] is not None)]
    sub = {**bundle, "requests": reqs}

    def call(backend, out: Path):
        infer(backend, sub, out, max_new_tokens=cfg["icl_bias"]["max_new_tokens"], seed=0)
        return scores(sub, read_jsonl(out), split, calibrate=cfg["icl_bias"]["calibrate"])

    return [r for r in reqs if r["item"] is not None], call


def icl_bias_precondition(records: list[dict]) -> dict:
    from wobble.studies.icl_bias.claims_measure import CONSTANT_SHARE

    by_cell = defaultdict(list)
    for r in records:
        by_cell[r["condition"]].append(r["pred"])
    constant = sorted(c for c, preds in by_cell.items()
                      if max(preds.count(v) for v in set(preds)) / len(preds) > CONSTANT_SHARE)
    return {"constant_cells": f"{len(constant)}/{len(by_cell)}", "constant": constant,
            "meets": not constant, "rule": f"no condition whose calibrated answers are > {CONSTANT_SHARE:.0%} one label"}


# -------------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("study", choices=STUDIES)
    ap.add_argument("--run", required=True, help="a checkout with a finished default run (its prompts and models)")
    ap.add_argument("--model-dir", action="append", default=[], metavar="KEY=DIR",
                    help="a model's materialized directory outside RUN_DIR (repeatable)")
    ap.add_argument("--models", nargs="+", help="model keys (KEY:B = KEY at batch size B); the first is the base")
    ap.add_argument("--items", type=int, default=None, help="first_token: questions (default 3); followup: items "
                    "(default 4); instructions: tasks (default 8); icl_bias: items per condition (default 8)")
    ap.add_argument("--dataset", default="strategyqa", help="followup: the run group's dataset")
    ap.add_argument("--setting", default="wo_exam", choices=["wo_exam", "w_exam"], help="instructions' split")
    ap.add_argument("--pair", default="boolq_answer_qword", help="icl_bias: the request bundle's pair")
    ap.add_argument("--precondition-items", type=int, default=0,
                    help="followup: also ask the initial question of every dataset's plain run on the study's "
                         "seeded sample of this many items, untimed, for the initial accuracy (0 = not)")
    ap.add_argument("--precondition-models", nargs="+", help="followup: the models --precondition-items asks "
                    "(default every model)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--config", default=str(ROOT / "config.yaml"),
                    help="the config RUN_DIR's run was made with (its models' specs and each study's settings)")
    ap.add_argument("--quick", action="store_true",
                    help="a check that the script works (one run, no load limit), e.g. on a smoke run's tiny models")
    ap.add_argument("--json")
    measure.add_arguments(ap)
    args = ap.parse_args(argv)
    repeats, limit = measure.settings(args)

    import torch

    torch.set_num_threads(args.threads)
    config, run = Path(args.config).resolve(), Path(args.run).resolve()
    at_start = measure.machine()
    # a finetuned model's manifest names its base directory relative to the run's checkout, and the config's
    # paths (annotations, the mirror) are relative to it too
    os.chdir(run)
    cfg = _config(config)
    dirs = dict(d.split("=", 1) for d in args.model_dir)
    names = args.models or DEFAULT_MODELS[args.study]
    backends, loads = load_models(cfg, run, names, dirs)

    defaults = {"first_token": 3, "followup": 4, "instructions": 8, "icl_bias": 8}
    n = args.items or defaults[args.study]
    if args.study == "first_token":
        items, call = first_token_work(cfg, run, n)
        calls = {name: call for name in names}
    elif args.study == "followup":
        items, call = followup_work(cfg, run, args.dataset, n)
        calls = {name: call for name in names}
    elif args.study == "instructions":
        works = {name: instructions_work(cfg, run, args.setting, n, _chat(name)) for name in names}
        items = works[names[0]][0]
        calls = {name: w[1] for name, w in works.items()}
    else:
        items, call = icl_bias_work(cfg, run, args.pair, n)
        calls = {name: call for name in names}

    timings = {name: measure.Timing(limit) for name in names}
    outputs = {}
    with tempfile.TemporaryDirectory(prefix="bench-reference-") as tmp:
        for rep in range(repeats):
            for name in names:
                out = Path(tmp) / f"{name.replace(':', '_bs')}-{rep}.jsonl"
                outputs[name] = timings[name].measure(lambda: calls[name](backends[name], out))
        pre = {}
        for name in names:
            recs = outputs[name]
            if args.study == "first_token":
                pre[name] = first_token_precondition(recs)
            elif args.study == "instructions":
                pre[name] = instructions_precondition(recs)
            elif args.study == "followup":
                pre[name] = followup_precondition(recs)
            else:
                pre[name] = icl_bias_precondition(recs)
        if args.study == "followup" and args.precondition_items:
            for name in args.precondition_models or names:
                recs = []
                for d in cfg["followup"]["datasets"]:
                    _, plain = followup_work(cfg, run, d, args.precondition_items, only_initial=True)
                    recs += plain(backends[name], Path(tmp) / f"pre-{name.replace(':', '_bs')}-{d}")
                pre[name] = followup_precondition(recs)

    base = timings[names[0]]
    rows = []
    for name in names:
        t = timings[name]
        loaded = t.loaded or base.loaded
        row = {"model": name, "items": len(items), **t.row("s"),
               "s_per_item": measure.LOADED if t.loaded else round(t.median / len(items), 3),
               # this model's time over the first model's on the same items: its per-item cost in units of the first's
               "cost_ratio_vs_first": measure.LOADED if loaded else round(t.median / base.median, 2),
               "cost_ratio_range": measure.LOADED if loaded else [round(min(t.runs) / max(base.runs), 2),
                                                                  round(max(t.runs) / min(base.runs), 2)],
               "foreign_load_runs": [round(f, 2) for f in t.foreign],
               # CPU seconds: with one thread, what the run costs a job on an idle core even on a shared machine
               # (measure.Timing records the process's CPU seconds of each run beside its wall time)
               "cpu_s_runs": t.cpu_row()["cpu_s_runs"],
               "cpu_s_per_item": round(t.cpu_median / len(items), 3),
               "cpu_cost_ratio_vs_first": round(t.cpu_median / base.cpu_median, 2),
               "cpu_cost_ratio_range": [round(min(t.cpu) / max(base.cpu), 2), round(max(t.cpu) / min(base.cpu), 2)]}
        if name in pre:
            row["precondition"] = pre[name]
        rows.append(row)
    meta = {"study": args.study, "run_dir": str(run), "config": args.config, "quick": args.quick, "models": names, "loads": loads, "threads": args.threads,
            "items": n, "dataset": args.dataset if args.study == "followup" else None,
            "setting": args.setting if args.study == "instructions" else None,
            "pair": args.pair if args.study == "icl_bias" else None, "peak_rss_gb": _rss_gb(),
            **at_start, **measure.run_facts(repeats, limit, list(timings.values()))}
    emit(meta, rows, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
