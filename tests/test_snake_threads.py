"""Jobs run torch on the threads Snakemake booked for them (wobble.snake.follow_threads)."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from wobble.snake import THREAD_VARS, follow_threads, logged  # noqa: E402


@pytest.fixture
def restore_threads(monkeypatch):
    for var in THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_logged_sets_torch_threads_to_the_jobs_threads(restore_threads, tmp_path):
    torch.set_num_threads(2)
    job = SimpleNamespace(threads=1, log=[str(tmp_path / "job.log")])
    with logged(job):
        assert torch.get_num_threads() == 1
    assert all(os.environ[var] == "1" for var in THREAD_VARS)


def test_follow_threads_reaches_a_torch_imported_later(restore_threads):
    """Scripts import torch after entering ``logged`` too: the environment must carry the count."""
    follow_threads(1)
    code = "import torch; print(torch.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         check=True).stdout.strip()
    assert out == "1"


def test_follow_threads_floors_at_one(restore_threads):
    follow_threads(0)
    assert torch.get_num_threads() == 1 and os.environ["OMP_NUM_THREADS"] == "1"
