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
    """How many table-backed rows the paper's own numbers pass (of those with a paper effect on the run's cells),
    and how many measured rows had a sample that could detect an effect as large as the paper's; what the others
    print (about how many units it would take and, where the study gives it, how many exist)."""
    table_rows = [r for r in rows if r.get("evidence") == "table"]
    with_effect = [r for r in table_rows if not is_missing(r.get("paper_effect"))]
    own = sum(1 for r in with_effect if r.get("paper_verdict") == "reproduced")
    without = len(table_rows) - len(with_effect)
    decidable = [r for r in rows if flag(r.get("detects_paper_effect")) is not None]
    could = sum(1 for r in decidable if flag(r["detects_paper_effect"]))
    short = [r for r in decidable if not flag(r["detects_paper_effect"])]
    needed = [r for r in short if not is_missing(r.get("items_needed"))]
    known = [r for r in needed if not is_missing(r.get("population"))]
    exist = sum(1 for r in known if float(r["items_needed"]) <= float(r["population"]))
    power = (f"{could} of the {len(decidable)} measured rows with a comparable paper number had a sample that "
             "could detect an effect as large as the paper's")
    if needed:
        power += (f"; for the other {len(needed)} the row's line in its claim's section says about how many units "
                  "it would take (n · (detectable / |paper effect − null|)²)")
        if known:
            power += (f" and, for the {len(known)} whose claim says how many units exist, that number (enough "
                      f"exist for {exist})")
    return [f"The paper's own numbers pass {own} of the {len(with_effect)} table-backed rows with a paper effect"
            + (f"; {without} table-backed {'row has' if without == 1 else 'rows have'} no paper effect on the "
               "run's cells" if without else "")
            + "; rows resting on the paper's text or a figure get no paper verdict.", power + "."]
