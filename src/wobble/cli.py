"""The ``wobble`` command: the workflow's pure functions without Snakemake.

  wobble audit FILE                  walk FILE's provenance back to the acquired sources
  wobble score superni PRED.jsonl    official SuperNI metrics (EM, ROUGE-L) of a predictions file
  wobble perturb CONDITION --text T  apply one instruction perturbation (instructions study)
  wobble sources                     list the pinned data sources
  wobble check-config FILE           validate a config file (shared schema + every registered study's)
  wobble extract DATASET [FILE]      followup answers: JSON lines with 'text' -> + 'answer' (null if none)
  wobble resume [SNAKEMAKE ARGS]     after a crash or kill: unlock (only if no Snakemake is alive here), then
                                     snakemake ARGS --rerun-incomplete (make resume)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wobble.errors import WobbleError

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


def _audit(args) -> int:
    from wobble.provenance import audit

    report = audit(args.file)
    print(report.render())
    return 1 if report.problems else 0


def _score(args) -> int:
    if args.benchmark != "superni":
        raise WobbleError(f"unknown benchmark {args.benchmark!r}; expected 'superni'")
    from wobble.metrics.superni import score_file

    print(json.dumps(score_file(args.predictions), sort_keys=True))
    return 0


def _perturb(args) -> int:
    from wobble.studies.instructions.perturb import cli_perturb

    print(cli_perturb(args.condition, args.text, seed=args.seed))
    return 0


def _sources(args) -> int:
    from wobble.data.sources import SOURCES

    for key, src in SOURCES.items():
        print(f"{key}\t{src.repo}@{src.commit}\t{len(src.files)} files\t{','.join(src.studies)}")
    return 0


def _check_config(args) -> int:
    import yaml

    from wobble.config import validate_config
    from wobble.studies import STUDIES, disabled_reason

    with open(args.file, encoding="utf-8") as f:
        config = validate_config(yaml.safe_load(f), SCHEMA)
    print(f"{args.file}: ok")
    for name in STUDIES:
        reason = disabled_reason(config, name)
        print(f"  study {name}: " + ("runs" if reason is None else f"off ({reason})"))
    return 0


def _extract(args) -> int:
    from wobble.studies.followup.extractors import extract_file

    for rec in extract_file(args.dataset, args.file):
        print(json.dumps(rec, ensure_ascii=False))
    return 0


def _resume(args) -> int:
    import shutil

    from wobble.resume import resume

    here = Path(sys.executable).parent / "snakemake"
    snakemake = str(here) if here.exists() else shutil.which("snakemake") or "snakemake"
    return resume(snakemake, args.snakemake_args)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="wobble", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("audit", help="trace a result file back to its sources; exit 1 if anything changed")
    p.add_argument("file")
    p.set_defaults(func=_audit)
    p = sub.add_parser("score", help="score a predictions JSONL")
    p.add_argument("benchmark", choices=["superni"])
    p.add_argument("predictions")
    p.set_defaults(func=_score)
    p = sub.add_parser("perturb", help="perturb one instruction text (instructions study)")
    p.add_argument("condition")
    p.add_argument("--text", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=_perturb)
    p = sub.add_parser("sources", help="list pinned data sources")
    p.set_defaults(func=_sources)
    p = sub.add_parser("check-config", help="validate a config YAML")
    p.add_argument("file")
    p.set_defaults(func=_check_config)
    p = sub.add_parser("extract", help="followup answer extraction: JSON lines with 'text' (standard input or "
                                       "FILE) -> the same + 'answer' (null when none is found)")
    p.add_argument("dataset", help="gsm8k, svamp, multiarith, csqa, strategyqa, last_letters, coin_flip or mmlu")
    p.add_argument("file", nargs="?", default="/dev/stdin")
    p.set_defaults(func=_extract)
    p = sub.add_parser("resume", help="resume a crashed or killed run safely: unlock only when no Snakemake of this "
                                      "checkout is alive, then re-run with --rerun-incomplete")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER, help="passed to snakemake (e.g. --cores 2)")
    p.set_defaults(func=_resume)
    return ap


def main(argv=None) -> int:
    parser = build_parser()
    # `wobble resume --cores 2 ...`: argparse's REMAINDER does not take arguments that start with '-' after a
    # subcommand, so everything it does not know goes to Snakemake; for other commands unknown args are errors.
    args, unknown = parser.parse_known_args(argv)
    if args.command == "resume":
        args.snakemake_args = unknown + list(args.snakemake_args)
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return args.func(args)
    except WobbleError as e:
        print(f"wobble: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"wobble: {e.filename}: no such file", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
