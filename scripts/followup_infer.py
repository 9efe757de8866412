"""Snakemake entry point: the dialogues of one model's runs on one dataset at one temperature (one run, or a
run group: wobble.studies.followup.layout.run_groups), asked as one set with the model loaded once, resumably."""
import os
from types import SimpleNamespace

from wobble.backends import backend_from_spec
from wobble.io import read_json, read_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.followup.pipeline import infer_runs, items_of, run_dialogues
from wobble.studies.followup.prompts import load_paper_prompts

sm = snakemake  # noqa: F821 (injected by Snakemake)
p = SimpleNamespace(**sm.params.job)  # layout.infer_params
labels = dict(zip((str(o) for o in sm.output), (label for _, label in p.runs)))
(temperature,) = {float(t) for t, _ in p.runs}  # one temperature per job (layout.run_groups)
cfg = {"seed": p.seed, "gate": p.gate, "shots": p.shots, "max_new_tokens": p.max_new_tokens, "model": p.spec,
       "temperature": temperature, "sample_seed": p.sample_seed}
with logged(sm), tracked(sm, config=cfg, seeds={"items": p.seed, "sampling": p.sample_seed},
                         extra={"model": p.model, "dataset": p.dataset}):
    paper = load_paper_prompts(os.path.dirname(sm.input.paper[0]))
    evaluated, heldout_items = items_of(read_json(sm.input.selection), read_jsonl(sm.input.data), sm.input.selection)
    extremes = read_json(sm.input.extremes) if "extremes" in sm.input.keys() else None
    runs = {out: run_dialogues(paper, p.dataset, label, evaluated, heldout_items, seed=p.seed, gate=p.gate,
                               shots=p.shots, extremes=extremes) for out, label in labels.items()}
    model_path = sm.input.model if "model" in sm.input.keys() else None
    backend = backend_from_spec(p.model, p.spec, model_path, batch_size=p.spec.get("batch_size"))
    n = infer_runs(backend, runs, temperature=temperature, sample_seed=p.sample_seed, max_new_tokens=p.max_new_tokens,
                   chunk_size=p.chunk_size, desc=f"followup {p.dataset} {len(runs)} run(s)")
    print(f"{p.model} T{temperature:g} {p.dataset} {', '.join(labels.values())}: {n} dialogues")
