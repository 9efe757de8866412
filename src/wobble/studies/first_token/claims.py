"""The first_token study's headline claims (Wang et al. 2024, Abstract, §4.1–4.3) and how each is measured.

Input: the labelled predictions of every model at the main temperature (one record per prompt with
``model``, ``constraint``, ``question_uid``, ``shuffle``, ``first_token_letter``, ``first_token_option``,
``text_option`` — the option text, "Refused", or None when the text names no single option). The unit
resampled is the QUESTION: a question brings all its shuffles, constraint levels and models.

Pre-registered before any run (with the verdict rule of :mod:`wobble.report.claims`):

* levels compared are the paper's four: low, medium, high, example (``example_abc`` is Figure 3's control);
* a mismatch is counted among prompts whose text names an option (or the refusal); text naming none is not
  a mismatch but lowers the share mapped, and a measurement where fewer than half of the text answers are
  mapped is **degenerate** (the comparison would rest on a minority of answers);
* "over 60 % for some models": the highest per-model mismatch rate must exceed 0.60 (``null`` 0.6);
* "the mismatch persists at the highest constraint level": the High-level mismatch rate, pooled over
  models, must exceed 0.05 (``null`` 0.05, a non-negligible share fixed here);
* the Example template pulls the first token towards its example's letter "C": share of first-token "C"
  under Example minus under High, pooled over models (degenerate when in every model one letter wins
  ≥ 95 % of first-token answers under both levels: a position bias, not a response to the template);
* text answers refuse more often: text refusal rate minus first-token refusal rate, all four levels;
* text answers are more consistent over option shuffles: per question, mean over (model, level) cells of
  first-token minus text answer entropy (nats, §4.3 Table 3; answers naming no option dropped).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.claims import Claim, Measurement
from wobble.stats import bootstrap_indices, percentile_interval
from wobble.studies.first_token.metrics import answer_entropy
from wobble.studies.first_token.prompts import is_refusal_option

STUDY = "first_token"
LEVELS = ("low", "medium", "high", "example")
MIN_MAPPED = 0.5
ONE_LETTER = 0.95

CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "mismatch_over_60_percent",
          "the two approaches are severely misaligned on all dimensions, reaching mismatch rates over 60%",
          "Abstract, §4.1 Figure 2a", "66.2% (Llama2-7b-Chat)", "highest per-model mismatch rate", null=0.6,
          unit="share of prompts", paper_effect=0.662),
    Claim(STUDY, "mismatch_persists_when_constrained",
          "Crucially, models remain misaligned even when we increasingly constrain prompts", "Abstract, §4.1",
          "mismatch at High > 0 for all six models", "mismatch rate at the High level, all models", null=0.05,
          unit="share of prompts", paper_in_value=False),
    Claim(STUDY, "example_template_pulls_to_C",
          "the first token evaluation selects 'C' about 85% of the time (compared to 32.1% with High constraint)",
          "§4.1, Figures 3a and 7", "0.85 − 0.32 = 0.53 (Llama2-70b-Chat)",
          "share of first-token 'C': Example − High", unit="share of prompts", paper_effect=0.53),
    Claim(STUDY, "text_refuses_more",
          "The refusal answer turns out to be one of the major reasons for the mismatch between the first token "
          "and text output evaluation", "§3, §4.2", "text refusal up to 51.4% (Llama2-7b-Chat)",
          "refusal rate: text − first token", unit="share of prompts", paper_in_value=False),
    Claim(STUDY, "text_more_consistent",
          "The text output achieves better consistency than the first token evaluation for all the models except "
          "Mixtral 8x7b", "§4.3, Table 3", "", "answer entropy over shuffles: first token − text", unit="nats"),
)


def _levels(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in records if r["constraint"] in LEVELS]


def _by_question(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], dict[str, list[Mapping]]]:
    groups: dict[str, list[Mapping]] = defaultdict(list)
    for r in records:
        groups[r["question_uid"]].append(r)
    return sorted(groups), groups


def _mapped_share(records: Sequence[Mapping]) -> float:
    return float(np.mean([r["text_option"] is not None for r in records])) if records else 0.0


def _ratio_stat(num: np.ndarray, den: np.ndarray, idx: np.ndarray, combine=np.max) -> tuple[float, float, float]:
    """``combine`` over columns (models) of sum(num)/sum(den), at the point and over resampled questions."""
    with np.errstate(invalid="ignore", divide="ignore"):
        point = float(combine(num.sum(0) / den.sum(0)))
        reps = np.array([combine(num[row].sum(0) / den[row].sum(0)) for row in idx], dtype=float)
    lo, hi = percentile_interval(reps)
    return point, lo, hi


def _measurement(point, lo, hi, n, mapped, extra="") -> Measurement:
    degenerate = mapped < MIN_MAPPED
    note = f"{n} questions; {mapped:.0%} of text answers name an option" + (f"; {extra}" if extra else "")
    return Measurement(None if np.isnan(point) else point, lo, hi, n, degenerate=degenerate, note=note)


def _mismatch(records, models, *, idx_seed, n_boot, combine) -> Measurement:
    qs, groups = _by_question(records)
    num = np.zeros((len(qs), len(models)))
    den = np.zeros((len(qs), len(models)))
    for i, q in enumerate(qs):
        for r in groups[q]:
            if r["text_option"] is None:
                continue
            j = models.index(r["model"])
            den[i, j] += 1
            num[i, j] += r["first_token_option"] != r["text_option"]
    if not qs:
        return Measurement(None, None, None, 0, degenerate=True, note="no prompts")
    point, lo, hi = _ratio_stat(num, den, bootstrap_indices(len(qs), n_boot, idx_seed), combine)
    return _measurement(point, lo, hi, len(qs), _mapped_share(records))


def _per_question_diff(records, value) -> tuple[list[str], np.ndarray]:
    """Per question, mean over its records of ``value(record)`` (records where it is None skipped)."""
    qs, groups = _by_question(records)
    out = []
    for q in qs:
        vals = [v for v in (value(r) for r in groups[q]) if v is not None]
        out.append(float(np.mean(vals)) if vals else np.nan)
    return qs, np.array(out, dtype=float)


def _mean_ci(x: np.ndarray, n_boot: int, seed: int) -> tuple[float, float, float, int]:
    x = x[~np.isnan(x)]
    if x.size == 0:
        return np.nan, np.nan, np.nan, 0
    idx = bootstrap_indices(x.size, n_boot, seed)
    lo, hi = percentile_interval(x[idx].mean(axis=1))
    return float(x.mean()), lo, hi, int(x.size)


def _letter_share(records, level, letter) -> dict[str, float]:
    """Per question, the share of first-token answers equal to ``letter`` at ``level`` (all models)."""
    acc: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r["constraint"] == level:
            acc[r["question_uid"]].append(float(r["first_token_letter"] == letter))
    return {q: float(np.mean(v)) for q, v in acc.items()}


def _one_letter_everywhere(records) -> bool:
    """True when, in every model, one first-token letter wins >= 95 % of answers under Example and High."""
    by_model: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        if r["constraint"] in ("example", "high"):
            by_model[r["model"]][r["first_token_letter"]] += 1
    return bool(by_model) and all(max(c.values()) / sum(c.values()) >= ONE_LETTER for c in by_model.values())


def _entropy_diff(records) -> tuple[list[str], np.ndarray]:
    cells: dict[tuple, list[Mapping]] = defaultdict(list)
    for r in records:
        cells[(r["question_uid"], r["model"], r["constraint"])].append(r)
    per_q: dict[str, list[float]] = defaultdict(list)
    for (q, _, _), rs in sorted(cells.items()):
        h_ft = answer_entropy([r["first_token_option"] for r in rs])
        h_tx = answer_entropy([r["text_option"] for r in rs])
        if not (np.isnan(h_ft) or np.isnan(h_tx)):
            per_q[q].append(h_ft - h_tx)
    qs = sorted(per_q)
    return qs, np.array([np.mean(per_q[q]) for q in qs], dtype=float)


def measure(records: Iterable[Mapping[str, Any]], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Measurement]:
    """Measure every claim on the labelled main-temperature predictions of all models."""
    all_recs = list(records)
    recs = _levels(all_recs)
    models = sorted({r["model"] for r in recs})
    mapped = _mapped_share(recs)
    out: dict[str, Measurement] = {}
    out["mismatch_over_60_percent"] = _mismatch(recs, models, idx_seed=seed, n_boot=n_boot, combine=np.nanmax)
    pooled = [dict(r, model="all") for r in recs if r["constraint"] == "high"]  # all models in one column
    out["mismatch_persists_when_constrained"] = _mismatch(pooled, ["all"], idx_seed=seed, n_boot=n_boot,
                                                          combine=np.nanmax)
    ex, hi_share = _letter_share(all_recs, "example", "C"), _letter_share(all_recs, "high", "C")
    qs = sorted(set(ex) & set(hi_share))
    d = np.array([ex[q] - hi_share[q] for q in qs], dtype=float)
    point, lo, hi, n = _mean_ci(d, n_boot, seed)
    biased = _one_letter_everywhere(all_recs)
    out["example_template_pulls_to_C"] = Measurement(
        None if np.isnan(point) else point, lo, hi, n, degenerate=biased,
        note=f"{n} questions" + ("; one first-token letter wins >= 95% of prompts in every model" if biased else ""))
    _, d = _per_question_diff(recs, lambda r: float(is_refusal_option(r["text_option"]))
                              - float(is_refusal_option(r["first_token_option"])))
    point, lo, hi, n = _mean_ci(d, n_boot, seed)
    out["text_refuses_more"] = _measurement(point, lo, hi, n, mapped)
    _, d = _entropy_diff(recs)
    point, lo, hi, n = _mean_ci(d, n_boot, seed)
    out["text_more_consistent"] = _measurement(point, lo, hi, n, mapped)
    return out


def paper_values(table3: pd.DataFrame) -> dict[str, str]:
    """Paper numbers computed from its tables where a claim's statistic is there (Table 3 entropies)."""
    ft = pd.to_numeric(table3["entropy_first_token"], errors="coerce")
    tx = pd.to_numeric(table3["entropy_text_output"], errors="coerce")
    diff = (ft - tx).dropna()
    return {"text_more_consistent": f"{diff.mean():.2f} (mean over {len(diff)} model × level cells)"}


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``)."""
    from wobble.io import read_jsonl
    from wobble.models.describe import model_label
    from wobble.report.cells import read_paper
    from wobble.report.claims import Findings

    cfg = config[STUDY]
    records = [r for path in inputs["labeled"] for r in read_jsonl(path)]
    boot = cfg["bootstrap"]
    models = "; ".join(model_label(config["models"], m) for m in cfg["models"])
    notes = (f"Ours: {models}; {cfg['n_questions'] or 414} questions x {cfg['n_shuffles']} shuffles, main "
             f"temperature {float(cfg['temperatures'][0]):.2f}, text answers labelled by {cfg['classifier']}.",
             "Paper: six 7B-70B chat models (Llama2 7b/13b/70b-Chat, Mistral-7B-Instruct v0.1/v0.2, Mixtral).")
    return Findings('Claims ledger: first_token (Wang et al. 2024, "My Answer is C")', CLAIMS,
                    measure(records, n_boot=boot["n"], seed=boot["seed"]),
                    paper_values(read_paper(inputs["paper_table3"])), notes)
