"""The instructions study's LoRA finetune step with the output layer over every position vs only where a target is
predicted (``wobble.training.data.target_logits``), on the same batches in one run.

    .venv/bin/python benchmarks/bench_finetune_head.py \\
        --pairs results/instructions/splits/train_pairs.jsonl --model-dir resources/models/gemma-270m --batches 4
    .venv/bin/python benchmarks/bench_finetune_head.py --quick --json out.json   # tiny random model, seconds

Each batch (``--batch-size`` consecutive pairs, tokenized and padded as the finetune does) runs forward +
backward under bf16 autocast where the CPU has bf16 (as ``bf16: auto``); dropout is off so both ways see the
same computation. A run of one way is every batch's step; after an untimed warm-up step of each way, the ways
run ``--repeats`` times, round by round, the order alternating by round. Rows: the median seconds with min and
max, training tokens/s and target tokens/s per way and the speed-up (ratio of medians, with the range the runs
allow), the instruction set and precision torch computes with, and ``repeats_identical`` (the runs whose losses
and gradients equal the way's first run's, bit for bit); agreement, from the first runs: the largest |Δ loss| and
|Δ gradient| over the LoRA parameters (0 = bit-identical). A timing during which other processes used the CPUs
is not reported (measure.py). A script, not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from harness import ROOT  # noqa: E402

QUICK_PAIRS = [(f"Definition: copy the input. Input: abc{i} {'filler ' * (3 * i)}Output:", f"abc{i}") for i in range(8)]


def workload(args):
    """(model directory, (source, target) pairs) from the arguments; ``--quick``: a tiny random model."""
    from wobble.io import read_jsonl

    if args.quick:
        args.batch_size, args.batches = 4, 2
        return harness.tiny_model("bench_ft_head_"), QUICK_PAIRS
    return Path(args.model_dir), [(r["source"], r["target"]) for r in read_jsonl(args.pairs)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default=str(ROOT / "results" / "instructions" / "splits" / "train_pairs.jsonl"))
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "gemma-270m"))
    ap.add_argument("--batch-size", type=int, default=4, help="config.yaml's instructions.finetune")
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--max-source-length", type=int, default=384)
    ap.add_argument("--max-target-length", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="tiny random model, 2 batches")
    run = harness.start(ap, argv)
    args = run.args

    import torch

    from wobble.models.load import load_model
    from wobble.training.data import IGNORE_INDEX, PadCollator, target_logits, tokenize_pairs
    from wobble.training.finetune import FinetuneConfig, _wrap_lora, resolve_bf16

    model_dir, pairs = workload(args)
    model, tok, _ = load_model(model_dir)
    weights = model.dtype
    torch.manual_seed(0)
    model = _wrap_lora(model, "causal", FinetuneConfig())
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    bf16 = resolve_bf16("auto") and not args.quick
    examples = tokenize_pairs(tok, pairs[: args.batch_size * args.batches], "causal",
                              args.max_source_length, args.max_target_length)
    collate = PadCollator.for_tokenizer(tok)
    trained = [p for p in model.parameters() if p.requires_grad]
    batches = [collate(examples[i:i + args.batch_size]) for i in range(0, len(examples), args.batch_size)]
    ways = {"all positions": batches, "target positions": [{**b, **target_logits(b["labels"])} for b in batches]}

    def step(batch) -> tuple[float, list]:
        n_items = batch["labels"][:, 1:].ne(IGNORE_INDEX).sum()
        model.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(**batch, num_items_in_batch=n_items).loss
        loss.backward()
        return float(loss.detach()), [p.grad.clone() for p in trained]

    for way in ways.values():
        step(way[0])  # warm-up (allocator, oneDNN kernels), not timed

    def same(a, b) -> bool:
        return all(la == lb and all(torch.equal(x, y) for x, y in zip(ga, gb)) for (la, ga), (lb, gb) in zip(a, b))

    timings, results, identical = measure.interleave(
        [(name, lambda timing, bs=bs: timing.measure(lambda: [step(b) for b in bs])) for name, bs in ways.items()],
        run.repeats, run.max_load, same=same, alternate=True)
    d_loss = max(abs(la - lb) for (la, _), (lb, _) in zip(results["all positions"], results["target positions"]))
    d_grad = max(float((a - b).abs().max()) for (_, ga), (_, gb) in zip(results["all positions"],
                                                                         results["target positions"])
                 for a, b in zip(ga, gb))
    tokens = sum(int(b["attention_mask"].sum()) for b in batches)
    targets = sum(int(b["labels"][:, 1:].ne(IGNORE_INDEX).sum()) for b in batches)

    how = {**measure.torch_engine(torch.bfloat16 if bf16 else weights),
           "dtype": f"{str(weights).replace('torch.', '')} weights" + (", bfloat16 autocast" if bf16 else "")}
    base = timings["all positions"]
    rows = [{"output_layer": name, "isa_precision": measure.label(how), **t.row("seconds"),
             "repeats_identical": identical[name], "train_tokens_per_s": t.rate(tokens, 1),
             "target_tokens_per_s": t.rate(targets), **t.ratio(base, "speedup")} for name, t in timings.items()]
    meta = {"model_dir": str(model_dir), "batches": len(batches), "batch_size": args.batch_size,
            "threads": args.threads, "bf16_autocast": bf16, "tokens": tokens, "target_tokens": targets,
            "max_abs_loss_diff": d_loss, "max_abs_grad_diff": d_grad}
    return run.finish(meta, rows, timings.values(), {"torch": how})


if __name__ == "__main__":
    sys.exit(main())
