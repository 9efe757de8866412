"""Resume a workflow after a crash or a kill, safely (``make resume``, ``wobble resume``).

A SIGKILLed Snakemake leaves its lock behind (``.snakemake/locks/``), and the next run stops with "Directory
cannot be locked ... --unlock". Unlocking while another Snakemake still works in the same checkout would let
two runs write the same files, so :func:`resume`:

1. looks for live Snakemake processes whose working directory is this checkout (``/proc/<pid>/cwd`` and
   the command line; a process of another checkout does not count) and refuses, naming them, if any;
2. removes a stale lock with ``snakemake --unlock`` only when one is there;
3. runs ``snakemake --rerun-incomplete`` with the given arguments, so jobs cut off half-way are re-run (their
   outputs were never marked complete) and the resumable ones — inference and dialogue runs append to their
   ``*.partial`` files, the finetune resumes from its last checkpoint — go on from where they stopped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from wobble.errors import WobbleError


def live_snakemakes(workdir: str | os.PathLike, proc: str | os.PathLike = "/proc") -> list[tuple[int, str]]:
    """(pid, command line) of the live Snakemake processes working in ``workdir`` (this process excluded)."""
    root, target, out = Path(proc), Path(workdir).resolve(), []
    for entry in root.iterdir() if root.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd")).resolve()
        except OSError:  # gone, or not ours to read
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        if cwd == target and any(Path(w).name == "snakemake" or w.endswith("snakemake/__main__.py") or
                                 w == "snakemake" for w in words[:3]):
            out.append((int(entry.name), " ".join(words)))
    return sorted(out)


def has_lock(workdir: str | os.PathLike) -> bool:
    locks = Path(workdir) / ".snakemake" / "locks"
    return locks.is_dir() and any(locks.iterdir())


def resume(snakemake: str, args: Sequence[str], workdir: str | os.PathLike = ".") -> int:
    """Unlock a stale lock (only when no Snakemake of this checkout is alive), then re-run with
    ``--rerun-incomplete``; returns Snakemake's exit status."""
    alive = live_snakemakes(workdir)
    if alive:
        pids = ", ".join(f"{pid} ({cmd[:80]})" for pid, cmd in alive)
        raise WobbleError(f"{Path(workdir).resolve()}: Snakemake is still running here (pid {pids}); wait for it "
                          "to finish or stop it, then resume")
    if has_lock(workdir):
        print("resume: removing the stale lock of a killed run (no Snakemake is alive in this checkout)",
              file=sys.stderr)
        subprocess.run([snakemake, "--unlock", *_config_args(args)], cwd=workdir, check=True,
                       stdout=subprocess.DEVNULL)
    cmd = [snakemake, *args, "--rerun-incomplete"]
    print(f"resume: {' '.join(cmd)}", file=sys.stderr)
    return subprocess.run(cmd, cwd=workdir).returncode


def _config_args(args: Sequence[str]) -> list[str]:
    """The ``--configfile`` part of ``args`` (``--unlock`` must see the same config to load the workflow)."""
    out, i = [], 0
    args = list(args)
    while i < len(args):
        if args[i] == "--configfile":
            j = i + 1
            while j < len(args) and not args[j].startswith("-"):
                j += 1
            out += args[i:j]
            i = j
        else:
            i += 1
    return out
