"""ICL label-word scoring (the icl_bias workload): wobble's hf backend with exact prefix reuse vs the same
backend without it vs a per-item full forward pass in plain transformers (and reuse with the float32 output
layer of ``output_fp32: true``), on the same requests, model and machine, in one run (issue 13, item 4: target >= 10x over the per-item full forward).

    .venv/bin/python benchmarks/bench_icl_scoring.py \\
        --requests results/icl_bias/requests/boolq_answer_qword.json --model-dir resources/models/gemma-270m

``--requests`` is a requests bundle written by rule ``icl_bias_requests`` (its prompts = ``prefixes[prefix_id]
+ query``; label-word requests only); ``--items N`` takes the first N. Every engine scores the union of
the candidates as the next token. Reported per engine: seconds, items/s, prompt tokens/s (tokens of the
full prompts scored, so the engines are comparable), the ratio to the per-item full forward, and the
agreement with a float32 per-item reference on the same items (max |delta log-prob|, argmax agreement).
``--quick`` runs a tiny random model on made-up prompts (seconds; for the test that the script works).
A script, not a test: timings change from machine to machine, only the ratios of one run count.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rows import emit, score_agreement  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]


def load_requests(path: str, n: int | None) -> tuple[list[str], list[str]]:
    bundle = json.loads(Path(path).read_text())
    reqs = [r for r in bundle["requests"] if not r["generate"]][:n]
    prompts = [bundle["prefixes"][r["prefix_id"]] + r["query"] for r in reqs]
    return prompts, sorted({c for r in reqs for c in r["candidates"]})


def quick_workload() -> tuple[list[str], list[str]]:
    demos = "".join(f"Review: item {i} was {'good' if i % 3 else 'bad'}.\nLabel: {i % 2}\n\n" for i in range(16))
    items = [f"Review: test item {j} {'!' * (j % 4)}\nLabel:" for j in range(12)]
    return [demos + q for q in items], ["0", "1"]


def workload(args, dtype: str) -> tuple[list[str], list[str], object, object]:
    """``(prompts, candidates, model, tokenizer)``: the bundle's first ``args.items`` requests with the model in
    ``dtype``, or (``args.quick``) made-up prompts with a tiny random float32 model."""
    if args.quick:
        from wobble.models.tiny import build_tiny

        model, tok = build_tiny("causal", seed=0)
        return (*quick_workload(), model.float().eval(), tok)
    from wobble.models.load import load_model

    model, tok, _ = load_model(args.model_dir, dtype=dtype, device="cpu")
    return (*load_requests(args.requests, args.items), model, tok)


def per_item_reference(model, backend, prompts, candidates) -> list[dict[str, float]]:
    """Plain transformers: one full forward pass per prompt (batch 1), the same prompt tokens as wobble."""
    import torch

    cand = {c: backend.encode_continuation(c)[0] for c in candidates}
    out = []
    with torch.inference_mode():
        for p in prompts:
            ids = torch.tensor([backend.encode_prompt(p)])
            logits = model(input_ids=ids).logits[0, -1].float()
            lp = torch.log_softmax(logits, dim=-1)
            out.append({c: float(lp[t]) for c, t in cand.items()})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", help="an icl_bias requests bundle (results/icl_bias/requests/<pair>.json)")
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m"))
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--dtype", default="auto", help="dtype of the timed engines (auto = bf16 where supported)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--quick", action="store_true", help="tiny random model, made-up prompts (seconds)")
    ap.add_argument("--attention", nargs="*", default=[],
                    help="also the float32-output-layer reuse row with these attention implementations (e.g. wobble)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)

    import torch

    from wobble.backends.hf import HFBackend

    from wobble.models.load import load_model

    prompts, candidates, model, tok = workload(args, args.dtype)
    model32 = model if args.quick else load_model(args.model_dir, dtype="float32", device="cpu")[0]
    mk = lambda m, reuse, fp32_head=False, attention=None: HFBackend(  # noqa: E731
        m, tok, "causal", "bench", batch_size=args.batch_size, progress=False, reuse_prefix=reuse,
        output_fp32=fp32_head, attention=attention)
    n_tokens = sum(len(mk(model, False).encode_prompt(p)) for p in prompts)
    ref = per_item_reference(model32, mk(model32, False), prompts, candidates)

    rows = []
    fp32 = "wobble hf, exact prefix reuse, float32 output layer"
    engines = [("plain transformers, per-item full forward", None, None),
               ("wobble hf, batched, no prefix reuse", False, None), ("wobble hf, exact prefix reuse", True, None),
               (fp32, "fp32", None)] + [(f"{fp32}, attention {k}", "fp32", k) for k in args.attention]
    for name, reuse, attention in engines:
        if reuse == "fp32":  # another copy: the float32 head replaces the model's own (hf_head)
            backend = mk(model if args.quick else load_model(args.model_dir, dtype=args.dtype, device="cpu")[0],
                         True, fp32_head=True, attention=attention)
        t = time.perf_counter()
        if reuse is None:
            got = per_item_reference(model, mk(model, False), prompts, candidates)
        elif reuse == "fp32":
            got = backend.next_token_logprobs(prompts, candidates)
        else:
            got = mk(model, reuse).next_token_logprobs(prompts, candidates)
        dt = time.perf_counter() - t
        diff, same = score_agreement(ref, got, candidates)
        rows.append({"engine": name, "seconds": round(dt, 3), "items_per_s": round(len(prompts) / dt, 3),
                     "prompt_tokens_per_s": round(n_tokens / dt, 1), "max_abs_dlogprob_vs_fp32": diff,
                     "argmax_agree_vs_fp32": f"{same}/{len(prompts)}"})
    base = rows[0]["seconds"]
    for r in rows:
        r["speedup_vs_per_item"] = round(base / r["seconds"], 2)
    meta = {"items": len(prompts), "prompt_tokens": n_tokens, "dtype": str(model.dtype),
            "threads": torch.get_num_threads(), "quick": args.quick}
    emit(meta, rows, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
