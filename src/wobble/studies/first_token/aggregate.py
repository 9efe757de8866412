"""Per (model, constraint level, temperature) metrics of the labelled answers (§4): mismatch and its refusal
part, refusal rates, unmapped share, answer-consistency entropy, the choice distribution, each with a 95%
percentile-bootstrap interval over QUESTIONS (all shuffles of a question resampled together), and the
paper's per-shuffle ``mapping_result.json`` summary."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Iterable, Mapping, Sequence


from wobble.stats import bootstrap_indices, ratio_ci
from wobble.studies.first_token.metrics import (
    answer_entropy,
    choice_distribution,
    consistency_entropy,
    mapping_summary,
    mismatch_rate,
    refusal_mismatch_rate,
    refusal_rate,
)
from wobble.studies.first_token.prompts import (
    CONSTRAINTS,
    LETTERS,
    is_refusal_option,
)
from wobble.studies.first_token.layout import temp_tag


# ----------------------------------------------------------------------------------------- metrics

METRICS = ("mismatch_rate", "refusal_mismatch_rate", "unmapped_rate", "different_option_rate", "refusal_rate_text",
           "refusal_rate_first_token", "entropy_first_token", "entropy_text", "entropy_text_none", "letter_mass",
           "top_letter_share", "cut_rate")
#: A text-entropy cell resting on fewer mapped text answers than this share of its prompts is marked thin:
#: the entropy then describes the few answers that name an option, not the model's consistency.
MIN_MAPPED_SHARE = 0.5
NONE_LETTER = "none"


def _group(records: Iterable[Mapping]) -> dict[tuple, dict[str, list[Mapping]]]:
    """(model, constraint, temperature tag) -> question uid -> records sorted by shuffle."""
    cells: dict[tuple, dict[str, list[Mapping]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        t = temp_tag(r["gen_params"]["temperature"])
        cells[(r["model"], r["constraint"], t)][r["question_uid"]].append(r)
    return {k: {q: sorted(v, key=lambda r: r["shuffle"]) for q, v in sorted(qs.items())} for k, qs in cells.items()}


def _per_question(groups: Mapping[str, Sequence[Mapping]]) -> dict[str, tuple[list[float], list[float]]]:
    """Per-question numerators and denominators of every metric (ratio of sums over questions)."""
    out: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in METRICS}

    def add(m, a, b):
        out[m][0].append(float(a))
        out[m][1].append(float(b))

    for recs in groups.values():
        n = len(recs)
        pairs = [(r["first_token_option"], r["text_option"]) for r in recs]
        add("mismatch_rate", sum(1 for ft, tx in pairs if tx is None or ft != tx), n)
        add("refusal_mismatch_rate", sum(1 for ft, tx in pairs if is_refusal_option(tx) and not is_refusal_option(ft)), n)
        add("refusal_rate_text", sum(1 for _, tx in pairs if is_refusal_option(tx)), n)
        add("refusal_rate_first_token", sum(1 for ft, _ in pairs if is_refusal_option(ft)), n)
        add("unmapped_rate", sum(1 for _, tx in pairs if tx is None), n)
        add("different_option_rate", sum(1 for ft, tx in pairs if _different(ft, tx)), n)
        add("letter_mass", sum(letter_mass(r) for r in recs), n)
        add("top_letter_share", 0.0, 0)  # a cell-level share: no per-question ratio (see _point)
        fin = [r["finish_reason"] for r in recs if r.get("finish_reason")]
        add("cut_rate", sum(1 for f in fin if f == "length"), len(fin))
        h_ft = answer_entropy([ft for ft, _ in pairs])
        h_tx = answer_entropy([tx for _, tx in pairs])
        h_none = answer_entropy([tx for _, tx in pairs], drop_none=False)
        add("entropy_first_token", 0.0 if math.isnan(h_ft) else h_ft, 0 if math.isnan(h_ft) else 1)
        add("entropy_text", 0.0 if math.isnan(h_tx) else h_tx, 0 if math.isnan(h_tx) else 1)
        add("entropy_text_none", 0.0 if math.isnan(h_none) else h_none, 0 if math.isnan(h_none) else 1)
    return out


def _different(ft, tx) -> bool:
    """The text names an option, not the refusal, and not the first token's option: the third part of the
    mismatch besides a refusing text (``refusal_mismatch_rate``) and a text naming no option (``unmapped_rate``)."""
    return tx is not None and not is_refusal_option(tx) and ft != tx


def letter_mass(record: Mapping) -> float:
    """Probability the first token puts on the shown option letters (each letter's spellings summed;
    the refusal letter included): near 1 = the first-token answer is a real choice, near 0 = the model
    would rather start with something else and the argmax letter says little."""
    return sum(math.exp(v) for v in record["first_token_logprobs"].values() if v is not None and not math.isnan(v))


def _point(metric: str, groups: Mapping[str, Sequence[Mapping]]) -> float:
    """Point estimates with the study's metric functions (equal to the pooled ratio of sums)."""
    recs = [r for rs in groups.values() for r in rs]
    pairs = [(r["first_token_option"], r["text_option"]) for r in recs]
    if metric == "mismatch_rate":
        return mismatch_rate(pairs)
    if metric == "refusal_mismatch_rate":
        return refusal_mismatch_rate(pairs)
    if metric == "refusal_rate_text":
        return refusal_rate([tx for _, tx in pairs])
    if metric == "refusal_rate_first_token":
        return refusal_rate([ft for ft, _ in pairs])
    if metric == "unmapped_rate":
        return sum(1 for _, tx in pairs if tx is None) / len(pairs) if pairs else float("nan")
    if metric == "different_option_rate":
        return sum(1 for ft, tx in pairs if _different(ft, tx)) / len(pairs) if pairs else float("nan")
    if metric == "letter_mass":
        return sum(letter_mass(r) for r in recs) / len(recs) if recs else float("nan")
    if metric == "top_letter_share":
        counts = Counter(r["first_token_letter"] for r in recs)
        return max(counts.values()) / len(recs) if recs else float("nan")
    if metric == "cut_rate":
        fin = [r["finish_reason"] for r in recs if r.get("finish_reason")]
        return sum(1 for f in fin if f == "length") / len(fin) if fin else float("nan")
    if metric == "entropy_first_token":
        return consistency_entropy([[r["first_token_option"] for r in rs] for rs in groups.values()])
    if metric == "entropy_text":
        return consistency_entropy([[r["text_option"] for r in rs] for rs in groups.values()])
    if metric == "entropy_text_none":
        return consistency_entropy([[r["text_option"] for r in rs] for rs in groups.values()], drop_none=False)
    raise ValueError(metric)


def _clean(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 12)


def _classifier_of(groups: Mapping[str, Sequence[Mapping]]) -> str | None:
    names = sorted({r.get("classifier") for rs in groups.values() for r in rs if r.get("classifier")})
    return ", ".join(names) if names else None


def cell_metrics(records: Iterable[Mapping], *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Metric rows per (model, constraint, temperature): ``metric``, ``value``, ``ci_low``, ``ci_high``
    (95% percentile bootstrap over questions, ``n_boot`` resamples, ``seed``), ``n_prompts``,
    ``n_questions``, ``n_text_mapped`` (text answers that name one option: what ``entropy_text`` rests on),
    ``n_questions_mapped`` (questions with at least one), ``classifier``. Cells and metrics in a fixed order.

    ``entropy_text`` leaves text answers naming no option out of a question's distribution (the paper's
    reading); ``entropy_text_none`` counts them as one more outcome, so a model that mostly names no option
    is not scored as consistent on its few mapped answers."""
    rows = []
    for (model, constraint, tag), groups in sorted(_group(records).items(), key=_cell_order):
        idx = bootstrap_indices(len(groups), n_boot, seed)
        per = _per_question(groups)
        n_prompts = sum(len(v) for v in groups.values())
        n_mapped = sum(1 for rs in groups.values() for r in rs if r["text_option"] is not None)
        q_mapped = sum(1 for rs in groups.values() if any(r["text_option"] is not None for r in rs))
        for m in METRICS:
            lo, hi = ratio_ci(*per[m], idx)
            rows.append({"model": model, "constraint": constraint, "temperature": float(tag), "metric": m,
                         "value": _clean(_point(m, groups)), "ci_low": _clean(lo), "ci_high": _clean(hi),
                         "n_prompts": n_prompts, "n_questions": len(groups), "n_text_mapped": n_mapped,
                         "n_questions_mapped": q_mapped, "classifier": _classifier_of(groups)})
    return rows


def _cell_order(item) -> tuple:
    (model, constraint, tag), _ = item
    return (model, CONSTRAINTS.index(constraint) if constraint in CONSTRAINTS else 99, float(tag))


def choice_rows(records: Iterable[Mapping], *, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Choice distribution per cell: for ``answer_by`` first_token / text, the share of each letter
    (A.. up to the most options shown; text answers naming no single option count as ``"none"``),
    with ``count``, ``n_prompts`` and a bootstrap interval over questions."""
    rows = []
    for (model, constraint, tag), groups in sorted(_group(records).items(), key=_cell_order):
        idx = bootstrap_indices(len(groups), n_boot, seed)
        recs = [r for rs in groups.values() for r in rs]
        width = max(len(r["letters"]) for r in recs)
        letters = list(LETTERS[:width])
        for by, field in (("first_token", "first_token_letter"), ("text", "text_letter")):
            answers = [r[field] if r[field] is not None else NONE_LETTER for r in recs]
            keys = letters + ([NONE_LETTER] if by == "text" else [])
            dist = choice_distribution(answers, all_letters=keys)
            for lt in keys:
                num = [sum(1 for r in rs if (r[field] if r[field] is not None else NONE_LETTER) == lt)
                       for rs in groups.values()]
                den = [len(rs) for rs in groups.values()]
                lo, hi = ratio_ci(num, den, idx)
                rows.append({"model": model, "constraint": constraint, "temperature": float(tag), "answer_by": by,
                             "letter": lt, "share": _clean(dist[lt]), "ci_low": _clean(lo), "ci_high": _clean(hi),
                             "count": int(sum(num)), "n_prompts": len(recs), "classifier": _classifier_of(groups)})
    return rows


def mapping_rows(records: Iterable[Mapping], *, greedy_top_token: bool = True) -> list[dict]:
    """The paper's ``mapping_result.json`` fields per (model, constraint, temperature, shuffle)."""
    cells: dict[tuple, list[Mapping]] = defaultdict(list)
    for r in records:
        cells[(r["model"], r["constraint"], temp_tag(r["gen_params"]["temperature"]), r["shuffle"])].append(r)
    rows = []
    for (model, constraint, tag, shuffle), recs in sorted(
            cells.items(), key=lambda kv: (kv[0][0], CONSTRAINTS.index(kv[0][1]) if kv[0][1] in CONSTRAINTS else 99,
                                           float(kv[0][2]), kv[0][3])):
        view = [{"first_token_letter": r["first_token_letter"], "response": r.get("response") or r.get("output", ""),
                 "first_token_option": r["first_token_option"], "text_option": r["text_option"]} for r in recs]
        s = mapping_summary(view)
        rows.append({"model": model, "constraint": constraint, "temperature": float(tag), "shuffle": shuffle,
                     **{k: _clean(v) if isinstance(v, float) else v for k, v in s.items()}})
    return rows
