"""A finetune job with N ranks (wobble.training.launch): how many ranks a job's resources ask for, how they split
the batch, and two CPU ranks (torchrun, gloo) end to end through the rule's script against one process.

Equality, and its tolerance. With one config (batch 4, no accumulation), one process at batch 4 and two ranks at
batch 2 each see the same global batches (the same seeded order, split between the ranks) and take the same
optimizer steps; what differs is float32
arithmetic order: each rank pads its two examples to their own longest (other matrix shapes, other blocking in the
matmuls), and DDP sums the two ranks' gradients where one process sums over four rows. Those are rounding
differences of about 1e-7 relative per operation; over 4 Adam steps at learning rate 1e-3 they leave the adapters
within ``ATOL`` = 1e-6 of each other (measured: 1.5e-8), while training moves every LoRA B matrix (zero at the
start) by about 4e-3, 4,000 times the tolerance, and the same run on the pairs in reverse order ends 4e-3 away.
The base model computes in float32 (its spec's dtype) and LoRA dropout is off: bfloat16 rounding, or dropout
masks drawn on each rank's own RNG stream, would differ by more than summation order does.
"""

from __future__ import annotations

import json
import re
import runpy
import types
from pathlib import Path

import pytest

from wobble.errors import ConfigError
from wobble.training.launch import job_ranks

ROOT = Path(__file__).resolve().parents[2]
DIST_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE", "DS_ACCELERATOR")
ATOL = 1e-6
# 16 pairs of different lengths (batches are padded differently at batch 4 and 2); 4 steps of 4 = one epoch
PAIRS = [(f"Definition: copy the input. Input: {'xyz' * (i % 5)}{i} Output:", f"{'ab' * (i % 3)}{i}")
         for i in range(16)]
CFG = dict(method="lora", lora_dropout=0.0, learning_rate=1e-3, per_device_batch_size=4, gradient_accumulation_steps=1,
           max_steps=4, save_steps=100, logging_steps=1, bf16=False, seed=3)


# ---------------------------------------------------------------------------------------------- job_ranks


@pytest.fixture
def cuda(monkeypatch):
    """Pretend torch sees ``n`` GPUs (0: none)."""
    import torch

    def see(n: int) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)

    return see


def test_one_rank_unless_the_job_asks_for_more(cuda):
    cuda(0)
    assert job_ranks({}) == job_ranks({"gpu": 0}) == job_ranks({"gpu": 1}) == 1
    assert job_ranks({"ranks": 2, "gpu": 1}) == 2  # CPU ranks
    assert job_ranks(types.SimpleNamespace(ranks=3)) == 3  # snakemake.resources: attributes
    cuda(4)
    assert job_ranks({"gpu": 4}) == 4 and job_ranks({"gpu": 1}) == 1 and job_ranks({"gpu": 4, "ranks": 2}) == 2


def test_impossible_rank_counts_are_one_line_errors(cuda):
    cuda(0)
    with pytest.raises(ConfigError, match="asks for 4 GPUs but torch sees none"):
        job_ranks({"gpu": 4})
    with pytest.raises(ConfigError, match="resources.ranks.*whole number"):
        job_ranks({"ranks": "two"})
    cuda(2)
    with pytest.raises(ConfigError, match="resources.gpu.*4 ranks need 4 GPUs, torch sees 2"):
        job_ranks({"gpu": 4})
    with pytest.raises(ConfigError, match="resources.ranks.*3 ranks need 3 GPUs"):
        job_ranks({"ranks": 3})


def test_ranks_split_the_batch_of_one_step_accumulation_first():
    from wobble.training.config import FinetuneConfig

    cfg = FinetuneConfig(per_device_batch_size=4, gradient_accumulation_steps=8)
    assert [cfg.per_rank(n) for n in (1, 2, 4, 8, 16, 32)] == [(4, 8), (4, 4), (4, 2), (4, 1), (2, 1), (1, 1)]
    assert FinetuneConfig(per_device_batch_size=6, gradient_accumulation_steps=2).per_rank(4) == (3, 1)
    with pytest.raises(ConfigError, match="batch of 4 x 8 accumulation steps does not split evenly among 3 ranks"):
        cfg.per_rank(3)


def test_a_checkpoint_of_another_rank_count_is_not_resumed():
    from wobble.models.tiny import build_tiny
    from wobble.training.checkpoints import run_fingerprint
    from wobble.training.config import FinetuneConfig

    model, _ = build_tiny("causal")
    one, two = (run_fingerprint(model, "causal", PAIRS, FinetuneConfig(), n) for n in (1, 2))
    assert one != two and {k for k in one if one[k] != two[k]} == {"world_size"}


# ---------------------------------------------------------------------------------------------- end to end


class NL(list):  # snakemake's Namedlist: a list with attributes
    def __init__(self, items=(), **named):
        super().__init__(list(items) + list(named.values()))
        self.__dict__.update(named)


def run_script(base_dir: Path, out: Path, log: Path, resources: dict) -> None:
    """scripts/finetune.py as the rule runs it, with a stand-in ``snakemake`` object."""
    sm = types.SimpleNamespace(
        input=NL(model=str(base_dir), data="train.jsonl"), output=NL([str(out)]), log=NL([str(log)]),
        params=NL(cfg=CFG, key=out.name, spec={"dtype": "float32"}), wildcards=NL(),
        resources=NL(**resources), threads=2, rule="finetune")
    runpy.run_path(str(ROOT / "scripts" / "finetune.py"), init_globals={"snakemake": sm})


def tensors(out: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(out / "adapter_model.safetensors"))


@pytest.fixture
def tiny_job(tmp_path, monkeypatch):
    from wobble.io import write_jsonl
    from wobble.models.materialize import materialize

    monkeypatch.chdir(tmp_path)
    for var in DIST_VARS:  # a launcher's variables would make the one-process run a rank of another world
        monkeypatch.delenv(var, raising=False)
    base_dir = Path("resources/models/tiny-causal")
    materialize("tiny-causal", {"source": "tiny", "kind": "causal", "seed": 0}, base_dir)
    write_jsonl("train.jsonl", [{"source": s, "target": t} for s, t in PAIRS])
    return base_dir


def test_two_gloo_ranks_train_on_their_own_shards_like_one_process(tiny_job):
    import torch

    one, two = Path("out/one"), Path("out/two")
    run_script(tiny_job, one, Path("one.log"), resources={"gpu": 1})  # the default: one process
    run_script(tiny_job, two, Path("two.log"), resources={"gpu": 1, "ranks": 2})

    log = Path("two.log").read_text()
    assert "torch.distributed.run --standalone --nproc-per-node=2" in log
    shards = {int(r): [int(i) for i in idx.split()]
              for r, idx in re.findall(r"rank (\d) of 2 read 8 examples: ([\d ]+)\n", log)}
    assert sorted(shards) == [0, 1], log[-3000:]
    assert not set(shards[0]) & set(shards[1]) and sorted(shards[0] + shards[1]) == list(range(16))
    assert "rank 0 of 1" not in Path("one.log").read_text()  # one process logs no shards

    s1, s2 = (json.loads((d / "finetune-summary.json").read_text()) for d in (one, two))
    assert (s2["processes"], s2["examples_read_per_rank"]) == (2, [8, 8]) and "processes" not in s1
    assert s2["rank_batch"] == {"per_device_batch_size": 2, "gradient_accumulation_steps": 1}
    assert s1["config"] == s2["config"]
    assert s1["effective_batch_size"] == s2["effective_batch_size"] == 4 and s1["steps"] == s2["steps"] == 4
    assert [h["loss"] for h in s2["train_loss"]] == pytest.approx([h["loss"] for h in s1["train_loss"]], rel=1e-5)

    # one adapter, written once (rank 0), with the manifest and no checkpoints left
    assert sorted(p.name for p in two.iterdir()) == sorted(p.name for p in one.iterdir())
    manifest = json.loads((two / "wobble-model.json").read_text())
    assert manifest["weights_sha256"] == s2["weights_sha256"] and not Path(f"{two}.checkpoints").exists()

    w1, w2 = tensors(one), tensors(two)
    assert w1.keys() == w2.keys()
    worst = max((w1[k] - w2[k]).abs().max().item() for k in w1)
    assert worst <= ATOL, f"adapters differ by {worst:.3g} (tolerance {ATOL})"
    moved = min(w1[k].abs().max().item() for k in w1 if "lora_B" in k)  # B starts at zero
    assert moved > 1000 * ATOL
    assert all(torch.isfinite(t).all() for t in w2.values())
