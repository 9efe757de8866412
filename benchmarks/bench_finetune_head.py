"""The instructions study's LoRA finetune step with the output layer over every position vs only where a target is
predicted (``wobble.training.data.target_logits``), on the same batches in one run.

    .venv/bin/python benchmarks/bench_finetune_head.py \\
        --pairs results/instructions/splits/train_pairs.jsonl --model-dir resources/models/gemma-270m --batches 4
    .venv/bin/python benchmarks/bench_finetune_head.py --quick --json out.json   # tiny random model, seconds

Each batch (``--batch-size`` consecutive pairs, tokenized and padded as the finetune does) runs forward +
backward under bf16 autocast where the CPU has bf16 (as ``bf16: auto``), once each way, the order alternating
by batch; dropout is off so both ways see the same computation. Rows: seconds, training tokens/s and target
tokens/s per way and the speed-up; agreement: the largest |Δ loss| and |Δ gradient| over the LoRA parameters
(0 = bit-identical). A script, not a test.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rows import emit  # noqa: E402

QUICK_PAIRS = [(f"Definition: copy the input. Input: abc{i} {'filler ' * (3 * i)}Output:", f"abc{i}") for i in range(8)]


def workload(args):
    """(model directory, (source, target) pairs) from the arguments; ``--quick``: a tiny random model."""
    from wobble.io import read_jsonl

    if args.quick:
        from wobble.models.materialize import materialize

        tmp = Path(tempfile.mkdtemp(prefix="bench_ft_head_"))
        atexit.register(shutil.rmtree, tmp, True)
        materialize("tiny", {"source": "tiny", "kind": "causal", "seed": 0}, tmp / "model")
        args.batch_size, args.batches = 4, 2
        return tmp / "model", QUICK_PAIRS
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
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)

    import torch

    from wobble.models.load import load_model
    from wobble.training.data import IGNORE_INDEX, PadCollator, target_logits, tokenize_pairs
    from wobble.training.finetune import FinetuneConfig, _wrap_lora, resolve_bf16

    torch.set_num_threads(args.threads)
    model_dir, pairs = workload(args)
    model, tok, _ = load_model(model_dir)
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

    def step(batch) -> tuple[float, float, list]:
        n_items = batch["labels"][:, 1:].ne(IGNORE_INDEX).sum()
        model.zero_grad()
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(**batch, num_items_in_batch=n_items).loss
        loss.backward()
        return time.perf_counter() - t0, float(loss.detach()), [p.grad.clone() for p in trained]

    seconds = {"all positions": 0.0, "target positions": 0.0}
    tokens = targets = 0
    d_loss = d_grad = 0.0
    for i in range(0, len(examples), args.batch_size):
        batch = collate(examples[i:i + args.batch_size])
        kept = {**batch, **target_logits(batch["labels"])}
        if i == 0:
            step(batch)  # warm-up (allocator, oneDNN kernels), not timed
        ways = [("all positions", batch), ("target positions", kept)]
        results = {name: step(b) for name, b in (ways if (i // args.batch_size) % 2 == 0 else ways[::-1])}
        for name, (s, _, _) in results.items():
            seconds[name] += s
        (_, la, ga), (_, lb, gb) = results["all positions"], results["target positions"]
        d_loss = max(d_loss, abs(la - lb))
        d_grad = max(d_grad, max(float((a - b).abs().max()) for a, b in zip(ga, gb)))
        tokens += int(batch["attention_mask"].sum())
        targets += int(batch["labels"][:, 1:].ne(IGNORE_INDEX).sum())

    base = seconds["all positions"]
    rows = [{"output_layer": name, "seconds": round(s, 3), "train_tokens_per_s": round(tokens / s, 1),
             "target_tokens_per_s": round(targets / s, 2), "speedup": round(base / s, 2)}
            for name, s in seconds.items()]
    meta = {"model_dir": str(model_dir), "batches": len(range(0, len(examples), args.batch_size)),
            "batch_size": args.batch_size, "threads": args.threads, "bf16_autocast": bf16, "tokens": tokens,
            "target_tokens": targets, "max_abs_loss_diff": d_loss, "max_abs_grad_diff": d_grad}
    emit(meta, rows, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
