"""Finetuning (wobble.training): tokenization/masking, full and LoRA runs, resume, determinism, DeepSpeed.

Every run uses the tiny in-code models (wobble.models.tiny) and a handful of pairs, a few steps each.
"""

from __future__ import annotations

import inspect
import json
import os
import runpy
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from wobble.errors import ConfigError
from wobble.models.tiny import build_tiny
from wobble.training.data import IGNORE_INDEX, PadCollator, special_layout, tokenize_pairs
from wobble.training.finetune import FinetuneConfig, finetune, weights_sha256

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [(f"Definition: copy the input. Input: abc{i} Output:", f"abc{i}") for i in range(4)]
FAST = dict(per_device_batch_size=2, gradient_accumulation_steps=1, logging_steps=1, learning_rate=1e-2,
            save_steps=100)


def tiny(kind, seed=0):
    return build_tiny(kind, seed)


# ---------------------------------------------------------------------------------------------- data


def test_causal_labels_mask_the_prompt():
    _, tok = tiny("causal")
    (ex,) = tokenize_pairs(tok, [("Input: hi Output:", "yes")], "causal")
    src = tok("Input: hi Output:", add_special_tokens=False)["input_ids"]
    tgt = tok("yes", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    pre, _ = special_layout(tok)
    assert ex["input_ids"] == pre + src + tgt
    assert ex["labels"] == [IGNORE_INDEX] * (len(pre) + len(src)) + tgt
    assert ex["attention_mask"] == [1] * len(ex["input_ids"])


def test_causal_truncation_sides_and_target_keeps_eos():
    _, tok = tiny("causal")
    source, target = "0123456789", "abcdefgh"
    (right,) = tokenize_pairs(tok, [(source, target)], "causal", max_source_length=4, max_target_length=3)
    (left,) = tokenize_pairs(tok, [(source, target)], "causal", max_source_length=4, max_target_length=3,
                             truncation_side="left")
    ids = lambda s: tok(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    assert right["input_ids"] == ids("0123") + ids("ab") + [tok.eos_token_id]  # Tk-Instruct: keep the head
    assert left["input_ids"] == ids("6789") + ids("ab") + [tok.eos_token_id]
    assert right["labels"][:4] == [IGNORE_INDEX] * 4 and right["labels"][4:] == ids("ab") + [tok.eos_token_id]


def test_seq2seq_labels_are_target_and_truncation_keeps_eos():
    _, tok = tiny("seq2seq")
    (ex,) = tokenize_pairs(tok, [{"source": "x" * 50, "target": "y" * 50}], "seq2seq",
                           max_source_length=10, max_target_length=5)
    assert ex["input_ids"] == tok("x" * 9)["input_ids"] and ex["input_ids"][-1] == tok.eos_token_id
    assert ex["labels"] == tok("y" * 4)["input_ids"] and len(ex["labels"]) == 5
    (short,) = tokenize_pairs(tok, [("ab", "c")], "seq2seq")
    assert short["input_ids"] == tok("ab")["input_ids"] and short["labels"] == tok("c")["input_ids"]


def test_collator_pads_deterministically():
    _, tok = tiny("causal")
    exs = tokenize_pairs(tok, [("a", "b"), ("long prompt", "long answer")], "causal")
    coll = PadCollator.for_tokenizer(tok)
    b1, b2 = coll(exs), coll(exs)
    assert all((b1[k] == b2[k]).all() for k in b1)
    n = len(exs[0]["input_ids"])
    assert b1["input_ids"].shape == b1["labels"].shape == (2, len(exs[1]["input_ids"]))
    assert (b1["input_ids"][0, n:] == tok.pad_token_id).all()
    assert (b1["attention_mask"][0, n:] == 0).all() and (b1["labels"][0, n:] == IGNORE_INDEX).all()
    assert PadCollator(pad_token_id=0, pad_to_multiple_of=8)(exs)["input_ids"].shape[1] % 8 == 0


# ---------------------------------------------------------------------------------------------- config


def test_config_rejects_unknown_and_bad_values():
    with pytest.raises(ConfigError, match="unknown key"):
        FinetuneConfig.from_dict({"lr": 1e-4})
    with pytest.raises(ConfigError, match="method"):
        FinetuneConfig(method="qlora")
    with pytest.raises(ConfigError, match="lr_scheduler"):
        FinetuneConfig(lr_scheduler="const")
    with pytest.raises(ConfigError, match="deepspeed"):
        FinetuneConfig(deepspeed="no/such/config.json")
    cfg = FinetuneConfig()
    assert (cfg.learning_rate, cfg.lr_scheduler, cfg.per_device_batch_size * cfg.gradient_accumulation_steps,
            cfg.max_source_length, cfg.max_target_length) == (5e-5, "constant", 8, 1024, 128)
    assert FinetuneConfig.from_dict(cfg.to_dict()) == cfg


# ---------------------------------------------------------------------------------------------- training


def test_seq2seq_full_finetune_lowers_loss(tmp_path, capfd):
    model, tok = tiny("seq2seq")
    summary = finetune(model, tok, "seq2seq", PAIRS * 2, tmp_path / "out", dict(FAST, method="full", max_steps=8))
    losses = [h["loss"] for h in summary["train_loss"]]
    assert summary["steps"] == 8 and [h["step"] for h in summary["train_loss"]] == list(range(1, 9))
    assert losses[-1] < losses[0] - 1.0
    out = tmp_path / "out"
    assert (out / "model.safetensors").is_file() and (out / "config.json").is_file()
    assert (out / "tokenizer_config.json").is_file() and not (out / "training_args.bin").exists()
    written = json.loads((out / "finetune-summary.json").read_text())
    assert written["steps"] == 8 and not {"wall_time_s", "step_time_s", "resumed_from"} & set(written)
    assert summary["resumed_from"] is None and summary["weights_sha256"] == weights_sha256(out)
    assert "loss" not in capfd.readouterr().out  # progress and log lines go to stderr (the rule's log)


@pytest.mark.parametrize("kind", ["seq2seq", "causal"])
def test_gradient_accumulation_does_not_scale_the_loss(tmp_path, kind):
    """Batch 1 × 2 accumulation logs the same loss as batch 2 × 1 (T5 once logged it doubled)."""
    first = {}
    for name, bs, ga in (("bs", 2, 1), ("ga", 1, 2)):
        m, t = tiny(kind)
        s = finetune(m, t, kind, PAIRS, tmp_path / name, dict(FAST, method="full", max_steps=1,
                                                              per_device_batch_size=bs, gradient_accumulation_steps=ga))
        first[name] = s["train_loss"][0]["loss"]
    assert first["ga"] == pytest.approx(first["bs"], rel=0.1)  # not equal: dropout masks differ


def test_causal_lora_adapter_loads_with_peft(tmp_path):
    import torch
    from peft import PeftModel

    model, tok = tiny("causal")
    summary = finetune(model, tok, "causal", PAIRS, tmp_path / "lora", dict(FAST, method="lora", max_steps=4))
    out = tmp_path / "lora"
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    assert not (out / "model.safetensors").exists()
    cfg = json.loads((out / "adapter_config.json").read_text())
    assert cfg["r"] == 16 and cfg["task_type"] == "CAUSAL_LM"
    # PEFT writes its set of modules in hash order (differs per process); ours is sorted, so runs match
    assert len(cfg["target_modules"]) > 1 and cfg["target_modules"] == sorted(cfg["target_modules"])
    base, _ = tiny("causal")
    loaded = PeftModel.from_pretrained(base, out)
    lora_b = [p for n, p in loaded.named_parameters() if "lora_B" in n]
    assert lora_b and any(p.abs().sum() > 0 for p in lora_b)  # B starts at zero: it was trained
    x = torch.tensor([tokenize_pairs(tok, [PAIRS[0]], "causal")[0]["input_ids"]])
    fresh, _ = tiny("causal")
    assert not torch.allclose(loaded(input_ids=x).logits, fresh(input_ids=x).logits)
    assert 0 < summary["trainable_params"] < sum(p.numel() for p in fresh.parameters())


def test_resume_continues_from_last_checkpoint(tmp_path):
    cfg = dict(FAST, method="full", save_steps=2)
    out = tmp_path / "run"
    m, t = tiny("seq2seq")
    first = finetune(m, t, "seq2seq", PAIRS, out, dict(cfg, max_steps=2))  # the "killed" job
    assert first["steps"] == 2 and (out / "checkpoints" / "checkpoint-2").is_dir()
    partial = out / "checkpoints" / "checkpoint-3"  # killed while writing the next checkpoint
    partial.mkdir()
    (partial / "model.safetensors").write_bytes(b"truncated")
    m, t = tiny("seq2seq")
    second = finetune(m, t, "seq2seq", PAIRS, out, dict(cfg, max_steps=4))
    assert second["resumed_from"] == str(out / "checkpoints" / "checkpoint-2")
    assert second["resumed_from_step"] == 2 and second["steps"] == 4
    assert [h["step"] for h in second["train_loss"]] == [1, 2, 3, 4]
    assert second["train_loss"][:2] == first["train_loss"]
    # model, optimizer, RNG and data position restored: same weights as one uninterrupted run
    m, t = tiny("seq2seq")
    straight = finetune(m, t, "seq2seq", PAIRS, tmp_path / "straight", dict(cfg, max_steps=4))
    assert straight["resumed_from"] is None and straight["weights_sha256"] == second["weights_sha256"]


def test_checkpoint_of_another_config_is_not_resumed(tmp_path):
    cfg = dict(FAST, method="full", save_steps=2, max_steps=2)
    m, t = tiny("seq2seq")
    finetune(m, t, "seq2seq", PAIRS, tmp_path, cfg)
    m, t = tiny("seq2seq")
    again = finetune(m, t, "seq2seq", PAIRS, tmp_path, dict(cfg, learning_rate=1e-3))
    assert again["resumed_from"] is None and again["steps"] == 2
    m, t = tiny("seq2seq")
    fresh = finetune(m, t, "seq2seq", PAIRS, tmp_path, dict(cfg, learning_rate=1e-3), resume=False)
    assert fresh["resumed_from"] is None


def test_same_seed_same_weights(tmp_path):
    runs = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        m, t = tiny("seq2seq")
        runs.append(finetune(m, t, "seq2seq", PAIRS, tmp_path / name, dict(FAST, method="full", max_steps=3,
                                                                           seed=seed))["weights_sha256"])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]  # the seed drives data order and dropout


def test_lora_init_follows_seed(tmp_path):
    hashes = []
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        m, t = tiny("causal")
        hashes.append(finetune(m, t, "causal", PAIRS, tmp_path / name,
                               dict(FAST, method="lora", max_steps=1, seed=seed))["weights_sha256"])
    assert hashes[0] == hashes[1] != hashes[2]


# ---------------------------------------------------------------------------------------------- DeepSpeed

DS_SCRIPT = textwrap.dedent("""
    import json, sys
    from wobble.models.tiny import build_tiny
    from wobble.training.finetune import finetune
    kind, method, config, out = sys.argv[1:5]
    pairs = [(f"Definition: copy the input. Input: abc{i} Output:", f"abc{i}") for i in range(4)]
    m, t = build_tiny(kind, 0)
    s = finetune(m, t, kind, pairs, out, dict(method=method, deepspeed=config, max_steps=2, save_steps=2,
                 per_device_batch_size=2, gradient_accumulation_steps=1, logging_steps=1, learning_rate=1e-2))
    print("SUMMARY" + json.dumps(s))
""")


def _deepspeed_unavailable() -> str | None:
    try:
        import deepspeed  # noqa: F401
    except Exception as e:  # ImportError, or a failing accelerator probe
        return f"deepspeed cannot be imported: {type(e).__name__}: {e}"
    return None


@pytest.mark.parametrize("config,kind,method", [
    ("zero2_bf16.json", "seq2seq", "full"),
    ("zero3_bf16.json", "causal", "lora"),
])
def test_deepspeed_single_process(tmp_path, config, kind, method):
    """One process (CPU here), no launcher: finetune() fills in the env. Run in a subprocess: DeepSpeed
    initialises torch.distributed and accelerate's global state, which would leak into the other tests.
    On CPU the first run on a machine JIT-builds DeepSpeed's shm comm op (~30 s, g++), cached afterwards."""
    reason = _deepspeed_unavailable()
    if reason:
        pytest.skip(reason)
    env = {k: v for k, v in os.environ.items()
           if k not in ("DS_ACCELERATOR", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    out = tmp_path / "ds"
    proc = subprocess.run([sys.executable, "-c", DS_SCRIPT, kind, method, str(ROOT / "configs/deepspeed" / config),
                           str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("SUMMARY")]
    summary = json.loads(line[len("SUMMARY"):])
    assert summary["steps"] == 2 and len(summary["train_loss"]) == 2
    assert summary["deepspeed"].endswith(config)
    assert (out / "checkpoints" / "checkpoint-2").is_dir()
    assert (out / ("model.safetensors" if method == "full" else "adapter_model.safetensors")).is_file()


def test_prepare_deepspeed_env_fills_only_missing(monkeypatch):
    import torch

    from wobble.training.distributed import prepare_deepspeed_env

    # A private copy of the environment: what prepare_deepspeed_env sets must not leak into later tests
    # (a leaked RANK/WORLD_SIZE makes every later Trainer start torch.distributed on port 29500).
    keys = ("DS_ACCELERATOR", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in keys})
    os.environ["MASTER_PORT"] = "29999"  # e.g. set by a launcher
    set_now = prepare_deepspeed_env()
    assert (os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"]) == ("0", "1", "0")
    assert "MASTER_PORT" not in set_now and os.environ["MASTER_PORT"] == "29999"
    assert ("DS_ACCELERATOR" in set_now) is (not torch.cuda.is_available())
    assert prepare_deepspeed_env() == {}


def test_deepspeed_configs_use_auto_values():
    for name in ("zero2_bf16.json", "zero3_bf16.json"):
        cfg = json.loads((ROOT / "configs/deepspeed" / name).read_text())
        assert cfg["train_batch_size"] == cfg["gradient_accumulation_steps"] == "auto"
        assert cfg["optimizer"]["params"]["lr"] == "auto" and cfg["bf16"]["enabled"] == "auto"
        assert cfg["zero_optimization"]["stage"] == int(name[4])


# ---------------------------------------------------------------------------------------------- script


@pytest.mark.parametrize("method", ["lora", "full"])
def test_finetune_script_writes_loadable_model(tmp_path, monkeypatch, method):
    """scripts/finetune.py end to end with a fake ``snakemake`` object, on a materialized tiny model;
    the result loads with ``load_model`` (the adapter merged into its base)."""
    import torch

    from wobble.io import write_jsonl
    from wobble.models.load import load_model
    from wobble.models.materialize import materialize, weights_sha256 as manifest_sha
    from wobble.provenance import sidecar_path

    monkeypatch.chdir(tmp_path)  # the workflow runs scripts in its working directory; base_dir is relative
    base_dir = Path("resources/models/tiny-causal")
    materialize("tiny-causal", {"source": "tiny", "kind": "causal", "seed": 0}, base_dir)
    write_jsonl("train.jsonl", [{"source": s, "target": t} for s, t in PAIRS])
    out = Path("resources/models/finetuned/tiny-ni")

    class NL(list):  # snakemake's Namedlist: a list with attributes
        def __init__(self, items=(), **named):
            super().__init__(list(items) + list(named.values()))
            self.__dict__.update(named)

    sm = types.SimpleNamespace(
        input=NL(model=str(base_dir), data="train.jsonl"), output=NL([str(out)]), log=NL(["ft.log"]),
        params=NL(cfg=dict(FAST, method=method, max_steps=2, save_steps=1)), wildcards=NL(), rule="finetune")
    runpy.run_path(str(ROOT / "scripts" / "finetune.py"), init_globals={"snakemake": sm})

    manifest = json.loads((out / "wobble-model.json").read_text())
    assert (manifest["key"], manifest["kind"], manifest["source"]) == ("tiny-ni", "causal", "finetune")
    assert manifest["adapter"] is (method == "lora") and manifest["base_dir"] == str(base_dir)
    assert manifest["weights_sha256"] == manifest_sha(out)
    assert (out / ("adapter_model.safetensors" if method == "lora" else "model.safetensors")).is_file()
    assert manifest["finetune"]["max_steps"] == 2 and manifest["dtype"] == "float32"
    assert sidecar_path(out).is_file() and not Path(f"{out}.checkpoints").exists()
    assert "loss" in Path("ft.log").read_text()  # the Trainer's progress went to the rule's log

    tuned, tok, m = load_model(out, dtype="float32")
    base, _, _ = load_model(base_dir, dtype="float32")
    x = torch.tensor([tokenize_pairs(tok, [PAIRS[0]], "causal")[0]["input_ids"]])
    with torch.no_grad():
        assert not torch.allclose(tuned(input_ids=x).logits, base(input_ids=x).logits)



def test_checkpointing_is_passed_under_the_name_the_installed_transformers_takes():
    """transformers renamed gradient_checkpointing to activation_checkpointing; an older release takes only the old
    name, a newer one both (the old deprecated): the finetune names whichever the installed class has."""
    from transformers import TrainingArguments

    from wobble.training.finetune import checkpointing_arg

    class OldArgs:  # an older TrainingArguments: gradient_checkpointing only
        def __init__(self, output_dir, gradient_checkpointing=False, bf16=False):
            pass

    class NewArgs:
        def __init__(self, output_dir, gradient_checkpointing=False, activation_checkpointing=False):
            pass

    assert checkpointing_arg(OldArgs) == "gradient_checkpointing"
    assert checkpointing_arg(NewArgs) == "activation_checkpointing"
    installed = checkpointing_arg(TrainingArguments)
    assert installed in inspect.signature(TrainingArguments.__init__).parameters
