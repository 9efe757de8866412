"""Shared pieces of the first_token study's tables and figures (Wang et al. 2024, "My Answer is C"):
names of constraints, models and evaluators as the paper prints them, the footnotes every table carries,
and small loaders. The tables are built in :mod:`.tables`, the figures in :mod:`.figures`."""

from __future__ import annotations

from typing import Any, Mapping, Sequence


from wobble.studies.first_token.layout import temp_tag
from wobble.studies.first_token.prompts import CONSTRAINTS
from wobble.io import read_jsonl
from wobble.report.cells import fmt

PAPER_SOURCE = "Wang et al. 2024, \"My Answer is C\""
CONSTRAINT_NAMES = {"low": "Low", "medium": "Medium", "high": "High", "example": "Example",
                    "example_abc": "Example (A/B/C)"}
PAPER_CONSTRAINTS = {"Low": "low", "Medium": "medium", "High": "high", "Example": "example"}
#: Annotated-model folder -> the model's name in the paper's Tables 4 and 5.
ANNOTATED_NAMES = {"llama2-7b": ("Llama2-7b", "Llama2-7b"), "llama2-13b": ("Llama2-13b", "Llama2-13b"),
                   "llama2-70b": ("Llama2-70b", "Llama2-70b"), "mistral-7b": ("Mistral-v0.2", "Mistral v0.2"),
                   "mixtral": ("Mixtral", "Mixtral")}
#: Our evaluator kind -> the paper's evaluator row in Table 2 / Table 4.
PAPER_EVALUATORS_T2 = {"paper_regex": "String Matching", "judge_0shot": "Mistral-7b v0.2 (0 shot)",
                       "judge_4shot": "Mistral-7b v0.2 (4 shot)", "peft_80": "PEFT-Mistral-7b-v0.2 (80 samples)",
                       "peft_1000": "PEFT-Mistral-7b-v0.2 (1000 samples)"}
PAPER_EVALUATORS_T4 = {"paper_regex": "String Matching", "judge_0shot": "Mistral-7b-Instruct v0.2 (0 shot)",
                       "judge_4shot": "Mistral-7b-Instruct v0.2 (4 shots)",
                       "peft_80": "PEFT-Mistral-7b-Instruct v0.2 (80 samples)",
                       "peft_1000": "PEFT-Mistral-7b-Instruct v0.2 (1000 samples)"}
METRIC_LABELS = {"mismatch_rate": "mismatch", "refusal_mismatch_rate": "mismatch due to refusal",
                 "refusal_rate_text": "refusal (text)", "refusal_rate_first_token": "refusal (first token)",
                 "unmapped_rate": "text names no single option", "entropy_first_token": "entropy (first token)",
                 "entropy_text": "entropy (text)", "entropy_text_none": "entropy (text, no option counted)"}


# ------------------------------------------------------------------------------------------ helpers


def constraint_name(c: str) -> str:
    """A constraint level as the paper prints it ("low" -> "Low", "example_abc" -> "Example (A/B/C)")."""
    return CONSTRAINT_NAMES.get(c, c)


def tick_label(c: str) -> str:
    """A constraint level as an axis tick: its printed name, a parenthesis on its own line."""
    return constraint_name(c).replace(" (", "\n(")


def constraint_order(c: str) -> int:
    """Sort key of a constraint level: the paper's order (:data:`.prompts.CONSTRAINTS`), unknown ones last."""
    return CONSTRAINTS.index(c) if c in CONSTRAINTS else len(CONSTRAINTS)


def context_main_temperature(context: Mapping) -> float:
    """The main temperature of a footnote context (the first of ``context["temperatures"]``), as a float."""
    return float(temp_tag(context["temperatures"][0]))


def paper_id(context: Mapping, model: str) -> str | None:
    """The paper's model that ``model`` is matched to (``first_token.paper_models``), or None."""
    return (context.get("paper_models") or {}).get(model)


def used_classifier(rows: Sequence[Mapping], context: Mapping) -> str:
    """The classifier(s) that labelled ``rows`` (their ``classifier`` field), or how the config chooses one."""
    names = sorted({r["classifier"] for r in rows if r.get("classifier")})
    if names:
        return ", ".join(names)
    return f"chosen in Table 2 (first_token.classifier: {context.get('classifier', 'auto')})"


def evaluator_label(name: str, context: Mapping) -> str:
    """Display name of an evaluator: the paper's String Matching, wobble's rules (written while reading the
    annotated responses, so their score on them is in-sample), ``<judge> (k shot)``, ``PEFT-<base> (n samples)``."""
    if name == "paper_regex":
        return 'String Matching (paper A.4: first "[A-Z].")'
    if name == "string_match":
        return "wobble rules (in-sample)"
    if name.startswith("judge_"):
        return f"{context.get('judge_model')} ({name[len('judge_'):-len('shot')]} shot)"
    if name.startswith("peft_"):
        return f"PEFT-{context.get('classifier_base')} ({name[len('peft_'):]} samples)"
    return name


def classifier_text(names: str) -> str:
    """The classifier(s) that labelled the text answers, as a footnote names them: wobble's rule classifier
    ``string_match`` is said to be wobble's, so a reader does not take it for the paper's String Matching."""
    wobble_rules = "wobble's rule classifier string_match (not the paper's String Matching)"
    return ", ".join(wobble_rules if n.strip() == "string_match" else n.strip() for n in names.split(","))


def footnotes(context: Mapping, *, classifier: str | None = None, paper_file: str | None = None,
              runs: bool = True, intervals: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """The footnotes every table carries: which models ran, scale, sample, decoding, classifier."""
    labels = context.get("model_labels", {})
    models = ", ".join(labels.get(m, m) for m in context["models"])
    nq = context.get("n_questions")
    sample = f"{nq} of the paper's 414 OpinionQA questions (seeded sample, seed {context['seed']})" if nq else \
        "all 414 OpinionQA questions of the paper"
    temps = context["temperatures"]
    decoding = f"temperature {fmt(temps[0], 2)}" + (" (greedy)" if float(temps[0]) == 0 else "")
    if len(temps) > 1:
        decoding += (f"; Figure 4 sweeps temperatures {', '.join(fmt(t, 2) for t in temps)} under "
                     f"{', '.join(constraint_name(c) for c in context['sweep_constraints'])}")
    notes = [f"Ours: model(s) {models}; scale '{context['scale']}'."]
    if runs:
        notes.append(f"Prompts: {sample}; {context['n_shuffles']} option shuffle(s) per question; constraint levels "
                     f"{', '.join(constraint_name(c) for c in context['constraints'])}; {decoding}; "
                     f"max_new_tokens {context['max_new_tokens']}. First-token answer = argmax of the next-token "
                     "probability over the shown option letters (the refusal letter included; a letter counts as 'A' "
                     "and ' A' where the tokenizer has a token for each).")
    ev = ", ".join(evaluator_label(e, context) for e in context.get("evaluators", []))
    notes.append(f"Text answer -> option: {classifier_text(classifier or used_classifier([], context))} "
                 f"(first_token.classifier: {context.get('classifier')}; evaluators compared in Table 2: {ev}).")
    if intervals:
        b = context.get("bootstrap", {})
        notes.append(f"[low, high] = 95% percentile bootstrap interval over questions ({b.get('n')} resamples, "
                     f"seed {b.get('seed')}); all shuffles of a question are resampled together.")
    if paper_file:
        notes.append(f"Paper: {PAPER_SOURCE}, paper/first_token/{paper_file} (as printed).")
    notes.extend(extra)
    return notes


def load_rows(inputs: Mapping[str, Any], key: str) -> list[dict]:
    """Input ``key``'s rows: a JSONL path read, or rows given in memory copied."""
    val = inputs[key]
    if isinstance(val, (list, tuple)) and (not val or isinstance(val[0], Mapping)):
        return [dict(v) for v in val]
    return read_jsonl(val)


def metric_index(rows: Sequence[Mapping]) -> dict[tuple, Mapping]:
    """Metric rows by (model, constraint, temperature tag, metric)."""
    return {(r["model"], r["constraint"], temp_tag(r["temperature"]), r["metric"]): r for r in rows}


def paper_float(s: Any, scale: float = 1.0) -> float | None:
    """A paper cell as a number times ``scale``; None for an empty cell."""
    s = "" if s is None else str(s).strip()
    return float(s) * scale if s else None
