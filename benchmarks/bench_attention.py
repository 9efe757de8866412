"""Greedy generation on a study's prompts with the model's attention kernel switched: PyTorch's fused SDPA
(transformers' default on CPU) vs the eager matmul-softmax path vs wobble's kernels (backends/hf_attention.py),
in one run (issue 13 item 4: bench_prefill found the fused CPU kernel taking 27 % of a gemma prefill for 9 % of
its FLOPs; this asks whether that holds on a study's real generation workload before the default changes).

    .venv/bin/python benchmarks/bench_attention.py \\
        --split results/instructions/splits/english/original/w_exam/seed1.jsonl \\
        --model-dir resources/models/gemma-270m-ni --max-new-tokens 32 --threads 1 --kernels sdpa eager wobble
    .venv/bin/python benchmarks/bench_attention.py --quick --json out.json    # tiny random model, seconds

The engine is the study's: wobble's hf backend, batches of ``--batch-size``, the float32 output layer at scored
positions (``output_fp32: true``), in the model's study dtype; the same prompts in the same order for every
kernel, ``--rounds`` times alternating (so drift of the machine hits both). Rows: seconds (median over rounds),
prompts/s, new tokens/s, the ratio against the first kernel, and agreement with it (identical greedy texts, max
|Δ log-prob| of the tokens of identical texts). A script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_generation_prefix import split_workload  # noqa: E402
from rows import emit, generations, text_agreement  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", help="an instructions split JSONL (records with 'prompt')")
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m-ni"))
    ap.add_argument("--chat", action="store_true", help="send each prompt as one user turn (instructions' chat_models)")
    ap.add_argument("--kernels", nargs="+", default=["sdpa", "eager"])
    ap.add_argument("--n", type=int, default=0, help="first N records (0 = all)")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="tiny random float32 model, 9 prompts")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)

    import torch

    from wobble.backends.base import GenParams
    from wobble.backends.hf import HFBackend
    from wobble.backends.hf_attention import use_attention
    from wobble.models.load import load_model

    torch.set_num_threads(args.threads)
    model_dir, prompts, dtype = split_workload(args, "bench-attn-")
    if args.quick:
        args.rounds = 1
    model, tok, _ = load_model(model_dir, dtype=dtype)
    backend = HFBackend(model, tok, "causal", "bench", batch_size=args.batch_size, progress=False, output_fp32=True)
    params = GenParams(max_new_tokens=args.max_new_tokens, return_logprobs=True)

    times: dict[str, list[float]] = {k: [] for k in args.kernels}
    outs = {}
    for _ in range(args.rounds):
        for kernel in args.kernels:
            use_attention(model, kernel)
            t0 = time.perf_counter()
            outs[kernel] = backend.generate(prompts, params)
            times[kernel].append(time.perf_counter() - t0)

    first = args.kernels[0]
    rows = []
    for kernel in args.kernels:
        secs = statistics.median(times[kernel])
        gens = outs[kernel]
        n_new = sum(len(g.token_logprobs) for g in gens)
        same, dlp = text_agreement(generations(outs[first]), generations(gens))
        rows.append({"engine": f"wobble hf, attention {kernel}", "s": round(secs, 3),
                     "s_each_round": [round(t, 2) for t in times[kernel]],
                     "prompts_per_s": round(len(prompts) / secs, 3), "new_tokens_per_s": round(n_new / secs, 2),
                     "speedup": round(statistics.median(times[first]) / secs, 3),
                     f"texts_equal_{first}": same, f"max_abs_dlogprob_vs_{first}": dlp})
    meta = {"prompts": len(prompts), "model_dir": str(model_dir), "dtype": dtype, "threads": args.threads,
            "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size, "rounds": args.rounds,
            "quick": args.quick, "split": args.split, "chat": args.chat}
    emit(meta, rows, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
