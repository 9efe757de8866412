"""Numerics sensitivity: re-run one study's model calls with the numerics perturbed and count
what moved — the share of predictions whose text changed, first-token argmaxes that flipped, the largest log-prob
shift — and whether any claims-ledger verdict changed (verdicts must not).

    .venv/bin/python benchmarks/bench_numerics.py --run /path/to/finished/run --study first_token \\
        --perturb float32 --json benchmarks/numerics-first_token.json

``--run`` is a finished run of the workflow (e.g. a fresh clone after ``make run``). The script makes a scratch
copy (next to it; models hard-linked, results copied), perturbs it, and re-runs the study's targets with its inference rules
forced (``--forcerun <study>_infer``; everything downstream follows):

* ``float32``: every model directory's manifest spec gets ``dtype: float32`` (the default ``auto`` is bf16 on a
  CPU with bf16 support), so every model call of the study runs in fp32;
* ``threads1``: the inference rules run with one thread instead of the run's (another reduction order).

Nothing in the original run is modified. Absolute speed is not measured here.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

from wobble.io import read_json, read_jsonl, write_json

PERTURBATIONS = ("float32", "threads1")
WORKFLOW = ("Snakefile", "rules", "scripts", "schemas", "report", "envs", "configs", "profiles", "config.yaml",
            "paper", "annotations", "constraints.txt")


def scratch_copy(run: Path, study: str, dest: Path) -> None:
    """Workflow files and results copied, model weights hard-linked (read-only; a rewrite replaces the link)."""
    for name in WORKFLOW:
        src = run / name
        if src.is_dir():
            shutil.copytree(src, dest / name, symlinks=True)
        elif src.exists():
            shutil.copy2(src, dest / name)
    subprocess.run(["cp", "-al", str(run / "resources"), str(dest / "resources")], check=True)
    shutil.copytree(run / "results", dest / "results")
    if (run / ".snakemake" / "metadata").is_dir():
        shutil.copytree(run / ".snakemake" / "metadata", dest / ".snakemake" / "metadata")
    shutil.rmtree(dest / "results" / study / "predictions", ignore_errors=True)  # re-made by the forced rules


def force_float32(work: Path) -> list[str]:
    """Set ``dtype: float32`` in every model manifest of the copy."""
    changed = []
    for manifest in sorted([*work.glob("resources/models/*/wobble-model.json"),
                            *work.glob("results/*/finetune/*/wobble-model.json")]):
        data = read_json(manifest)
        data.setdefault("spec", {})["dtype"] = "float32"
        file_time, dir_time = manifest.stat(), manifest.parent.stat()
        write_json(manifest, data)  # a new file (temp + rename): the hard link to the run's manifest is broken
        # old modification times: Snakemake must not take the models as new and re-run what they fed
        os.utime(manifest, ns=(file_time.st_atime_ns, file_time.st_mtime_ns))
        os.utime(manifest.parent, ns=(dir_time.st_atime_ns, dir_time.st_mtime_ns))
        changed.append(str(manifest.relative_to(work)))
    return changed


def _argmax(logprobs: dict) -> str | None:
    return max(logprobs, key=logprobs.get) if logprobs else None


def compare_predictions(a_dir: Path, b_dir: Path) -> dict:
    """Records of each predictions file in both runs, matched by position (requests are written in order)."""
    files, n, text_changed, argmax_flipped, with_logprobs, max_shift = 0, 0, 0, 0, 0, 0.0
    per_file = {}
    for a_path in sorted(a_dir.rglob("*.jsonl")):
        b_path = b_dir / a_path.relative_to(a_dir)
        if not b_path.is_file():
            continue
        a, b = read_jsonl(a_path), read_jsonl(b_path)
        if len(a) != len(b):
            raise SystemExit(f"{b_path}: {len(b)} records, the original run has {len(a)}")
        files += 1
        changed = 0
        for ra, rb in zip(a, b):
            n += 1
            if replies(ra) != replies(rb):
                text_changed += 1
                changed += 1
            # candidate log-probs (first_token's first_token_logprobs, the probe's next_token_logprobs, ...)
            pairs = [(ra[k], rb.get(k)) for k in sorted(ra) if k.endswith("_logprobs") and isinstance(ra[k], dict)]
            pairs = [(la, lb) for la, lb in pairs if la and isinstance(lb, dict) and set(la) == set(lb)]
            if pairs:
                with_logprobs += 1
                argmax_flipped += any(_argmax(la) != _argmax(lb) for la, lb in pairs)
                shifts = [abs(la[k] - lb[k]) for la, lb in pairs for k in la
                          if math.isfinite(la[k]) and math.isfinite(lb[k])]
                max_shift = max([max_shift, *shifts])
        per_file[str(a_path.relative_to(a_dir))] = {"records": len(a), "text_changed": changed}
    return {"files": files, "records": n, "text_changed": text_changed,
            "text_changed_share": text_changed / n if n else None, "records_with_logprobs": with_logprobs,
            "argmax_flipped": argmax_flipped, "max_abs_logprob_shift": round(max_shift, 6), "per_file": per_file}


def replies(record: dict) -> list:
    """The model's text in a prediction record: its ``output``, or for a dialogue (followup) the ``output`` of every
    turn, in order."""
    if "output" in record:
        return [record["output"]]
    if isinstance(record.get("turns"), list):
        return [t.get("output") for t in record["turns"]]
    raise SystemExit(f"prediction record {record.get('uid', '?')}: neither 'output' nor 'turns' (a dialogue's replies)")


def read_verdicts(path: Path) -> dict[str, dict]:
    """A ledger's rows keyed "claim" or "claim [model]" (claims about a model have a row per model)."""
    with path.open(newline="", encoding="utf-8") as f:
        return {_row_key(row): row for row in csv.DictReader(f)}


def _row_key(row: dict) -> str:
    model = row.get("model") or ""
    return row["claim"] if model in ("", "all", "–") else f"{row['claim']} [{model}]"


def compare_verdicts(a: Path, b: Path) -> list[dict]:
    va, vb = read_verdicts(a), read_verdicts(b)
    return [{"claim": c, "verdict": va[c]["verdict"], "perturbed": vb.get(c, {}).get("verdict"),
             "effect": va[c]["effect"], "perturbed_effect": vb.get(c, {}).get("effect")} for c in va]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, type=Path, help="a finished run (its results/ and resources/)")
    ap.add_argument("--study", required=True)
    ap.add_argument("--perturb", choices=PERTURBATIONS, default="float32")
    ap.add_argument("--configfile", default="config.yaml", help="the run's config, relative to --run")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy (next to --run) afterwards")
    ap.add_argument("--json", type=Path, help="write the result here")
    args = ap.parse_args(argv)

    run = args.run.resolve()
    if not (run / "results" / args.study / "findings.csv").is_file():
        raise SystemExit(f"{run}: no results/{args.study}/findings.csv; run the workflow there first")
    # next to the run: config.yaml's relative paths (data.mirror: ../shared/data) stay valid
    work = run.parent / f"{run.name}-numerics-{args.study}-{args.perturb}"
    if work.exists():
        raise SystemExit(f"{work} exists (a kept scratch copy?); remove it first")
    work.mkdir()
    scratch_copy(run, args.study, work)
    if not (work / args.configfile).exists():
        shutil.copy2(run / args.configfile, work / args.configfile)
    cmd = [str(Path(sys.executable).parent / "snakemake"), f"results/{args.study}/findings.csv", "--cores",
           str(args.cores), "--rerun-triggers", "mtime", "--forcerun", f"{args.study}_infer",
           "--configfile", args.configfile]
    note = ""
    if args.perturb == "float32":
        note = f"dtype float32 in {len(force_float32(work))} model manifests"
    else:
        cmd += ["--set-threads", f"{args.study}_infer=1"]
        note = f"{args.study}_infer with 1 thread"
    print(f"re-running {args.study} in {work} ({note}) ...", flush=True)
    proc = subprocess.run(cmd, cwd=work)
    if proc.returncode != 0:
        raise SystemExit(f"the perturbed run failed (exit {proc.returncode}); logs under {work}/logs")

    result = {"study": args.study, "perturbation": args.perturb, "note": note, "run": str(run),
              "predictions": compare_predictions(run / "results" / args.study / "predictions",
                                                 work / "results" / args.study / "predictions"),
              "verdicts": compare_verdicts(run / "results" / args.study / "findings.csv",
                                           work / "results" / args.study / "findings.csv")}
    p, verdicts = result["predictions"], result["verdicts"]
    flipped = [v for v in verdicts if v["verdict"] != v["perturbed"]]
    result["verdicts_changed"] = len(flipped)
    print(f"| study | perturbation | predictions | text changed | first-token argmax flipped | max |Δ log-prob| "
          f"| verdicts changed |\n|---|---|---|---|---|---|---|\n"
          f"| {args.study} | {args.perturb} | {p['records']} | {p['text_changed']} "
          f"({100 * (p['text_changed_share'] or 0):.1f} %) | {p['argmax_flipped']}/{p['records_with_logprobs']} "
          f"| {p['max_abs_logprob_shift']:.3f} | {len(flipped)}/{len(verdicts)} |")
    for v in verdicts:
        print(f"  {v['claim']}: {v['verdict']} -> {v['perturbed']} (effect {v['effect']} -> {v['perturbed_effect']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
