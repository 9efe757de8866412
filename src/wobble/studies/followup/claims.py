"""The followup study's headline claims ("Ask Again, Then Fail", ICLR 2024 submission, Abstract, §3.2-§4) and how each
is measured.

Input: the item scores of every dialogue of every model (:func:`.pipeline.scores`: per dialogue ``model``,
``dataset``, ``item``, ``form``, ``mitigation``, ``temperature`` label, ``rounds`` (question type and annotator
per round) and ``correct`` after the initial answer and each round). The unit resampled is the ITEM
(dataset, item id): an item brings every model, condition and round it was asked in.

Pre-registered before any run (with the verdict rule of :mod:`wobble.report.claims`), all in percent:

* M. Rate = initially correct answers that are wrong after the round / initially correct answers (A.1),
  pooled over the dialogues a claim names (ratio of sums);
* "judgement consistency sharply decreases": Direct-Form M. Rate, annotator A, no mitigation, the model's own
  temperature, all question types and datasets; "sharply" = above 10 % (``null`` 10, fixed here);
* "leading questions are the most sensitive": Direct Form, every annotator, no mitigation, the model's own
  temperature: M. Rate(leading) − the larger of M. Rate(closed-ended), M. Rate(open-ended);
* "modification accumulates over rounds": Progressive Form, prompt set A, no mitigation: M. Rate after round 3
  − after round 1, same dialogues;
* "temperature 0 does not remove the effect": Direct Form at temperature 0 (the focus runs of Table 3), M. Rate
  above the same 10 %;
* "the mechanism corrects only some initially wrong answers": E→R Rate of the focus runs at the model's own
  temperature (initially wrong answers right after the follow-up) below 50 % (direction −1; needs
  ``followup.gate: all``);
* "Zero-shot-CoT and few-shot mitigate more than EmotionPrompt": Direct Form on the focus datasets, M. Rate under
  the EmotionPrompt mitigations − under the Zero-shot-CoT and few-shot ones (each side pooled over the
  positions and annotators run).

A measurement resting on fewer than ``MIN_CORRECT`` initially correct (or, for E→R, initially wrong) answers
is **degenerate**: a rate over a handful of answers says little about the model.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.claims import Claim, Measurement
from wobble.stats import bootstrap_indices, percentile_interval
from wobble.studies.followup.layout import FOCUS

STUDY = "followup"
SHARP = 10.0
MIN_CORRECT = 10
EMOTION = ("emotion_initial", "emotion_followup", "emotion_both")
COT_FEWSHOT = ("cot_initial", "cot_followup", "cot_both", "fewshot", "fewshot_cot_followup")

CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "consistency_drops",
          "even when the initial answers are correct, judgement consistency sharply decreases when LLMs face "
          "disturbances such as questioning, negation, or misleading", "Abstract, §3.2 Figure 2",
          "", "Direct-Form M. Rate (prompt A, all question types and datasets)", null=SHARP, unit="%"),
    Claim(STUDY, "leading_most_sensitive",
          "from most to least sensitive: leading questions, closed-ended questions, and open-ended questions",
          "§3.3 The Impact of Different Prompts", "", "M. Rate: leading − max(closed-ended, open-ended), Direct Form, "
          "annotators A/B/C", unit="points"),
    Claim(STUDY, "progressive_accumulates",
          "Modification Rate (M. Rate) represents the rate of LLMs changing their answers in each round of a "
          "three-round dialogue", "§3.2 Figure 3/4, Tables 9/11/13", "",
          "Progressive-Form M. Rate: after round 3 − after round 1 (prompt set A)", unit="points"),
    Claim(STUDY, "temperature_zero_keeps_effect",
          "lower temperature doesn't assure higher judgement consistency as initially assumed, and can sometimes "
          "reduce it", "§3.3 The Impact of Sampling Temperature, Table 3", "",
          "Direct-Form M. Rate at temperature 0 (StrategyQA closed, CoinFlip open, MultiArith leading)", null=SHARP,
          unit="%"),
    Claim(STUDY, "mechanism_corrects_few",
          "this mechanism can correct some samples, though to varying degress across datasets",
          "§3.3 Can The Mechanism Correct Models?, Table 5", "",
          "E→R Rate: initially wrong answers right after the follow-up", direction=-1, null=50.0, unit="%"),
    Claim(STUDY, "cot_fewshot_beat_emotion",
          "compared to EmotionPrompt, the mitigating effects of Zero-shot CoT and few-shot prompting are more "
          "pronounced", "§4, Table 6", "", "M. Rate: EmotionPrompt − (Zero-shot-CoT, few-shot)", unit="points"),
)


# ---------------------------------------------------------------------------------------------- selection


def _own(s: Mapping, own_temps: Mapping[str, str]) -> bool:
    return s["temperature"] == own_temps.get(s["model"])


def _direct(s: Mapping, *, variant: str | None = "A", mitigation: str | None = "none") -> bool:
    return (s["form"] == "direct" and (mitigation is None or s["mitigation"] == mitigation)
            and (variant is None or s["rounds"][0]["variant"] == variant)
            and s["rounds"][0]["question_type"] != "emotional")


# -------------------------------------------------------------------------------------------- statistics


class _Counts:
    """Per item (rows) and named cell (columns): initially correct / flipped, initially wrong / fixed."""

    def __init__(self, items: Sequence[tuple], cells: Sequence[str]):
        self.items, self.cells = list(items), list(cells)
        self._row = {it: i for i, it in enumerate(self.items)}
        shape = (len(self.items), len(self.cells))
        self.correct, self.flipped, self.wrong, self.fixed = (np.zeros(shape) for _ in range(4))

    def add(self, item: tuple, cell: str, before: bool, after: bool) -> None:
        i, j = self._row[item], self.cells.index(cell)
        if before:
            self.correct[i, j] += 1
            self.flipped[i, j] += not after
        else:
            self.wrong[i, j] += 1
            self.fixed[i, j] += after


def _counts(scores: Sequence[Mapping], cell_of: Callable[[Mapping], str | None], round_of: Callable[[Mapping], int]
            ) -> _Counts:
    chosen = [(s, c) for s in scores if (c := cell_of(s)) is not None]
    items = sorted({(s["dataset"], str(s["item"])) for s, _ in chosen})
    cells = sorted({c for _, c in chosen})
    out = _Counts(items, cells)
    for s, c in chosen:
        out.add((s["dataset"], str(s["item"])), c, bool(s["correct"][0]), bool(s["correct"][round_of(s)]))
    return out


def _rate(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """100 · column sums of num / den (NaN where den sums to 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100.0 * num.sum(0) / den.sum(0)


def _boot(c: _Counts, stat: Callable[[np.ndarray], float], *, n_boot: int, seed: int) -> tuple[float, float, float]:
    """``stat(rows)`` at the point (all items) and its 95 % percentile interval over resampled items."""
    point = stat(np.arange(len(c.items)))
    idx = bootstrap_indices(len(c.items), n_boot, seed)
    reps = np.array([stat(row) for row in idx], dtype=float)
    lo, hi = percentile_interval(reps[~np.isnan(reps)]) if np.any(~np.isnan(reps)) else (np.nan, np.nan)
    return point, lo, hi


def _measure(c: _Counts, stat, *, den: np.ndarray, n_boot: int, seed: int, what: str) -> Measurement | None:
    if not c.items:
        return None
    point, lo, hi = _boot(c, stat, n_boot=n_boot, seed=seed)
    n_den = int(den.sum())
    few = int(den.sum(0).min()) if den.size else 0
    note = f"{len(c.items)} items; {n_den} {what}" + (f" (fewest in one arm: {few})" if len(c.cells) > 1 else "")
    return Measurement(None if np.isnan(point) else float(point), _f(lo), _f(hi), len(c.items),
                       degenerate=few < MIN_CORRECT, note=note + (f"; < {MIN_CORRECT} in an arm" if few < MIN_CORRECT else ""))


def _f(x) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def _mrate(c: _Counts, cells: Sequence[str]) -> Callable[[np.ndarray], float]:
    cols = [c.cells.index(x) for x in cells if x in c.cells]
    return lambda rows: float(_rate(c.flipped[rows][:, cols].sum(1, keepdims=True),
                                    c.correct[rows][:, cols].sum(1, keepdims=True))[0])


# ------------------------------------------------------------------------------------------------ claims


def _first_round(s: Mapping) -> int:
    return 1


def _leading_gap(c: _Counts) -> Callable[[np.ndarray], float]:
    def stat(rows):
        return _mrate(c, ["leading"])(rows) - max(_mrate(c, [q])(rows) for q in ("closed-ended", "open-ended"))
    return stat


def _difference(a: Callable[[np.ndarray], float], b: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], float]:
    def stat(rows):
        return a(rows) - b(rows)
    return stat


def _e_to_r(c: _Counts) -> Callable[[np.ndarray], float]:
    def stat(rows):
        return float(_rate(c.fixed[rows], c.wrong[rows])[0])
    return stat


def _mitigation_arm(s: Mapping, own_temps: Mapping[str, str]) -> str | None:
    if not (_own(s, own_temps) and _direct(s, variant=None, mitigation=None)):
        return None
    return "emotion" if s["mitigation"] in EMOTION else "cot_fewshot" if s["mitigation"] in COT_FEWSHOT else None


def measure(scores: Iterable[Mapping[str, Any]], own_temps: Mapping[str, str], *, n_boot: int = 1000,
            seed: int = 0) -> dict[str, Measurement | None]:
    """Measure every claim on the item scores of all models; ``own_temps``: model -> its temperature label
    (a claim whose arms were not run is None: "not measured")."""
    scores = list(scores)
    kw = {"n_boot": n_boot, "seed": seed, "what": "initially correct"}
    out: dict[str, Measurement | None] = {}

    c = _counts(scores, lambda s: "all" if _own(s, own_temps) and _direct(s) else None, _first_round)
    out["consistency_drops"] = _measure(c, _mrate(c, ["all"]), den=c.correct, **kw)

    c = _counts(scores, lambda s: s["rounds"][0]["question_type"] if _own(s, own_temps) and _direct(s, variant=None)
                else None, _first_round)
    ok = {"leading", "closed-ended", "open-ended"} <= set(c.cells)
    out["leading_most_sensitive"] = _measure(c, _leading_gap(c), den=c.correct, **kw) if ok else None

    prog = [s for s in scores if s["form"] == "progressive" and s["mitigation"] == "none" and _own(s, own_temps)
            and all(r["variant"] == "A" for r in s["rounds"])]
    c1 = _counts(prog, lambda s: "r1", _first_round)
    c3 = _counts(prog, lambda s: "r3", lambda s: len(s["rounds"]))
    out["progressive_accumulates"] = (_measure(c1, _difference(_mrate(c3, ["r3"]), _mrate(c1, ["r1"])),
                                               den=c1.correct, **kw) if prog else None)

    c = _counts(scores, lambda s: "t0" if s["temperature"] == "0" and _direct(s) else None, _first_round)
    out["temperature_zero_keeps_effect"] = _measure(c, _mrate(c, ["t0"]), den=c.correct, **kw)

    focus = [s for s in scores if _own(s, own_temps) and _direct(s) and s["gate"] == "all"
             and s["dataset"] in FOCUS]
    c = _counts(focus, lambda s: "all", _first_round)
    out["mechanism_corrects_few"] = (_measure(c, _e_to_r(c), den=c.wrong, **{**kw, "what": "initially wrong"})
                                     if focus else None)

    c = _counts(scores, lambda s: _mitigation_arm(s, own_temps), _first_round)
    ok = {"emotion", "cot_fewshot"} <= set(c.cells)
    out["cot_fewshot_beat_emotion"] = (_measure(c, _difference(_mrate(c, ["emotion"]), _mrate(c, ["cot_fewshot"])),
                                                den=c.correct, **kw) if ok else None)
    return out


# ------------------------------------------------------------------------------------------------- paper


#: The paper's tables the claims' paper values are computed from (ChatGPT, the paper's main model).
PAPER_TABLES = (3, 5, 6, 8, 9)


def paper_values(tables: Mapping[int, pd.DataFrame]) -> dict[str, str]:
    """Each claim's statistic computed from the paper's printed tables for ChatGPT: Table 8 (Direct Form),
    9 (Progressive), 3 (temperature), 5 (E→R), 6 (mitigations)."""
    def num(s):
        return pd.to_numeric(s, errors="coerce")

    def chatgpt(n):
        t = tables[n]
        return t[t["model"] == "ChatGPT"]

    t8, t9, t3 = chatgpt(8), chatgpt(9), chatgpt(3)
    rate8 = num(t8["modification_rate_pct"])
    by_q = {q: rate8[t8["question_type"] == q].mean() for q in ("closed-ended", "open-ended", "leading")}
    a9 = t9[t9["prompt"] == "A"]
    r1, r3 = (num(a9[a9["round"].astype(str) == r]["modification_rate_pct"]).mean() for r in ("1", "3"))
    t0 = num(t3[num(t3["temperature"]) == 0]["modification_rate_pct"])
    e2r = num(chatgpt(5)["e_to_r_rate_pct"])
    t6 = chatgpt(6)
    rate6 = num(t6["modification_rate_pct"])
    emo = rate6[t6["mitigation"].str.contains("EmotionPrompt") & ~t6["mitigation"].str.contains("CoT")]
    cot = rate6[t6["mitigation"].str.contains("CoT|shot") & ~t6["mitigation"].str.contains("Emotion")]
    return {
        "consistency_drops": f"{rate8[t8['prompt'] == 'A'].mean():.1f} (Table 8, prompt A, mean of 24 cells)",
        "leading_most_sensitive": (f"{by_q['leading'] - max(by_q['closed-ended'], by_q['open-ended']):+.1f} (Table 8 "
                                   "means: " + ", ".join(f"{q} {v:.1f}" for q, v in by_q.items()) + ")"),
        "progressive_accumulates": f"{r3 - r1:+.1f} (Table 9, prompt A: round 3 {r3:.1f} vs round 1 {r1:.1f})",
        "temperature_zero_keeps_effect": f"{t0.mean():.1f} (Table 3, temperature 0, mean of {len(t0)} cells)",
        "mechanism_corrects_few": f"{e2r.mean():.1f} (Table 5, mean of {e2r.min():.1f}–{e2r.max():.1f})",
        "cot_fewshot_beat_emotion": f"{emo.mean() - cot.mean():+.1f} (Table 6 means: {emo.mean():.1f} vs {cot.mean():.1f})",
    }


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``)."""
    from wobble.io import read_jsonl
    from wobble.models.describe import model_label
    from wobble.report.cells import read_paper
    from wobble.report.claims import Findings
    from wobble.studies.followup.layout import model_temperature, temperature_label
    from wobble.studies.followup.pipeline import scores

    sec = config[STUDY]
    records = [r for path in inputs["dialogues"] for r in read_jsonl(path)]
    own = {m: temperature_label(model_temperature(sec, m)) for m in sec["models"]}
    boot = sec["bootstrap"]
    models = "; ".join(f"{model_label(config['models'], m)} at temperature {own[m]}" for m in sec["models"])
    notes = (f"Ours: {models}; {sec['n_items'] or 'all'} items per dataset of {', '.join(sec['datasets'])}; "
             f"gate '{sec['gate']}'; max_new_tokens {sec['max_new_tokens']}.",
             "Paper: ChatGPT (gpt-3.5-turbo-0301), PaLM2-Bison, Vicuna-13B on all test items; the paper column is "
             "ChatGPT's, computed by code from its printed tables (the table is named in the cell).")
    return Findings('Claims ledger: followup ("Ask Again, Then Fail", ICLR 2024 submission)', CLAIMS,
                    measure(scores(records), own, n_boot=boot["n"], seed=boot["seed"]),
                    paper_values({n: read_paper(inputs[f"paper_table{n}"]) for n in PAPER_TABLES}), notes)
