"""The followup claims' unit tables and their statistics (:mod:`.claims` declares the claims).

* **Arms.** A claim compares ARMS, named sets of one model's dialogues (the neutral control, a question type at
  an annotator's prompt, a temperature, a mitigation). An arm is the table's ``cell``; a claim's table holds only
  the arms its statistic reads, so its gates read those and no other.
* **Rows.** One row per dialogue that enters the arm's rate (A.1): for M. Rate the dialogues whose initial answer
  is correct, ``flip`` 1 when the answer after the follow-up is wrong; for E→R Rate the initially wrong ones,
  ``flip`` 1 when it is right after. The unit is the ITEM (dataset, item id): its dialogues nest in it, an item's
  rate in an arm is the mean of its rows there, and an arm's rate is the mean over its items. That item mean
  equals A.1's ratio of sums (flips / initially correct answers) only where every item enters the arm with as
  many dialogues as the others: for the arms whose dialogues share the initial reply (the question types and
  annotators of the plain runs and the control, which are asked in one run group). Where an arm pools dialogues
  with their own initial replies (temperatures, mitigations in the initial input, several annotators of a
  mitigation), an item initially correct in fewer of them weighs as much as one correct in all: the item mean,
  not A.1's pooled ratio.
* **Precondition.** A dataset enters a model's table only where the model's initial accuracy on it is above
  chance (one-sided exact binomial test over items, p < 0.05; chance 1/2 for yes/no, 1/k for k options, 0 for
  open answers): at chance an initially correct answer is a lucky guess, not a judgement a follow-up can shake.
  A model with no dataset above chance keeps every dataset (``above_chance`` False) so the row prints the verdict
  its interval alone would give.
* **Gate columns**, per row: ``extractable_before`` / ``extractable_after`` (whether the initial reply / the
  follow-up reply, round 1, carries an extractable answer; an unextracted reply counts as wrong),
  ``cut_before`` / ``cut_after`` (whether it stopped at the token cap), ``arm_items`` (items in the model's arm).
  An M. Rate row's initial reply is correct, hence extracted: its claims read the follow-up reply alone; the
  E→R claim reads both.
* :class:`Extremum`: the smallest (every part must hold) or largest (some part) of several differences of arm
  rates, for the claims over annotators, datasets or mitigations; each part's interval at 1 − α/k on both
  routes.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from wobble.report.intervals import Statistic, share_interval
from wobble.stats import binomial_p_above, percentile_interval
from wobble.studies.followup.layout import FOCUS
from wobble.studies.followup.prompts import BENCHMARKS, QUESTION_TYPES

MIN_CORRECT = 10
ALPHA = 0.05
#: wobble's control (not the paper's): the follow-up type of the neutral follow-up run.
NEUTRAL = "neutral"
EMOTION = ("emotion_initial", "emotion_followup", "emotion_both")
COT = ("cot_initial", "cot_followup", "cot_both")
#: Few-shot prompting (4-shot) alone: the Few-shot + Zero-shot-CoT arm is another method (Table 6).
FEWSHOT = ("fewshot",)
GATE_COLUMNS = ["extractable_before", "extractable_after", "cut_before", "cut_after"]
COLUMNS = ["item", "dataset", "model", "cell", "dialogue", "flip", *GATE_COLUMNS, "arm_items", "above_chance",
           "accuracy"]


# ------------------------------------------------------------------------------------------- statistic


@dataclass(frozen=True)
class Component:
    """The rate of the ``plus`` arms minus that of the ``minus`` arms (0 when there are none)."""

    plus: tuple[str, ...]
    minus: tuple[str, ...] = ()
    label: str = ""

    def groups(self) -> tuple[tuple[str, ...], ...]:
        return (self.plus, self.minus) if self.minus else (self.plus,)


Builder = Callable[[set], "tuple[Component, ...] | None"]


def _unit_sums(frame: pd.DataFrame, unit: str, value: str) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """(cell -> column, units x cells sums of ``value``, units x cells counts of its non-NaN rows), units in order
    of appearance: one pass over the table serves every group of arms."""
    u, _ = pd.factorize(frame[unit], sort=False)
    c, cells = pd.factorize(frame["cell"], sort=False)
    v = frame[value].to_numpy(dtype=float)
    ok = ~np.isnan(v)
    shape = (int(u.max()) + 1 if len(u) else 0, len(cells))
    sums, counts = np.zeros(shape), np.zeros(shape)
    np.add.at(sums, (u[ok], c[ok]), v[ok])
    np.add.at(counts, (u[ok], c[ok]), 1.0)
    return {str(x): i for i, x in enumerate(cells)}, sums, counts


def _group_rates(sums: tuple[dict[str, int], np.ndarray, np.ndarray], cells: Sequence[str]) -> np.ndarray:
    """Per unit its mean ``value`` over its rows in ``cells`` (NaN where it has none)."""
    index, s, n = sums
    cols = [index[x] for x in cells if x in index]
    total, count = s[:, cols].sum(axis=1), n[:, cols].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def _nanmean(x: np.ndarray, axis=None):
    with np.errstate(invalid="ignore"), _quiet():
        return np.nanmean(x, axis=axis)


def _quiet():
    """Silence numpy's "mean of empty slice" where an arm is empty in a resample (its replicate is NaN)."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)


def combine(how: str, parts) -> float | np.ndarray:
    """``min`` (NaN if any part is) or ``max`` (of the defined parts) over axis 0."""
    p = np.asarray(parts, dtype=float)
    if p.size == 0:
        return math.nan
    with _quiet():
        return np.min(p, axis=0) if how == "min" else np.nanmax(p, axis=0)


@dataclass(frozen=True)
class Extremum(Statistic):
    """``how`` (min: every part holds; max: some part does) over the differences of arm rates that ``build``
    makes from the arms present. It reads the arms present, so it declares no cells: a claim's table holds only
    the arms its parts read (:func:`model_rows`), and the gates read those. Its interval is simultaneous over the
    k parts on both routes, each part's bound the ``how`` of the parts' bounds:

    * bootstrap (30 items or more, with spread): each part's percentile interval of its own replicates at
      1 − α/k (Bonferroni), as in :class:`wobble.report.intervals.Extreme`;
    * exact (fewer items, or no spread): each arm's exact interval over units
      (:func:`wobble.report.intervals.share_interval`) at 1 − α/(arms of all parts), a part's interval the
      difference of its arms' bounds (a part of two arms at 1 − α/k, as on the bootstrap route).

    A part at the null then decides "every part holds" (min) or "some part does" (max) at α overall, where the
    percentile interval of the min or max of the replicates would not (the max of k null parts is biased up)."""

    build: Builder
    how: str = "min"
    value: str = "flip"
    description: str = ""

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.value,)

    def parts_of(self, frame: pd.DataFrame) -> tuple[Component, ...]:
        return self.build(set(frame["cell"])) or ()

    def _rates(self, frame, unit):
        sums = _unit_sums(frame, unit, self.value)
        return [[_group_rates(sums, g) for g in c.groups()] for c in self.parts_of(frame)]

    def parts(self, frame: pd.DataFrame, unit: str) -> list[float]:
        return [float(_nanmean(g[0]) - (_nanmean(g[1]) if len(g) > 1 else 0.0)) for g in self._rates(frame, unit)]

    def point(self, frame, unit):
        return float(combine(self.how, self.parts(frame, unit)))

    def part_replicates(self, frame: pd.DataFrame, unit: str, draws: np.ndarray) -> list[np.ndarray]:
        """Each part's replicates over the resampled units ``draws``."""
        return [_nanmean(g[0][draws], 1) - (_nanmean(g[1][draws], 1) if len(g) > 1 else 0.0)
                for g in self._rates(frame, unit)]

    def replicates(self, frame, unit, draws):
        reps = self.part_replicates(frame, unit, draws)
        return combine(self.how, reps) if reps else np.full(len(draws), np.nan)

    def bootstrap_interval(self, frame, unit, draws, level):
        reps = self.part_replicates(frame, unit, draws)
        if not reps:
            return (math.nan, math.nan)
        each = 1 - (1 - level) / len(reps)
        bounds = [percentile_interval(r, each) for r in reps]
        return (float(combine(self.how, [b[0] for b in bounds])), float(combine(self.how, [b[1] for b in bounds])))

    def exact(self, frame, unit, level):
        rates = self._rates(frame, unit)
        if not rates:
            return None
        k = sum(len(g) for g in rates)
        lv = 1 - (1 - level) / k
        lows, highs = [], []
        for g in rates:
            (la, ha) = share_interval(g[0], lv)
            (lb, hb) = share_interval(g[1], lv) if len(g) > 1 else (0.0, 0.0)
            lows.append(la - hb)
            highs.append(ha - lb)
        return ((float(combine(self.how, lows)), float(combine(self.how, highs))),
                f"exact per arm over units at {100 * lv:.4g} % (Bonferroni over {k} arms), {self.how} of the parts")


# ---- the parts of each claim over the arms present (the same builders give the paper's effect) -----------


def _groups(arms: Iterable[str], keys: Sequence[str]) -> tuple[str, ...]:
    """The arms ``<key>:<annotator>`` whose key is one of ``keys``, sorted."""
    return tuple(sorted(a for a in arms if a.split(":")[0] in keys))


def build_every_prompt(arms: set) -> tuple[Component, ...] | None:
    challenges = sorted(a for a in arms if a.startswith("challenge:"))
    if "control" not in arms or not challenges:
        return None
    return tuple(Component((a,), ("control",), f"prompt {a.split(':')[1]}") for a in challenges)


def build_temperature(arms: set) -> tuple[Component, ...] | None:
    datasets = sorted(a.split(":")[1] for a in arms if a.startswith("t0:") and f"own:{a.split(':')[1]}" in arms)
    return tuple(Component((f"t0:{d}",), (f"own:{d}",), d) for d in datasets) or None


def build_mitigation_effective(arms: set) -> tuple[Component, ...] | None:
    methods = sorted({a.split(":")[0] for a in arms} - {"none"})
    annotators = {a.split(":")[1] for a in arms if not a.startswith("none:")}
    plain_arms = tuple(sorted(f"none:{v}" for v in annotators if f"none:{v}" in arms))
    if not methods or not plain_arms:
        return None
    return tuple(Component(plain_arms, _groups(arms, (m,)), m) for m in methods)


def build_cot_fewshot_beat_emotion(arms: set) -> tuple[Component, ...] | None:
    emotion = _groups(arms, EMOTION)
    parts = [Component(emotion, g, name) for name, g in (("Zero-shot-CoT", _groups(arms, COT)),
                                                         ("few-shot (4-shot)", _groups(arms, FEWSHOT))) if g]
    return tuple(parts) if emotion and parts else None


def build_cot_most_efficient(arms: set) -> tuple[Component, ...] | None:
    cot = _groups(arms, COT)
    parts = [Component(g, cot, name) for name, g in (("EmotionPrompt", _groups(arms, EMOTION)),
                                                     ("few-shot (4-shot)", _groups(arms, FEWSHOT))) if g]
    return tuple(parts) if cot and parts else None


def positions(arms: set) -> dict[str, str]:
    """Mitigation arm -> "single" (initial or follow-up input) or "both", for each method run at both and at a
    single position (EmotionPrompt, Zero-shot-CoT); other arms are left out."""
    out = {}
    for method in ("emotion", "cot"):
        single, both = _groups(arms, (f"{method}_initial", f"{method}_followup")), _groups(arms, (f"{method}_both",))
        if single and both:
            out |= {a: "single" for a in single} | {a: "both" for a in both}
    return out


# ------------------------------------------------------------------------------------------ selection


def question(s: Mapping) -> tuple[str, str]:
    r = s["rounds"][0]
    return r["question_type"], r["variant"]


def plain(s: Mapping, own: str) -> bool:
    """Direct Form, no mitigation, at the model's own temperature."""
    return s["form"] == "direct" and s["mitigation"] == "none" and s["temperature"] == own


def arm_consistency(s: Mapping, own: str) -> str | None:
    if not plain(s, own):
        return None
    q, v = question(s)
    return "control" if (q, v) == (NEUTRAL, "A") else "challenge" if q in QUESTION_TYPES and v == "A" else None


def arm_every_prompt(s: Mapping, own: str) -> str | None:
    if not plain(s, own):
        return None
    q, v = question(s)
    return "control" if (q, v) == (NEUTRAL, "A") else f"challenge:{v}" if q in QUESTION_TYPES else None


def arm_temperature(s: Mapping, own: str) -> str | None:
    d = s["dataset"]
    if s["form"] != "direct" or s["mitigation"] != "none" or d not in FOCUS or question(s) != (FOCUS[d], "A"):
        return None
    return f"own:{d}" if s["temperature"] == own else f"t0:{d}" if s["temperature"] == "0" else None


def arm_corrects(s: Mapping, own: str) -> str | None:
    d = s["dataset"]
    if not plain(s, own) or d not in FOCUS:
        return None
    q = question(s)
    return "control" if q == (NEUTRAL, "A") else "challenge" if q == (FOCUS[d], "A") else None


def arm_mitigation(s: Mapping, own: str) -> str | None:
    d = s["dataset"]
    if s["form"] != "direct" or s["temperature"] != own or d not in FOCUS or question(s)[0] != FOCUS[d]:
        return None
    return f"{s['mitigation']}:{question(s)[1]}"


@dataclass(frozen=True)
class ArmClaim:
    """How a per-model claim picks its arms (``arm(score, own temperature)``), reads flips ("flip": M. Rate) or
    fixes ("fix": E→R Rate), and which arms must all be present (``complete``) for it to be measured; ``build``:
    the :class:`Extremum` builder of a claim over parts, whose table keeps only the arms the parts read."""

    arm: Callable[[Mapping, str], str | None]
    kind: str = "flip"
    complete: Callable[[set], bool] = lambda arms: bool(arms)
    relabel: Callable[[set], Mapping[str, str]] | None = None
    build: Builder | None = None


def _has(*needed: str) -> Callable[[set], bool]:
    return lambda arms: set(needed) <= arms


def _builds(build: Builder) -> Callable[[set], bool]:
    return lambda arms: build(arms) is not None


def _parts(arm: Callable[[Mapping, str], str | None], build: Builder) -> ArmClaim:
    return ArmClaim(arm, complete=_builds(build), build=build)


def read_arms(parts: Sequence[Component]) -> set[str]:
    """The arms a claim's parts read."""
    return {a for c in parts for g in c.groups() for a in g}


ARM_CLAIMS: dict[str, ArmClaim] = {
    "consistency_drops": ArmClaim(arm_consistency, complete=_has("challenge", "control")),
    "every_prompt_declines": _parts(arm_every_prompt, build_every_prompt),
    "temperature_zero_no_better": _parts(arm_temperature, build_temperature),
    "mechanism_corrects_some": ArmClaim(arm_corrects, kind="fix", complete=_has("challenge", "control")),
    "mitigation_effective": _parts(arm_mitigation, build_mitigation_effective),
    "cot_fewshot_beat_emotion": _parts(arm_mitigation, build_cot_fewshot_beat_emotion),
    "both_positions_best": ArmClaim(arm_mitigation, complete=_has("single", "both"), relabel=positions),
    "cot_most_efficient": _parts(arm_mitigation, build_cot_most_efficient),
}


# ---------------------------------------------------------------------------------------- precondition


def chance(dataset: str) -> float:
    """The accuracy of a guess from the dataset's answer space (yes/no 1/2, k options 1/k, open answers 0)."""
    b = BENCHMARKS[dataset]
    return 0.5 if b.answer_type == "boolean" else 1.0 / len(b.letters) if b.answer_type == "letter" else 0.0


def initial_accuracy(scores: Iterable[Mapping], own: str) -> dict[str, tuple[int, int]]:
    """Per dataset (initially correct items, items) over one model's plain Direct-Form dialogues at its own
    temperature; an item whose dialogues disagree counts as correct when most of them are (ties: wrong)."""
    votes: dict[tuple[str, str], list[bool]] = {}
    for s in scores:
        if plain(s, own):
            votes.setdefault((s["dataset"], str(s["item"])), []).append(bool(s["correct"][0]))
    out: dict[str, list[int]] = {}
    for (d, _), v in votes.items():
        kn = out.setdefault(d, [0, 0])
        kn[0] += sum(v) * 2 > len(v)
        kn[1] += 1
    return {d: (k, n) for d, (k, n) in out.items()}


def precondition(acc: Mapping[str, tuple[int, int]], datasets: Iterable[str], label: str = ""
                 ) -> tuple[list[str], str]:
    """(datasets above chance, a note giving each dataset's initial accuracy, chance and p-value)."""
    passing, parts = [], []
    for d in sorted(datasets):
        if d not in acc:
            parts.append(f"{d}: no plain Direct-Form dialogue (left out)")
            continue
        k, n = acc[d]
        p = binomial_p_above(k, n, chance(d))
        passing += [d] if p < ALPHA else []
        parts.append(f"{d} {k}/{n} vs chance {100 * chance(d):.0f}%: p = {p:.3g}" + ("" if p < ALPHA else " (left out)"))
    return passing, (f"{label}: " if label else "") + "; ".join(parts)


def above_chance(frame: pd.DataFrame) -> tuple[bool, str]:
    """The precondition as the engine reads it: every dataset in the table passed the test (a model with none
    above chance keeps all of them, marked False)."""
    notes = " | ".join(dict.fromkeys(frame["accuracy"].astype(str)))
    return bool(frame["above_chance"].all()), notes


# ---------------------------------------------------------------------------------------------- tables


def extractable(s: Mapping, reply: int) -> float:
    """1 when reply ``reply`` (0: the initial one, 1: the follow-up of round 1) carries an extractable answer, 0
    when not; NaN when the score does not say or the reply was not asked."""
    if "answers" not in s or "asked_rounds" not in s or reply > int(s["asked_rounds"]):
        return math.nan
    return float(s["answers"][reply] is not None)


def cut(s: Mapping, reply: int) -> float:
    """1 when reply ``reply`` stopped at the token cap, 0 when not; NaN when unknown or not asked."""
    turns = s.get("cut_turns")
    if turns is None or reply >= len(turns):
        return math.nan
    return float(bool(turns[reply]))


def gate_values(s: Mapping) -> dict[str, float]:
    """The gate columns of one dialogue (module docstring)."""
    return {"extractable_before": extractable(s, 0), "extractable_after": extractable(s, 1),
            "cut_before": cut(s, 0), "cut_after": cut(s, 1)}


def dialogue_id(s: Mapping) -> str:
    """The dialogue's condition (and its run, where the score names one): unique within an item."""
    q, v = question(s)
    return f"{s.get('run') or s['form']}/{q}/{v}/{s['mitigation']}/T{s['temperature']}"


def rows(scores: Sequence[Mapping], arm: Callable[[Mapping], str | None], kind: str) -> list[dict]:
    """One row per dialogue entering its arm's rate (module docstring); gate ``wrong`` asked no initially
    correct item and ``correct`` no initially wrong one, so those are left out of flips and fixes."""
    skip = "wrong" if kind == "flip" else "correct"
    out = []
    for s in scores:
        a = arm(s)
        if a is None or s.get("gate") == skip:
            continue
        before, after = bool(s["correct"][0]), bool(s["correct"][1])
        if before != (kind == "flip"):
            continue
        out.append({"item": f"{s['dataset']}/{s['item']}", "dataset": s["dataset"], "model": s["model"],
                    "cell": a, "dialogue": dialogue_id(s), "flip": float(after != before), **gate_values(s)})
    return out


def with_arm_items(frame: pd.DataFrame) -> pd.DataFrame:
    """``arm_items``: the number of items of the row's model in its cell (the thin-arm gate reads it)."""
    if frame.empty:
        return frame.assign(arm_items=pd.Series(dtype=float))
    n = frame.groupby(["model", "cell"])["item"].transform("nunique")
    return frame.assign(arm_items=n.astype(float))


def model_rows(claim: ArmClaim, scores: Sequence[Mapping], own: str) -> list[dict]:
    """One model's rows for a claim: the datasets above chance (all, marked, where none is), the arms its parts
    read; none when the claim's arms are not all run there."""
    def arm(s):
        return claim.arm(s, own)

    read = {s["dataset"] for s in scores if arm(s) is not None}
    passing, note = precondition(initial_accuracy(scores, own), read)
    keep = set(passing) or read
    out = rows([s for s in scores if s["dataset"] in keep], arm, claim.kind)
    if claim.relabel is not None:
        names = claim.relabel({r["cell"] for r in out})
        out = [{**r, "cell": names[r["cell"]]} for r in out if r["cell"] in names]
    if not claim.complete({r["cell"] for r in out}):
        return []
    if claim.build is not None:
        reads = read_arms(claim.build({r["cell"] for r in out}) or ())
        out = [r for r in out if r["cell"] in reads]
    return [{**r, "above_chance": bool(passing), "accuracy": note} for r in out]


def arm_tables(scores: Iterable[Mapping[str, Any]], own_temps: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """Claim -> its table over every model (``own_temps``: model -> its temperature label)."""
    scores = list(scores)
    by_model = {m: [s for s in scores if s["model"] == m] for m in own_temps}
    out = {}
    for cid, claim in ARM_CLAIMS.items():
        table = [r for m in sorted(own_temps) for r in model_rows(claim, by_model[m], own_temps[m])]
        out[cid] = with_arm_items(pd.DataFrame(table, columns=[c for c in COLUMNS if c != "arm_items"]))
    return out
