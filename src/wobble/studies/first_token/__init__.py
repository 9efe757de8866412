"""The ``first_token`` study: Wang et al. 2024, "My Answer is C": first-token probabilities do not
match text answers in instruction-tuned language models.

Pure functions only (no model calls): :mod:`.prompts` builds the shuffled MCQ prompts per constraint
level, :mod:`.classify` maps a generated response to an option (string matching, LLM-judge prompts,
finetuned-classifier data), :mod:`.metrics` computes mismatch / refusal rates, choice distributions,
answer-consistency entropy, classifier scores, bootstrap intervals and the paper's per-shuffle
summary (``mapping_result.json``).
"""

from wobble.studies.first_token.classify import (
    MULTIPLE,
    REFUSAL,
    UNKNOWN,
    annotated_view,
    canonical_label,
    classifier_examples,
    classifier_input,
    gold_label,
    judge_prompt,
    label_to_option,
    parse_judge_output,
    string_match,
    strip_chat_template,
)
from wobble.studies.first_token.metrics import (
    answer_entropy,
    choice_distribution,
    classifier_scores,
    consistency_entropy,
    first_token_choice,
    mapping_summary,
    mismatch_rate,
    refusal_mismatch_rate,
    refusal_rate,
)
from wobble.studies.first_token.prompts import (
    CONSTRAINTS,
    GENERAL_INSTRUCTIONS,
    REFUSED,
    build_prompt,
    letter_to_option,
    prompt_text,
    refusal_letter,
    shuffle_options,
    shuffled_prompt,
)

__all__ = [
    "CONSTRAINTS", "GENERAL_INSTRUCTIONS", "MULTIPLE", "REFUSAL", "REFUSED", "UNKNOWN",
    "annotated_view", "answer_entropy", "build_prompt", "canonical_label",
    "choice_distribution", "classifier_examples", "classifier_input", "classifier_scores",
    "consistency_entropy", "first_token_choice", "gold_label", "judge_prompt", "label_to_option",
    "letter_to_option", "mapping_summary", "mismatch_rate", "parse_judge_output", "prompt_text",
    "refusal_letter", "refusal_mismatch_rate", "refusal_rate", "shuffle_options", "shuffled_prompt",
    "string_match", "strip_chat_template",
]
