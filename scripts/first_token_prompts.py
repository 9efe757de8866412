"""Snakemake entry point: the study's prompt records (sampled questions x constraints x shuffles)."""
from wobble.studies.first_token.sampling import build_prompts, sample_questions
from wobble.io import read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

p = snakemake.params  # noqa: F821 (injected by Snakemake)
cfg = {"n_questions": p.n_questions, "n_shuffles": p.n_shuffles, "constraints": list(p.constraints), "seed": p.seed}
with logged(snakemake), tracked(snakemake, config=cfg, seeds=p.seed):
    questions = sample_questions(read_jsonl(snakemake.input[0]), p.n_questions, p.seed, snakemake.input[0])
    n = write_jsonl(snakemake.output[0], build_prompts(questions, cfg["constraints"], p.n_shuffles, p.seed))
    print(f"{len(questions)} questions x {len(cfg['constraints'])} constraints x {p.n_shuffles} shuffles = {n} prompts")
