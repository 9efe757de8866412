"""Shared test fixtures: repo paths, the offline data mirror, a scratch copy of the workflow. Under ``CI=true`` a skip
whose reason tests/skip_allowlist.txt does not allow fails the session (tests/skip_policy.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest_plugins = ["skip_policy"]

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO.parent / "shared" / "data"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
DIST_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "DS_ACCELERATOR")
WORKFLOW_PARTS = ("Snakefile", "config.yaml", "rules", "scripts", "schemas", "configs", "profiles", "envs", "paper",
                  "report", "annotations", "constraints.txt")


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not MIRROR.is_dir():
        pytest.skip(f"offline data mirror {MIRROR} is not present")
    return MIRROR


def copy_workflow(dest: Path, config_name: str = "configs/smoke.yaml", **overrides) -> Path:
    """Copy the workflow files into ``dest`` and write ``dest/run.yaml`` with an absolute mirror path."""
    for part in WORKFLOW_PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, dest / part)
    cfg = yaml.safe_load((REPO / config_name).read_text())
    cfg["data"]["mirror"] = str(MIRROR)
    for key, value in overrides.items():
        cfg[key] = value
    (dest / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return dest / "run.yaml"


def run_snakemake(workdir: Path, *args: str, timeout: int = 1200) -> subprocess.CompletedProcess:
    # Targets and options first: --configfile takes several values and would swallow a trailing target.
    cmd = [str(SNAKEMAKE), *args, "--cores", "2", "--configfile", "run.yaml"]
    # A launcher's distributed variables would make every Trainer job start torch.distributed.
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARS}
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)


# Other clean runs of configs/smoke.yaml this session (the SLURM test's, when it ran and passed): the two-clean-runs
# test compares one of them with `smoke_run` instead of making a third smoke-scale run.
OTHER_CLEAN_SMOKE_RUNS: list[Path] = []


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, mirror):
    """One local run of configs/smoke.yaml for the whole session: the end-to-end tests read it, and the SLURM
    test compares its run with it (one smoke run fewer in CI)."""
    work = tmp_path_factory.mktemp("smoke")
    copy_workflow(work)
    proc = run_snakemake(work, timeout=2400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return work
