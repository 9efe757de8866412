"""End to end: the GGUF-on-disk and the managed-llama.cpp examples (configs/examples/gguf.yaml, llamacpp.yaml) run
for real on a tiny GGUF at smoke scale, each as its user would write it (a base, a name, the model): the followup
study only (the cheapest with a ledger and a scorecard), its smallest sample. Each run writes its tables, its
ledger rows, its model's scorecard and its own page under results/<name>/, and nothing into results/."""

from __future__ import annotations

import csv
import os
import subprocess

import pytest
import yaml

from conftest import DIST_VARS, REPO, SNAKEMAKE, copy_workflow
from wobble.models.tiny import write_tiny_gguf

pytestmark = pytest.mark.e2e

#: The study each run keeps of its example, at configs/smoke.yaml's sample without the few-shot mitigation (the
#: cheapest run whose outputs fill the study's tables, ledger and scorecard).
STUDY = "followup"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror):
    """One scratch copy of the workflow for both runs (they share the prepared data and the judge model)."""
    work = tmp_path_factory.mktemp("user-run")
    copy_workflow(work)
    (work / "run.yaml").rename(work / "smoke-base.yaml")  # configs/smoke.yaml with the mirror's absolute path
    for folder in (work / "models", work / "models" / "gguf"):  # llamacpp.yaml's file, gguf.yaml's folder
        folder.mkdir(parents=True, exist_ok=True)
        write_tiny_gguf(folder / "model.Q4_K_M.gguf", seed=1, context=4096)
    return work


def user_config(work, example: str) -> dict:
    """The example as shipped, pointed at the tiny GGUF and the smoke base, its run cut to one small study."""
    text = (REPO / "configs" / "examples" / example).read_text()
    text = text.replace("../../config.yaml", "smoke-base.yaml").replace("/models/", f"{work}/models/")
    cfg = yaml.safe_load(text)
    cfg["studies"] = [STUDY]
    cfg.pop("first_token", None)
    cfg[STUDY] = {**cfg[STUDY], "mitigations": [], "n_judge_examples": 2}
    return cfg


def run(work, cfg: dict) -> subprocess.CompletedProcess:
    (work / "mine.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARS}
    return subprocess.run(["nice", str(SNAKEMAKE), "--cores", "1", "--configfile", "mine.yaml"], cwd=work,
                          capture_output=True, text=True, timeout=1200, env=env)


def check_outputs(work, name: str, model: str) -> None:
    root = work / "results" / name
    assert sorted(p.name for p in (root / STUDY / "tables").glob("*.md")), "no tables"
    with open(root / "findings.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert model in {r["model"] for r in rows} and all(r["verdict"] for r in rows)
    assert {r["model"] for r in rows} <= {model, "all", "any of 1"}  # its own rows, and those pooled over it
    card = (root / "scorecard" / f"{model}.md").read_text()
    assert card.startswith(f"# Scorecard: {model}") and "| followup |" in card
    page = (root / "README.md").read_text()
    assert page.startswith(f"# {name}\n") and f"### {model}" in page and "## Claims ledger" in page
    assert f"{len(rows)} row" in page and "from the first job's start to the last one's end" in page
    assert any((root / "benchmarks" / STUDY).glob("*.tsv")) and not (work / "results" / STUDY).exists()


def test_the_gguf_example_runs_end_to_end(workdir):
    cfg = user_config(workdir, "gguf.yaml")
    (model,) = cfg["models"]
    proc = run(workdir, cfg)
    assert proc.returncode == 0, proc.stderr[-4000:]
    check_outputs(workdir, cfg["name"], model)


def test_the_managed_llamacpp_example_runs_end_to_end(workdir):
    pytest.importorskip("xllamacpp", reason="xllamacpp (llama.cpp server) is not installed: pip install -e .[test]")
    cfg = user_config(workdir, "llamacpp.yaml")
    (model,) = cfg["models"]
    proc = run(workdir, cfg)
    assert proc.returncode == 0, proc.stderr[-4000:]
    check_outputs(workdir, cfg["name"], model)
    logs = list((workdir / "results" / cfg["name"] / "logs" / STUDY).glob(f"*.{model}.server.log"))
    assert logs and all(log.read_text().rstrip().endswith("SIGTERM, stopping") for log in logs)
