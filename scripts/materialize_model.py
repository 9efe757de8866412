"""Snakemake entry point: materialize one declared model into resources/models/{model} (wobble.models)."""
import sys

from wobble.errors import WobbleError
from wobble.models.materialize import materialize
from wobble.provenance import tracked
from wobble.snake import logged

key, spec, out_dir = snakemake.wildcards.model, dict(snakemake.params.spec), snakemake.output[0]
models: dict = {}  # filled before tracked() writes the sidecar on exit
try:
    with logged(snakemake), tracked(snakemake, config=spec, models=models):
        models[key] = materialize(key, spec, out_dir, wheel_dir=snakemake.params.wheel_dir)["weights_sha256"]
except WobbleError as e:  # the user's to fix (e.g. a model not fetched, the hub offline): one line, in the log too
    with open(snakemake.log[0], "a", encoding="utf-8") as log:
        print(f"wobble: {e}", file=log)
    sys.exit(f"wobble: {e}")
