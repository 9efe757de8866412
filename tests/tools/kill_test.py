"""Kill anywhere, lose nothing: run a config, SIGKILL the whole Snakemake process group at
seeded random moments, resume with ``wobble resume`` (unlock only when nothing of this checkout is alive, then
``--rerun-incomplete``) after each kill, and compare the final tables and figures with an uninterrupted run.

    .venv/bin/python tests/tools/kill_test.py --kills 20 --seed 0           # configs/smoke.yaml, ~20 min
    .venv/bin/python tests/tools/kill_test.py --kills 3 --reference DIR     # compare with an existing run

``tests/workflow/test_workflow_e2e.py`` runs the short version (3 kills) in the suite. For every kill the script reports
the moment, the rules that were running (from Snakemake's log) and afterwards which jobs resumed from partial
state (``resuming from ...partial`` / ``wobble finetune: resuming from checkpoint-N`` in the job logs).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

#: Tables, figures and ledgers, under a run's results folder (config results_root).
ARTIFACTS = ("*/tables/*", "*/figures/*", "*/findings.*", "findings.*")


def artifacts(workdir: Path, results_root: str = "results") -> dict[str, bytes]:
    """Tables, figures and ledgers of a run, by their path under its results folder (provenance sidecars left out:
    they hold timestamps; so are the logs and benchmarks a root other than results holds)."""
    out = {}
    base = workdir / results_root
    for pattern in ARTIFACTS:
        for p in sorted(base.glob(pattern)):
            rel = p.relative_to(base)
            if p.is_file() and not p.name.endswith(".prov.json") and rel.parts[0] not in ("logs", "benchmarks"):
                out[rel.as_posix()] = p.read_bytes()
    return out


def _running_rules(workdir: Path) -> list[str]:
    """Rules whose jobs Snakemake had started but not finished, from its newest log."""
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"), key=os.path.getmtime)
    if not logs:
        return []
    started, rule = {}, None
    finished = set()
    for line in logs[-1].read_text(errors="replace").splitlines():
        if m := re.match(r"(?:local)?rule (\w+):$", line):
            rule = m.group(1)
        elif (m := re.match(r"\s+jobid: (\d+)$", line)) and rule:
            started[m.group(1)] = rule
        elif m := re.match(r"Finished jobid: (\d+)", line):
            finished.add(m.group(1))
    return sorted({r for jobid, r in started.items() if jobid not in finished})


def run_with_kills(workdir: Path, kills: int, seed: int, *, min_s: float = 2.0, max_s: float = 25.0,
                   cores: int = 2, timeout: float = 3600) -> list[dict]:
    """Start the workflow, SIGKILL its process group ``kills`` times at seeded random delays (each run resumed
    with ``wobble resume``), then let the last resume finish; returns one record per kill."""
    rng = random.Random(seed)
    wobble = str(Path(sys.executable).parent / "wobble")
    cmd = [wobble, "resume", "--cores", str(cores), "--configfile", "run.yaml"]
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                                  "MASTER_PORT")}
    record, deadline = [], time.monotonic() + timeout
    log = open(workdir / "kill-test.log", "a")
    try:
        for i in range(kills):
            delay = rng.uniform(min_s, max_s)
            proc = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
            try:
                proc.wait(timeout=delay)
                record.append({"kill": i + 1, "at_s": round(delay, 1), "killed": False, "running": [],
                               "returncode": proc.returncode})
                if proc.returncode == 0:
                    break  # finished before this kill: nothing left to interrupt
                raise RuntimeError(f"run {i + 1} failed (exit {proc.returncode}); see {workdir / 'kill-test.log'}")
            except subprocess.TimeoutExpired:
                running = _running_rules(workdir)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                record.append({"kill": i + 1, "at_s": round(delay, 1), "killed": True, "running": running})
            if time.monotonic() > deadline:
                raise RuntimeError("kill test ran out of time")
        final = subprocess.run(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env,
                               timeout=max(60.0, deadline - time.monotonic()))
        if final.returncode != 0:
            raise RuntimeError(f"the final resume failed (exit {final.returncode}); see {workdir / 'kill-test.log'}")
    finally:
        log.close()
    return record


def resumed_jobs(workdir: Path) -> list[str]:
    """Job logs saying a job went on from a killed run's partial state."""
    hits = []
    for p in sorted((workdir / "logs").rglob("*.log")):
        text = p.read_text(errors="replace")
        if "resuming from" in text:
            hits.append(str(p.relative_to(workdir)))
    return hits


def main(argv=None) -> int:
    from conftest import copy_workflow, run_snakemake

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", default="configs/smoke.yaml")
    ap.add_argument("--reference", help="a finished run of the same config to compare with (else one is made)")
    ap.add_argument("--min-s", type=float, default=2.0)
    ap.add_argument("--max-s", type=float, default=25.0)
    args = ap.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="wobble-kill-"))
    if args.reference:
        ref = Path(args.reference)
    else:
        ref = base / "reference"
        ref.mkdir()
        copy_workflow(ref, args.config)
        t0 = time.perf_counter()
        proc = run_snakemake(ref, timeout=7200)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        print(f"reference run: {time.perf_counter() - t0:.0f}s")
    work = base / "killed"
    work.mkdir()
    copy_workflow(work, args.config)
    kills = run_with_kills(work, args.kills, args.seed, min_s=args.min_s, max_s=args.max_s, timeout=7200)
    for k in kills:
        print(f"kill {k['kill']:2d} after {k['at_s']:5.1f}s: " +
              (f"killed while running {', '.join(k['running']) or '(between jobs)'}" if k["killed"] else "finished first"))
    ours, theirs = artifacts(work), artifacts(ref)
    differ = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
    print(f"{sum(k['killed'] for k in kills)} kills; {len(ours)} artifacts; resumed from partial state: "
          f"{', '.join(resumed_jobs(work)) or 'none'}")
    print("identical to the uninterrupted run" if not differ else f"DIFFERENT: {differ}")
    return 0 if not differ and ours else 1


if __name__ == "__main__":
    sys.exit(main())
