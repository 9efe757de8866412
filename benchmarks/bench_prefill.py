"""Prefill throughput of a model in wobble's dtype as a share of the bf16 matmul throughput measured, in the same
run, at the model's own layer shapes (target >= 70 %).

    .venv/bin/python benchmarks/bench_prefill.py --model-dir resources/models/gemma-270m --tokens 512 --batch 4
    .venv/bin/python benchmarks/bench_prefill.py --quick --json out.json     # tiny random model, seconds

The reference: for every distinct (in, out) shape of the model's linear layers (the output layer excluded: a
causal prefill keeps the logits of the last position only), ``torch.nn.functional.linear`` on a
(batch x tokens, in) input, as many times as layers have that shape, timed as one call (median of ``--reps``) —
the best a prefill could do if it were nothing but those matmuls. The prefill: one forward pass over
(batch, tokens) random ids with ``logits_to_keep=1`` (the way the hf backend runs prompts), median of
``--reps``. Both run once untimed first, then round by round (so a drift of the machine touches both); a round
during which other processes used the CPUs makes every number ``LOADED`` (measure.py: ``--reps`` is its
``--repeats``, ``--max-foreign-load`` its limit); ``share_of_matmul_runs`` is each round's share. Useful work counted: 2·in·out per token per linear layer, plus the causal attention products
(QKᵀ and AV over the lower triangle). Reported: both throughputs in GFLOP/s, the share, and the share
counting linear layers alone; with ``--profile N`` also the N aten ops that took the most self CPU time in one
profiled prefill (torch.profiler), to show where the time outside the matmuls goes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from harness import ROOT  # noqa: E402


def _profile(fn, top: int) -> list[dict]:
    """Where one prefill's time goes: the ``top`` aten ops by self CPU time, each with its share of the total."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    ops = [(e.key, e.self_cpu_time_total / 1e6, e.count) for e in prof.key_averages()]
    total = sum(t for _, t, _ in ops) or 1.0
    ops.sort(key=lambda o: -o[1])
    return [{"op": k, "self_s": round(t, 4), "calls": c, "share": round(t / total, 4)} for k, t, c in ops[:top]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m"))
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--attn", default=None, help="attention implementation to switch to (sdpa, eager, wobble)")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also profile one prefill (torch.profiler) and report its N costliest ops by self CPU time")
    ap.add_argument("--quick", action="store_true", help="tiny random float32 model")
    run = harness.start(ap, argv, "--reps", json_help="also write the result here")
    args = run.args

    import torch

    if args.quick:
        from wobble.models.tiny import build_tiny

        model, _ = build_tiny("causal", seed=0)
        model = model.float().eval()
        args.tokens, args.batch = 64, 2
    else:
        from wobble.models.load import load_model

        model, _, _ = load_model(args.model_dir, dtype=args.dtype, device="cpu")
    if args.attn:
        from wobble.backends.hf_attention import use_attention

        use_attention(model, args.attn)
    dtype = next(model.parameters()).dtype
    cfg = getattr(model.config, "text_config", None) or model.config
    head = model.get_output_embeddings()
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m is not head]
    shapes = Counter((m.in_features, m.out_features) for m in linears)
    n = args.batch * args.tokens

    heads = cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    pairs = args.tokens * (args.tokens + 1) // 2  # causal (query, key) pairs per sequence
    attn_flops = cfg.num_hidden_layers * args.batch * 2 * 2 * pairs * heads * head_dim
    ids = torch.randint(0, cfg.vocab_size, (args.batch, args.tokens))
    linear_flops = sum(count * 2 * i * o * n for (i, o), count in shapes.items())
    operands = [(torch.randn(n, i, dtype=dtype), torch.randn(o, i, dtype=dtype), count) for (i, o), count in shapes.items()]
    calls = {"matmuls": lambda: [torch.nn.functional.linear(x, w) for x, w, count in operands for _ in range(count)],
             "prefill": lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False,
                                      logits_to_keep=1)}
    with torch.inference_mode():
        for fn in calls.values():
            fn()  # warm-up, not timed
        timings, _, _ = measure.interleave([(key, lambda t, fn=fn: t.measure(fn)) for key, fn in calls.items()],
                                           run.repeats, run.max_load, same=lambda a, b: True)
    matmuls, prefill = timings["matmuls"], timings["prefill"]
    loaded = matmuls.loaded or prefill.loaded

    def number(x: float, digits: int = 3):
        return measure.LOADED if loaded else round(x, digits)

    ref_gflops = linear_flops / matmuls.median / 1e9
    prefill_gflops = (linear_flops + attn_flops) / prefill.median / 1e9
    share = (linear_flops + attn_flops) / linear_flops  # per round: (useful work / prefill s) / (linear / matmul s)
    how = measure.torch_engine(dtype)
    row = {"model": str(args.model_dir) if not args.quick else "tiny", "dtype": str(dtype), "threads": args.threads,
           "attention": model.config._attn_implementation, "isa_precision": measure.label(how),
           "batch": args.batch, "tokens": args.tokens, "layer_shapes": {f"{i}x{o}": c for (i, o), c in shapes.items()},
           **matmuls.row("matmul_s"), "matmul_gflops": number(ref_gflops), **prefill.row("prefill_s"),
           "prefill_tokens_per_s": number(n / prefill.median, 1), "prefill_gflops": number(prefill_gflops),
           "share_of_matmul": number(prefill_gflops / ref_gflops),
           "share_of_matmul_runs": [number(share * m / p) for m, p in zip(matmuls.runs, prefill.runs)],
           "share_linear_only": number(linear_flops / prefill.median / 1e9 / ref_gflops),
           "attention_flops_share": round(attn_flops / (linear_flops + attn_flops), 3),
           "foreign_load_max_cores": max(matmuls.row()["foreign_load_max_cores"] or 0.0,
                                         prefill.row()["foreign_load_max_cores"] or 0.0),  # of both timings
           **run.facts_of([matmuls, prefill], {"torch": how})}
    if args.profile:
        row["profile"] = _profile(calls["prefill"], args.profile)
    print(json.dumps(row))
    if args.json:
        Path(args.json).write_text(json.dumps(row, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
