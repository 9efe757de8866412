"""The present-tense check of ``make lint`` (tests/tools/check_present_tense.py): it passes the repository, fails
on a date, a commit hash or an issue number in a comment or docstring, and leaves alone what only looks alike."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from check_present_tense import ROOT, check, main  # noqa: E402

BAD_PY = '''"""A module changed on 2026-11-26 (issue 13, item 2)."""

X = 1  # a bug fixed in 1a2b3c4d, see #21


def f():
    """Run history: slower until 2026-11-27."""
    return "a string literal is never read: 2026-11-26, issue 5, #7, 1a2b3c4d"
'''

FINE_PY = '''"""Gu et al. 2023 (arXiv 2307.03393); checked against allenai/natural-instructions@8540acd3 in version 0.1.0.

The paper's Error#1 is an unknown answer; transformers 5.24; a colour "#1f77b4"; a task id task1557.
"""

SHA = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"  # sha256 of the GGUF (64 hex: not a commit)
# an abbreviated digest in an example: sha256: b179c952...
# a full digest 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 is too long for a commit
# issues of batching, item 4 of a list, 12 items, 1e-4 tolerance, 0x1F, deadbeef, 2023-24 season
'''


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_repository_passes():
    assert check(ROOT) == []


def test_a_date_a_commit_hash_and_an_issue_number_are_each_caught(tmp_path):
    root = _tree(tmp_path, {
        "src/wobble/bad.py": BAD_PY,
        "config.yaml": "n_items: 15   # 16 until 2026-11-26\nname: \"a value with #3 in quotes\"  # see issue 8\n",
        "rules/x.smk": "rule x:\n    # waited behind the others (run of c93db2c)\n    output: \"x\"\n",
        "Makefile": "lint:\n\ttrue  # added for #34\n",
    })
    assert sorted(check(root)) == sorted([
        "Makefile:2: issue reference '#34'",
        "config.yaml:1: date 2026-11-26",
        "config.yaml:2: issue reference 'issue 8'",
        "rules/x.smk:2: commit-like hash c93db2c",
        "src/wobble/bad.py:1: date 2026-11-26",
        "src/wobble/bad.py:1: issue reference 'issue 13'",
        "src/wobble/bad.py:3: issue reference '#21'",
        "src/wobble/bad.py:3: commit-like hash 1a2b3c4d",
        "src/wobble/bad.py:7: date 2026-11-27",
    ])
    assert main([str(root)]) == 1


def test_what_only_looks_like_history_passes(tmp_path):
    root = _tree(tmp_path, {
        "src/wobble/fine.py": FINE_PY,
        "configs/x.yaml": "deviations:\n  - \"measured on 2026-11-26 (issue 3)\"   # a string value is not a comment\n",
        "tests/fixtures/smoke_sha256.json": '{"note": "made 2026-11-26 at 1a2b3c4d, issue 9"}\n',
        "tests/fixtures/notes.py": "# fixtures are data: 2026-11-26, issue 9\n",
    })
    assert check(root) == []
    assert main([str(root)]) == 0


def test_benchmark_scripts_their_readme_and_the_test_tools_are_read(tmp_path):
    """benchmarks/: every comment and docstring of its scripts and every line of its Markdown (the README's prose
    and tables); tests/tools/ like any test code. Its JSON records are data, not prose."""
    root = _tree(tmp_path, {
        "benchmarks/bench_x.py": '"""Timing of x (issue 13, item 4)."""\n',
        "benchmarks/run_x.sh": "# re-measured for #12\ntrue\n",
        "benchmarks/README.md": "# Benchmarks\n\n| row | 2.3x, measured 2026-11-26 |\n",
        "benchmarks/archive/README.md": "Records of earlier configurations.\n",
        "benchmarks/x.json": '{"note": "run at 1a2b3c4d on 2026-11-26"}\n',
        "tests/tools/tool.py": "X = 1  # since 1a2b3c4d\n",
    })
    assert sorted(check(root)) == sorted([
        "benchmarks/README.md:3: date 2026-11-26",
        "benchmarks/bench_x.py:1: issue reference 'issue 13'",
        "benchmarks/run_x.sh:1: issue reference '#12'",
        "tests/tools/tool.py:1: commit-like hash 1a2b3c4d",
    ])
