"""Greedy generation where prompts share a long block (instructions' W-EXAM prompts: one task definition + two
worked examples shared by every instance of a task): wobble's hf backend with and without prefix reuse for
generation (``prefix_generation: true`` in a model spec), in one run.

    .venv/bin/python benchmarks/bench_generation_prefix.py \\
        --split results/instructions/splits/english/original/w_exam/seed1.jsonl \\
        --model-dir resources/models/qwen2.5-coder-0.5b-instruct --chat --max-new-tokens 32 --threads 1
    .venv/bin/python benchmarks/bench_generation_prefix.py --quick --json out.json   # tiny random model, seconds

Both engines get the same prompts in the same order, in the model's study dtype; agreement is the share of
greedy texts that are identical and the largest |Δ log-prob| of the generated tokens (reuse vs plain). Rows:
seconds, prompts/s, new tokens/s, prompt tokens/s and the speed-up; ``--per-group`` adds the reuse path with one
batch per prefix group (its rows decode alone; the default mixes groups in one batch), ``--phases`` where each
row's time goes (prefixes and plain prompts, suffixes continuing a cache, decode steps; the first run's).

Every timing is the median of ``--repeats`` runs (engines interleaved round by round, each run with empty prefix
caches) with its min and max; speed-ups are ratios of medians with the range the runs allow; agreement is
computed from each engine's first run, and ``repeats_identical`` counts the runs that gave its texts and log-probs
again. Each row names the instruction set and precision torch computes with, and a timing during which other
processes used the CPUs is not reported (measure.py). A script, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from forward_phases import forward_phases, summary  # noqa: E402
from harness import ROOT  # noqa: E402
from rows import generations, text_agreement  # noqa: E402


def _quick_prompts() -> list[str]:
    blocks = ["".join(f"Definition {t}: copy the word.\nInput: w{i}\nOutput: w{i}\n\n" for i in range(12))
              for t in range(3)]
    return [b + f"Input: item {k}\nOutput:" for b in blocks for k in range(3)]


def split_workload(args, tmp_prefix: str) -> tuple[Path, list, str]:
    """(model directory, prompts, dtype) of a benchmark on an instructions split: ``--split`` records (first
    ``--n``; plain prompts or, with ``--chat``, one user turn) and ``--model-dir`` in its study dtype; with
    ``--quick`` a tiny random float32 model on 9 prompts (and the quick run's 8 new tokens, batches of 4)."""
    from wobble.io import read_jsonl
    from wobble.studies.instructions.prompts import as_chat_turn, plain_prompt

    if args.quick:
        args.max_new_tokens, args.batch_size = 8, 4
        return harness.tiny_model(tmp_prefix), _quick_prompts(), "float32"
    model_dir = Path(args.model_dir)
    records = read_jsonl(args.split)
    records = records[: args.n] if args.n else records
    prompts = [(as_chat_turn if args.chat else plain_prompt)(r) for r in records]
    return model_dir, prompts, harness.study_dtype(model_dir)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", help="an instructions split JSONL (records with 'prompt')")
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "qwen2.5-coder-0.5b-instruct"))
    ap.add_argument("--chat", action="store_true", help="send each prompt as one user turn (instructions' chat_models)")
    ap.add_argument("--n", type=int, default=0, help="first N records (0 = all)")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="tiny random float32 model, 9 prompts")
    ap.add_argument("--per-group", action="store_true",
                    help="also the reuse path with one batch per prefix group (its rows decode alone)")
    ap.add_argument("--phases", action="store_true", help="where each row's time goes (forward_phases.py)")
    run = harness.start(ap, argv)
    args = run.args

    from wobble.backends.base import GenParams
    from wobble.models.load import load_model

    model_dir, prompts, dtype = split_workload(args, "bench-genprefix-")
    model, tok, _ = load_model(model_dir, dtype=dtype)
    params = GenParams(max_new_tokens=args.max_new_tokens, return_logprobs=True)

    engines = [("wobble hf, batched, no prefix reuse", False, False), ("wobble hf, shared-prefix reuse", True, True)]
    if args.per_group:
        engines.append(("wobble hf, shared-prefix reuse, one batch per prefix group", True, False))

    def engine(reuse: bool, mixed: bool):
        backend = harness.hf(model, tok, args.batch_size, reuse_prefix_generation=reuse)
        backend.mix_prefix_groups = backend.mix_prefix_groups and mixed

        def timed(timing):
            harness.fresh(backend)
            with forward_phases(model) if args.phases else contextlib.nullcontext() as phases:
                gens = timing.measure(lambda: backend.generate(prompts, params))
            return gens, {"prefix_passes": backend.prefix_cache.misses, **(summary(phases) if args.phases else {})}
        return backend, timed

    backends = {name: engine(reuse, mixed) for name, reuse, mixed in engines}
    timings, outs, identical = measure.interleave([(name, timed) for name, (_, timed) in backends.items()],
                                                  run.repeats, run.max_load, same=lambda a, b: a[0] == b[0])
    how = measure.torch_engine(model.dtype)
    plain_name = engines[0][0]
    rows = []
    for name, (backend, _) in backends.items():
        t, (gens, extra) = timings[name], outs[name]
        n_prompt = sum(len(backend.encode_prompt(backend.render(p))) for p in prompts)
        n_new = sum(len(g.token_logprobs) for g in gens)
        row = {"engine": name, "isa_precision": measure.label(how), **t.row("s"),
               "repeats_identical": identical[name], "prompts_per_s": t.rate(len(prompts), 3),
               "new_tokens_per_s": t.rate(n_new), "prompt_tokens_per_s": t.rate(n_prompt, 1), **extra,
               **t.ratio(timings[plain_name], "speedup")}
        if name != plain_name:
            row["texts_equal_plain"], row["max_abs_dlogprob_vs_plain"] = text_agreement(
                generations(outs[plain_name][0]), generations(gens))
        rows.append(row)
    meta = {"prompts": len(prompts), "model_dir": str(model_dir), "dtype": dtype, "threads": args.threads,
            "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size, "quick": args.quick,
            "split": args.split, "chat": args.chat}
    return run.finish(meta, rows, timings.values(), {"torch": how})


if __name__ == "__main__":
    sys.exit(main())
