"""Every verdict that a re-render changes: two ledgers' ``findings.csv`` (before, after) joined on study, claim and
model, printed as a Markdown list for the re-render's commit message and the ledger reader.

A row whose verdict is the same is left out; a row only one side has is listed as added or removed (a claim renamed
or split shows as one of each). The reason column is printed beside each change, so a reader sees why.

    .venv/bin/python tests/tools/verdict_changes.py <(git show HEAD:results/findings.csv) results/findings.csv
"""

from __future__ import annotations

import csv
import sys
from collections import Counter

KEY = ("study", "claim", "model")


def read_rows(path: str) -> dict[tuple[str, ...], dict[str, str]]:
    """``{(study, claim, model): row}`` of a findings.csv; a repeated key is an error naming the file and row."""
    out: dict[tuple[str, ...], dict[str, str]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for i, row in enumerate(csv.DictReader(fh), start=2):
            key = tuple(row[k] for k in KEY)
            if key in out:
                raise SystemExit(f"{path}: line {i}: {'/'.join(key)} appears twice; expected one row per claim and model")
            out[key] = row
    return out


def changes(before: dict, after: dict) -> list[str]:
    """One Markdown line per changed, added or removed row, in the after-ledger's order (removed rows last)."""
    lines = []
    for key, row in after.items():
        old = before.get(key)
        if old is None:
            lines.append(f"- added `{'/'.join(key)}`: **{row['verdict']}** ({row['reason']})")
        elif old["verdict"] != row["verdict"]:
            lines.append(f"- `{'/'.join(key)}`: {old['verdict']} → **{row['verdict']}** ({row['reason']})")
    lines += [f"- removed `{'/'.join(key)}` (was {row['verdict']})" for key, row in before.items() if key not in after]
    return lines


def counts(rows: dict) -> str:
    """``verdict n, ...`` over a ledger's rows."""
    return ", ".join(f"{v} {n}" for v, n in sorted(Counter(r["verdict"] for r in rows.values()).items()))


def main(before_path: str, after_path: str) -> int:
    before, after = read_rows(before_path), read_rows(after_path)
    print(f"before: {len(before)} rows ({counts(before)})\nafter: {len(after)} rows ({counts(after)})\n")
    print("\n".join(changes(before, after)) or "no verdict changes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
