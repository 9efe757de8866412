"""Comments say what is and why, in the present tense: no dates, commit hashes or issue numbers.

Run history belongs in git, measured costs in benchmarks/README.md. This check (``make lint`` runs it) reads the
comments and docstrings of the code, rules, config, schemas, Makefile, tests (their tools included) and benchmark
scripts, and every line of the Markdown among them (benchmarks/README.md), and fails on

* a date (year-month-day, e.g. the form ``YYYY-MM-DD``),
* a commit-hash-looking token: 7-40 lower-case hex characters with at least one digit and one letter,
* an issue reference: "issue" followed by a number, or a number right after ``#``.

Only comments and docstrings are read, never string literals: a string that reaches an output (a footnote, a
prompt, a label) changes only with the outputs. Not flagged: a 64-character sha256 (too long for a commit), a
year alone ("2023"), version numbers, and these two forms:

* a line that says ``sha256``: its hex is a content digest (e.g. an abbreviated one in an example);
* ``owner/repo@rev``: a revision of another repository the code was checked against (an upstream pin).

Skipped: ``tests/fixtures/`` (data files and the hashes of pinned artifacts, not prose).

    .venv/bin/python tests/tools/check_present_tense.py [ROOT]      # exit 1 and one line per violation
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what is read, relative to the repository root
PLACES = ("src", "scripts", "rules", "Snakefile", "config.yaml", "configs", "schemas", "Makefile", "tests",
          "benchmarks")
SKIP_DIRS = ("tests/fixtures",)
PYTHON_LIKE = (".py", ".smk")  # and the Snakefile: comments and docstrings through Python's tokenizer
HASH_COMMENTS = (".yaml", ".yml", ".sh", ".toml", ".cfg")  # and the Makefile: '#' comments
PROSE = (".md",)  # every line is prose

DATE = re.compile(r"(?<!\d)20\d\d-[01]\d-[0-3]\d(?!\d)")
ISSUE = re.compile(r"\bissues?\s+#?\d+|(?<![\w&/#])#\d+\b", re.IGNORECASE)
HEX = re.compile(r"(?<![\w./@-])[0-9a-f]{7,40}(?![\w-])")
UPSTREAM_PIN = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40}\b")


def _is_commit_like(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def violations_in_text(text: str) -> list[str]:
    """What is wrong with one line of comment or docstring text (empty when nothing is)."""
    found = [f"date {m.group()}" for m in DATE.finditer(text)]
    found += [f"issue reference {m.group()!r}" for m in ISSUE.finditer(text)]
    if "sha256" not in text.lower():
        pinned = UPSTREAM_PIN.sub("", text)
        found += [f"commit-like hash {m.group()}" for m in HEX.finditer(pinned) if _is_commit_like(m.group())]
    return found


def _python_prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and every string that is a statement on its own (docstrings), per line."""
    out: list[tuple[int, str]] = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    starts_line = True
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
        elif tok.type == tokenize.STRING and starts_line:
            nxt = next((t for t in tokens[i + 1:] if t.type not in (tokenize.COMMENT, tokenize.NL)), None)
            if nxt is None or nxt.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                out += [(tok.start[0] + k, line) for k, line in enumerate(tok.string.splitlines())]
        if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            starts_line = True
        elif tok.type not in (tokenize.NL, tokenize.COMMENT):
            starts_line = False
    return out


_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")


def _hash_comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of every '#' comment of a YAML / shell / Makefile text (quoted strings are not comments)."""
    out = []
    for n, line in enumerate(source.splitlines(), 1):
        m = re.search(r"(?:^|\s)#.*", _QUOTED.sub(lambda q: " " * len(q.group()), line))
        if m:
            out.append((n, line[m.start():]))
    return out


def prose_of(path: Path, source: str) -> list[tuple[int, str]]:
    if path.suffix in PYTHON_LIKE or path.name == "Snakefile":
        try:
            return _python_prose(source)
        except (tokenize.TokenError, SyntaxError):  # not tokenizable as Python: its '#' comments at least
            return _hash_comments(source)
    if path.suffix in HASH_COMMENTS or path.name == "Makefile":
        return _hash_comments(source)
    if path.suffix in PROSE:
        return list(enumerate(source.splitlines(), 1))
    return []


def files(root: Path) -> list[Path]:
    out = []
    for place in PLACES:
        p = root / place
        for f in sorted(p.rglob("*")) if p.is_dir() else [p] if p.is_file() else []:
            rel = f.relative_to(root).as_posix()
            if not f.is_file() or any(rel.startswith(d + "/") for d in SKIP_DIRS):
                continue
            if any(part == "__pycache__" or part.endswith(".egg-info") for part in f.relative_to(root).parts):
                continue
            out.append(f)
    return out


def check(root: Path = ROOT) -> list[str]:
    """One ``path:line: what`` per violation under ``root``."""
    problems = []
    for f in files(root):
        try:
            source = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for line, text in prose_of(f, source):
            problems += [f"{f.relative_to(root).as_posix()}:{line}: {v}" for v in violations_in_text(text)]
    return problems


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    problems = check(Path(argv[0]) if argv else ROOT)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} comment(s) with a date, commit hash or issue number: say what is and why instead "
              "(history lives in git, measured costs in benchmarks/README.md)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
