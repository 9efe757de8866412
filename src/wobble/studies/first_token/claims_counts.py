"""The first_token claims' unit tables: each model's labelled answers as one tidy row per PROMPT, the QUESTION its
unit (a question's shuffles, levels and temperatures are resampled together), the constraint level (or the
temperature) its cell; and the paper's released numbers in the same shape, so the paper's effect is taken by the
claim's own statistic (:mod:`.claims_measure`).

Per prompt (Figure 2a's definitions, :mod:`.metrics`): ``mismatch`` (the text option differs from the first-token
option, a text naming no option included), ``mismatch_agree`` (the same with a text naming no option counted as
agreement), ``refused`` (the text refuses, the first token does not), ``refuses_text``, ``mapped`` (the text names
an option), ``notopen`` (the text does not open with the first-token letter), ``first_letter``, ``text_letter``,
``ft_C`` (first token 'C'), ``text_C`` (the text's letter 'C'; NaN for a text naming no option), ``n_options`` (the letters shown), ``truncated`` (stopped at ``max_new_tokens``; NaN
where no finish reason was recorded). Per question x level x temperature, over its shuffles, on each of its rows:
``keeps_letter`` / ``text_keeps_letter`` (wobble's position-bias control, for the first token / for the text:
over the shuffles the answer keeps its letter more often than its option; NaN below two answers naming an
option), ``h_gap`` (first-token minus text answer entropy, Table 3), ``h_text`` (text answer entropy) and
``h_text_norm`` (``h_text`` over ln k, k the options shown: 1 is uniform sampling).

Per model x cell, on each of its rows (:func:`with_cell_figures`): ``cell_mapped``, ``cell_truncated``, ``cell_notopen``,
``cell_refuses_text`` (means over the cell's prompts) and ``cell_text_positional`` / ``cell_first_positional``:
the one-sided 95 % LOWER bound, over questions, of the share of questions whose text / first token keeps its
letter (:func:`positional_bound`), so a positional gate fails only where the share is clearly above its threshold.

Cells: the paper's four levels at the main temperature (``main``; the refusal claim's statistic reads its
mismatched prompts, its checks every prompt), the sweep's lowest and highest temperature (``sweep``), and the
Example template beside its "A/B/C" variant at the main temperature (``control``, Figure 3b).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.engine import UnitTable
from wobble.report.intervals import share_interval
from wobble.studies.first_token.layout import temp_tag
from wobble.studies.first_token.metrics import answer_entropy, first_token_is_letter
from wobble.studies.first_token.prompts import PAPER_OUTPUT_DIRS, is_refusal_option

#: The paper's four constraint levels as cells.
LEVELS = {"low": "Low", "medium": "Medium", "high": "High", "example": "Example"}
#: Figure 3b's control: the Example template answering "A/B/C" instead of "C" (no level of the mismatch claims).
CONTROL = {"example_abc": "Example A/B/C"}
#: The temperature claims' two cells: the sweep's lowest and highest temperature.
LOWEST, HIGHEST = "lowest T", "highest T"
#: Per-cell figures copied onto every row of the cell (:func:`with_cell_figures`): the mean of a prompt column.
CELL_COLUMNS = {"mapped": "cell_mapped", "truncated": "cell_truncated", "notopen": "cell_notopen",
                "refuses_text": "cell_refuses_text"}
#: Per-cell position-bias bounds: (the question-level column, the cell column of its one-sided lower bound).
POSITIONAL = {"text_keeps_letter": "cell_text_positional", "keeps_letter": "cell_first_positional"}
#: The one-sided confidence of a positional bound (the lower end of a two-sided interval at 1 − 2·(1 − this)).
POSITIONAL_CONFIDENCE = 0.95
UNIT = "question"


def record_tag(r: Mapping, main: str) -> str:
    """The record's temperature tag (records without ``gen_params`` are at the main temperature)."""
    t = (r.get("gen_params") or {}).get("temperature")
    return main if t is None else temp_tag(t)


def _keeps_letter(letters: Sequence, options: Sequence) -> float:
    """1 when over a question's shuffles the answer keeps its letter more often than its option, else 0; NaN
    below two answers that name an option (a None letter or option is left out, pair by pair)."""
    pairs = [(lt, op) for lt, op in zip(letters, options) if isinstance(lt, str) and lt and op is not None]
    if len(pairs) < 2:
        return math.nan

    def modal(xs: Sequence) -> float:
        return max(Counter(xs).values()) / len(xs)

    return float(modal([lt for lt, _ in pairs]) > modal([op for _, op in pairs]))


def letter_entropy(counts: Mapping[str, float]) -> float:
    """Entropy (nats, ``scipy.stats.entropy``) of a distribution of chosen letters given as counts; NaN for none."""
    from scipy.stats import entropy

    positive = [c for c in counts.values() if c > 0]
    return float(entropy(positive)) + 0.0 if positive else math.nan


def letter_counts(letters: Iterable) -> Counter:
    """The letters chosen (None and NaN, a text naming no option, left out)."""
    return Counter(v for v in letters if isinstance(v, str) and v)


def pooled_letter_gap(frame: pd.DataFrame) -> float:
    """Figure 3a's comparison: the entropy of the text's letter counts pooled over every prompt of ``frame``
    minus that of the first token's (texts naming no option left out); NaN when either has no letter."""
    return letter_entropy(letter_counts(frame["text_letter"])) - letter_entropy(letter_counts(frame["first_letter"]))


def prompt_frame(records: Iterable[Mapping], main: str) -> pd.DataFrame:
    """One row per labelled prediction of the four levels and Figure 3b's control (module docstring), every
    temperature."""
    cells = {**LEVELS, **CONTROL}
    rows = []
    for r in records:
        if r["constraint"] not in cells:
            continue
        ft, tx = r["first_token_option"], r["text_option"]
        fin = r.get("finish_reason")
        rows.append({UNIT: r["question_uid"], "model": r["model"], "level": cells[r["constraint"]],
                     "temp": record_tag(r, main), "shuffle": r["shuffle"], "first_option": ft, "text_option": tx,
                     "first_letter": r["first_token_letter"], "text_letter": r.get("text_letter"),
                     "n_options": float(len(r["letters"])) if r.get("letters") else math.nan,
                     "mismatch": float(tx is None or ft != tx), "mismatch_agree": float(tx is not None and ft != tx),
                     "refused": float(is_refusal_option(tx) and not is_refusal_option(ft)),
                     "refuses_text": float(is_refusal_option(tx)), "mapped": float(tx is not None),
                     "notopen": float(not first_token_is_letter(r)), "ft_C": float(r["first_token_letter"] == "C"),
                     "text_C": float(r["text_letter"] == "C") if r.get("text_letter") else math.nan,
                     "truncated": math.nan if not fin else float(fin == "length")})
    cols = [UNIT, "model", "level", "temp", "shuffle", "first_option", "text_option", "first_letter", "text_letter",
            "n_options", "mismatch", "mismatch_agree", "refused", "refuses_text", "mapped", "notopen", "ft_C",
            "text_C", "truncated"]
    f = pd.DataFrame(rows, columns=cols)
    per_cols = ["keeps_letter", "text_keeps_letter", "h_gap", "h_text", "h_text_norm"]
    if not len(f):
        return f.assign(**{c: [] for c in per_cols})
    per = f.groupby(["model", UNIT, "level", "temp"], sort=False).apply(_per_group, include_groups=False)
    return f.join(per, on=["model", UNIT, "level", "temp"])


def _options(column: pd.Series) -> list:
    """The options chosen, a text naming none as None (pandas may hold it as NaN)."""
    return [v if isinstance(v, str) else None for v in column]


def _per_group(g: pd.DataFrame) -> pd.Series:
    """A question's figures in one level at one temperature, over its shuffles."""
    h_ft, h_tx = answer_entropy(_options(g["first_option"])), answer_entropy(_options(g["text_option"]))
    k = g["n_options"].max()
    return pd.Series({"keeps_letter": _keeps_letter(list(g["first_letter"]), _options(g["first_option"])),
                      "text_keeps_letter": _keeps_letter(list(g["text_letter"]), _options(g["text_option"])),
                      "h_gap": h_ft - h_tx, "h_text": h_tx,
                      "h_text_norm": h_tx / math.log(k) if k == k and k >= 2 else math.nan})


def positional_bound(cell: pd.DataFrame, column: str) -> float:
    """The one-sided :data:`POSITIONAL_CONFIDENCE` lower bound, over the cell's QUESTIONS, of the share of them
    whose answer keeps its letter (``column``; a question in several levels of one cell weighs its levels' mean):
    the lower end of the engine's exact share interval over units (Clopper–Pearson for 0/1 values, else
    Hoeffding's) at the two-sided level 1 − 2·(1 − confidence); NaN with no question to read."""
    per_q = cell.groupby(UNIT, sort=False)[column].mean().to_numpy(dtype=float)
    return share_interval(per_q, 1 - 2 * (1 - POSITIONAL_CONFIDENCE))[0]


def with_cell_figures(f: pd.DataFrame) -> pd.DataFrame:
    """``f`` (with its ``cell`` column) and, on every row, its model x cell's figures (module docstring)."""
    out = f.copy()
    for col, name in CELL_COLUMNS.items():
        out[name] = f.groupby(["model", "cell"])[col].transform("mean") if len(f) else []
    for col, name in POSITIONAL.items():
        bounds = {key: positional_bound(g, col) for key, g in f.groupby(["model", "cell"], sort=False)}
        out[name] = [bounds[k] for k in zip(f["model"], f["cell"])]
    return out


def main_table(prompts: pd.DataFrame, main: str) -> pd.DataFrame:
    """The four levels at the main temperature, the level the cell, with the cells' figures."""
    f = prompts[(prompts["temp"] == main) & prompts["level"].isin(LEVELS.values())]
    return with_cell_figures(f.assign(cell=f["level"]).reset_index(drop=True))


def control_table(prompts: pd.DataFrame, main: str) -> pd.DataFrame:
    """Figure 3b's comparison: Example and Example A/B/C at the main temperature, with the cells' figures."""
    f = prompts[(prompts["temp"] == main) & prompts["level"].isin(["Example", *CONTROL.values()])]
    return with_cell_figures(f.assign(cell=f["level"]).reset_index(drop=True))


def sweep_table(prompts: pd.DataFrame) -> pd.DataFrame:
    """Per model, the levels run at every one of its temperatures, at the lowest and the highest temperature
    (cells :data:`LOWEST`, :data:`HIGHEST`), with the cells' figures; empty for a model run at one temperature."""
    parts = []
    for _, m in prompts[prompts["level"].isin(LEVELS.values())].groupby("model", sort=False):
        tags = sorted(m["temp"].unique(), key=float)
        if len(tags) < 2:
            continue
        levels = [lv for lv in LEVELS.values() if all(((m["temp"] == t) & (m["level"] == lv)).any() for t in tags)]
        keep = m[m["level"].isin(levels) & m["temp"].isin([tags[0], tags[-1]])]
        parts.append(keep.assign(cell=np.where(keep["temp"] == tags[0], LOWEST, HIGHEST)))
    if not parts:
        return with_cell_figures(prompts.iloc[0:0].assign(cell=[]))
    return with_cell_figures(pd.concat(parts, ignore_index=True))


def sweep_note(prompts: pd.DataFrame, beyond: float | None = None) -> str:
    """Which temperatures and levels the temperature rows compare, per model; a highest temperature above
    ``beyond`` (the paper's sweep) is labelled extrapolation."""
    t = sweep_table(prompts)
    out = []
    for m, g in t.groupby("model", sort=False):
        hi = max(g["temp"], key=float)
        out.append(f"{m}: T={min(g['temp'], key=float)} -> T={hi} on {', '.join(dict.fromkeys(g['level']))}"
                   + (" (extrapolation: above the paper's sweep)" if beyond is not None and float(hi) > beyond else ""))
    return "; ".join(out)


def tables(records: Iterable[Mapping], main: str, claims: Mapping[str, str]) -> tuple[dict[str, UnitTable], pd.DataFrame]:
    """``{claim id: UnitTable}`` from the labelled predictions; ``claims`` maps each id to its table's kind
    ("main", "sweep" or "control"). Also the prompt frame (for notes)."""
    prompts = prompt_frame(records, main)
    main_f = main_table(prompts, main)
    frames = {"main": main_f, "sweep": sweep_table(prompts),
              "control": control_table(prompts, main)}
    return {cid: UnitTable(frames[kind], UNIT) for cid, kind in claims.items()}, prompts


# ------------------------------------------------------------------------------ the paper's numbers, same shape


def paper_mapping_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The released ``mapping_result.json`` rates (one per paper model x level x shuffle, each over the 414
    questions) as rows of the main table: the mean over a level's rows is the paper's Figure 2a bar, as the
    mean over questions is ours."""
    dirs = {v: LEVELS[k] for k, v in PAPER_OUTPUT_DIRS.items()}
    out = [{UNIT: f"shuffle {r['shuffle']}", "model": r["model"], "cell": dirs[r["constraint"]],
            "mismatch": float(r["total_mis_rate"]), "refuses_text": float(r["refuse_rate"]),
            "notopen": float(r["total_first_token_mismatch"]) / float(r["total"])}
           for r in rows if r["constraint"] in dirs]
    return pd.DataFrame(out, columns=[UNIT, "model", "cell", "mismatch", "refuses_text", "notopen"])


def paper_table3(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Table 3's first-token minus text entropy per model x level (each a mean over the paper's questions), one
    unit per model: the mean over its levels is the same statistic as ours over questions."""
    out = [{UNIT: "Table 3", "model": r["model"], "cell": r["constraint"],
            "h_gap": float(r["entropy_first_token"]) - float(r["entropy_text_output"])}
           for r in rows if str(r["entropy_first_token"]).strip() and str(r["entropy_text_output"]).strip()]
    return pd.DataFrame(out, columns=[UNIT, "model", "cell", "h_gap"])


def paper_c_shares(example: float, high: float, model: str) -> pd.DataFrame:
    """Figures 3a and 7's share of first-token 'C' (Example, High) as a one-unit table."""
    return pd.DataFrame([{UNIT: "Figures 3a, 7", "model": model, "cell": c, "ft_C": v}
                         for c, v in (("Example", example), ("High", high))])
