"""The data path a user without the offline mirror takes: Snakemake's `acquire` and `prepare` download from a
loopback server that stands in for GitHub (its files cut from the upstream repositories at the pinned commits,
tests/fixtures/upstream/), one source by URL (last_letters) and one rebuilt by its recipe (icl_mnli), and give
the same bytes as the mirror; a file the server lacks stops the run in one line and leaves nothing behind."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import yaml

from conftest import MIRROR, REPO, copy_workflow, run_snakemake
from loopback_http import Upstream
from wobble.data import acquire, pins_for, prepare
from wobble.io import sha256_file

pytestmark = pytest.mark.e2e

FIXTURES = REPO / "tests" / "fixtures" / "upstream"
SOURCES = {"last_letters": "last_letters", "icl_mnli": "mnli_genre"}  # source -> its prepared dataset
TARGETS = [f"resources/prepared/{d}.jsonl" for d in SOURCES.values()]


def upstream_files() -> dict[str, bytes]:
    """URL path (/raw/<repo>/<commit>/<path>) -> the upstream file's bytes."""
    return {"/raw/" + p.relative_to(FIXTURES).as_posix()[:-3]: gzip.decompress(p.read_bytes())
            for p in FIXTURES.rglob("*.gz")}


def workflow_without_mirror(tmp_path: Path, up: Upstream) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    copy_workflow(tmp_path)
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    cfg["data"].update(mirror=None, sources=list(SOURCES), download_timeout_s=10,
                       url_prefixes={"https://raw.githubusercontent.com/": up.url + "/raw/"})
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp_path


def partial_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name.endswith((".part", ".tmp")))


def test_sources_download_and_rebuild_to_the_mirrors_bytes(tmp_path):
    with Upstream(upstream_files()) as up:
        work = workflow_without_mirror(tmp_path / "work", up)
        proc = run_snakemake(work, *TARGETS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = (work / "logs" / "acquire" / "icl_mnli.log").read_text()
    assert "building with recipe icl_mnli" in log
    assert all(p.startswith("/raw/") for p in up.requests) and len(up.requests) == 11
    assert partial_files(work) == []
    if not MIRROR.is_dir():
        return  # the recipe and the downloads already checked every file against its pin
    ref = tmp_path / "ref"
    for source, dataset in SOURCES.items():
        acquire(source, ref / "data" / source, mirror=MIRROR)
        prepare(dataset, {source: ref / "data" / source}, ref / f"{dataset}.jsonl")
        for pin in pins_for(source):  # every required file; optional ones (documentation) only the mirror has
            if not pin.optional:
                mine = work / "resources" / "data" / source / pin.relpath
                assert sha256_file(mine) == sha256_file(ref / "data" / source / pin.relpath), mine
        assert sha256_file(work / "resources" / "prepared" / f"{dataset}.jsonl") == sha256_file(ref / f"{dataset}.jsonl")


def test_a_missing_upstream_file_stops_in_one_line_and_leaves_nothing(tmp_path):
    files = upstream_files()
    gone = next(p for p in files if p.endswith("16-42/train.tsv"))
    del files[gone]
    with Upstream(files) as up:
        work = workflow_without_mirror(tmp_path, up)
        proc = run_snakemake(work, "resources/prepared/mnli_genre.jsonl")
    assert proc.returncode != 0
    log = (work / "logs" / "acquire" / "icl_mnli.log").read_text()
    line = next(ln for ln in log.splitlines() if "is unavailable" in ln)
    assert "source 'icl_mnli': file 'mnli_train_genre_kshot480.jsonl'" in line
    assert "recipe 'icl_mnli' could not rebuild it" in line and "HTTP 404" in line and "16-42/train.tsv" in line
    assert "Traceback" not in log
    assert not (work / "resources" / "data" / "icl_mnli").exists()
    assert partial_files(work) == []
