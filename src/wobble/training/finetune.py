"""Instruction finetuning with the Tk-Instruct recipe (Wang et al. 2022, as reproduced by Gu et al. 2023).

Recipe defaults (:class:`FinetuneConfig`): AdamW, learning rate 5e-5, constant schedule, no warmup,
effective batch 8 (``per_device_batch_size × gradient_accumulation_steps``), 2 epochs,
source ≤ 1024 tokens, target ≤ 128 tokens. Full finetuning or LoRA (``target_modules="all-linear"``).

:func:`finetune` drives the Hugging Face ``Trainer`` and is restartable: it checkpoints every
``save_steps`` optimizer steps under ``checkpoint_dir`` (default ``out_dir/checkpoints``) and, called
again on the same config and data, resumes from the newest checkpoint — model, optimizer, scheduler,
RNG states and data position — so a killed job continues where it stopped. A checkpoint written for
a different config, data, base model or number of ranks is not resumed: it is deleted and training starts over (with
a warning), since resuming it would silently mix two runs. Steps, epochs, ``save_steps`` and
``logging_steps`` may change between calls (extending ``max_steps`` continues a finished run).

The final ``out_dir`` holds the full model (``model.safetensors``, ``config.json``) or the LoRA
adapter (``adapter_config.json``, ``adapter_model.safetensors``), the tokenizer, and
``finetune-summary.json`` (what :func:`finetune` returns less :data:`RUN_FACTS`; its ``weights_sha256`` is
:func:`wobble.models.materialize.weights_sha256`, the value model manifests record). Saved dtype:
fp32 for full finetuning and for adapters; with DeepSpeed bf16 the full model is saved in bf16 (the
engine's working copy; the fp32 master weights stay in the checkpoint, see its ``zero_to_fp32.py``).

Determinism: the seed fixes the LoRA initialisation, dropout, and the data order (``data_seed``),
and the checkpoint restores the RNG states, so a run split by a resume follows the same trajectory.
On one machine and thread count, two runs with one seed give byte-identical weights.

Precision: ``bf16="auto"`` turns on bf16 mixed precision (autocast) where the hardware has bf16
(CUDA GPUs that support it; CPUs with AVX512-BF16 or AMX — about 2× faster than fp32 there). Full
finetuning keeps fp32 master weights: a model loaded in bf16/fp16 is upcast to fp32 first, on the device it lies
on (DeepSpeed then makes its bf16 working copy from it); the workflow loads a full finetune's base in float32
directly (:mod:`wobble.training.to_dir`), and a model ZeRO-3 partitioned at load is left to DeepSpeed. LoRA
leaves the frozen base weights in their dtype; the adapter is fp32.

DeepSpeed: ``deepspeed=`` a JSON config path (``configs/deepspeed/``) is passed to the Trainer. Run without
a launcher (a Snakemake ``script:``), the environment of a single process is filled in where not set
(``RANK=0``, ``WORLD_SIZE=1``, ``LOCAL_RANK=0``, ``MASTER_ADDR=127.0.0.1``, a free ``MASTER_PORT``; with no
GPU also ``DS_ACCELERATOR=cpu``), see :func:`wobble.training.distributed.prepare_deepspeed_env`. On CPU the
first run JIT-compiles DeepSpeed's shared-memory comm op (g++, ~30 s, cached under ``~/.cache/torch_extensions``).

Ranks: started by torchrun (:mod:`wobble.training.launch`, which sets ``RANK``, ``WORLD_SIZE``…), each rank
runs this function on its own device (:func:`training_args` makes ``cuda:LOCAL_RANK`` torch's current device);
the Trainer starts torch.distributed (nccl on GPUs, gloo on CPUs) and gives each rank its own examples of every
global batch, DDP (or DeepSpeed) averages the gradients, and rank 0 writes ``out_dir``. The ranks split the batch
of one optimizer step (:meth:`FinetuneConfig.per_rank`), so one config takes the same batches and steps on one
process or N ranks; without dropout (which draws other masks on each rank) the weights
agree up to float summation order (``tests/training/test_finetune_ranks.py``).

Progress (the Trainer's tqdm bar and its log lines) goes to stderr, i.e. the rule's log.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from wobble.errors import ConfigError
from wobble.io import read_json, write_json
from wobble.models.materialize import save_tokenizer, weights_sha256  # the project's one definitions (model dirs)
from wobble.training.checkpoints import numel, partitioned, resume_point, run_fingerprint
from wobble.training.config import FinetuneConfig
from wobble.training.data import (KINDS, PadCollator, ShardRecorder, target_logits_supported, tokenize_pairs,
                                  training_dataset)
from wobble.training.distributed import (ddp_backend, from_rank0, gather, prepare_deepspeed_env, rank_device,
                                         world_size)

__all__ = ["FinetuneConfig", "finetune", "prepare_deepspeed_env", "resolve_bf16", "saved_dtype", "training_args",
           "weights_sha256"]

SUMMARY_NAME = "finetune-summary.json"
# Summary fields that differ between two runs of the same inputs: logged, not written to SUMMARY_NAME.
RUN_FACTS = ("wall_time_s", "step_time_s", "resumed_from", "resumed_from_step")


# --------------------------------------------------------------------------------------------------
# precision


def cpu_has_bf16() -> bool:
    """Whether this CPU has native bf16 arithmetic (AVX512-BF16 or AMX-BF16); Linux only."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


def resolve_bf16(setting: bool | str) -> bool:
    if setting != "auto":
        return bool(setting)
    import torch

    if torch.cuda.is_available():
        return torch.cuda.is_bf16_supported()
    return cpu_has_bf16()


# --------------------------------------------------------------------------------------------------
# weights


def saved_dtype(model_dir: str | os.PathLike) -> str | None:
    """The dtype of the saved weights (``"float32"``, ``"bfloat16"``…), read from the safetensors header."""
    from safetensors import safe_open

    names = {"F32": "float32", "BF16": "bfloat16", "F16": "float16", "F64": "float64"}
    for f in sorted(Path(model_dir).glob("*.safetensors")):
        with safe_open(str(f), "pt") as st:
            for k in st.keys():
                dt = st.get_slice(k).get_dtype()
                return names.get(dt, dt.lower())
    return None


# --------------------------------------------------------------------------------------------------
# training


def _step_timer():
    """A TrainerCallback recording the wall seconds of each optimizer step (data loading included)."""
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times: list[float] = []
            self._t = None

        def on_train_begin(self, args, state, control, **kw):
            self._t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            now = time.perf_counter()
            self.times.append(now - self._t)
            self._t = now

        def on_save(self, args, state, control, **kw):  # checkpoint writing is not step time
            self._t = time.perf_counter()

    return StepTimer()


def _wrap_lora(model, kind: str, cfg: FinetuneConfig):
    from peft import LoraConfig, TaskType, get_peft_model

    task = TaskType.SEQ_2_SEQ_LM if kind == "seq2seq" else TaskType.CAUSAL_LM
    lcfg = LoraConfig(task_type=task, r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=cfg.lora_target_modules)
    return get_peft_model(model, lcfg)


def checkpointing_arg(training_arguments: type) -> str:
    """The TrainingArguments keyword for activation checkpointing: transformers renamed gradient_checkpointing to
    activation_checkpointing (the old name deprecated where both exist), and older releases, as on a GPU image,
    take only the old one; the installed version's name keeps the pyproject's whole range working."""
    fields = inspect.signature(training_arguments.__init__).parameters
    return "activation_checkpointing" if "activation_checkpointing" in fields else "gradient_checkpointing"


def training_args(cfg: FinetuneConfig, checkpoint_dir: str | os.PathLike, bf16: bool | None = None):
    """The Trainer's arguments for ``cfg``, checkpointing under ``checkpoint_dir``; built before the model loads
    (:func:`wobble.training.to_dir.finetune_to_dir`), they pick this rank's device (:func:`rank_device`), start
    torch.distributed with N ranks, and, with a ZeRO-3 DeepSpeed config, have ``from_pretrained`` partition the
    weights among the ranks as it loads them (transformers' ``zero.Init``, on while these arguments live)."""
    from transformers import TrainingArguments

    import torch

    if cfg.deepspeed is not None:
        prepare_deepspeed_env()
    rank_device()
    bf16 = resolve_bf16(cfg.bf16) if bf16 is None else bf16
    batch, accumulation = cfg.per_rank(world_size())
    args = _arguments(TrainingArguments, cfg, checkpoint_dir, bf16, batch, accumulation, torch.cuda.is_available())
    if cfg.deepspeed is not None and world_size() > 1:
        # DeepSpeed's own view of the ranks, which zero.Init reads as the model loads (else it counts 1 rank and
        # refuses the batch); on the process group the arguments started
        import deepspeed

        deepspeed.init_distributed(dist_backend=ddp_backend())
    return args


def _arguments(arguments_cls, cfg: FinetuneConfig, checkpoint_dir, bf16: bool, batch: int, accumulation: int,
               cuda: bool):
    return arguments_cls(
        **{checkpointing_arg(arguments_cls): cfg.gradient_checkpointing},
        output_dir=os.fspath(checkpoint_dir),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type=cfg.lr_scheduler,
        warmup_steps=cfg.warmup_steps,
        weight_decay=cfg.weight_decay,
        adam_beta1=cfg.adam_beta1,
        adam_beta2=cfg.adam_beta2,
        adam_epsilon=cfg.adam_epsilon,
        max_grad_norm=cfg.max_grad_norm,
        optim="adamw_torch",
        max_steps=cfg.max_steps if cfg.max_steps is not None else -1,
        num_train_epochs=cfg.num_epochs,
        save_strategy="steps",
        save_steps=cfg.save_steps,
        save_total_limit=cfg.save_total_limit,
        logging_strategy="steps",
        logging_steps=cfg.logging_steps,
        logging_first_step=True,
        seed=cfg.seed,
        data_seed=cfg.seed,
        bf16=bf16,
        deepspeed=cfg.deepspeed,
        use_cpu=not cuda,
        ddp_backend=ddp_backend(),  # N > 1 ranks: nccl on GPUs, gloo on CPUs
        report_to="none",
        remove_unused_columns=False,
        dataloader_num_workers=0,
        disable_tqdm=False,
    )


def _sort_adapter_modules(out_dir: Path) -> None:
    """PEFT keeps ``target_modules`` as a set and writes it in string-hash order, which changes with every
    process (PYTHONHASHSEED): written sorted, two runs of the same inputs give the same adapter_config.json."""
    path = out_dir / "adapter_config.json"
    if not path.is_file():
        return
    cfg = read_json(path)
    for key in ("target_modules", "modules_to_save", "exclude_modules"):
        if isinstance(cfg.get(key), list):
            cfg[key] = sorted(cfg[key])
    write_json(path, cfg)


def finetune(model, tokenizer, kind: str, pairs: Iterable, out_dir: str | os.PathLike,
             cfg: FinetuneConfig | Mapping[str, Any] | None = None, resume: bool = True,
             checkpoint_dir: str | os.PathLike | None = None, args=None) -> dict[str, Any] | None:
    """Finetune ``model`` on (source, target) ``pairs``; save the model or adapter to ``out_dir``.

    ``pairs``: ``(source, target)`` tuples or ``{"source", "target"}`` dicts. ``kind``: ``"seq2seq"`` or
    ``"causal"``. Checkpoints go to ``checkpoint_dir`` (default ``out_dir/checkpoints``); with ``resume``
    the newest matching one is resumed. Returns (and writes to ``out_dir/finetune-summary.json``)
    ``{steps, train_loss: [{step, loss}, ...], wall_time_s, resumed_from, method, ...}``.

    Run as one of N ranks (:mod:`wobble.training.launch`), every rank trains on its shard of each global batch
    and rank 0 alone writes ``out_dir`` and returns the summary (with ``processes``, ``rank_batch`` and ``examples_read_per_rank``);
    the other ranks return None. ``args``: :func:`training_args` built before ``model`` was loaded (ZeRO-3 then
    partitions at load); built here when not given.
    """
    # The Trainer prints its log dicts to stdout (tqdm.write), DeepSpeed its logger too: send all to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        return _finetune(model, tokenizer, kind, pairs, out_dir, cfg, resume, checkpoint_dir, args)


def _finetune(model, tokenizer, kind, pairs, out_dir, cfg, resume, checkpoint_dir, args) -> dict[str, Any] | None:
    import torch
    from transformers import Trainer, set_seed

    if kind not in KINDS:
        raise ConfigError("kind", f"expected one of {list(KINDS)}, got {kind!r}")
    cfg = cfg if isinstance(cfg, FinetuneConfig) else FinetuneConfig.from_dict(cfg)
    pairs = list(pairs)
    if not pairs:
        raise ValueError("finetune needs at least one (source, target) pair")
    out_dir = Path(out_dir)
    checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else out_dir / "checkpoints"
    start = time.perf_counter()

    if cfg.deepspeed is not None:
        prepare_deepspeed_env()
    bf16 = resolve_bf16(cfg.bf16)
    fingerprint = run_fingerprint(model, kind, pairs, cfg, world_size())

    examples = tokenize_pairs(tokenizer, pairs, kind, cfg.max_source_length, cfg.max_target_length,
                              cfg.truncation_side)
    dataset = training_dataset(examples)
    # the output layer only at target positions (same loss and gradients; see wobble.training.data)
    collator = ShardRecorder(PadCollator.for_tokenizer(tokenizer,
                                                       target_logits_only=target_logits_supported(model, kind)))

    set_seed(cfg.seed)  # before LoRA init, so the adapter's initial weights follow the seed
    if cfg.method == "full":
        # fp32 master weights, upcast where the model lies (this rank's device); bf16 compute comes from autocast
        # (or DeepSpeed). ZeRO-3's partitions stay as zero.Init made them: DeepSpeed keeps their fp32 masters.
        if not partitioned(model) and any(p.dtype in (torch.bfloat16, torch.float16) for p in model.parameters()):
            model = model.float()
        model.requires_grad_(True)
    else:
        model = _wrap_lora(model, kind, cfg)
    if cfg.gradient_checkpointing:
        model.config.use_cache = False
    model.train()

    if args is None:
        args = training_args(cfg, checkpoint_dir, bf16)  # with N ranks this starts torch.distributed
    main = args.process_index == 0
    # rank 0 decides (and tidies the checkpoint folder); every rank resumes from the same checkpoint
    resume_from = from_rank0(resume_point(checkpoint_dir, fingerprint, resume) if main else None)
    if resume_from and main:
        print(f"wobble finetune: resuming from {resume_from.name} (a killed run's last complete checkpoint)",
              file=sys.stderr)
    timer = _step_timer()
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=collator, callbacks=[timer])
    if kind == "seq2seq":
        # T5's forward takes **kwargs, so the Trainer assumes it normalises the loss by the accumulated
        # batch's token count (num_items_in_batch) and skips dividing by gradient_accumulation_steps; but T5
        # ignores it and returns a per-micro-batch mean, so loss and gradients would be scaled by the
        # accumulation steps. Declare it: each micro-batch mean is divided by the accumulation steps.
        trainer.model_accepts_loss_kwargs = False
    result = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    shards = _log_shards(args, collator.seen)
    out_dir.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out_dir))  # every rank takes part (DeepSpeed ZeRO-3 gathers the weights); rank 0 writes
    if not main:
        return None
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out_dir / "training_args.bin")  # a pickle of paths; the config is in the summary
    save_tokenizer(tokenizer, out_dir)
    _sort_adapter_modules(out_dir)

    history = [{"step": int(h["step"]), "loss": float(h["loss"])}
               for h in trainer.state.log_history if "loss" in h and "step" in h]
    summary = {
        "steps": int(trainer.state.global_step),
        "train_loss": history,
        "final_train_loss": float(result.training_loss),
        "wall_time_s": round(time.perf_counter() - start, 3),
        # seconds per optimizer step run by this call (a resumed call: only its own steps)
        "step_time_s": [round(t, 4) for t in timer.times],
        "resumed_from": str(resume_from) if resume_from else None,
        "resumed_from_step": int(resume_from.name.rsplit("-", 1)[1]) if resume_from else None,
        "method": cfg.method,
        "kind": kind,
        "n_pairs": len(pairs),
        "effective_batch_size": (args.per_device_train_batch_size * args.gradient_accumulation_steps
                                 * args.world_size),
        "bf16": bf16,
        "deepspeed": cfg.deepspeed,
        "device": str(args.device),
        "trainable_params": sum(numel(p) for p in model.parameters() if p.requires_grad),
        "weights_sha256": weights_sha256(out_dir),
        "dtype": saved_dtype(out_dir),
        "config": cfg.to_dict(),
    }
    if args.world_size > 1:  # how the work was split; one process's summary stays as it always was
        summary["processes"] = args.world_size
        summary["rank_batch"] = {"per_device_batch_size": args.per_device_train_batch_size,
                                 "gradient_accumulation_steps": args.gradient_accumulation_steps}
        summary["examples_read_per_rank"] = [len(seen) for seen in shards]
    # The file holds what the inputs determine (same seed and data: the same bytes); this run's own facts
    # (times, which checkpoint it resumed) go to the rule's log and the returned dict only.
    run_facts = {k: summary[k] for k in RUN_FACTS}
    print(f"wobble finetune: {json.dumps(run_facts)}", file=sys.stderr)
    write_json(out_dir / SUMMARY_NAME, {k: v for k, v in summary.items() if k not in RUN_FACTS})
    return summary


def _log_shards(args, seen: list[int], shown: int = 32) -> list[list[int]]:
    """Log, with several ranks, which examples (positions in ``pairs``) this rank's data loader read, and return
    every rank's list (a collective). The loader reads one batch ahead: a run that stops at ``max_steps`` inside
    an epoch has read one batch more than it trained on."""
    if args.world_size == 1:
        return [seen]
    more = f" ... ({len(seen) - shown} more)" if len(seen) > shown else ""
    print(f"wobble finetune: rank {args.process_index} of {args.world_size} read {len(seen)} examples: "
          f"{' '.join(map(str, seen[:shown]))}{more}", file=sys.stderr, flush=True)
    return gather(seen)
