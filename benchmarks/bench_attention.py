"""Greedy generation on a study's prompts with the model's attention kernel switched: PyTorch's fused SDPA
(transformers' default on CPU) vs the eager matmul-softmax path vs wobble's kernels (backends/hf_attention.py),
in one run (bench_prefill finds the fused CPU kernel taking 27 % of a gemma prefill for 9 % of its FLOPs; this
asks whether that holds on a study's real generation workload).

    .venv/bin/python benchmarks/bench_attention.py \\
        --split results/instructions/splits/english/original/w_exam/seed1.jsonl \\
        --model-dir resources/models/gemma-270m-ni --max-new-tokens 32 --threads 1 --kernels sdpa eager wobble
    .venv/bin/python benchmarks/bench_attention.py --quick --json out.json    # tiny random model, seconds

The engine is the study's: wobble's hf backend, batches of ``--batch-size``, the float32 output layer at scored
positions (``output_fp32: true``), in the model's study dtype; the same prompts in the same order for every
kernel, ``--rounds`` times alternating (so drift of the machine hits both; measure.py's ``--repeats``, default 3,
1 with ``--quick``). Rows: seconds (median over rounds, with min, max and each round's), prompts/s, new
tokens/s, the ratio of medians against the first kernel with the range the rounds allow, the instruction set and
precision torch computes with, ``repeats_identical`` (the rounds that gave the first round's texts again), and
agreement with the first kernel (identical greedy texts, max |Δ log-prob| of the tokens of identical texts, from
the first round). A timing during which other processes used the CPUs is not reported (measure.py). A script,
not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from bench_generation_prefix import split_workload  # noqa: E402
from harness import ROOT  # noqa: E402
from rows import generations, text_agreement  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", help="an instructions split JSONL (records with 'prompt')")
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m-ni"))
    ap.add_argument("--chat", action="store_true", help="send each prompt as one user turn (instructions' chat_models)")
    ap.add_argument("--kernels", nargs="+", default=["sdpa", "eager"])
    ap.add_argument("--n", type=int, default=0, help="first N records (0 = all)")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="tiny random float32 model, 9 prompts")
    run = harness.start(ap, argv, "--rounds")
    args, repeats = run.args, run.repeats

    from wobble.backends.base import GenParams
    from wobble.backends.hf_attention import use_attention
    from wobble.models.load import load_model

    model_dir, prompts, dtype = split_workload(args, "bench-attn-")
    model, tok, _ = load_model(model_dir, dtype=dtype)
    backend = harness.hf(model, tok, args.batch_size, output_fp32=True)
    params = GenParams(max_new_tokens=args.max_new_tokens, return_logprobs=True)

    def engine(kernel: str):
        def timed(timing):
            use_attention(model, kernel)
            harness.fresh(backend)
            return timing.measure(lambda: backend.generate(prompts, params))
        return timed

    timings, outs, identical = measure.interleave([(k, engine(k)) for k in args.kernels], repeats, run.max_load)
    how = measure.torch_engine(model.dtype, output_fp32=backend.output_fp32)
    first = args.kernels[0]
    rows = []
    for kernel in args.kernels:
        t, gens = timings[kernel], outs[kernel]
        n_new = sum(len(g.token_logprobs) for g in gens)
        same, dlp = text_agreement(generations(outs[first]), generations(gens))
        rows.append({"engine": f"wobble hf, attention {kernel}", "isa_precision": measure.label(how), **t.row("s"),
                     "repeats_identical": identical[kernel], "prompts_per_s": t.rate(len(prompts), 3),
                     "new_tokens_per_s": t.rate(n_new), **t.ratio(timings[first], "speedup"),
                     f"texts_equal_{first}": same, f"max_abs_dlogprob_vs_{first}": dlp})
    meta = {"prompts": len(prompts), "model_dir": str(model_dir), "dtype": dtype, "threads": args.threads,
            "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size, "rounds": repeats,
            "quick": args.quick, "split": args.split, "chat": args.chat}
    return run.finish(meta, rows, timings.values(), {"torch": how})


if __name__ == "__main__":
    sys.exit(main())
