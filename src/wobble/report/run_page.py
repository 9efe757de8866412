"""A named run's own page (``results/<name>/README.md``): the first thing in its folder and in its report. It
says which models ran on which studies, shows each model's scorecard and the claims-ledger rows of those models
(the verdicts counted, then one short row per claim), and how long the run took, from its Snakemake benchmark
files. The default and the reference runs keep their own layout and have no such page.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Mapping, Sequence

#: The ledger's verdicts in the order the page counts them.
VERDICTS = ("reproduced", "contradicted", "inconclusive", "not applicable")


def _number(value: str | float | None) -> str:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if x != x else f"{x:.3g}"


def ledger_counts(rows: Iterable[Mapping[str, str]]) -> str:
    """"12 rows: 2 reproduced, 1 contradicted, 4 inconclusive, 5 not applicable" (verdicts with no row left out)."""
    rows = list(rows)
    counts = Counter(r["verdict"] for r in rows)
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
    parts += [f"{n} {v}" for v, n in counts.items() if v not in VERDICTS]
    return f"{len(rows)} row{'s' if len(rows) != 1 else ''}" + (f": {', '.join(parts)}" if parts else "")


def ledger_table(rows: Iterable[Mapping[str, str]]) -> list[str]:
    """One short markdown row per claim: study, claim, model, verdict, our effect [95% CI] and the paper's."""
    out = ["| study | claim | model | verdict | ours [95% CI] | paper |", "|---|---|---|---|---|---|"]
    for r in rows:
        ours = _number(r.get("effect"))
        if ours != "–" and _number(r.get("ci_low")) != "–":
            ours += f" [{_number(r['ci_low'])}, {_number(r['ci_high'])}]"
        unit = (r.get("unit") or "").strip()
        ours += f" {unit}" if ours != "–" and unit else ""
        out.append(f"| {r['study']} | {r['claim']} | {r['model']} | {r['verdict']} | {ours} | "
                   f"{(r.get('paper') or '–').replace('|', '/')} |")
    return out


def run_time(jobs: Sequence[Mapping[str, float]]) -> str:
    """The run's time from its jobs (``{"job", "s", "end"}``: wall seconds and the end as a Unix time, a
    benchmark file's modification time): from the first job's start to the last one's end, the jobs' summed time
    and the longest job. Jobs of an earlier, interrupted attempt count as the run's."""
    if not jobs:
        return "no benchmark files: the time is not known"
    span = max(j["end"] for j in jobs) - min(j["end"] - j["s"] for j in jobs)
    longest = max(jobs, key=lambda j: (j["s"], j["job"]))
    return (f"{_duration(span)} from the first job's start to the last one's end; {len(jobs)} job{'s' * (len(jobs) > 1)}, "
            f"{_duration(sum(j['s'] for j in jobs))} of job time; the longest: {longest['job']} "
            f"({_duration(longest['s'])})")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _scorecard_body(text: str) -> list[str]:
    """A scorecard's markdown without its own title (the page gives each model a heading)."""
    lines = text.strip().splitlines()
    body = lines[1:] if lines and lines[0].startswith("# ") else lines
    return "\n".join(body).strip().splitlines()


def page(name: str, studies: Sequence[str], models: Mapping[str, str], scorecards: Mapping[str, str],
         ledger: Sequence[Mapping[str, str]], time_line: str) -> str:
    """The page's markdown: ``models`` key -> description, ``scorecards`` key -> its scorecard markdown,
    ``ledger`` the run's merged ledger rows (its models', and rows pooled over them: model ``all``, ``any of
    N``), ``time_line`` :func:`run_time`'s."""
    mine = list(ledger)
    out = [f"# {name}", "", f"Studies: {', '.join(studies)}. Models:"]
    out += [f"* `{key}`: {label}" for key, label in models.items()]
    out += ["", f"Time: {time_line}.", "", "## Scorecard", ""]
    for key in models:
        if key in scorecards:
            out += [f"### {key}", "", *_scorecard_body(scorecards[key]), "", f"(scorecard/{key}.md)", ""]
    out += ["## Claims ledger", "",
            f"{ledger_counts(mine)} (every row with its reason and interval: findings.md; each study's: "
            "<study>/findings.md).", ""]
    out += ledger_table(mine) if mine else ["No claims-ledger row: no study of this run has a ledger."]
    out += ["", "Tables and figures: <study>/tables/, <study>/figures/.", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------- files

def read_ledger(path: str | Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def benchmark_jobs(folder: str | Path) -> list[dict]:
    """``{"job", "s", "end"}`` per Snakemake benchmark file under ``folder`` (a file without a time is skipped)."""
    jobs = []
    for path in sorted(Path(folder).rglob("*.tsv")):
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        try:
            seconds = float(rows[-1]["s"])
        except (IndexError, KeyError, TypeError, ValueError):
            continue
        job = re.sub(r"\.tsv$", "", path.relative_to(folder).as_posix())
        jobs.append({"job": job, "s": seconds, "end": path.stat().st_mtime})
    return jobs


def write_page(out: str | Path, name: str, studies: Sequence[str], models: Mapping[str, str],
               scorecard_files: Mapping[str, str | Path], ledger_file: str | Path | None,
               benchmarks: str | Path) -> None:
    """Read the run's scorecards, merged ledger and benchmark files and write its page to ``out``."""
    scorecards = {k: Path(p).read_text() for k, p in scorecard_files.items()}
    ledger = read_ledger(ledger_file) if ledger_file else []
    text = page(name, studies, models, scorecards, ledger, run_time(benchmark_jobs(benchmarks)))
    tmp = Path(out).with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(out)
