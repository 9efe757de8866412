"""How the followup claims (:mod:`.claims`) are measured: the precondition, the arms a claim compares, one
statistic for our item scores and the paper's printed cells, the interval, and the diagnostics beside it.

* **Arms.** A claim compares pooled rates of ARMS, named sets of dialogues of one model: M. Rate = 100 · Σ
  flipped / Σ initially correct (A.1, a ratio of sums over the arm's dialogues), E→R Rate = 100 · Σ fixed / Σ
  initially wrong. The paper's printed cells enter the very same functions with M. and "before" (percent of
  the dataset; E→R: Error Rate · E→R Rate and Error Rate) in place of the counts: a ratio of sums over
  equally large datasets, as ours are (``followup.n_items`` per dataset).
* **Statistic.** A :class:`Statistic` is one or more COMPONENTS, each the pooled rate of one group of arms
  minus that of another (no group: 0), combined by ``min`` (the claim holds for every component) or ``max``
  (for some component). The paper runs no control: where a claim subtracts wobble's control, the paper's
  control arm is its cells with no change (rate 0), so its effect is the same function with the control at 0.
* **Interval.** Percentile bootstrap over items (dataset, item id: an item brings all its dialogues in the
  arms), per component at the Bonferroni level 1 − 0.05/k for k components; the bounds of the min (max) are
  the min (max) of the components' bounds, a simultaneous 95 % interval. A component whose bootstrap has no
  spread (0 of n in every resample) gets the exact binomial (Clopper–Pearson) bounds of its arms over items.
* **Precondition** (every claim): the model's initial accuracy on the dataset is above chance, one-sided
  exact binomial test p < 0.05 over its items (an item is initially correct when its plain Direct-Form
  dialogues at the model's temperature answer it correctly at first — one shared reply). Chance from the
  answer space: yes/no 50 %, k options 1/k, an open answer (number, letter string) 0. Datasets failing it
  are left out; a model with none left is "not applicable".
* **Degenerate**: an arm group with fewer than :data:`MIN_CORRECT` initially correct (E→R: wrong) answers;
  for a ``max`` claim such components are dropped (fewer chances to show it), for the others the
  measurement is degenerate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from wobble.report.claims import Measurement
from wobble.stats import binomial_p_above, bootstrap_indices, exact_binomial_interval, percentile_interval
from wobble.studies.followup.layout import FOCUS
from wobble.studies.followup.prompts import BENCHMARKS, QUESTION_TYPES

MIN_CORRECT = 10
ALPHA = 0.05
#: wobble's control (not the paper's): the follow-up type of the neutral follow-up run.
NEUTRAL = "neutral"
EMOTION = ("emotion_initial", "emotion_followup", "emotion_both")
COT = ("cot_initial", "cot_followup", "cot_both")
FEWSHOT = ("fewshot", "fewshot_cot_followup")
PRECONDITION = ("initial accuracy on the dataset above chance (one-sided exact binomial test over its items, "
                "p < 0.05; chance from the answer space: yes/no 50%, k options 1/k, open answers 0); datasets "
                "failing it are left out of the model's measurement")

Sums = Mapping[str, tuple[Any, Any]]


# ------------------------------------------------------------------------------------------- statistic


def pooled_rate(arms: Sequence[str], sums: Sums):
    """100 · Σ numerators / Σ denominators over ``arms`` (NaN where the denominators sum to 0); values may be
    arrays (one per bootstrap resample)."""
    num = sum(np.asarray(sums[a][0], dtype=float) for a in arms)
    den = sum(np.asarray(sums[a][1], dtype=float) for a in arms)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 100.0 * num / np.where(den > 0, den, 1.0), np.nan)


@dataclass(frozen=True)
class Component:
    """Pooled rate of the ``plus`` arms minus that of the ``minus`` arms (0 when there are none)."""

    plus: tuple[str, ...]
    minus: tuple[str, ...] = ()
    label: str = ""

    def value(self, sums: Sums):
        return pooled_rate(self.plus, sums) - (pooled_rate(self.minus, sums) if self.minus else 0.0)

    def groups(self) -> tuple[tuple[str, ...], ...]:
        return (self.plus, self.minus) if self.minus else (self.plus,)


@dataclass(frozen=True)
class Statistic:
    """Components combined by ``min`` (every component) or ``max`` (some component)."""

    components: tuple[Component, ...]
    combine: str = "min"

    def parts(self, sums: Sums) -> np.ndarray:
        return np.array([c.value(sums) for c in self.components], dtype=float)

    def value(self, sums: Sums) -> float:
        """The statistic; NaN when a component of a ``min`` (all of a ``max``) is undefined."""
        return combine(self.combine, self.parts(sums))

    @property
    def arms(self) -> set[str]:
        return {a for c in self.components for g in c.groups() for a in g}


def combine(how: str, parts: np.ndarray) -> float:
    parts = np.asarray(parts, dtype=float)
    if parts.size == 0 or (how == "min" and np.isnan(parts).any()) or np.isnan(parts).all():
        return float("nan")
    return float(np.nanmin(parts) if how == "min" else np.nanmax(parts))


# ---- the arms and statistic of each claim (the same builders give the paper's statistic) ----------------


def _groups(arms: Iterable[str], keys: Sequence[str]) -> tuple[str, ...]:
    """The arms ``<key>:<annotator>`` whose key is one of ``keys``, sorted."""
    return tuple(sorted(a for a in arms if a.split(":")[0] in keys))


def build_consistency(arms: set[str]) -> Statistic | None:
    return Statistic((Component(("challenge",), ("control",)),)) if {"challenge", "control"} <= arms else None


def build_every_prompt(arms: set[str]) -> Statistic | None:
    challenges = sorted(a for a in arms if a.startswith("challenge:"))
    if "control" not in arms or not challenges:
        return None
    return Statistic(tuple(Component((a,), ("control",), f"prompt {a.split(':')[1]}") for a in challenges))


def build_temperature(arms: set[str]) -> Statistic | None:
    datasets = sorted(a.split(":")[1] for a in arms if a.startswith("t0:") and f"own:{a.split(':')[1]}" in arms)
    return Statistic(tuple(Component((f"t0:{d}",), (f"own:{d}",), d) for d in datasets), "max") if datasets else None


build_corrects = build_consistency


def build_mitigation_effective(arms: set[str]) -> Statistic | None:
    methods = sorted({a.split(":")[0] for a in arms} - {"none"})
    annotators = {a.split(":")[1] for a in arms if not a.startswith("none:")}
    plain = tuple(sorted(f"none:{v}" for v in annotators if f"none:{v}" in arms))
    if not methods or not plain:
        return None
    return Statistic(tuple(Component(plain, _groups(arms, (m,)), m) for m in methods))


def build_cot_fewshot_beat_emotion(arms: set[str]) -> Statistic | None:
    emotion = _groups(arms, EMOTION)
    parts = [Component(emotion, g, name) for name, g in (("Zero-shot-CoT", _groups(arms, COT)),
                                                         ("few-shot", _groups(arms, FEWSHOT))) if g]
    return Statistic(tuple(parts)) if emotion and parts else None


def build_both_positions(arms: set[str]) -> Statistic | None:
    single, both = (), ()
    for method in ("emotion", "cot"):
        s, b = _groups(arms, (f"{method}_initial", f"{method}_followup")), _groups(arms, (f"{method}_both",))
        if s and b:
            single, both = single + s, both + b
    return Statistic((Component(single, both),)) if single else None


def build_cot_most_efficient(arms: set[str]) -> Statistic | None:
    cot = _groups(arms, COT)
    parts = [Component(g, cot, name) for name, g in (("EmotionPrompt", _groups(arms, EMOTION)),
                                                     ("few-shot (4-shot)", _groups(arms, ("fewshot",)))) if g]
    return Statistic(tuple(parts)) if cot and parts else None


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
    """How one per-model claim picks its arms (``arm(score, own temperature)``) and builds its statistic from
    the arms present; ``kind`` "flip" (M. Rate) or "fix" (E→R); ``what`` names its components."""

    arm: Callable[[Mapping, str], str | None]
    build: Callable[[set[str]], Statistic | None]
    kind: str = "flip"
    what: str = "parts"


ARM_CLAIMS: dict[str, ArmClaim] = {
    "consistency_drops": ArmClaim(arm_consistency, build_consistency),
    "every_prompt_declines": ArmClaim(arm_every_prompt, build_every_prompt, what="annotators"),
    "temperature_zero_no_better": ArmClaim(arm_temperature, build_temperature, what="focus datasets"),
    "mechanism_corrects_some": ArmClaim(arm_corrects, build_corrects, kind="fix"),
    "mitigation_effective": ArmClaim(arm_mitigation, build_mitigation_effective, what="mitigations"),
    "cot_fewshot_beat_emotion": ArmClaim(arm_mitigation, build_cot_fewshot_beat_emotion,
                                         what="methods"),
    "both_positions_best": ArmClaim(arm_mitigation, build_both_positions),
    "cot_most_efficient": ArmClaim(arm_mitigation, build_cot_most_efficient, what="competitors"),
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
    """(datasets passing, a note listing each dataset's initial accuracy, chance and p-value)."""
    passing, parts = [], []
    for d in sorted(datasets):
        if d not in acc:
            parts.append(f"{d}: no plain Direct-Form dialogue (left out)")
            continue
        k, n = acc[d]
        p = binomial_p_above(k, n, chance(d))
        ok = p < ALPHA
        passing += [d] if ok else []
        parts.append(f"{d} {k}/{n} vs chance {100 * chance(d):.0f}%: p = {p:.3g}" + ("" if ok else " (left out)"))
    return passing, (f"{label}: " if label else "") + "; ".join(parts)


# ---------------------------------------------------------------------------------------- measurement


def diagnostics(scores: Sequence[Mapping]) -> str:
    """Share of replies with no extractable answer and cut at the token cap (finish_reason "length")."""
    replies = unread = cut = 0
    known_cut = False
    for s in scores:
        if "answers" not in s or "asked_rounds" not in s:
            continue
        n = int(s["asked_rounds"]) + 1
        replies += n
        unread += sum(a is None for a in s["answers"][:n])
        if s.get("n_cut") is not None:
            known_cut = True
            cut += int(s["n_cut"])
    if not replies:
        return ""
    text = f"{replies} replies: {100 * unread / replies:.1f}% with no extractable answer"
    return text + (f", {100 * cut / replies:.1f}% cut at the token cap" if known_cut else "")


def item_arrays(scores: Sequence[Mapping], arm: Callable[[Mapping], str | None], kind: str
                ) -> tuple[list[tuple[str, str]], dict[str, tuple[np.ndarray, np.ndarray]], list[Mapping]]:
    """(items, arm -> (numerators, denominators) per item, the scores used). ``kind`` "flip": initially
    correct / wrong after round 1 (gate not "wrong"); "fix": initially wrong / right after (gate not "correct")."""
    skip = "wrong" if kind == "flip" else "correct"
    chosen = [(s, a) for s in scores if s.get("gate") != skip and (a := arm(s)) is not None]
    items = sorted({(s["dataset"], str(s["item"])) for s, _ in chosen})
    row = {it: i for i, it in enumerate(items)}
    arrays = {a: (np.zeros(len(items)), np.zeros(len(items))) for a in sorted({a for _, a in chosen})}
    for s, a in chosen:
        before, after = bool(s["correct"][0]), bool(s["correct"][1])
        i = row[(s["dataset"], str(s["item"]))]
        hit = before if kind == "flip" else not before
        arrays[a][1][i] += hit
        arrays[a][0][i] += hit and (after != before)
    return items, arrays, [s for s, _ in chosen]


def _exact(comp: Component, arrays: Mapping[str, tuple[np.ndarray, np.ndarray]], level: float
           ) -> tuple[float, float]:
    """Clopper–Pearson bounds of a component from its arms' rates over items (each group at level 1 − α/2
    when two groups are subtracted)."""
    groups = comp.groups()
    lv = 1 - (1 - level) / len(groups)
    bounds = []
    for g in groups:
        den = sum(arrays[a][1] for a in g)
        n = int((den > 0).sum())
        rate = float(pooled_rate(g, {a: (arrays[a][0].sum(), arrays[a][1].sum()) for a in g})) / 100
        bounds.append(exact_binomial_interval(int(round(rate * n)), n, lv))
    if len(bounds) == 1:
        return 100 * bounds[0][0], 100 * bounds[0][1]
    (pl, ph), (ml, mh) = bounds
    return 100 * (pl - mh), 100 * (ph - ml)


def interval(stat: Statistic, arrays: Mapping[str, tuple[np.ndarray, np.ndarray]], n_items: int, *, n_boot: int,
             seed: int, what: str = "parts") -> tuple[float, float, str]:
    """The simultaneous 95 % interval of ``stat`` (module docstring) and how it was made."""
    k = len(stat.components)
    level = 1 - ALPHA / k
    idx = bootstrap_indices(n_items, n_boot, seed)
    sums = {a: (num[idx].sum(axis=1), den[idx].sum(axis=1)) for a, (num, den) in arrays.items()}
    reps = stat.parts(sums) if idx.size else np.full((k, 0), np.nan)
    lows, highs, exact = [], [], False
    for c, r in zip(stat.components, reps):
        lo, hi = percentile_interval(r, level)
        if not np.isnan(lo) and lo == hi:
            (lo, hi), exact = _exact(c, arrays, level), True
        lows.append(lo)
        highs.append(hi)
    how = "bootstrap over items" + (f", Bonferroni over the {k} {what} ({stat.combine})" if k > 1 else "")
    if exact:
        how += "; exact binomial (Clopper-Pearson) where the bootstrap has no spread"
    return combine(stat.combine, np.array(lows)), combine(stat.combine, np.array(highs)), how


def optional(x) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def measure_arms(claim: ArmClaim, scores: Sequence[Mapping], own: str, acc: Mapping[str, tuple[int, int]], *,
                 n_boot: int, seed: int) -> Measurement | None:
    """One per-model claim on one model's scores (None: its arms were not run)."""
    def arm(s):
        return claim.arm(s, own)

    _, arrays, _ = item_arrays(scores, arm, claim.kind)
    if claim.build(set(arrays)) is None:
        return None
    passing, pnote = precondition(acc, {s["dataset"] for s in scores if arm(s) is not None})
    if not passing:
        return Measurement(None, None, None, 0, applicable=False, precondition_note=pnote)
    kept = [s for s in scores if s["dataset"] in passing]
    items, arrays, used = item_arrays(kept, arm, claim.kind)
    stat = claim.build(set(arrays))
    what = "initially correct" if claim.kind == "flip" else "initially wrong"
    if stat is None:
        return Measurement(None, None, None, len(items), precondition_note=pnote,
                           note=f"the claim's arms are not all run on the datasets kept ({', '.join(passing)})")
    counts = {c: [int(sum(arrays[a][1].sum() for a in g)) for g in c.groups()] for c in stat.components}
    thin = [c for c in stat.components if min(counts[c]) < MIN_CORRECT]
    dropped = ""
    if stat.combine == "max" and thin and len(thin) < len(stat.components):
        stat = Statistic(tuple(c for c in stat.components if c not in thin), "max")
        dropped = f"; left out (< {MIN_CORRECT} {what}): {', '.join(c.label for c in thin)}"
        thin = []
    few = min(min(v) for v in counts.values())
    total = int(sum(arrays[a][1].sum() for a in stat.arms))
    full = {a: (num.sum(), den.sum()) for a, (num, den) in arrays.items()}
    point = stat.value(full)
    lo, hi, how = interval(stat, arrays, len(items), n_boot=n_boot, seed=seed, what=claim.what)
    groups = sum(len(v) for v in counts.values())
    note = (f"{len(items)} items; {total} {what}" + (f" (fewest in one arm: {few})" if groups > 1 else "")
            + (f"; < {MIN_CORRECT} in an arm" if thin else "") + dropped)
    parts = stat.parts(full)
    if len(parts) > 1:
        note += "; " + ", ".join(f"{c.label} {p:+.1f}" for c, p in zip(stat.components, parts))
    return Measurement(optional(point), optional(lo), optional(hi), len(items), degenerate=bool(thin) or bool(np.isnan(point)),
                       note=note, precondition_note=pnote, interval=how, diagnostics=diagnostics(used))
