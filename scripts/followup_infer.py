"""Snakemake entry point: one run's dialogues (model x temperature x dataset x run label), asked resumably."""
import os


from wobble.backends import backend_from_spec
from wobble.io import read_json, read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.followup.pipeline import infer, items_of, run_dialogues
from wobble.studies.followup.prompts import load_paper_prompts

sm = snakemake  # noqa: F821 (injected by Snakemake)
p, w = sm.params, sm.wildcards
cfg = {"seed": p.seed, "gate": p.gate, "shots": p.shots, "max_new_tokens": p.max_new_tokens, "model": p.spec,
       "temperature": float(w.fu_temp), "sample_seed": p.sample_seed}
with logged(sm), tracked(sm, config=cfg, seeds={"items": p.seed, "sampling": p.sample_seed}):
    paper = load_paper_prompts(os.path.dirname(sm.input.paper[0]))
    evaluated, heldout = items_of(read_json(sm.input.selection), read_jsonl(sm.input.data), sm.input.selection)
    extremes = read_json(sm.input.extremes) if "extremes" in sm.input.keys() else None
    dialogues = run_dialogues(paper, w.fu_dataset, w.fu_run, evaluated, heldout, seed=p.seed, gate=p.gate,
                              shots=p.shots, extremes=extremes)
    model_path = sm.input.model if "model" in sm.input.keys() else None
    backend = backend_from_spec(w.model, p.spec, model_path, batch_size=p.spec.get("batch_size"))
    n = infer(backend, dialogues, sm.output[0], temperature=float(w.fu_temp), sample_seed=p.sample_seed,
              max_new_tokens=p.max_new_tokens, chunk_size=p.chunk_size, desc=f"followup {w.fu_dataset} {w.fu_run}")
    print(f"{w.model} T{w.fu_temp} {w.fu_dataset} {w.fu_run}: {n} dialogues")
