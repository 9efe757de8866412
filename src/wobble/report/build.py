"""One run's Snakemake report, ``<root>/report.html`` (``make report``, ``make reference-report``: ``wobble report
[--configfile F]`` resolves the run's config and calls :func:`build_report`).

It first writes the table views the run's folder lacks (:func:`wobble.report.views.fill_views`: a fresh clone's
committed results keep their ``.md`` files, not the views), then runs ``snakemake --report`` with the report's
stylesheet (``report/style.css``: the info panel keeps its width whatever the page beside it holds).

Snakemake warns once per output file that has no record in ``.snakemake/metadata``; a fresh clone has none (the
folder is not committed), so every output of the whole workflow would print a warning (hundreds). Those lines
become one line saying how many and what it means; every other line of Snakemake's is printed as it came.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wobble.report.views import fill_views

STYLESHEET = "report/style.css"
NO_RECORD = ("Missing metadata for file ", "Metadata for file ")


def split_warnings(stderr: str) -> tuple[list[str], int]:
    """Snakemake's stderr lines without its per-file "no metadata" warnings, and how many of those there were."""
    kept, dropped = [], 0
    for line in stderr.splitlines():
        if line.startswith(NO_RECORD):
            dropped += 1
        else:
            kept.append(line)
    return kept, dropped


def no_record_line(n: int) -> str:
    return (f"{n} output files have no Snakemake record here (.snakemake/ is not committed; a fresh clone's "
            "results were made elsewhere): the report shows them, without their run times.")


def report_command(out: str, configfile: str | None) -> list[str]:
    snakemake = Path(sys.executable).with_name("snakemake")
    cmd = [str(snakemake) if snakemake.exists() else "snakemake", "--report", out, "--report-stylesheet", STYLESHEET]
    return cmd + (["--configfile", configfile] if configfile else [])


def build_report(root: str, configfile: str | None = None, output: str | None = None) -> int:
    """Write the views the run under ``root`` lacks, then its report (``output``, default ``<root>/report.html``)
    with ``snakemake --report`` on ``configfile``; Snakemake's exit status."""
    filled = fill_views(root)
    if filled:
        print(f"{len(filled)} table views written under {root}/ from their .md", file=sys.stderr)
    out = output or f"{root}/report.html"
    proc = subprocess.run(report_command(out, configfile), capture_output=True, text=True)
    kept, dropped = split_warnings(proc.stderr)
    sys.stdout.write(proc.stdout)
    print("\n".join(kept), file=sys.stderr)
    if dropped:
        print(no_record_line(dropped), file=sys.stderr)
    if proc.returncode == 0:
        print(f"open {out} in a browser", file=sys.stderr)
    elif "marked for report but does not exist" in proc.stderr:
        print(f"The results under {root}/ lack a file the workflow now declares: rerun the run (make run, make "
              "reference, or snakemake with its --configfile) to make it, then this report.", file=sys.stderr)
    return proc.returncode
