"""Table file formats: one display frame -> ``.md`` and ``.tex``, one tidy frame -> ``.csv``.

Every numeric table shows *ours* beside *paper* and carries a footnote saying which model, scale
and data produced ours (DESIGN.md "score / render").
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from wobble.io import atomic_write
from wobble.paths import with_ext


def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(df: pd.DataFrame, title: str, notes: Iterable[str] = ()) -> str:
    cols = [str(c) for c in df.columns]
    lines = [f"# {title}", "", "| " + " | ".join(map(_md_escape, cols)) + " |",
             "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_md_escape(v) for v in row) + " |")
    notes = list(notes)
    if notes:
        lines.append("")
        lines.extend(f"{'' if n.startswith('*') else '* '}{n}" for n in notes)
    return "\n".join(lines) + "\n"


def _tex_escape(s: str) -> str:
    out = str(s)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("±", r"$\pm$"), ("~", r"\textasciitilde{}"),
                 ("^", r"\textasciicircum{}")):
        out = out.replace(a, b)
    return out


def to_latex(df: pd.DataFrame, title: str, notes: Iterable[str] = ()) -> str:
    cols = list(df.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{" + "l" * len(cols) + "}",
             r"\toprule", " & ".join(_tex_escape(c) for c in cols) + r" \\", r"\midrule"]
    for row in df.itertuples(index=False):
        lines.append(" & ".join(_tex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{" + _tex_escape(title) + "}"]
    lines += [r"% " + n.replace("\n", " ") for n in notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_table(display: pd.DataFrame, tidy: pd.DataFrame, stem: str | Path, title: str,
                notes: Iterable[str] = ()) -> list[Path]:
    """Write ``stem.md`` and ``stem.tex`` from the display frame and ``stem.csv`` from the tidy frame."""
    stem = Path(stem)
    notes = list(notes)
    paths = [with_ext(stem, ".md"), with_ext(stem, ".csv"), with_ext(stem, ".tex")]
    with atomic_write(paths[0]) as f:
        f.write(to_markdown(display, title, notes))
    with atomic_write(paths[1]) as f:
        tidy.to_csv(f, index=False, lineterminator="\n", float_format="%.4f")
    with atomic_write(paths[2]) as f:
        f.write(to_latex(display, title, notes))
    return paths
