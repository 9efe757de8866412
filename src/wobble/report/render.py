"""The one renderer: a declared table or figure (:class:`~wobble.report.spec.OutputSpec`) + its named
inputs + the study's footnote context -> files. Every table of every study is written here.

Table: ``<stem>.md`` (display frame + footnotes), ``<stem>.csv`` (tidy frame), ``<stem>.tex``.
Figure: ``<stem>.png`` + ``<stem>.pdf`` (timestamps stripped) + ``<stem>.csv`` (plotted numbers), and the
table of its numbers under ``<root>/<study>/tables/<name>.*``. Every file is written to a temp file and
renamed, so a killed render leaves nothing Snakemake would take as complete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from wobble.io import atomic_write
from wobble.report.figures import save_figure
from wobble.report.formats import write_table
from wobble.report.spec import Figure, OutputSpec, Table
from wobble.paths import with_ext


def write_result(result: Table | Figure, *, table_stem: str | Path | None,
                 figure_stem: str | Path | None = None) -> list[Path]:
    """Write a built table or figure to its stems; returns the written paths."""
    paths: list[Path] = []
    if isinstance(result, Table):
        if table_stem is not None:
            paths += write_table(result.display, result.tidy, table_stem, result.title, result.notes)
        return paths
    if not isinstance(result, Figure):
        raise TypeError(f"a build function must return Table or Figure, got {type(result).__name__}")
    if figure_stem is not None:
        figure_stem = Path(figure_stem)
        paths += save_figure(result.figure, figure_stem)
        csv = with_ext(figure_stem, ".csv")
        with atomic_write(csv) as f:
            result.data.to_csv(f, index=False, lineterminator="\n", float_format=result.float_format)
        paths.append(csv)
    if result.table is not None and table_stem is not None:
        paths += write_table(result.table.display, result.table.tidy, table_stem, result.table.title,
                             result.table.notes)
    return paths


def render(output: OutputSpec, inputs: Mapping[str, Any], context: Mapping[str, Any], *,
           table_stem: str | Path | None = None, figure_stem: str | Path | None = None) -> list[Path]:
    """Build ``output`` from ``inputs`` (named paths) and ``context`` and write it."""
    result = output.builder()(inputs, context)
    if output.kind == "figure" and not isinstance(result, Figure):
        raise TypeError(f"{output.study}/{output.name} is declared a figure but its build returned "
                        f"{type(result).__name__}")
    return write_result(result, table_stem=table_stem, figure_stem=figure_stem)
