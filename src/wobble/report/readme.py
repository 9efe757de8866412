"""README's "what the results show": the verdict counts of each committed run's merged ledger, generated, so the
README states nothing about the results that its ledgers do not (a test compares the block with this output).

A run is a results folder with a merged ledger (``findings.csv``): the default run (``results/``) and the reference
run (``results/reference/``). Per run: its verdicts per study, the would-be verdicts of its not-applicable rows
(the interval alone, where the ledger records it), and the commit that rendered the ledger (its provenance
sidecar), so a reader sees which rule made the counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

START, END = "<!-- results:start -->", "<!-- results:end -->"
RUNS = (("default run (`make run`)", "results"), ("reference run (`make reference`)", "results/reference"))
ORDER = ("reproduced", "contradicted", "not applicable", "inconclusive")


def _rendered_by(csv: Path) -> str:
    sidecar = csv.with_name(csv.name + ".prov.json")
    if not sidecar.is_file():
        return "unrecorded commit"
    commit = json.loads(sidecar.read_text()).get("git", {}).get("commit") or ""
    return f"commit {commit[:7]}" if commit else "unrecorded commit"


def run_block(repo: Path, label: str, folder: str) -> list[str]:
    csv = repo / folder / "findings.csv"
    if not csv.is_file():
        return [f"**The {label}**: no ledger committed.", ""]
    rows = pd.read_csv(csv)
    if "counted" in rows:
        rows = rows[rows["counted"].astype(str) != "False"]
    lines = [f"**The {label}**: [`{folder}/findings.md`]({folder}/findings.md), rendered by {_rendered_by(csv)}.", "",
             "| study | rows | " + " | ".join(ORDER) + " |", "|---|---:|" + "---:|" * len(ORDER)]
    for study, part in list(rows.groupby("study", sort=False)) + [("all", rows)]:
        counts = part["verdict"].value_counts()
        name = study if study == "all" else f"`{study}`"
        lines.append(f"| {name} | {len(part)} | " + " | ".join(str(int(counts.get(v, 0))) for v in ORDER) + " |")
    if "would_be" in rows:
        na = rows[rows["verdict"] == "not applicable"]["would_be"].value_counts()
        lines += ["", "Not applicable rows, by what their interval alone would say: "
                  + ", ".join(f"{int(na.get(v, 0))} {v}" for v in ("reproduced", "contradicted", "inconclusive")) + "."]
    else:  # a ledger rendered before the shared engine: its verdicts follow the earlier definitions
        lines += ["", "This ledger predates the current claim definitions: a new run of it applies them."]
    return lines + [""]


def results_block(repo: str | Path) -> str:
    """The generated block (between the markers) for the runs committed under ``repo``."""
    repo = Path(repo)
    lines = [line for label, folder in RUNS for line in run_block(repo, label, folder)]
    return "\n".join(lines)


def write_into(readme: str | Path, repo: str | Path) -> None:
    """Replace README's block between the results markers with :func:`results_block`."""
    from wobble.io import atomic_write

    text = Path(readme).read_text()
    head, rest = text.split(START, 1)
    with atomic_write(readme) as f:
        f.write(head + START + "\n" + results_block(repo) + END + rest.split(END, 1)[1])


if __name__ == "__main__":  # python -m wobble.report.readme README.md
    import sys

    write_into(sys.argv[1], Path(sys.argv[1]).resolve().parent)
