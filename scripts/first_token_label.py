"""Snakemake entry point: map every generated text of one (model, temperature) to an option with the
study's classifier (read from the classifier scores); the raw text stays beside the label."""

from wobble.backends import load_backend
from wobble.studies.first_token.classifiers import chosen_classifier, classify_texts, label_predictions, text_items
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = sm.params
with logged(sm), tracked(sm, config={"classifier": p.classifier, "judge_max_new_tokens": p.judge_max_new_tokens,
                                     "classifier_max_new_tokens": p.classifier_max_new_tokens,
                                     "max_response_chars": p.max_chars}):
    chosen = chosen_classifier(read_jsonl(sm.input.scores), sm.input.scores)
    preds = read_jsonl(sm.input.predictions)
    kwargs = {}
    if chosen.startswith("judge_"):
        kwargs = {"backend": load_backend(sm.input[f"judge_{chosen}"], "judge"), "shots": read_jsonl(sm.input.shots),
                  "max_new_tokens": p.judge_max_new_tokens, "max_chars": p.max_chars}
    elif chosen.startswith("peft_"):
        kwargs = {"backend": load_backend(sm.input[f"classifier_{chosen}"], chosen),
                  "max_new_tokens": p.classifier_max_new_tokens, "max_chars": p.max_chars}
    labels = classify_texts(text_items(preds), chosen, **kwargs)
    write_jsonl(sm.output[0], label_predictions(preds, chosen, labels))
    print(f"{len(preds)} texts labelled with {chosen}")
