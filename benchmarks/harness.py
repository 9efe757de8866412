"""What the benchmark scripts set up alike, so that each script holds only its workload and its engines:

* ``start``: the command line's shared tail (measure.py's ``--repeats`` and ``--max-foreign-load``, ``--json``)
  parsed into a ``Run`` (the arguments, the repeat count, the load limit, the machine's facts), with torch's
  threads set to ``--threads`` where the script has that option;
* ``scratch`` and ``tiny_model``: a folder removed when the script ends, and ``--quick``'s tiny random causal
  model materialized in one;
* ``config`` (config.yaml with the schema's defaults) and ``study_dtype`` (the dtype a materialized model's
  spec asks for);
* ``hf``: wobble's hf backend as every benchmark builds it (causal, no progress bar), and ``fresh``: the same
  backend with empty prefix caches, so that no timed run finds an earlier run's;
* ``Run.finish``: the script's facts followed by the run's (machine, engines, measure.run_facts), printed and
  written to ``--json`` with the rows.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import measure
from rows import emit

ROOT = Path(__file__).resolve().parents[1]
TINY = {"source": "tiny", "kind": "causal", "seed": 0}


@dataclass
class Run:
    args: argparse.Namespace
    repeats: int
    max_load: float
    facts: dict

    def facts_of(self, timings, engines: dict) -> dict:
        """The facts every record ends with: the machine, how each engine computes, the repeats, the load limit
        and whether a timing was refused (``timings``: the run's ``measure.Timing`` s)."""
        return {"machine": self.facts, "engines": engines,
                **measure.run_facts(self.repeats, self.max_load, list(timings))}

    def finish(self, meta: dict, rows: list[dict], timings, engines: dict) -> int:
        """Print ``meta`` + the run's facts and the rows, write them to ``--json`` when given; the exit status."""
        emit({**meta, **self.facts_of(timings, engines)}, rows, self.args.json)
        return 0


def start(ap: argparse.ArgumentParser, argv=None, *aliases: str, json_help: str = "also write the results here"
          ) -> Run:
    """Add measure.py's options (``aliases``: a script's own name for ``--repeats``) and ``--json``, parse
    ``argv``, take the machine's facts, then set torch's threads to ``--threads`` (when the script has it)."""
    measure.add_arguments(ap, *aliases)
    ap.add_argument("--json", help=json_help)
    args = ap.parse_args(argv)
    repeats, max_load = measure.settings(args)
    run = Run(args, repeats, max_load, measure.machine())
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)
    return run


def scratch(prefix: str) -> Path:
    """A fresh folder, removed when the script ends."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, tmp, True)
    return tmp


def tiny_model(prefix: str, **spec) -> Path:
    """``--quick``'s model: a tiny random causal model (``TINY`` updated with ``spec``) in a scratch folder."""
    from wobble.models.materialize import materialize

    model_dir = scratch(prefix) / "model"
    materialize("tiny", {**TINY, **spec}, model_dir)
    return model_dir


def config() -> dict:
    """config.yaml with the schema's defaults filled in (what a default run reads)."""
    import yaml

    from wobble.config import validate_config

    full = yaml.safe_load((ROOT / "config.yaml").read_text())
    validate_config(full, ROOT / "schemas" / "config.schema.yaml")
    return full


def study_dtype(model_dir) -> str:
    """The dtype a materialized model's spec asks for (``auto`` where it names none)."""
    from wobble.models.load import read_manifest

    return (read_manifest(Path(model_dir)).get("spec") or {}).get("dtype") or "auto"


def hf(model, tok, batch_size: int, name: str = "bench", **options):
    """wobble's hf backend over ``model`` as the studies build it for a causal model, without a progress bar."""
    from wobble.backends.hf import HFBackend

    return HFBackend(model, tok, "causal", name, batch_size=batch_size, progress=False, **options)


def fresh(backend):
    """``backend`` with empty prefix caches (each timed run starts without the previous run's); returns it."""
    from wobble.backends.hf_prefix import PrefixCache

    backend.prefix_cache = PrefixCache()
    return backend
