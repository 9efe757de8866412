"""Follow-up dialogues (followup's Progressive Form: a question, then 3 follow-ups, each turn built from the
model's last reply): wobble's hf backend re-encoding the whole conversation every turn vs keeping each turn's
KV cache for the next (``turn_reuse: true`` in a model spec, backends/hf_turns.py), in one run (target: >= 3x).

    .venv/bin/python benchmarks/bench_dialogue_reuse.py --run RUN_DIR --dataset coin_flip --n 100 \\
        --model-dir RUN_DIR/resources/models/smollm2-135m-instruct --threads 1
    .venv/bin/python benchmarks/bench_dialogue_reuse.py --quick --json out.json   # tiny random model, seconds

RUN_DIR is a checkout where the followup study's inputs exist (``resources/prepared/<dataset>.jsonl``); the
items are a seeded sample of ``--n`` (followup.pipeline.select_items), the prompts the paper's (Table 1/4/7),
the run label ``progressive_A_none``, sampling as the study's (temperature, seed, max_new_tokens from config).
Both engines answer the same dialogues in the same order; agreement is the share of replies that are
identical and the largest |Δ log-prob| of their tokens. Rows: seconds, replies/s, new tokens/s and the ratio;
with ``--phases`` also where each engine's time goes (forward_phases.py: prefill from an empty cache, prefill
continuing a cache, decode steps, outside the model; the first run's).

Every timing is the median of ``--repeats`` runs (engines interleaved round by round, each run with empty caches
and its own output file) with its min and max; speed-ups are ratios of medians with the range the runs allow;
agreement is computed from each engine's first run, and ``repeats_identical`` counts the runs that gave its
replies and log-probs again (sampling is seeded per prompt). Each row names the instruction set and precision
torch computes with, and a timing during which other processes used the CPUs is not reported (measure.py).
A script, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from forward_phases import forward_phases, summary  # noqa: E402
from harness import ROOT  # noqa: E402
from rows import text_agreement  # noqa: E402

LABEL = "progressive_A_none"


def _quick_dialogues(n: int = 6) -> list[dict]:
    system = "".join(f"Example {i}: the answer to {i} + {i} is {2 * i}.\n" for i in range(12))
    return [{"uid": f"q{i}", "messages": [{"role": "system", "content": system},
                                          {"role": "user", "content": f"What is {i} + {i * 7}?"}]} for i in range(n)]


def _quick_next(dialogue, history):
    asked = sum(m["role"] == "user" for m in history)
    return "Are you sure?" if asked < 4 else None


def _replies(turns: list[dict]) -> list[tuple[str, list[float]]]:
    return [(t["output"], t["token_logprobs"]) for t in turns]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", help="a checkout with resources/prepared/<dataset>.jsonl")
    ap.add_argument("--dataset", default="coin_flip")
    ap.add_argument("--n", type=int, default=100, help="dialogues (items)")
    ap.add_argument("--model-dir", help="a materialized chat model")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--chunk-size", type=int, default=0, help="dialogues per model call (0 = followup.chunk_size)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="tiny random float32 model, 6 dialogues")
    ap.add_argument("--phases", action="store_true", help="time each engine's forward calls by phase")
    ap.add_argument("--attention", nargs="+", default=["sdpa"],
                    help="attention implementations (backends/hf_attention.py), both engines each; ratios vs the first")
    run = harness.start(ap, argv)
    args = run.args

    from wobble.backends.base import GenParams
    from wobble.backends.hf_attention import use_attention
    from wobble.io import read_jsonl
    from wobble.models.load import load_model
    from wobble.runner.dialogue import run_dialogues_resumable

    tmp = harness.scratch("bench-dialogue-")
    if args.quick:
        model_dir, dtype, batch, chunk = harness.tiny_model("bench-dialogue-"), "float32", 4, 4
        dialogues, next_turn, annotate = _quick_dialogues(), _quick_next, None
        params = GenParams(max_new_tokens=12, temperature=0.0, return_logprobs=True)
    else:
        from wobble.studies.followup.pipeline import run_dialogues, select_items
        from wobble.studies.followup.mechanism import annotate_turn, next_user_turn
        from wobble.studies.followup.prompts import load_paper_prompts

        cfg = harness.config()["followup"]
        records = read_jsonl(Path(args.run) / "resources" / "prepared" / f"{args.dataset}.jsonl")
        chosen = select_items(args.dataset, records, n_items=args.n, n_heldout=cfg["n_heldout"], seed=cfg["seed"])
        by_id = {r["id"]: r for r in records}
        paper = load_paper_prompts(ROOT / "paper" / "followup")
        dialogues = run_dialogues(paper, args.dataset, LABEL, [by_id[i] for i in chosen["eval"]],
                                  [by_id[i] for i in chosen["heldout"]], seed=cfg["seed"], gate=cfg["gate"],
                                  shots=cfg["shots"])
        model_dir, batch, chunk = Path(args.model_dir), args.batch_size, args.chunk_size or cfg["chunk_size"]
        dtype = harness.study_dtype(model_dir)
        next_turn, annotate = next_user_turn, annotate_turn
        params = GenParams(max_new_tokens=cfg["max_new_tokens"], temperature=cfg["temperature"], top_p=1.0,
                           seed=cfg["sample_seed"], return_logprobs=True)
    model, tok, _ = load_model(model_dir, dtype=dtype)

    engines = [(kernel, reuse) for kernel in args.attention for reuse in (False, True)]
    names = {e: f"wobble hf ({e[0]}), " + ("previous turns' KV cache kept" if e[1]
                                           else "whole conversation re-encoded each turn") for e in engines}

    def engine(kernel: str, reuse: bool):
        backend = harness.hf(model, tok, batch, reuse_prefix_generation=True, reuse_turns=reuse, attention=kernel)
        runs = itertools.count()

        def timed(timing):
            use_attention(model, kernel)  # the engines share the model: each run sets its kernel
            harness.fresh(backend)
            out = tmp / f"{kernel}-{'reuse' if reuse else 'plain'}-{next(runs)}.jsonl"
            with (forward_phases(model) if args.phases else contextlib.nullcontext()) as phases:
                timing.measure(lambda: run_dialogues_resumable(backend, dialogues, next_turn, params, out,
                                                               chunk_size=chunk, desc=names[kernel, reuse],
                                                               annotate_turn=annotate))
            turns = [t for r in read_jsonl(out) for t in r["turns"]]
            return turns, {"prompts_continued": backend.turn_stats[0], "ids_not_reencoded": backend.turn_stats[1],
                           **(summary(phases) if args.phases else {})}
        return timed

    timings, outs, identical = measure.interleave([(names[e], engine(*e)) for e in engines], run.repeats,
                                                  run.max_load, same=lambda a, b: _replies(a[0]) == _replies(b[0]))
    how = measure.torch_engine(model.dtype)
    base = timings[names[engines[0]]]
    rows = []
    for kernel, reuse in engines:
        name = names[kernel, reuse]
        t, (turns, extra) = timings[name], outs[name]
        n_new = sum(len(x["token_logprobs"]) for x in turns)
        row = {"engine": name, "isa_precision": measure.label(how), **t.row("s"),
               "repeats_identical": identical[name], "replies_per_s": t.rate(len(turns), 3),
               "new_tokens_per_s": t.rate(n_new), "replies": len(turns), **extra, **t.ratio(base, "speedup")}
        if (kernel, reuse) != engines[0]:
            # a KV-kept row against its own kernel's re-encoding; a re-encoding row against the first one
            ref, against = (names[kernel, False], "plain") if reuse else (names[engines[0]], "first")
            row[f"replies_equal_{against}"], row[f"max_abs_dlogprob_vs_{against}"] = text_agreement(
                _replies(outs[ref][0]), _replies(turns))
        rows.append(row)
    meta = {"dialogues": len(dialogues), "model_dir": str(model_dir), "dtype": dtype, "threads": args.threads,
            "max_new_tokens": params.max_new_tokens, "temperature": params.temperature, "batch_size": batch,
            "chunk_size": chunk, "attention": args.attention, "quick": args.quick,
            "dataset": None if args.quick else args.dataset, "run_label": LABEL}
    return run.finish(meta, rows, timings.values(), {"torch": how})


if __name__ == "__main__":
    sys.exit(main())
