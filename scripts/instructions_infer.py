"""Snakemake entry point: greedy generation for one split with one model (resumable)."""
from wobble.backends import GenParams, load_backend
from wobble.runner import generate_resumable
from wobble.io import read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.instructions.prompts import as_chat_turn, plain_prompt

g, spec, chat = snakemake.params.generation, snakemake.params.spec, snakemake.params.chat
with logged(snakemake), tracked(snakemake, config={"generation": g, "model": spec}):
    backend = load_backend(snakemake.input.model, snakemake.wildcards.model, batch_size=spec.get("batch_size"))
    params = GenParams(max_new_tokens=g["max_new_tokens"], temperature=0.0)
    generate_resumable(backend, read_jsonl(snakemake.input.split), params, snakemake.output[0],
                       prompt_of=as_chat_turn if chat else plain_prompt,
                       desc=f"{snakemake.wildcards.model} {snakemake.wildcards.condition}")
