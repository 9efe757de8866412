"""The CPU threads a job's process computes on: every job (:func:`wobble.snake.logged`) and every finetune rank
(:mod:`wobble.training.launch`) runs torch, OpenMP and MKL on the cores it was given, no more."""

from __future__ import annotations

import os
import sys

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def follow_threads(n: int) -> None:
    """Run torch (and OpenMP/MKL) on ``n`` threads: the cores Snakemake booked for the job.

    Without it torch takes every core of the machine, so two 1-thread jobs that Snakemake runs side by
    side on 2 cores would run 4 threads between them (oversubscribed: each job gets ~2/3 of a core). Works
    whether or not torch is imported yet (it reads ``OMP_NUM_THREADS`` when it starts).
    """
    n = max(1, int(n))
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)
