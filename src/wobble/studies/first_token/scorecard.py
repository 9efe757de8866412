"""first_token's rows of the per-model scorecard (:mod:`wobble.report.scorecard`): at the main temperature, the
first-token/text mismatch per constraint level, and at Medium the text refusal rate, the share of text answers
naming no option and the first-token probability mass on the option letters — each with its 95 % interval over
questions (``scores/metrics.jsonl``, the numbers of Figure 2's table). Paper: the stand-in's model in the
paper's released per-shuffle statistics (mean over shuffles), else the range over its six models."""

from __future__ import annotations

from typing import Any, Mapping

from wobble.io import read_jsonl
from wobble.report.scorecard import Row
from wobble.studies.first_token.figures import paper_mapping_means
from wobble.studies.first_token.layout import PAPER_MODELS, main_temperature, temp_tag
from wobble.studies.first_token.table_parts import CONSTRAINT_NAMES

STUDY = "first_token"
LEVELS = ("low", "medium", "high", "example")
#: metric -> (what it is, the paper's released statistic or None)
AT_MEDIUM = {"refusal_rate_text": ("text answer refuses", "refusal"),
             "unmapped_rate": ("text names no option", None),
             "letter_mass": ("first-token mass on the option letters", None)}


def _paper(means: Mapping, paper_model: str | None, level: str, stat: str | None) -> str:
    if stat is None:
        return ""
    if paper_model:
        v = means.get((paper_model, level), {}).get(stat)
        return "" if v is None else f"{100 * v:.1f} ({paper_model})"
    vals = [m[stat] for (_, c), m in means.items() if c == level]
    return f"{100 * min(vals):.1f}–{100 * max(vals):.1f} ({len(vals)} models)" if vals else ""


def rows(inputs: Mapping[str, Any], config: Mapping[str, Any], model: str) -> list[Row]:
    cfg = config[STUDY]
    t = main_temperature(cfg)
    idx = {(r["model"], r["constraint"], temp_tag(r["temperature"]), r["metric"]): r for r in read_jsonl(inputs["metrics"])}
    means = paper_mapping_means(read_jsonl(inputs["paper_mapping"]))
    pid = (cfg.get("paper_models") or {}).get(model)
    paper_model = PAPER_MODELS[pid]["mapping"] if pid else None

    def row(metric, level, quantity, stat):
        r = idx.get((model, level, t, metric))
        scale = 100.0
        if r is None:
            return None
        val = [None if r[k] is None else scale * r[k] for k in ("value", "ci_low", "ci_high")]
        return Row(STUDY, quantity, f"{CONSTRAINT_NAMES[level]} constraint", *val, "%", r["n_questions"],
                   _paper(means, paper_model, level, stat))

    out = [row("mismatch_rate", level, "first-token/text mismatch", "mismatch") for level in LEVELS]
    out += [row(metric, "medium", quantity, stat) for metric, (quantity, stat) in AT_MEDIUM.items()]
    return [r for r in out if r is not None]
