"""A finetune job's processes: one Trainer process, or N ranks started by torchrun.

:func:`job_ranks` reads how many from the job's resources: ``ranks`` when the job sets it (``--set-resources
finetune:ranks=2``: two ranks, e.g. on CPU), otherwise one rank per GPU the job asks for (``gpu: N``, e.g.
``--set-resources finetune:gpu=4``). :func:`finetune_job` then either runs
:func:`wobble.training.to_dir.finetune_to_dir` in this process (one rank, the default run) or starts

    python -m torch.distributed.run --standalone --nproc-per-node N -m wobble.training.launch JOB

and waits for it: torchrun's rendezvous on this node, each rank a Trainer process (:func:`main`) on
``threads // N`` CPU threads (and, with CUDA, its own GPU), the ranks' output in the job's log. Under SLURM the job
is one task that holds its GPUs and CPUs (``--gpus=N --cpus-per-task=T``) and the ranks run inside that
allocation, on its one node. What each rank trains on and which rank writes: :mod:`wobble.training.finetune`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

from wobble.errors import ConfigError
from wobble.io import read_json, read_jsonl
from wobble.threads import THREAD_VARS, follow_threads
from wobble.training.config import FinetuneConfig
from wobble.training.finetune import SUMMARY_NAME
from wobble.training.to_dir import finetune_to_dir

MODULE = "wobble.training.launch"


def _resource(resources: Any, name: str) -> int:
    value = resources.get(name) if isinstance(resources, Mapping) else getattr(resources, name, None)
    if value is None or value == "":
        return 0
    if isinstance(value, bool) or not str(value).isdigit():
        raise ConfigError(f"resources.{name}", f"expected a whole number, got {value!r}")
    return int(value)


def job_ranks(resources: Any) -> int:
    """How many ranks a finetune job runs: its ``ranks`` resource, else one per GPU of its ``gpu`` resource when
    that is above 1, else 1. More ranks than GPUs torch sees (where it sees any), or several GPUs asked for where it
    sees none, is a ConfigError."""
    import torch

    ranks, gpus = _resource(resources, "ranks"), _resource(resources, "gpu")
    n = ranks or max(gpus, 1)
    if torch.cuda.is_available():
        seen = torch.cuda.device_count()
        if n > seen:
            raise ConfigError("resources.ranks" if ranks else "resources.gpu",
                              f"{n} ranks need {n} GPUs, torch sees {seen}")
    elif gpus > 1 and not ranks:
        raise ConfigError("resources.gpu", f"the job asks for {gpus} GPUs but torch sees none "
                                           "(ranks=N trains on N CPU processes)")
    return n


def read_pairs(path: str | os.PathLike) -> list[tuple[str, str]]:
    """The (source, target) pairs of a training JSONL (records with ``source`` and ``target``)."""
    return [(r["source"], r["target"]) for r in read_jsonl(path)]


def finetune_job(base_dir: str | Path, data: str | Path, out: str | Path, cfg: FinetuneConfig, *, ranks: int = 1,
                 threads: int = 1, key: str, spec: Mapping[str, Any],
                 checkpoint_dir: str | Path | None = None) -> dict[str, Any]:
    """Finetune the model in ``base_dir`` on the pairs in ``data`` into ``out`` with ``ranks`` processes sharing
    ``threads`` CPU threads; returns the finetune summary (with N ranks: as written in ``out``)."""
    cfg.per_rank(ranks)  # a batch the ranks cannot split stops the job before any rank starts
    if ranks == 1:
        return finetune_to_dir(base_dir, read_pairs(data), out, cfg, key=key, spec=spec, checkpoint_dir=checkpoint_dir)
    job = {"base_dir": str(base_dir), "data": str(data), "out": str(out), "cfg": cfg.to_dict(), "key": key,
           "spec": dict(spec), "checkpoint_dir": None if checkpoint_dir is None else str(checkpoint_dir),
           "threads": max(1, threads // ranks)}
    run_ranks(ranks, job)
    return read_json(Path(out) / SUMMARY_NAME)


def _fileno(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a file (e.g. a test's capture)
        return None


def run_ranks(n: int, job: Mapping[str, Any]) -> None:
    """Start ``n`` ranks of :func:`main` on ``job`` with torchrun on this node and wait for them; their output goes
    where this process's stderr goes (the rule's log)."""
    threads = str(job["threads"])
    env = {**os.environ, **{var: threads for var in THREAD_VARS}}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={n}", "-m", MODULE]
    print(f"wobble finetune: {n} ranks, {threads} threads each: {' '.join(cmd)} JOB", file=sys.stderr, flush=True)
    sys.stdout.flush()
    log = _fileno(sys.stderr)
    proc = subprocess.run([*cmd, json.dumps(job)], env=env, stdout=log, stderr=log, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"finetune: the {n} ranks exited with status {proc.returncode} (their output is in this "
                           "job's log)")


def main(argv: list[str] | None = None) -> None:
    """One rank (torchrun set ``RANK``, ``WORLD_SIZE``…): finetune the job's model; rank 0 writes the result."""
    (arg,) = sys.argv[1:] if argv is None else argv
    job = json.loads(arg)
    follow_threads(job["threads"])
    finetune_to_dir(job["base_dir"], read_pairs(job["data"]), job["out"], FinetuneConfig.from_dict(job["cfg"]),
                    key=job["key"], spec=job["spec"], checkpoint_dir=job["checkpoint_dir"])
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
