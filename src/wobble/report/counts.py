"""What both ledger writers count from plain rows: reading a ledger's CSV back, and the footnotes on the paper's
own verdicts and on the samples' power. Plain dicts in, text out, so the old writer (:mod:`wobble.report.ledger`)
and the new one (:mod:`wobble.report.findings`) share it without importing each other."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import pandas as pd

from wobble.report.cells import is_missing


def flag(v) -> bool | None:
    """A boolean cell as read back from CSV (True / False / "True" / NaN)."""
    if is_missing(v) or v is None or v == "":
        return None
    return str(v) == "True"


def read_rows(path: str | Path) -> list[dict]:
    """Rows of a ledger's CSV, NaN cells as None."""
    df = pd.read_csv(path, keep_default_na=True)
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in df.to_dict(orient="records")]


def paper_and_power_lines(rows: Sequence[dict]) -> list[str]:
    """How many table-backed rows the paper's own numbers pass, and how many measured rows had a sample that
    could detect an effect as large as the paper's."""
    table_rows = [r for r in rows if r.get("evidence") == "table"]
    own = sum(1 for r in table_rows if r.get("paper_verdict") == "reproduced")
    decidable = [r for r in rows if flag(r.get("detects_paper_effect")) is not None]
    could = sum(1 for r in decidable if flag(r["detects_paper_effect"]))
    return [f"The paper's own numbers pass {own} of the {len(table_rows)} rows whose evidence is a published "
            "table; the other rows rest on the paper's text or a figure.",
            f"{could} of the {len(decidable)} measured rows with a comparable paper number had a sample that could "
            "detect an effect as large as the paper's; for the others the row says about how many units it would "
            "take (n · (detectable / |paper effect − null|)²), and whether that many exist."]
