"""Snakemake entry point: every condition's prompts of one pair (model-independent; texts from paper Tables 6-10)."""
from pathlib import Path

from wobble.io import read_json, write_json
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.icl_bias.interventions import load_paper_texts
from wobble.studies.icl_bias.pipeline import pair_requests

sm = snakemake  # noqa: F821 (injected by Snakemake)
cfg = {"interventions": list(sm.params.interventions), "targets": list(sm.params.targets)}
with logged(sm), tracked(sm, config=cfg):
    texts = load_paper_texts(Path(sm.input.paper[0]).parent)
    bundle = pair_requests(read_json(sm.input.split), texts, cfg["interventions"], cfg["targets"])
    write_json(sm.output[0], bundle)
    print(f"{bundle['pair']}: {len(bundle['requests'])} requests, {len(bundle['prefixes'])} shared prefixes")
