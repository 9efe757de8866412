"""CI fails on a skip it did not expect (a pytest plugin; tests/conftest.py loads it).

Under ``CI=true`` (also ``1``/``yes``) every skipped test, and every test file skipped as a whole, needs its reason
to match an entry of ``tests/skip_allowlist.txt``: a skip the CI machine can legitimately meet (no GPU, ...). Any
other skip is reported in its own section of the summary and the session's exit status becomes 1 (tests failed),
whatever passed. Outside CI a skip stays a skip; ``make test`` prints every reason (``-rs``).

The allow-list: one regular expression per line, matched with ``re.search`` against the skip's reason (pytest's
``Skipped:`` prefix removed), each directly below a ``# why: ...`` line saying why CI meets it; other ``#`` lines
and blank lines are comments. An entry without its why is a usage error. ``WOBBLE_SKIP_ALLOWLIST`` names another
file (the plugin's own tests use it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ALLOWLIST = Path(__file__).resolve().parent / "skip_allowlist.txt"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def read_allowlist(path: Path) -> list[tuple[re.Pattern, str]]:
    """(pattern, why) of each entry."""
    entries, why = [], None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.strip()
        if text.startswith("# why:"):
            why = text.removeprefix("# why:").strip() or None
        elif text and not text.startswith("#"):
            if why is None:
                raise pytest.UsageError(f"{path}:{n}: allowed skip {text!r} has no '# why: ...' line above it")
            try:
                entries.append((re.compile(text), why))
            except re.error as e:
                raise pytest.UsageError(f"{path}:{n}: {text!r} is not a regular expression: {e}") from None
            why = None
    return entries


def skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


class SkipPolicy:
    """Collects the session's skips whose reason no allow-list entry matches; fails the session on any."""

    def __init__(self, allowlist: Path):
        self.path = allowlist
        self.allowed = read_allowlist(allowlist)
        self.unexpected: list[tuple[str, str]] = []

    def _check(self, nodeid: str, reason: str) -> None:
        if not any(pattern.search(reason) for pattern, _ in self.allowed):
            self.unexpected.append((nodeid, reason))

    def pytest_runtest_logreport(self, report):
        if report.skipped and not hasattr(report, "wasxfail"):
            self._check(report.nodeid, skip_reason(report))

    def pytest_collectreport(self, report):
        if report.skipped:
            self._check(report.nodeid, skip_reason(report))

    def pytest_sessionfinish(self, session, exitstatus):
        if self.unexpected and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        if not self.unexpected:
            return
        terminalreporter.section("unexpected skips (CI=true)", sep="=", red=True, bold=True)
        for nodeid, reason in self.unexpected:
            terminalreporter.write_line(f"UNEXPECTED SKIP {nodeid}: {reason}")
        terminalreporter.write_line(f"CI fails on a skip whose reason matches no entry of {self.path}; make the "
                                    f"condition hold on the CI machine, or add the reason there with a '# why:' line")


def pytest_configure(config):
    if in_ci():
        path = Path(os.environ.get("WOBBLE_SKIP_ALLOWLIST") or ALLOWLIST)
        config.pluginmanager.register(SkipPolicy(path), "wobble-skip-policy")
