"""What acquiring each source costs without the mirror, as a table for ``wobble sources`` and docs/data.md.

Per source: its required files, how many come by URL and how many a recipe rebuilds, the bytes a download of
them fetches (the pinned sizes of URL files and of recipe inputs) and its licence. Two sizes are lower bounds,
since only the download itself tells the full size: a file trimmed from a larger upstream file (SuperNI task
files cut to their first instances) counts its trimmed size, and an archive input the files read from it. The table in docs/data.md is
this function's output (a test compares them), so it cannot drift from ``pins.tsv`` and the recipes.
"""

from __future__ import annotations

from dataclasses import dataclass

from wobble.data.derive import load_inputs
from wobble.data.recipes import RECIPES
from wobble.data.sources import SOURCES, pins_for

START, END = "<!-- data-catalog:start -->", "<!-- data-catalog:end -->"
#: A download rate to turn sizes into a time (an assumption, stated as such where it is printed).
RATE_MB_S = 10


@dataclass(frozen=True)
class SourceCost:
    source: str
    required: int
    by_url: int
    by_recipe: int
    url_bytes: int
    recipe_bytes: int
    archives: int
    trimmed: int
    license: str

    @property
    def download_bytes(self) -> int:
        return self.url_bytes + self.recipe_bytes


def source_cost(key: str) -> SourceCost:
    pins = [p for p in pins_for(key) if not p.optional]
    recipes = sorted({r.name for r in RECIPES.values() for p in pins if not p.url and r.source == key and r.makes(p.relpath)})
    inputs = [i for name in recipes for i in load_inputs(name) if i.kind != "pin"]
    unique = {(i.repo, i.commit, i.path): i for i in inputs}.values()  # an input two recipes share comes once
    return SourceCost(key, len(pins), sum(1 for p in pins if p.url), sum(1 for p in pins if not p.url),
                      sum(p.size for p in pins if p.url), sum(i.size or 0 for i in unique),
                      sum(1 for i in unique if i.kind == "archive"), sum(1 for p in pins if p.url and p.trim),
                      SOURCES[key].license)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def catalog_markdown() -> str:
    """The per-source table and its total line (Markdown)."""
    costs = [source_cost(k) for k in SOURCES]
    lines = ["| source | required files | by URL | rebuilt by a recipe | download (MB) | licence |",
             "|---|---:|---:|---:|---:|---|"]
    for c in costs:
        mb = ("≥ " if c.archives or c.trimmed else "") + _mb(c.download_bytes)
        lines.append(f"| {c.source} | {c.required} | {c.by_url} | {c.by_recipe} | {mb} | {c.license} |")
    total = sum(c.download_bytes for c in costs)
    lines += ["", f"{sum(c.required for c in costs)} required files: {sum(c.by_url for c in costs)} by URL, "
                  f"{sum(c.by_recipe for c in costs)} rebuilt by recipes; at least {_mb(total)} MB of upstream files. "
                  "A '≥' marks a lower bound: a file trimmed from a larger upstream file counts its trimmed size, an "
                  f"archive the files read from it. At {RATE_MB_S} MB/s that is at least {total / 1e6 / RATE_MB_S:.0f} s "
                  "of downloading, once: the files stay in `resources/`."]
    return "\n".join(lines) + "\n"


def write_into(path: str) -> None:
    """Replace the part of ``path`` between the data-catalog markers with :func:`catalog_markdown`."""
    from pathlib import Path

    from wobble.io import atomic_write

    doc = Path(path).read_text()
    head, rest = doc.split(START, 1)
    with atomic_write(path) as f:
        f.write(head + START + "\n" + catalog_markdown() + END + rest.split(END, 1)[1])


if __name__ == "__main__":  # python -m wobble.data.catalog docs/data.md
    import sys

    write_into(sys.argv[1])
