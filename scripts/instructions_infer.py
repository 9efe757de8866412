"""Snakemake entry point: greedy generation for every condition of one task set with one model (resumable).

The model is loaded once; each condition's predictions stay in their ``.partial`` until all are done, so a
killed job resumes where it stopped (Snakemake deletes a killed job's outputs, not its ``.partial`` files).
"""
from wobble.backends import GenParams, load_backend
from wobble.io import read_jsonl
from wobble.provenance import tracked
from wobble.runner import finish_partial, generate_resumable
from wobble.snake import logged
from wobble.studies.instructions.prompts import as_chat_turn, plain_prompt

sm = snakemake  # noqa: F821 (injected by Snakemake)
g, spec, chat = sm.params.generation, sm.params.spec, sm.params.chat
splits = [sm.input.splits] if isinstance(sm.input.splits, str) else list(sm.input.splits)
outputs = [str(o) for o in sm.output]
split_of = dict(zip(outputs, splits))
with logged(sm), tracked(sm, config={"generation": g, "model": spec},
                         inputs_of=lambda out: [sm.input.model, split_of[out]]):
    backend = load_backend(sm.input.model, sm.wildcards.model, batch_size=spec.get("batch_size"))
    params = GenParams(max_new_tokens=g["max_new_tokens"], temperature=0.0)
    records = {out: read_jsonl(split) for out, split in split_of.items()}
    for out, condition in zip(outputs, sm.params.conditions):
        generate_resumable(backend, records[out], params, out, prompt_of=as_chat_turn if chat else plain_prompt,
                           desc=f"{sm.wildcards.model} {condition}", finish_now=False)
    for out in outputs:
        finish_partial(records[out], out)
