"""wobble.resume: who counts as a live Snakemake of this checkout, when a lock is stale, which args --unlock sees."""

from __future__ import annotations

import os

import pytest

from wobble.errors import WobbleError
from wobble.resume import _config_args, has_lock, live_snakemakes, resume


def _fake_proc(root, pid, argv, cwd):
    d = root / str(pid)
    d.mkdir(parents=True)
    (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    os.symlink(cwd, d / "cwd")


def test_live_snakemakes_of_this_checkout_only(tmp_path):
    here, other, proc = tmp_path / "here", tmp_path / "other", tmp_path / "proc"
    here.mkdir()
    other.mkdir()
    _fake_proc(proc, 101, ["/x/.venv/bin/python3", "/x/.venv/bin/snakemake", "--cores", "2"], here)
    _fake_proc(proc, 102, ["/x/.venv/bin/snakemake", "--cores", "2"], other)          # another checkout
    _fake_proc(proc, 103, ["python", "-m", "pytest"], here)                             # not snakemake
    _fake_proc(proc, 104, ["python", "/x/snakemake/__main__.py", "-n"], here)
    (proc / "self").mkdir()
    assert [pid for pid, _ in live_snakemakes(here, proc)] == [101, 104]
    assert live_snakemakes(other, proc)[0][0] == 102


def test_resume_refuses_while_snakemake_is_alive(tmp_path, monkeypatch):
    monkeypatch.setattr("wobble.resume.live_snakemakes", lambda workdir: [(4242, "snakemake --cores 2")])
    with pytest.raises(WobbleError, match=r"still running here \(pid 4242"):
        resume("snakemake", ["--cores", "2"], tmp_path)


def test_stale_lock_is_unlocked_then_rerun_incomplete(tmp_path, monkeypatch):
    calls = []

    class Done:
        returncode = 0

    monkeypatch.setattr("wobble.resume.live_snakemakes", lambda workdir: [])
    monkeypatch.setattr("wobble.resume.subprocess.run", lambda cmd, **kw: calls.append(cmd) or Done())
    assert resume("sm", ["target", "--cores", "2", "--configfile", "run.yaml"], tmp_path) == 0
    assert calls == [["sm", "target", "--cores", "2", "--configfile", "run.yaml", "--rerun-incomplete"]]
    assert not has_lock(tmp_path)
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("x")
    calls.clear()
    resume("sm", ["target", "--cores", "2", "--configfile", "run.yaml"], tmp_path)
    assert calls[0] == ["sm", "--unlock", "--configfile", "run.yaml"] and calls[1][-1] == "--rerun-incomplete"


def test_config_args():
    assert _config_args(["--cores", "2", "--configfile", "a.yaml", "b.yaml", "-n"]) == ["--configfile", "a.yaml",
                                                                                         "b.yaml"]
    assert _config_args(["--cores", "2"]) == []


def test_cli_passes_every_argument_after_resume_to_snakemake(monkeypatch):
    """`wobble resume --cores 2 --configfile run.yaml` (argparse REMAINDER alone rejected '--cores')."""
    from wobble import cli

    seen = []
    monkeypatch.setattr("wobble.resume.resume", lambda snakemake, args: seen.append(list(args)) or 0)
    assert cli.main(["resume", "--cores", "2", "--configfile", "run.yaml", "-n"]) == 0
    assert seen == [["--cores", "2", "--configfile", "run.yaml", "-n"]]
    with pytest.raises(SystemExit):
        cli.main(["sources", "--cores", "2"])
