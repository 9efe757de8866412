"""followup's run groups (layout.run_groups: one job per model and dataset for every run at the model's
temperature): the runs asked one after another, each alone (what one job per run computed, without its
~7 s of imports and model loading), vs asked as one set (runner.run_dialogue_sets_resumable: batches fill
across the runs, and the question the plain runs share before any follow-up is asked once), in one run; and
``set_without_control``: the same set without wobble's neutral control (``followup.neutral_control``), so that
``set`` minus it is what the control costs a group job, and its dialogues against ``set``'s say how many of the
other runs' dialogues the control's extra turns change (by a different batch shape).

    .venv/bin/python benchmarks/bench_followup_groups.py --run RUN_DIR --model smollm2-135m-instruct \\
        --dataset strategyqa --threads 1 --json out.json

    .venv/bin/python benchmarks/bench_followup_groups.py --run RUN_DIR --model smollm2-135m-instruct \\
        --dataset multiarith --engines set_without_control set --alternate --json out.json   # the control's cost

    .venv/bin/python benchmarks/bench_followup_groups.py --quick --json out.json   # tiny random model, seconds

RUN_DIR is a checkout where the default run made the study's inputs (``resources/prepared/<dataset>.jsonl``,
``results/followup/items/<dataset>.json``, ``resources/models/<model>``); the runs, prompts and sampling are
config.yaml's. Where RUN_DIR holds the run's predictions, each engine's records are checked against them: the
share of dialogues whose every turn is identical; every engine's records are also checked against the first
engine's (over the runs both asked). ``s`` is wall time; ``cpu_s`` the process's CPU time, which with ``--threads 1``
is about the thread-seconds of a job on an idle core even while other jobs share the machine. ``--quick`` asks
config.yaml's StrategyQA runs of a tiny random float32 model about 6 made-up yes/no items (4 more held out for the
few-shot demonstrations): it checks that the script runs, not a speed.

``s`` and ``cpu_s`` are medians of ``--repeats`` runs (engines interleaved round by round, with ``--alternate``
every other round in the opposite order; each run with empty prefix caches and its own output files), ``s`` with
its min and max; speed-ups are ratios of medians with the range the runs allow; the dialogue checks use each
engine's first run, and ``repeats_identical`` counts the runs that gave its dialogues again. Each row names the
instruction set and precision torch computes with; a wall time during which other processes used the CPUs is not
reported (measure.py), its CPU time is. A script, not a test.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from harness import ROOT  # noqa: E402


def _quick_records() -> list[dict]:
    """10 made-up StrategyQA-shaped records (``--quick`` only: 6 evaluated, 4 held out); never a result."""
    return [{"id": f"quick-{i}", "dataset": "strategyqa", "question": f"Is {i} an even number?", "split": "test",
             "answer": "yes" if i % 2 == 0 else "no", "answer_type": "yes/no", "choices": None, "extra": {}}
            for i in range(10)]


def _same_dialogues(a: list[dict], b: list[dict]) -> int:
    from wobble.io import dumps_canonical

    return sum(dumps_canonical(x["turns"]) == dumps_canonical(y["turns"]) for x, y in zip(a, b))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", help="a checkout where the default run made the study's inputs (not with --quick)")
    ap.add_argument("--quick", action="store_true", help="tiny random float32 model, 6 made-up StrategyQA items")
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--dataset", default="strategyqa")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--engines", nargs="+", default=["alone", "set"], choices=["alone", "set", "set_without_control"])
    ap.add_argument("--alternate", action="store_true",
                    help="every other round in the opposite engine order (the engine asked second runs ~5 s faster)")
    bench = harness.start(ap, argv)
    args = bench.args
    if args.quick == bool(args.run):
        ap.error("give --run RUN_DIR, or --quick")

    from wobble.backends import backend_from_spec
    from wobble.io import read_json, read_jsonl
    from wobble.paths import model_dir
    from wobble.studies.followup import layout
    from wobble.studies.followup.pipeline import infer, infer_runs, items_of, run_dialogues
    from wobble.studies.followup.prompts import load_paper_prompts

    tmp = harness.scratch("bench-groups-")
    full = harness.config()
    cfg = full["followup"]
    dataset = "strategyqa" if args.quick else args.dataset
    (runs,) = [rs for m, d, rs in layout.run_groups(cfg) if (m, d) == (args.model, dataset)]
    gen = {"temperature": float(runs[0].temperature), "sample_seed": cfg["sample_seed"],
           "max_new_tokens": cfg["max_new_tokens"], "chunk_size": cfg["chunk_size"]}
    if args.quick:
        spec = {**harness.TINY, "chat_template": True}
        backend = backend_from_spec("tiny", spec, harness.tiny_model("bench-groups-", **spec), batch_size=4)
        records = _quick_records()
        evaluated, heldout_items = records[:6], records[6:]
        gen.update(max_new_tokens=12, chunk_size=4)
    else:
        run = Path(args.run)
        spec = full["models"][args.model]
        prepared = read_jsonl(run / "resources" / "prepared" / f"{dataset}.jsonl")
        selection = read_json(run / layout.items_path(layout.results_dir(full), dataset))
        evaluated, heldout_items = items_of(selection, prepared)
        backend = backend_from_spec(args.model, spec, run / model_dir(full, args.model),
                                    batch_size=spec.get("batch_size"))
    paper = load_paper_prompts(ROOT / "paper" / "followup")
    asked = {r: run_dialogues(paper, dataset, r.label, evaluated, heldout_items, seed=cfg["seed"],
                              gate=cfg["gate"], shots=cfg["shots"]) for r in runs}
    control = layout.neutral_label()

    def engine(name: str):
        mine = [r for r in runs if name != "set_without_control" or r.label != control]
        rounds = itertools.count()

        def timed(timing):
            folder = tmp / name / str(next(rounds))  # a fresh output folder per run: nothing to resume
            outs = {r: folder / f"{r.label}.jsonl" for r in mine}
            if hasattr(backend, "prefix_cache"):
                harness.fresh(backend)
            if name == "alone":
                timing.measure(lambda: [infer(backend, asked[r], outs[r], desc=f"alone {r.label}", **gen)
                                        for r in mine])
            else:
                timing.measure(lambda: infer_runs(backend, {outs[r]: asked[r] for r in mine}, desc=name, **gen))
            return {r: read_jsonl(outs[r]) for r in mine}
        return timed

    timings, outputs, identical = measure.interleave(
        [(name, engine(name)) for name in args.engines], bench.repeats, bench.max_load, alternate=args.alternate,
        same=lambda a, b: all(_same_dialogues(a[r], b[r]) == len(a[r]) for r in a))
    how = measure.torch_engine(backend.model.dtype) if hasattr(backend, "model") else {"engine": type(backend).__name__}
    base, first = timings[args.engines[0]], outputs[args.engines[0]]
    rows = []
    for name in args.engines:
        records, t = outputs[name], timings[name]
        row = {"engine": name, "runs": len(records), "isa_precision": measure.label(how), **t.row("s"),
               **t.cpu_row("cpu_s"), "repeats_identical": identical[name],
               "dialogues": sum(len(v) for v in records.values()),
               "replies": sum(len(d["turns"]) for v in records.values() for d in v)}
        both = [r for r in records if r in first]
        row["dialogues_identical_to_first"] = (
            f"{sum(_same_dialogues(records[r], first[r]) for r in both)}/{sum(len(records[r]) for r in both)}")
        committed = {} if args.quick else {r: run / layout.run_path(layout.results_dir(full), args.model, r)
                                           for r in records}
        if committed and all(p.is_file() for p in committed.values()):
            same = sum(_same_dialogues(records[r], read_jsonl(committed[r])) for r in records)
            row["dialogues_identical_to_run"] = f"{same}/{row['dialogues']}"
        rows.append({**row, **t.ratio(base, "speedup_vs_first"), **t.minus(base, "s_minus_first"),
                     "cpu_s_minus_first": round(t.cpu_median - base.cpu_median, 2)})
    meta = {"model": "tiny" if args.quick else args.model, "runs_of": args.model, "dataset": dataset,
            "runs": [r.label for r in runs], "items": len(evaluated), "threads": args.threads, "quick": args.quick,
            "alternate": args.alternate,
            "run_dir": None if args.quick else str(run), **gen}
    return bench.finish(meta, rows, timings.values(), {"torch": how})


if __name__ == "__main__":
    sys.exit(main())
