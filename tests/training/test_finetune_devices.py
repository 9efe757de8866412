"""Where a finetune rank loads and trains: its own GPU (``cuda:LOCAL_RANK``, made torch's current device) before the
model loads, the Trainer's arguments (DeepSpeed's config) built before ``from_pretrained`` so ZeRO-3 partitions at
load, and a full finetune loaded in float32 (no second, upcast copy). The CUDA layer is faked here (no GPU needed);
the DeepSpeed ZeRO-3 runs are real, on CPU processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from wobble.errors import WobbleError
from wobble.training.config import FinetuneConfig

ROOT = Path(__file__).resolve().parents[2]
DIST_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE", "DS_ACCELERATOR")


@pytest.fixture
def gpus(monkeypatch):
    """Pretend torch sees ``n`` GPUs; returns the list ``torch.cuda.set_device`` calls are recorded in."""
    import torch

    calls: list[int] = []

    def see(n: int) -> list[int]:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.setattr(torch.cuda, "set_device", lambda d: calls.append(int(d)))
        return calls

    for var in DIST_VARS:
        monkeypatch.delenv(var, raising=False)
    return see


def test_each_rank_takes_its_own_gpu(gpus, monkeypatch):
    from wobble.training.distributed import rank_device

    calls = gpus(2)
    devices = []
    for rank in ("0", "1"):
        monkeypatch.setenv("LOCAL_RANK", rank)
        devices.append(rank_device())
    assert devices == ["cuda:0", "cuda:1"] and calls == [0, 1]
    monkeypatch.setenv("LOCAL_RANK", "2")
    with pytest.raises(WobbleError, match="rank 2 on this node has no GPU of its own: torch sees 2"):
        rank_device()
    calls.clear()
    gpus(0)
    assert rank_device() == "cpu" and calls == []


@pytest.mark.parametrize("method,dtype", [("full", "float32"), ("lora", "bfloat16")])
def test_two_ranks_set_their_device_and_build_the_trainer_arguments_before_loading(gpus, monkeypatch, tmp_path,
                                                                                   method, dtype):
    """finetune_to_dir on each of 2 ranks: set_device(LOCAL_RANK), then TrainingArguments and DeepSpeed's view of
    the ranks (which zero.Init reads), then the model loads onto cuda:LOCAL_RANK (a full finetune in float32, a LoRA base in its spec's dtype), then the Trainer run."""
    import transformers

    from wobble.training import to_dir

    calls = gpus(2)
    events: list[tuple] = []

    def fake_args(**kw):
        events.append(("args", calls[-1], kw["deepspeed"], kw["ddp_backend"]))
        return types.SimpleNamespace(**kw)

    def fake_load(base_dir, dtype=None, device=None, place=None):
        events.append(("load", calls[-1], device, dtype, place))
        return object(), object(), {"kind": "seq2seq"}

    def fake_finetune(model, tokenizer, kind, pairs, out, cfg, checkpoint_dir=None, args=None):
        events.append(("train", calls[-1], args.output_dir))
        return None  # a rank other than 0 writes nothing

    _deepspeed_or_skip()
    import deepspeed

    monkeypatch.setattr(deepspeed, "init_distributed", lambda dist_backend: events.append(("ds", dist_backend)))
    transformers.TrainingArguments  # the lazy module puts its loaded self in sys.modules
    monkeypatch.setattr(sys.modules["transformers"], "TrainingArguments", fake_args)
    monkeypatch.setattr(to_dir, "load_model", fake_load)
    monkeypatch.setattr(to_dir, "finetune", fake_finetune)
    monkeypatch.setenv("WORLD_SIZE", "2")
    ds = str(ROOT / "configs" / "deepspeed" / "zero3_bf16.json")
    cfg = FinetuneConfig(method=method, bf16=False, deepspeed=ds, per_device_batch_size=2,
                         gradient_accumulation_steps=1)
    for rank in ("0", "1"):
        monkeypatch.setenv("LOCAL_RANK", rank)
        monkeypatch.setenv("RANK", rank)
        assert to_dir.finetune_to_dir("base", [("a", "b")], tmp_path / "out", cfg, key="k",
                                      spec={"dtype": "bfloat16"}) is None
    ckpt = str(tmp_path / "out.checkpoints")
    assert events == [
        ("args", 0, ds, "nccl"), ("ds", "nccl"), ("load", 0, "cuda:0", dtype, {}), ("train", 0, ckpt),
        ("args", 1, ds, "nccl"), ("ds", "nccl"), ("load", 1, "cuda:1", dtype, {}), ("train", 1, ckpt),
    ]


# ---------------------------------------------------------------------------------------------- ZeRO-3 on CPU

ZERO3_SCRIPT = textwrap.dedent("""
    import json, sys
    from wobble.training import to_dir
    from wobble.training.checkpoints import partitioned
    from wobble.training.config import FinetuneConfig
    from wobble.training.launch import read_pairs

    load = to_dir.load_model
    def watched(*a, **kw):
        model, tok, manifest = load(*a, **kw)
        print("PARTITIONED", partitioned(model), sum(p.numel() for p in model.parameters()), flush=True)
        return model, tok, manifest
    to_dir.load_model = watched
    base, data, out, config = sys.argv[1:5]
    cfg = FinetuneConfig(method="full", deepspeed=config, max_steps=2, save_steps=2, per_device_batch_size=2,
                         gradient_accumulation_steps=1, logging_steps=1, learning_rate=1e-2, bf16=False)
    s = to_dir.finetune_to_dir(base, read_pairs(data), out, cfg, key="tiny-ft", spec={})
    print("SUMMARY" + json.dumps(s))
""")


def _deepspeed_or_skip() -> None:
    try:
        import deepspeed  # noqa: F401
    except Exception as e:  # ImportError, or a failing accelerator probe
        pytest.skip(f"deepspeed cannot be imported: {type(e).__name__}: {e}")


@pytest.fixture
def tiny_t5(tmp_path, monkeypatch):
    from wobble.io import write_jsonl
    from wobble.models.materialize import materialize

    monkeypatch.chdir(tmp_path)
    base = Path("resources/models/tiny-t5")
    materialize("tiny-t5", {"source": "tiny", "kind": "seq2seq", "seed": 0}, base)
    write_jsonl("train.jsonl", [{"source": f"Definition: copy. Input: abc{i} Output:", "target": f"abc{i}"}
                                for i in range(8)])
    return base


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in DIST_VARS}


def test_zero3_full_seq2seq_finetune_partitions_at_load_one_process(tiny_t5):
    """One CPU process, ZeRO-3, a full T5 finetune through finetune_to_dir: the weights are partitioned as they load
    (the Trainer arguments came first), training runs, and the saved model (gathered at save) loads and differs
    from its base. In a subprocess: DeepSpeed's global state would leak into other tests."""
    import torch

    from wobble.models.load import load_model

    _deepspeed_or_skip()
    config = str(ROOT / "configs" / "deepspeed" / "zero3_bf16.json")
    proc = subprocess.run([sys.executable, "-c", ZERO3_SCRIPT, str(tiny_t5), "train.jsonl", "out", config],
                          capture_output=True, text=True, env=_clean_env(), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (seen,) = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith("PARTITIONED")]
    assert seen[1] == "True" and int(seen[2]) == 0  # this rank's slices; one rank of one holds them as ds_tensor
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("SUMMARY")]
    summary = json.loads(line[len("SUMMARY"):])
    base, tok, _ = load_model(tiny_t5, dtype="float32")
    assert summary["steps"] == 2 and summary["trainable_params"] == sum(p.numel() for p in base.parameters())
    tuned, _, manifest = load_model("out", dtype="float32")
    assert manifest["source"] == "finetune" and not Path("out.checkpoints").exists()
    changed = [n for n, p in tuned.state_dict().items() if not torch.equal(p, base.state_dict()[n])]
    assert changed


@pytest.mark.e2e
@pytest.mark.parametrize("config", ["zero2_bf16.json", "zero3_bf16.json"])
def test_zero_full_seq2seq_finetune_on_two_cpu_ranks(tiny_t5, config):
    """Two CPU ranks (torchrun, gloo) of a full T5 finetune with ZeRO-2 and ZeRO-3, through the job launcher."""
    from wobble.training.launch import finetune_job

    _deepspeed_or_skip()
    cfg = FinetuneConfig(method="full", deepspeed=str(ROOT / "configs" / "deepspeed" / config), max_steps=2,
                         save_steps=2, per_device_batch_size=2, gradient_accumulation_steps=1, logging_steps=1,
                         learning_rate=1e-2, bf16=False)
    summary = finetune_job(tiny_t5, "train.jsonl", Path("out"), cfg, ranks=2, threads=2, key="tiny-ft", spec={})
    assert summary["steps"] == 2 and summary["processes"] == 2 and len(summary["examples_read_per_rank"]) == 2
    assert Path("out/model.safetensors").is_file() and Path("out/wobble-model.json").is_file()
