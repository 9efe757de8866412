"""Glue for ``script:`` entry points: send stdout/stderr (tqdm progress, warnings) to the rule's log."""

from __future__ import annotations

import contextlib
import logging


@contextlib.contextmanager
def logged(snakemake):
    """Redirect stdout/stderr and the logging module to ``snakemake.log[0]`` for the block."""
    if not snakemake.log:
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
