"""ICL label-word scoring (the icl_bias workload): wobble's hf backend with exact prefix reuse vs the same
backend without it vs a per-item forward pass in plain transformers (and reuse with the float32 output layer of
``output_fp32: true``), on the same requests, model and machine, in one run (target: >= 10x over the per-item
forward).

    .venv/bin/python benchmarks/bench_icl_scoring.py \\
        --requests results/icl_bias/requests/boolq_answer_qword.json --model-dir resources/models/gemma-270m

``--requests`` is a requests bundle written by rule ``icl_bias_requests`` (its prompts = ``prefixes[prefix_id]
+ query``; label-word requests only); ``--items N`` takes the first N. Every engine scores the union of
the candidates as the next token. The baseline is what a competent transformers user writes: one forward
pass per prompt with ``logits_to_keep=1``, so the output layer runs at the one position read (its log-probs
equal a full forward's: ``meta.per_item_last_position_vs_full_forward``); ``--all-positions-baseline`` adds
the forward that computes the output layer at every position, for comparison only.

Reported per engine: the median seconds of ``--repeats`` runs (engines interleaved round by round) with
their min and max, items/s, prompt tokens/s (tokens of the full prompts scored, so the engines are
comparable), the ratio to the per-item forward with its range, the instruction set and precision torch
computes with, and the agreement with a float32 per-item reference on the same items (max |delta log-prob|,
argmax agreement). A timing during which other processes used the CPUs is not reported (measure.py).
``--quick`` runs a tiny random model on made-up prompts (seconds; for the test that the script works).
A script, not a test: timings change from machine to machine, only the ratios of one run count.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import harness  # benchmarks/ is the script's folder
import measure
from harness import ROOT
from rows import score_agreement


def load_requests(path: str, n: int | None) -> tuple[list[str], list[str]]:
    bundle = json.loads(Path(path).read_text())
    reqs = [r for r in bundle["requests"] if not r["generate"]][:n]
    prompts = [bundle["prefixes"][r["prefix_id"]] + r["query"] for r in reqs]
    return prompts, sorted({c for r in reqs for c in r["candidates"]})


def quick_workload() -> tuple[list[str], list[str]]:
    demos = "".join(f"Review: item {i} was {'good' if i % 3 else 'bad'}.\nLabel: {i % 2}\n\n" for i in range(16))
    items = [f"Review: test item {j} {'!' * (j % 4)}\nLabel:" for j in range(12)]
    return [demos + q for q in items], ["0", "1"]


def add_workload_arguments(ap: argparse.ArgumentParser, items: int, dtype: str, dtype_help: str | None = None):
    """The options ``workload`` reads: the requests bundle, the model, how many items, the model's dtype."""
    ap.add_argument("--requests", help="an icl_bias requests bundle (results/icl_bias/requests/<pair>.json)")
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m"))
    ap.add_argument("--items", type=int, default=items)
    ap.add_argument("--dtype", default=dtype, help=dtype_help)


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


def per_item_reference(model, backend, prompts, candidates, all_positions: bool = False) -> list[dict[str, float]]:
    """Plain transformers: one forward pass per prompt (batch 1), the same prompt tokens as wobble, with the
    output layer at the last position only (``logits_to_keep=1``: the only one read), or with
    ``all_positions`` at every position (the output layer's work grows with the prompt: gemma-3's 262k words
    x ~1,300 positions, for one row read)."""
    import torch

    cand = {c: backend.encode_continuation(c)[0] for c in candidates}
    keep = {} if all_positions else {"logits_to_keep": 1}
    out = []
    with torch.inference_mode():
        for p in prompts:
            ids = torch.tensor([backend.encode_prompt(p)])
            logits = model(input_ids=ids, **keep).logits[0, -1].float()
            lp = torch.log_softmax(logits, dim=-1)
            out.append({c: float(lp[t]) for c, t in cand.items()})
    return out


PER_ITEM = "plain transformers, per-item forward, last position's logits only"
PER_ITEM_ALL = "plain transformers, per-item forward, logits at every position (not a fair baseline)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_workload_arguments(ap, 200, "auto", "dtype of the timed engines (auto = bf16 where supported)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--quick", action="store_true", help="tiny random model, made-up prompts (seconds)")
    ap.add_argument("--attention", nargs="*", default=[],
                    help="also the float32-output-layer reuse row with these attention implementations (e.g. wobble)")
    ap.add_argument("--all-positions-baseline", action="store_true",
                    help="also the per-item forward with the output layer at every position (the baseline before "
                         "logits_to_keep; slower for no gain, kept to show the difference)")
    ap.add_argument("--check-items", type=int, default=4,
                    help="items on which the per-item forward's last-position logits are compared with a full "
                         "forward's (max |delta log-prob| in the JSON's meta)")
    run = harness.start(ap, argv)
    args, repeats, max_load = run.args, run.repeats, run.max_load

    import torch

    from wobble.models.load import load_model

    prompts, candidates, model, tok = workload(args, args.dtype)
    model32 = model if args.quick else load_model(args.model_dir, dtype="float32", device="cpu")[0]

    def mk(m, reuse, fp32_head=False, attention=None):
        return harness.hf(m, tok, args.batch_size, reuse_prefix=reuse, output_fp32=fp32_head, attention=attention)

    plain = mk(model, False)
    n_tokens = sum(len(plain.encode_prompt(p)) for p in prompts)
    ref = per_item_reference(model32, mk(model32, False), prompts, candidates)
    check = prompts[:args.check_items]
    last_vs_all, _ = score_agreement(per_item_reference(model, plain, check, candidates, all_positions=True),
                                     per_item_reference(model, plain, check, candidates), candidates)

    fresh = harness.fresh
    torch_dtype = measure.torch_engine(model.dtype)
    fp32 = "wobble hf, exact prefix reuse, float32 output layer"
    engines = [(PER_ITEM, lambda: per_item_reference(model, plain, prompts, candidates), torch_dtype)]
    if args.all_positions_baseline:
        engines.append((PER_ITEM_ALL, lambda: per_item_reference(model, plain, prompts, candidates, True),
                        torch_dtype))
    reuse = mk(model, True)
    engines += [("wobble hf, batched, no prefix reuse", lambda: plain.next_token_logprobs(prompts, candidates),
                 torch_dtype),
                ("wobble hf, exact prefix reuse", lambda: fresh(reuse).next_token_logprobs(prompts, candidates),
                 torch_dtype)]
    for attention in [None, *args.attention]:  # a copy each: the float32 head and the attention change the model
        copy = (workload(args, args.dtype)[2] if args.quick
                else load_model(args.model_dir, dtype=args.dtype, device="cpu")[0])
        backend = mk(copy, True, fp32_head=True, attention=attention)
        engines.append((fp32 + (f", attention {attention}" if attention else ""),
                        lambda b=backend: fresh(b).next_token_logprobs(prompts, candidates),
                        measure.torch_engine(model.dtype, output_fp32=True)))

    timings = {name: measure.Timing(max_load) for name, _, _ in engines}
    outputs = {}
    for _ in range(repeats):  # engines interleaved: a drift of the machine touches every engine alike
        for name, call, _ in engines:
            outputs[name] = timings[name].measure(call)

    rows = []
    base = timings[PER_ITEM]
    for name, _, engine in engines:
        t = timings[name]
        diff, same = score_agreement(ref, outputs[name], candidates)
        rows.append({"engine": name, "isa_precision": measure.label(engine), **t.row("seconds"),
                     "items_per_s": t.rate(len(prompts), 3), "prompt_tokens_per_s": t.rate(n_tokens, 1),
                     **t.ratio(base, "speedup_vs_per_item"), "max_abs_dlogprob_vs_fp32": diff,
                     "argmax_agree_vs_fp32": f"{same}/{len(prompts)}"})
        if name == PER_ITEM_ALL:  # the same forward, the output layer at every position: the same log-probs
            rows[-1]["max_abs_dlogprob_vs_last_position_only"] = score_agreement(outputs[PER_ITEM], outputs[name],
                                                                                 candidates)[0]
    meta = {"items": len(prompts), "prompt_tokens": n_tokens, "dtype": str(model.dtype),
            "threads": torch.get_num_threads(), "quick": args.quick, "speedup_base": PER_ITEM,
            "per_item_last_position_vs_full_forward": {"items": len(check), "max_abs_dlogprob": last_vs_all}}
    return run.finish(meta, rows, timings.values(), {"torch": torch_dtype})


if __name__ == "__main__":
    sys.exit(main())
