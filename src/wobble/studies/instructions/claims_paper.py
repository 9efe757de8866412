"""The paper's effect of each instructions claim: the claim's own statistic (its ``point``) over a unit table built
from the paper's published means, so the paper passes or fails its row under the same function as ours.

* Tables 4 and 5 (T5-3B; T5-11B with examples only): one row per category and condition × setting, the category
  standing for the task (the paper prints category means).
* Table 7 (T5-3B, Para-Instructions): per category the original instruction's mean, and the 3 new instructions
  as three versions with the printed "reph." mean and std (mean − std, mean, mean + std: their standard deviation
  with n − 1, the statistic's, is the printed one).
* Table 8 (T5-3B, DiversePrompt): per task three prompt versions with the printed mean and std, the same way.
* The robustness with examples has a paper effect per model: T5-3B's (Table 4) for the main model, T5-11B's
  (Table 5) for the second.

A printed cell that cannot be read leaves its category out of the contrasts that read it, as a task lacking a
cell is left out of ours.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from wobble.report.engine import ClaimSpec
from wobble.studies.instructions.claims_measure import COLUMNS, SETTING_SHORT, cell_name

SETTINGS = {"INSTRU-WO-EXAM": "wo_exam", "INSTRU-W-EXAM": "w_exam"}
NEW = ("paraphrase_1", "paraphrase_2", "paraphrase_3")


def _num(s: pd.Series) -> pd.Series:
    return pd.to_numeric(s, errors="coerce")


def _frame(rows: list[tuple]) -> pd.DataFrame:
    f = pd.DataFrame([(t, "paper", c, v, "", None, s, 1.0, 0.0, 0.0) for t, c, v, s in rows], columns=COLUMNS)
    return f[f["score"].notna()].reset_index(drop=True)


def _versions(mean: float, std: float) -> list[float]:
    """Three values with this mean and this standard deviation (n − 1 in the denominator)."""
    a = 0.0 if std != std else std
    return [mean - a, mean, mean + a]


def english_frame(table: pd.DataFrame, model: str) -> pd.DataFrame:
    """Table 4 or 5 of ``model`` as unit rows: category, cell ``condition/WO|W``, the printed mean."""
    t = table[(table["model"] == model) & table["setting"].isin(list(SETTINGS))]
    return _frame([(r.category, cell_name("english", r.condition, SETTINGS[r.setting]), r.condition, v)
                   for r, v in zip(t.itertuples(), _num(t["mean"]))])


def prompt_frame(table7: pd.DataFrame, table8: pd.DataFrame, model: str = "T5-3B") -> pd.DataFrame:
    """Tables 7 and 8 of ``model`` as unit rows of the Para-Instructions and DiversePrompt cells."""
    t7 = table7[table7["model"] == model]
    rows = []
    for r, m, s in zip(t7.itertuples(), _num(t7["mean"]), _num(t7["std"])):
        if r.instruction == "original":
            rows.append((r.category, cell_name("para", "original", "w_exam"), "original", m))
        else:
            rows += [(r.category, cell_name("para", v, "w_exam"), v, x) for v, x in zip(NEW, _versions(m, s))]
    t8 = table8[table8["model"] == model]
    for r, m, s in zip(t8.itertuples(), _num(t8["mean"]), _num(t8["std"])):
        rows += [(r.task, cell_name("diverse", "", ""), str(i), x) for i, x in enumerate(_versions(m, s))]
    return _frame(rows)


def _effect(c: ClaimSpec, frame: pd.DataFrame) -> float | None:
    if not set(c.cells) <= set(frame["cell"]):
        return None
    v = c.statistic.point(frame[frame["cell"].isin(c.cells)], "task")
    return None if v != v else float(v)


def paper_effects(specs: Sequence[ClaimSpec], table4: pd.DataFrame, table5: pd.DataFrame, table7: pd.DataFrame,
                  table8: pd.DataFrame, models: Sequence[str] = ()
                  ) -> tuple[dict[str, float | dict[str, float]], dict[str, str]]:
    """Each claim's statistic over the paper's tables (where they have its cells) and the text shown for it. With
    two ``models`` (main, second) the robustness with examples gets one per model: T5-3B's, T5-11B's."""
    t4, t5 = english_frame(table4, "T5-3B"), english_frame(table5, "T5-11B")
    prompts = prompt_frame(table7, table8)
    p7, p8 = prompts[prompts["cell"] != "diverse"], prompts[prompts["cell"] == "diverse"]
    effects, texts = {}, {}
    for c in specs:
        english = all(x.split("/")[-1] in SETTING_SHORT.values() for x in c.cells)
        e = _effect(c, t4 if english else prompts)
        if e is None:
            continue
        effects[c.id] = e
        if english:
            texts[c.id] = f"{e:.1f} (T5-3B, Table 4)"
            e5 = _effect(c, t5)
            if c.id == "examples_robust_all_perturbations" and e5 is not None:
                texts[c.id] += f"; T5-11B, Table 5: {e5:.1f}"
                if len(models) > 1:
                    effects[c.id] = {models[0]: e, models[1]: e5}
        elif "diverse" in c.cells:
            stat = c.statistic
            a = float(np.nanmean(stat.arm(p8, "task", stat.a)))
            b = float(np.nanmean(stat.arm(p7, "task", stat.b)))
            what = "std" if stat.spread else "mean"
            texts[c.id] = f"{e:.1f} (T5-3B: {what} {a:.1f} in Table 8 vs {b:.1f} in Table 7)"
        else:
            texts[c.id] = f"{e:.1f} (T5-3B, Table 7)"
    return effects, texts
