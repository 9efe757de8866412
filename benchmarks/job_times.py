"""Where a workflow run's time went: its Snakemake benchmark files (one ``.tsv`` per job, the rules' ``benchmark:``)
summed per study, with each study's largest jobs.

    .venv/bin/python benchmarks/job_times.py results/reference/benchmarks            # the reference run
    .venv/bin/python benchmarks/job_times.py benchmarks --top 3 --json times.json     # the default run's

A job's file sits under ``<folder>/<study>/`` (or ``models/``, ``acquire/``, ``prepare/``, ``probe/``,
``scorecard/``): that first folder is the group. Per group: jobs, the sum of the jobs' wall seconds (Snakemake's
``s``), of their CPU seconds (``cpu_time``), the largest peak resident memory (``max_rss``, MiB; shown in GiB) and the ``--top``
longest jobs. With two jobs running at a time, a run's wall time is about half the summed job time plus its serial
parts, so the sums say where the time goes, not how long the run took.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLUMNS = ("s", "max_rss", "cpu_time")


class BadBenchmark(ValueError):
    """A benchmark file that is not Snakemake's one-row table with ``COLUMNS``."""


def read_job(path: Path) -> dict:
    """One job's wall seconds, CPU seconds and peak RSS (MB) from its Snakemake benchmark file."""
    import pandas as pd

    try:
        df = pd.read_csv(path, sep="\t")
    except (ValueError, OSError) as e:
        raise BadBenchmark(f"{path}: not a tab-separated Snakemake benchmark file ({e})") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing or len(df) < 1:
        raise BadBenchmark(f"{path}: expected a row with columns {', '.join(COLUMNS)}; "
                           f"{'missing ' + ', '.join(missing) if missing else 'no row'}")
    row = df.iloc[-1]  # a benchmark with repeats has one row per repeat: the last is the job's own run
    values = {}
    for c in COLUMNS:
        v = pd.to_numeric(row[c], errors="coerce")
        if pd.isna(v):  # Snakemake writes NA where it could not measure (a job shorter than its sampling)
            v = 0.0
        values[c] = float(v)
    return {"job": str(path), "s": values["s"], "cpu_s": values["cpu_time"], "max_rss_mb": values["max_rss"]}


def summarize(folder: Path, top: int = 1) -> list[dict]:
    """One row per group (the first folder under ``folder``), in order of summed wall time, then a total row."""
    jobs = sorted(folder.rglob("*.tsv"))
    if not jobs:
        raise BadBenchmark(f"{folder}: no Snakemake benchmark files (*.tsv) under it")
    groups: dict[str, list[dict]] = {}
    for path in jobs:
        rel = path.relative_to(folder)
        groups.setdefault(rel.parts[0] if len(rel.parts) > 1 else "(top level)", []).append(
            {**read_job(path), "job": str(rel.with_suffix(""))})
    rows = []
    for group, members in groups.items():
        longest = sorted(members, key=lambda j: (-j["s"], j["job"]))[:top]
        rows.append({"group": group, "jobs": len(members), "wall_s": round(sum(j["s"] for j in members), 1),
                     "cpu_s": round(sum(j["cpu_s"] for j in members), 1),
                     "max_rss_gib": round(max(j["max_rss_mb"] for j in members) / 1024, 2),
                     "largest": [{"job": j["job"], "s": round(j["s"], 1)} for j in longest]})
    rows.sort(key=lambda r: (-r["wall_s"], r["group"]))
    every = [j for members in groups.values() for j in members]
    rows.append({"group": "all", "jobs": len(every), "wall_s": round(sum(j["s"] for j in every), 1),
                 "cpu_s": round(sum(j["cpu_s"] for j in every), 1),
                 "max_rss_gib": round(max(j["max_rss_mb"] for j in every) / 1024, 2), "largest": []})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| group | jobs | jobs' wall (s) | jobs' CPU (s) | largest peak RSS (GiB) | longest jobs (s) |",
             "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        longest = "; ".join(f"{j['job']}: {j['s']:,.0f}" for j in r["largest"])
        lines.append(f"| {r['group']} | {r['jobs']} | {r['wall_s']:,.0f} | {r['cpu_s']:,.0f} | {r['max_rss_gib']} "
                     f"| {longest} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", help="a run's Snakemake benchmark folder (benchmarks/, results/reference/benchmarks/)")
    ap.add_argument("--top", type=int, default=1, help="longest jobs shown per group")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    try:
        rows = summarize(Path(args.folder), top=args.top)
    except BadBenchmark as e:
        print(f"job_times: {e}", file=sys.stderr)
        return 2
    print(markdown(rows))
    if args.json:
        tmp = Path(args.json).with_suffix(".tmp")
        tmp.write_text(json.dumps({"folder": args.folder, "rows": rows}, indent=1) + "\n")
        tmp.replace(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
