"""The report's view of a table: each ``.md`` the report lists (a study's table or a figure's numbers, a claims
ledger, a scorecard, a run's page) as a standalone ``.html`` page beside it, rendered from the same Markdown.

Snakemake's report can only offer a ``.md`` as a download; an ``.html`` it shows inline, in a frame beside its
menu. The rules that write a table write its view in the same step (rules/report.smk); :func:`fill_views` writes
the views a run's folder lacks (a fresh clone's committed results, which keep the ``.md`` but not the view) from
the ``.md`` alone, so the page is the same whichever wrote it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from wobble.io import atomic_write

#: The ``.md`` files under a run's results folder that the report lists (their views are ``.html`` beside them).
VIEWED = ("*/tables/*.md", "*/findings.md", "findings.md", "scorecard/*.md", "README.md")

#: A cell this short (characters) or shorter stays on one line.
SHORT = 32

#: A table page that reads at the report's frame width: long cells wrapped, short ones (a number with its interval,
#: ``ours (paper)``) kept on one line, a header that stays in view, striped rows.
STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1e293b; margin: 1rem 1.25rem; }
h1 { font-size: 1.2rem; margin: 0 0 .75rem; } h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: .95rem; margin: 1.2rem 0 .3rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 12.5px; }
th, td { border: 1px solid #cbd5e1; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #e2e8f0; position: sticky; top: 0; }
tr:nth-child(even) td { background: #f8fafc; }
td { max-width: 28rem; overflow-wrap: break-word; }
td:not(.short) { min-width: 10rem; } td.short { white-space: nowrap; }
code { font-size: .9em; background: #f1f5f9; padding: 0 .2em; }
blockquote { margin: .3rem 0 .3rem 1rem; color: #475569; }
ul { padding-left: 1.25rem; } li { margin: .15rem 0; }
"""


def markdown_html(text: str) -> str:
    """A Markdown file of wobble's (a title, pipe tables, bullet notes) as HTML, raw HTML in it escaped."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def view_html(md_text: str) -> str:
    """The standalone page of one ``.md``: its title as the page's, its body rendered with :data:`STYLE`."""
    first = md_text.splitlines()[0] if md_text.strip() else ""
    title = first[2:].strip() if first.startswith("# ") else "wobble table"
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"{_mark_short(markdown_html(md_text))}</body>\n</html>\n")


def _mark_short(body: str) -> str:
    """``<td class="short">`` for a cell of at most :data:`SHORT` characters of plain text."""
    return re.sub(r"<td>([^<]{0,%d})</td>" % SHORT, r'<td class="short">\1</td>', body)


def view_path(md: str | Path) -> Path:
    return Path(md).with_suffix(".html")


def write_view(md: str | Path, out: str | Path | None = None) -> Path:
    """Write the view of ``md`` (default: ``.html`` beside it), atomically; returns its path."""
    out = Path(out) if out is not None else view_path(md)
    text = view_html(Path(md).read_text(encoding="utf-8"))
    with atomic_write(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return out


def fill_views(root: str | Path) -> list[Path]:
    """Write each view missing (or older than its ``.md``) under the run folder ``root``; the views written."""
    root, out = Path(root), []
    for pattern in VIEWED:
        for md in sorted(root.glob(pattern)):
            view = view_path(md)
            if not view.is_file() or view.stat().st_mtime < md.stat().st_mtime:
                out.append(write_view(md))
    return out
