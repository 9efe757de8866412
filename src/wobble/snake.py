"""Glue between Snakemake and wobble: for ``script:`` entry points the rule's threads and stdout/stderr (tqdm
progress, warnings) to its log; for the workflow a prompt exit when the run is over, and a one-line answer to a
mistyped target."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

from wobble.threads import follow_threads


@contextlib.contextmanager
def logged(snakemake):
    """Run the block on the job's threads (:func:`follow_threads`), with stdout/stderr and the logging
    module redirected to ``snakemake.log[0]``. A model server the block starts (a ``server:`` block,
    :mod:`wobble.backends.server`) logs beside that log and is stopped when the block ends."""
    from wobble.backends.server import job_servers

    try:
        threads = snakemake.threads
    except (AttributeError, KeyError):  # a stand-in object without threads (tests, a plain script run)
        threads = 1
    follow_threads(threads or 1)
    if not snakemake.log:
        with job_servers(None):
            yield
        return
    with open(snakemake.log[0], "w", buffering=1, encoding="utf-8") as log:
        handler = logging.StreamHandler(log)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            try:
                with job_servers(snakemake.log[0]):
                    yield
            finally:
                root.removeHandler(handler)


def named_inputs(given, declared):
    """``snakemake.input`` as ``{name: path | [paths]}`` shaped like the declaration it came from.

    Snakemake hands a named list input back as a plain string when it has one element; the declaration
    (``OutputSpec.inputs`` + ``paper_inputs``) says which names are lists, so a build function always gets
    the shape it declared.
    """
    out = {}
    for name, spec in declared.items():
        value = given[name]
        if isinstance(spec, (list, tuple)):
            out[name] = [value] if isinstance(value, str) else [str(v) for v in value]
        else:
            out[name] = str(value)
    return out


def cancel_scheduler_timers() -> int:
    """Cancel the ``threading.Timer`` s that Snakemake's scheduler left behind; called when the run is over
    (the Snakefile's ``onsuccess`` / ``onerror``). Returns how many were cancelled.

    Each scheduling pass starts a non-daemon Timer of the ``max-jobs-per-timespan`` timespan (100 s in
    profiles/default, chosen so the scheduler re-runs rarely), and Python waits for every non-daemon thread
    before the process exits: without this, a run that rebuilds one table in 2 s takes ~100 s to return.
    """
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t.is_alive()]
    for timer in timers:
        timer.cancel()
    return len(timers)


def command_line_targets(argv: list[str] | None = None) -> list[str]:
    """The targets on a ``snakemake`` command line (Snakemake's own parser reads them); [] when this process was not
    started as ``snakemake`` (the API, a test harness)."""
    argv = sys.argv if argv is None else argv
    if not argv or os.path.basename(argv[0]) != "snakemake" and not argv[0].endswith("snakemake/__main__.py"):
        return []
    from snakemake.cli import get_argument_parser

    try:
        args, _ = get_argument_parser().parse_known_args(argv[1:])
    except SystemExit:  # Snakemake reports its own usage errors
        return []
    return [str(t) for t in (args.targets or [])]


def target_problem(target: str, rules: set[str], results_root: str) -> str | None:
    """Why ``target`` names nothing the workflow can make, in one line listing what it can (None when it looks
    right): a bare word that is no rule (a mistyped study), or a table or figure its study does not declare."""
    import re

    from wobble.resolve import suggest
    from wobble.studies import STUDIES, get

    if target in rules or os.path.exists(target):
        return None
    studies = list(STUDIES)
    if "/" not in target and "." not in target:
        return (f"no study or rule named {target!r}{suggest(target, [*studies, *rules]) or ';'} the targets are "
                f"the studies {studies}, all, data, or a file such as {results_root}/{studies[0]}/tables/table4.md "
                "(--list-rules names every rule)")
    m = re.fullmatch(rf"{re.escape(results_root)}/([^/]+)/(tables|figures)/([^/]+)\.(md|csv|tex|png|pdf)", target)
    if m is None:
        return None
    study, kind, name = m.group(1), m.group(2), m.group(3)
    if study not in STUDIES:
        return f"{target}: no study named {study!r}{suggest(study, studies) or ';'} the studies are {studies}"
    kinds = ("table", "figure") if kind == "tables" else ("figure",)
    names = [o.name for o in get(study).outputs if o.kind in kinds]
    if name in names:
        return None
    return (f"{target}: study {study!r} has no {kind[:-1]} {name!r}{suggest(name, names) or ';'} "
            f"its {kind} are {names}")
