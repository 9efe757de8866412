"""The landing page of the Snakemake report (``make report``): the verdicts of the claims ledger, a short summary
of each study with a link to each of its tables, figures and its own ledger, then the merged ledger's short table.

``report/workflow.rst`` is the page. Snakemake renders it with Jinja, which lists the report's entries as
``category | subcategory | path`` lines in a ``wobble-landing`` directive, then with docutils, where the
directive (registered by ``rules/report.smk`` through :func:`register`) turns those entries and the ledger files
into HTML. A link opens its entry as Snakemake's own report links do: ``app.showResultInfo(path)`` for a file,
``app.showCategory(name)`` for a study, functions of the report page's script. A table's entry is its view, the
``.html`` beside its ``.md`` (wobble.report.views), which the report shows inline.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence
from urllib.parse import quote

DIRECTIVE = "wobble-landing"

#: The category of the merged ledger (rules/report.smk): the landing's ledger is that entry's ``.md``.
LEDGER_CATEGORY = "0. claims ledger"

#: The order of a study's subcategories on the landing page (rules/report.smk names them); others follow.
SUBCATEGORIES = ("tables", "figures", "claims ledger")

#: Snakemake's report shows the workflow description as a narrow column beside the rule graph, centred in a
#: full-height box: the landing takes the box's width from its top, the rule graph goes below it, the ledger's
#: short table wraps its cells. The menu / info panel keeps its width beside it (as report/style.css has it, for
#: a report made without that stylesheet).
STYLE = """
#app nav { flex-shrink: 0; min-width: 22rem; transition: none; }
#app nav.w-0 { min-width: 0; }
div.grow.flex.items-center:has(#wobble-landing) { align-items: flex-start; justify-content: flex-start; min-width: 0; }
div.grow.flex.items-start:has(#wobble-landing) { flex-wrap: wrap; min-width: 0; }
div.py-2:has(#wobble-landing) { flex: 1 1 100%; min-width: 0; }
div.prose:has(#wobble-landing) { max-width: none; }
#wobble-landing .ledger { overflow-x: auto; }
#wobble-landing .ledger table { font-size: 0.75rem; }
#wobble-landing .ledger td { vertical-align: top; }
#wobble-landing .ledger td:nth-child(4) { white-space: nowrap; }
#wobble-landing .links > a, #wobble-landing .links > span { margin-right: 0.6em; white-space: nowrap; }
"""


@dataclass(frozen=True)
class Entry:
    """One file of the report: its category, subcategory and path (the key of the report's ``results``)."""

    category: str
    subcategory: str
    path: str


def parse_entries(lines: Iterable[str]) -> list[Entry]:
    """The directive's content lines ``category | subcategory | path`` (blank lines skipped)."""
    out = []
    for line in lines:
        if line.strip():
            category, subcategory, path = (part.strip() for part in line.split("|"))
            out.append(Entry(category, subcategory, path))
    return out


def file_link(path: str, label: str | None = None, title: str | None = None) -> str:
    """An ``<a>`` that opens the report entry of ``path``."""
    href = f"javascript:app.showResultInfo('{quote(path)}')"
    tip = f' title="{html.escape(title)}"' if title else ""
    return f'<a href="{html.escape(href)}"{tip}>{html.escape(label or Path(path).name)}</a>'


def category_link(name: str, label: str | None = None) -> str:
    """An ``<a>`` that opens category ``name`` in the report's menu."""
    href = f"javascript:app.showCategory('{quote(name)}')"
    return f'<a href="{html.escape(href)}">{html.escape(label or name)}</a>'


def _ledger_rows(md_path: str) -> list[dict]:
    """The rows of the ledger whose display file is ``md_path`` (its ``.csv`` beside it); none when it is absent."""
    from wobble.report.counts import read_rows as read_ledger

    csv = Path(md_path).with_suffix(".csv")
    return read_ledger(csv) if csv.is_file() else []


def _counts(rows: Sequence[dict]) -> str:
    """``"N rows: a reproduced, b contradicted, …"``: the ledger's own first count line."""
    from wobble.report.findings import summary_lines

    return summary_lines(rows)[0]


def _plain(rst: str) -> str:
    """A caption's text without its inline-literal marks."""
    return rst.replace("``", "")


def _first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".") + "."


def _natural(path: str) -> list:
    """Sort key: ``table2`` before ``table10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def _study_html(name: str, entries: Sequence[Entry]) -> str:
    """A study's summary: its paper, what its claims cover, its verdict counts and models, a link to each file."""
    from wobble import studies
    from wobble.report.cells import DASH
    from wobble.report.ledger import POOLED

    spec = studies.get(name)
    captions = {o.name: _first_sentence(_plain(o.caption)) for o in spec.outputs}
    parts = [f'<h3 id="study-{html.escape(name)}">{category_link(name)}: {html.escape(spec.paper)}</h3>']
    if spec.findings is not None:
        parts.append(f"<p>{html.escape(_plain(spec.findings.caption))}</p>")
    ledger = [e.path for e in entries if e.subcategory == "claims ledger"]
    rows = _ledger_rows(ledger[0]) if ledger else []
    if rows:
        models = sorted({str(r["model"]) for r in rows if r.get("model") and r["model"] not in (POOLED, DASH)})
        parts.append(f"<p><strong>Claims:</strong> {html.escape(_counts(rows))}"
                     + (f" <strong>Models:</strong> {html.escape(', '.join(models))}." if models else "") + "</p>")
    order = {s: i for i, s in enumerate(SUBCATEGORIES)}
    for sub in sorted({e.subcategory for e in entries}, key=lambda s: (order.get(s, len(order)), s)):
        files = sorted((e for e in entries if e.subcategory == sub), key=lambda e: _natural(e.path))
        links = _figure_links(files, captions) if sub == "figures" else " ".join(
            file_link(e.path, _label(e.path), captions.get(Path(e.path).stem)) for e in files)
        parts.append(f'<p class="links"><strong>{html.escape(sub.capitalize())}:</strong> {links}</p>')
    return "\n".join(parts)


def _label(path: str) -> str:
    """A link's text: a table's or ledger's name without the ``.html`` of its view (a figure keeps ``.png``)."""
    return Path(path).stem if path.endswith(".html") else Path(path).name


def _figure_links(files: Sequence[Entry], captions: dict) -> str:
    """Each figure's image, then the view of its numbers: ``figure2.png (numbers)``."""
    out = []
    for e in files:
        stem, tip = Path(e.path).stem, captions.get(Path(e.path).stem)
        if e.path.endswith(".html") and any(f.path.endswith(f"/{stem}.png") for f in files):
            continue
        link = file_link(e.path, _label(e.path), tip)
        numbers = [f.path for f in files if f.path.endswith(f"/{stem}.html")]
        more = f" ({file_link(numbers[0], 'numbers', tip)})" if numbers and numbers[0] != e.path else ""
        out.append(f'<span class="figure">{link}{more}</span>')
    return " ".join(out)


def ledger_summary(md_path: str | Path) -> tuple[str, str]:
    """The merged ledger's title and the part of it the landing shows: its counts, its short table and its notes,
    without the section per claim (in the ledger's own view). A ledger written in an older layout is laid out
    anew from its ``.csv``."""
    md_path = Path(md_path)
    text = md_path.read_text(encoding="utf-8")
    title = text[2:].partition("\n")[0] if text.startswith("# ") else "Claims ledger"
    if "\n## Claims\n" not in text and md_path.with_suffix(".csv").is_file():
        return title, _short_ledger(_ledger_rows(str(md_path)))
    body = text[2:].partition("\n")[2] if text.startswith("# ") else text
    head, _, rest = body.partition("\n## Claims\n")
    notes = rest.partition("\n## Rule and notes\n")[2]
    return title, head + ("\n## Rule and notes\n" + notes if notes else "")


def _short_ledger(rows: Sequence[dict]) -> str:
    """The counts and the short table of ``rows`` as the ledger's Markdown has them (wobble.report.findings)."""
    from wobble.report.findings import COLUMNS, summary_lines, table_frame

    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = [*(f"* {s}" for s in summary_lines(rows)), "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in table_frame(rows).itertuples(index=False)]
    return "\n".join(lines) + "\n"


def landing_html(entries: Sequence[Entry]) -> str:
    """The landing page's body: the verdict counts, one summary per study (registration order), the report's
    other categories (scorecards), then the merged ledger's short table (the entry of :data:`LEDGER_CATEGORY`).
    Without that ledger among the entries (a report of one study's target) a line says so."""
    from wobble import studies
    from wobble.report.views import markdown_html

    by_category: dict[str, list[Entry]] = {}
    for e in entries:
        by_category.setdefault(e.category, []).append(e)
    ledgers = [e.path for e in by_category.get(LEDGER_CATEGORY, [])]
    ledger = ledgers[0] if ledgers and Path(ledgers[0]).with_suffix(".md").is_file() else None
    names = [s for s in studies.STUDIES if s in by_category]
    others = [c for c in sorted(by_category) if c not in names and c != LEDGER_CATEGORY]

    parts = [f"<style>{STYLE}</style>", '<div id="wobble-landing">', "<h2>Verdicts</h2>"]
    if ledger is not None:
        parts.append(f"<p>Claims ledger across the studies ({file_link(ledger, 'the ledger')}; its short table "
                     f"below): {html.escape(_counts(_ledger_rows(ledger)))}</p>")
    else:
        parts.append("<p>This report holds no claims ledger across studies (it was built for a target without "
                     "one).</p>")
    if names:
        parts.append("<h2>Studies</h2>")
        parts += [_study_html(s, by_category[s]) for s in names]
    for c in others:
        links = " ".join(file_link(e.path, _label(e.path))
                         for e in sorted(by_category[c], key=lambda e: _natural(e.path)))
        parts.append(f'<h2>{category_link(c, c.capitalize())}</h2>\n<p class="links">{links}</p>')
    if ledger is not None:
        title, body = ledger_summary(Path(ledger).with_suffix(".md"))
        parts.append(f"<h2>{html.escape(title)}</h2>\n<p>One line per claim and model; each claim's quote, "
                     f"statistic, gates and preconditions, and each model's figures: {file_link(ledger, 'the ledger')}"
                     f".</p>\n<div class=\"ledger\">{markdown_html(body)}</div>")
    parts.append("</div>")
    return "\n".join(parts)


def register() -> None:
    """Register the ``wobble-landing`` docutils directive (content: the report's entries, one
    ``category | subcategory | path`` line each)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class Landing(Directive):
        has_content = True

        def run(self):
            return [nodes.raw("", landing_html(parse_entries(self.content)), format="html")]

    directives.register_directive(DIRECTIVE, Landing)
