"""Snakemake entry point: one text->option evaluator (paper_regex, string_match, judge_<k>shot, peft_<n>) on
annotated responses: the test items it is reported on, or the training items the classifier is chosen on."""

from wobble.backends import load_backend
from wobble.studies.first_token.classifiers import evaluate_classifier
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

sm = snakemake  # noqa: F821 (injected by Snakemake)
name, p = sm.wildcards.evaluator, sm.params
with logged(sm), tracked(sm, config={"evaluator": name, "judge_max_new_tokens": p.judge_max_new_tokens,
                                     "classifier_max_new_tokens": p.classifier_max_new_tokens,
                                     "max_response_chars": p.max_chars}):
    test, shots = read_jsonl(sm.input.test), read_jsonl(sm.input.shots)
    kwargs = {}
    if name.startswith("judge_"):
        kwargs = {"backend": load_backend(sm.input.judge, "judge"), "shots": shots,
                  "max_new_tokens": p.judge_max_new_tokens, "max_chars": p.max_chars}
    elif name.startswith("peft_"):
        kwargs = {"backend": load_backend(sm.input.classifier, name), "max_new_tokens": p.classifier_max_new_tokens,
                  "max_chars": p.max_chars}
    preds = evaluate_classifier(test, name, **kwargs)
    write_jsonl(sm.output[0], preds)
    print(f"{name} on {sm.wildcards.cpart}: accuracy {sum(x['pred'] == x['gold'] for x in preds) / max(1, len(preds)):.3f} on {len(preds)}")
