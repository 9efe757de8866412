# Shared helpers: config validation (before any job runs), paths, input functions.
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from wobble.config import validate_config
from wobble.errors import WobbleError

try:
    validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except WobbleError as e:
    raise WorkflowError(str(e)) from None

from wobble.data.prepare import DATASET_SOURCES, affected_tables
from wobble.data.sources import SOURCES


wildcard_constraints:
    source="|".join(sorted(SOURCES)),
    dataset="|".join(sorted(DATASET_SOURCES)),
    model="[A-Za-z0-9][A-Za-z0-9._-]*",
    taskset="english|xlingual|para|diverse",
    setting="wo_exam|w_exam",
    seed="[0-9]+",
    condition="[a-z][a-z0-9_]*",
    table="table[0-9]+",
    figure="figure_[a-z0-9_]+",


ENABLED_SOURCES = list(config["data"]["sources"])
PAPER_DIR = "paper"  # published numbers of the four papers (copied from shared/paper, see paper/README.md)
_missing = sorted(set(SOURCES) - set(ENABLED_SOURCES))
if _missing:
    logger.warning(
        f"wobble: sources left out by config data.sources: {_missing}; "
        f"tables affected: {affected_tables(_missing) or 'none'}"
    )


def mirror_dir():
    """The offline mirror to read from (see config data.mirror), or None to download.

    A configured mirror that does not exist is still passed on when data.mirror_optional is true, so
    acquire downloads instead and its error message names both places it looked.
    """
    mirror = config["data"].get("mirror")
    if not mirror:
        return None
    if Path(mirror).is_dir():
        return str(Path(mirror).resolve())
    if config["data"].get("mirror_optional", False):
        logger.warning(f"wobble: data.mirror {mirror!r} not found; sources will be downloaded")
        return str(Path(mirror).absolute())
    raise WorkflowError(f"config error at 'data.mirror': folder {mirror!r} does not exist "
                        "(set data.mirror_optional: true to download instead)")


def enabled_datasets():
    """Datasets whose every source is enabled."""
    return [d for d, srcs in DATASET_SOURCES.items() if set(srcs) <= set(ENABLED_SOURCES)]


def dataset_inputs(wildcards):
    missing = [s for s in DATASET_SOURCES[wildcards.dataset] if s not in ENABLED_SOURCES]
    if missing:
        raise WorkflowError(f"dataset {wildcards.dataset!r} needs source(s) {missing}, "
                            "which config data.sources leaves out")
    return [f"resources/data/{s}" for s in DATASET_SOURCES[wildcards.dataset]]


def prepared(dataset):
    return f"resources/prepared/{dataset}.jsonl"


def model_spec(key):
    try:
        return config["models"][key]
    except KeyError:
        raise WorkflowError(f"model {key!r} is not defined under 'models' in the config") from None


def model_dir(key):
    """Directory of a materialized (or finetuned) model; finetuned ones are made by study rules."""
    spec = model_spec(key)
    if "finetune" in spec:
        return f"resources/models/finetuned/{key}"
    return f"resources/models/{key}"


def sourced_model_spec(wildcards):
    spec = model_spec(wildcards.model)
    if "finetune" in spec:
        raise WorkflowError(f"model {wildcards.model!r} is finetuned; it is produced by its study's finetune rule")
    return spec


def probe_targets():
    if "probe" not in config or config["probe"]["dataset"] not in enabled_datasets():
        return []
    return [f"results/probe/predictions/{m}.jsonl" for m in config["probe"]["models"]]


def model_label(key):
    """A short human description of a model key, for table footnotes."""
    spec = model_spec(key)
    if "finetune" in spec:
        ft = spec["finetune"]
        return f"{key} = {model_label(ft['base'])} + {ft['method']} finetune on {ft['data']}"
    origin = spec.get("id") or spec.get("package") or spec.get("path") or spec.get("model") or f"seed {spec.get('seed', 0)}"
    return f"{key} ({spec['source']}: {origin}, {spec['kind']})"


# ---------------------------------------------------------------- study `first_token`
def first_token_targets():
    """Tables and figures of the first_token study (rules/first_token.smk), if configured and its data enabled."""
    if "first_token" not in config or "opinionqa" not in ENABLED_SOURCES:
        return []
    from wobble.studies.first_token.pipeline import report_targets

    return report_targets(config["first_token"])


def all_targets():
    targets = [prepared(d) for d in enabled_datasets()]
    targets += probe_targets()
    targets += instructions_targets()
    targets += first_token_targets()
    return targets
