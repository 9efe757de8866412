"""Jobs run torch on the threads Snakemake booked for them (wobble.threads.follow_threads, entered through
wobble.snake.logged), and the Snakefile ends the scheduler's leftover timers (wobble.snake.cancel_scheduler_timers)."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from wobble.snake import logged  # noqa: E402
from wobble.threads import THREAD_VARS, follow_threads  # noqa: E402


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


def test_cancel_scheduler_timers_ends_pending_timers_without_firing_them():
    """The Snakefile's onsuccess/onerror: a pending re-run timer (Snakemake's scheduler leaves one of the
    profile's 100-s timespan per pass) must not keep the process alive after the run."""
    import threading

    from wobble.snake import cancel_scheduler_timers

    fired = []
    timer = threading.Timer(600, lambda: fired.append(1))
    timer.start()
    other = threading.Thread(target=threading.Event().wait, args=(0.1,))
    other.start()
    assert cancel_scheduler_timers() >= 1
    timer.join(10)
    other.join()
    assert not timer.is_alive() and fired == []
