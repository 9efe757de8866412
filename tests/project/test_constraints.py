"""constraints.txt pins the environment the committed results came from: one ``name==version`` per package,
every dependency ``make setup`` installs pinned, torch as the Makefile and the conda env pin it, every
committed output's provenance (its ``packages``) made with exactly the pinned versions, and the conda env
(envs/wobble.yaml) reads the pins and this checkout from where Snakemake creates it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name as _norm

ROOT = Path(__file__).resolve().parents[2]


def _lock() -> dict[str, str]:
    pins: dict[str, str] = {}
    for n, line in enumerate((ROOT / "constraints.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.!]*)", line)
        assert m, f"constraints.txt line {n}: expected name==version (no local label), got {line!r}"
        assert _norm(m[1]) not in pins, f"constraints.txt line {n}: {m[1]} pinned twice"
        pins[_norm(m[1])] = m[2]
    return pins


def test_every_dependency_make_setup_installs_is_pinned():
    lock = _lock()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = re.search(r"^EXTRAS := (.+)$", (ROOT / "Makefile").read_text(), re.M)[1].split(",")
    wanted = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    assert sorted({_norm(Requirement(r).name) for r in wanted} - set(lock)) == []


def test_torch_is_pinned_as_the_makefile_and_the_conda_env_install_it():
    torch = _lock()["torch"]
    assert f"torch=={torch} " in (ROOT / "Makefile").read_text()
    assert f"torch=={torch}\n" in (ROOT / "envs" / "wobble.yaml").read_text()


def test_committed_results_were_made_with_the_pinned_versions():
    lock = _lock()
    provs = sorted((ROOT / "results").rglob("*.prov.json"))
    assert provs, "no committed provenance under results/"
    for path in provs:
        packages = json.loads(path.read_text()).get("packages", {})
        for name, version in packages.items():
            if name in ("python", "wobble"):
                continue
            assert lock.get(_norm(name)) == version.split("+")[0], (
                f"{path.relative_to(ROOT)}: {name} {version}, constraints.txt pins {lock.get(_norm(name))}")


def test_the_conda_env_installs_this_checkout_with_its_pins_from_snakemakes_copy(tmp_path):
    """Snakemake creates the conda env from a copy of envs/wobble.yaml in .snakemake/conda/, and conda runs the
    pip section as a requirements file beside that copy: the paths must hold from there (${WOBBLE_ROOT}, set by
    the Snakefile), which relative ones (``..``) did not. pip itself resolves the lines (dry run, no index)."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is needed to read the checkout's metadata without build isolation")
    assert "os.environ.update(WOBBLE_ROOT=os.path.abspath(workflow.basedir))" in (ROOT / "Snakefile").read_text()
    env = yaml.safe_load((ROOT / "envs" / "wobble.yaml").read_text())
    pip_lines = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    copy_dir = tmp_path / ".snakemake" / "conda"
    copy_dir.mkdir(parents=True)
    (copy_dir / "condaenv.requirements.txt").write_text(
        "\n".join(line for line in pip_lines if not line.startswith("torch")) + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation",
                           "--no-index", "-r", "condaenv.requirements.txt"], cwd=copy_dir, capture_output=True,
                          text=True, env={**os.environ, "WOBBLE_ROOT": str(ROOT)})
    assert proc.returncode == 0 and "Would install wobble" in proc.stdout, proc.stdout + proc.stderr
