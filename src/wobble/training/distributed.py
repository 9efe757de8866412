"""The process a finetune runs in: one of N ranks (started by torchrun, see :mod:`wobble.training.launch`) or a
single process, and the few things ranks must agree on.

* :func:`world_size`, :func:`ddp_backend`: how many ranks, and torch.distributed's backend (nccl on GPUs, gloo
  on CPUs).
* :func:`from_rank0`, :func:`gather`: a Python value decided on rank 0 handed to every rank (where a killed run
  resumes), and one value per rank collected on every rank (which examples each rank read).
* :func:`rank_device`: the device this rank loads and trains on (its own GPU, made torch's current one).
* :func:`prepare_deepspeed_env`: DeepSpeed run as one process without a launcher (a Snakemake ``script:``).
"""

from __future__ import annotations

import os
import socket
from typing import Any


def world_size() -> int:
    """How many ranks this run has: ``WORLD_SIZE`` as a launcher sets it, 1 without one."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def local_rank() -> int:
    """This rank's index on its node: ``LOCAL_RANK`` as a launcher sets it, 0 without one."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def rank_device() -> str:
    """The device this rank loads its model onto and trains on: ``cuda:LOCAL_RANK`` with CUDA, made torch's current
    device (so ``"cuda"``, DeepSpeed's ``zero.Init`` and NCCL all mean this rank's GPU), else ``cpu``. Without it
    every rank would load onto ``cuda:0``. A rank with no GPU of its own is a WobbleError."""
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    rank, seen = local_rank(), torch.cuda.device_count()
    if rank >= seen:
        from wobble.errors import WobbleError

        raise WobbleError(f"rank {rank} on this node has no GPU of its own: torch sees {seen} "
                          "(CUDA_VISIBLE_DEVICES, or the job's gpu resource)")
    torch.cuda.set_device(rank)
    return f"cuda:{rank}"


def ddp_backend() -> str | None:
    """torch.distributed's backend for N > 1 ranks: nccl with CUDA, gloo on CPU; None for one process."""
    import torch

    if world_size() == 1:
        return None
    return "nccl" if torch.cuda.is_available() else "gloo"


def _initialized() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def from_rank0(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (picklable); the value itself for one process. A collective: every rank
    calls it. The process group must be up (the Trainer's arguments start it)."""
    if not _initialized():
        return value
    import torch.distributed as dist

    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather(value: Any) -> list[Any]:
    """Every rank's ``value``, in rank order, on every rank (``[value]`` for one process). A collective."""
    if not _initialized():
        return [value]
    import torch.distributed as dist

    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare_deepspeed_env() -> dict[str, str]:
    """Fill in what DeepSpeed needs to run as one process when no launcher set it; returns what was set.

    Without a launcher (torchrun sets ``RANK``, ``WORLD_SIZE``…), DeepSpeed falls back to MPI discovery and
    fails; a Snakemake ``script:`` is one process, so: ``RANK=0``, ``WORLD_SIZE=1``, ``LOCAL_RANK=0``,
    ``MASTER_ADDR=127.0.0.1``, a free ``MASTER_PORT``, and with no GPU also ``DS_ACCELERATOR=cpu``. Variables
    already set (a launcher's) are left alone.
    """
    import torch

    defaults = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1"}
    if not torch.cuda.is_available():
        defaults["DS_ACCELERATOR"] = "cpu"
    if "MASTER_PORT" not in os.environ:
        defaults["MASTER_PORT"] = str(_free_port())
    set_now = {k: v for k, v in defaults.items() if k not in os.environ}
    os.environ.update(set_now)
    return set_now
