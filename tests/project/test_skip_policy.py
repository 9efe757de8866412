"""tests/skip_policy.py: under CI=true an unexpected skip fails the session, an allow-listed one does not; outside
CI a skip stays a skip. Each case is a pytest subprocess on a tiny test file written here."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skip_policy import ALLOWLIST, read_allowlist

TESTS = Path(__file__).resolve().parents[1]

TEST_FILE = '''
import pytest

def test_passes():
    assert True

def test_allowed_skip():
    pytest.skip("no CUDA device")

@pytest.mark.skipif(True, reason="the data mirror is not present")
def test_unexpected_skip():
    pass

@pytest.mark.xfail(reason="an expected failure is not a skip")
def test_xfail():
    assert False
'''

ALLOW = """\
# why: the CI machine has no GPU
^no CUDA device$
"""


def run_pytest(tmp_path: Path, files: dict[str, str], ci: str | None, allow: str = ALLOW):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / "allow.txt").write_text(allow)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")])),
               WOBBLE_SKIP_ALLOWLIST=str(tmp_path / "allow.txt"))
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "skip_policy", "-p", "no:cacheprovider", "-rs",
                           "-q", *files], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_unexpected_skip_fails_under_ci(tmp_path):
    proc = run_pytest(tmp_path, {"test_toy.py": TEST_FILE}, ci="true")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 passed, 2 skipped, 1 xfailed" in out  # nothing else changes: the tests' own outcomes stand
    assert "unexpected skips (CI=true)" in out
    assert "UNEXPECTED SKIP test_toy.py::test_unexpected_skip: the data mirror is not present" in out
    assert "UNEXPECTED SKIP test_toy.py::test_allowed_skip" not in out


def test_allowed_skips_pass_under_ci(tmp_path):
    only_allowed = TEST_FILE.replace('reason="the data mirror is not present"', 'reason="no CUDA device"')
    proc = run_pytest(tmp_path, {"test_toy.py": only_allowed}, ci="true")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unexpected skips" not in proc.stdout and "SKIPPED [1] test_toy.py" in proc.stdout  # -rs: the reasons


def test_outside_ci_a_skip_stays_a_skip(tmp_path):
    for ci in (None, "false"):
        proc = run_pytest(tmp_path, {"test_toy.py": TEST_FILE}, ci=ci)
        assert proc.returncode == 0 and "unexpected skips" not in proc.stdout, proc.stdout + proc.stderr


def test_a_file_skipped_at_import_fails_under_ci_and_the_allow_list_needs_its_why(tmp_path):
    module_skip = {"test_mod.py": 'import pytest\n\npytest.importorskip("no_such_module_here")\n\n\ndef test_x():\n'
                                  '    pass\n',
                   "test_ok.py": "def test_ok():\n    pass\n"}
    proc = run_pytest(tmp_path, module_skip, ci="true")
    assert proc.returncode == 1 and "1 passed, 1 skipped" in proc.stdout, proc.stdout + proc.stderr
    assert "UNEXPECTED SKIP test_mod.py: could not import 'no_such_module_here'" in proc.stdout
    proc = run_pytest(tmp_path, {"test_toy.py": TEST_FILE}, ci="true", allow="^no CUDA device$\n")
    assert proc.returncode == 4 and "has no '# why: ...' line above it" in proc.stderr, proc.stdout + proc.stderr


def test_the_repository_allow_list_parses_and_every_entry_has_a_why():
    entries = read_allowlist(ALLOWLIST)
    assert entries and all(why for _, why in entries)
    assert any(pattern.search("no CUDA device") for pattern, _ in entries)
    assert not any(pattern.search("offline data mirror /x/shared/data is not present") for pattern, _ in entries)


@pytest.mark.parametrize("reason", ["SLURM test needs root: it installs slurm-wlm and starts its daemons",
                                    "no Chromium here and no apt-get (as root) to install it",
                                    "WOBBLE_TEST_SLURM=0: the real-SLURM run (it installs and starts SLURM here) is "
                                    "switched off"])
def test_the_skips_ci_must_not_meet_are_not_allowed(reason):
    """CI runs as root, with apt-get, with the SLURM run on: these skips there mean a test did not run."""
    assert not any(pattern.search(reason) for pattern, _ in read_allowlist(ALLOWLIST))
