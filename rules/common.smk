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


# ---------------------------------------------------------------- study `instructions`
INSTRUCTIONS_SOURCES = ("superni", "para_instructions", "diverse_prompt")
INSTRUCTIONS_TABLES = [f"table{i}" for i in range(1, 12)]
INSTRUCTIONS_FIGURES = ["figure_drop"]
PARA_CONDITIONS = ["original", "paraphrase_1", "paraphrase_2", "paraphrase_3"]


def instructions_cfg():
    return config["instructions"]


def instructions_enabled():
    return "instructions" in config and set(INSTRUCTIONS_SOURCES) <= set(ENABLED_SOURCES)


def finetune_cfg(model):
    cfg = dict(instructions_cfg()["finetune"])
    cfg["method"] = model_spec(model)["finetune"]["method"]
    return cfg


def instructions_runs(role):
    """(model, taskset, condition, setting, seed) tuples of one model role: main or second."""
    cfg = instructions_cfg()
    seeds, conds, settings = cfg["seeds"], cfg["conditions"], cfg["settings"]
    if role == "second":
        model = cfg.get("second_model")
        if not model:
            return []
        return [(model, ts, c, "w_exam", s) for ts in ("english", "xlingual") for c in conds for s in seeds]
    model = cfg["model"]
    runs = [(model, ts, c, st, s) for ts in ("english", "xlingual") for c in conds for st in settings for s in seeds]
    runs += [(model, "para", c, "w_exam", s) for c in PARA_CONDITIONS for s in seeds]
    runs += [(model, "diverse", "diverse_prompt", "wo_exam", s) for s in seeds]
    return runs


def score_files(role, tasksets, settings=("wo_exam", "w_exam"), conditions=None):
    return [
        f"results/instructions/scores/{m}/{ts}/{c}/{st}/seed{s}.json"
        for m, ts, c, st, s in instructions_runs(role)
        if ts in tasksets and st in settings and (conditions is None or c in conditions)
    ]


def _proposer_input():
    cfg = instructions_cfg()
    return {} if cfg.get("masked_lm") else {"proposer": model_dir(cfg["proposer_model"])}


def instructions_split_inputs(wildcards):
    sel = "results/instructions/splits/selection.json"
    if wildcards.taskset == "diverse":
        return {"selection": sel, "diverse": prepared("diverse_prompt")}
    inputs = {"selection": sel, "tasks": prepared("superni_tasks"), "instances": prepared("superni_test")}
    if wildcards.condition.startswith("paraphrase"):
        inputs["para"] = prepared("para_instructions")
    if wildcards.condition in ("insert_words", "replace_words"):
        inputs.update(_proposer_input())
    return inputs


def instructions_table3_inputs(wildcards):
    return {"tasks": prepared("superni_tasks"), **_proposer_input()}


def instructions_table_inputs(wildcards):
    """Named inputs of one table or figure: only what that table needs (so one table re-runs alone)."""
    name = wildcards.get("table") or wildcards.get("figure")
    paper = f"{PAPER_DIR}/instructions/{name}.csv"
    sel = "results/instructions/splits/selection.json"
    main_runs = {
        "table4": score_files("main", ["english"]),
        "table10": score_files("main", ["xlingual"]),
        "table5": score_files("second", ["english"]),
        "table11": score_files("second", ["xlingual"]),
        "table7": score_files("main", ["para"], settings=("w_exam",)),
        "table8": score_files("main", ["diverse"], settings=("wo_exam",)),
        "table9": score_files("main", ["diverse"], settings=("wo_exam",)),
        "figure_drop": score_files("main", ["english"]),
    }
    if name in ("table1", "table2"):
        return {"paper": paper, "tasks": prepared("superni_tasks"), "instances": prepared("superni_test")}
    if name == "table3":
        return {"paper": paper, "perturbations": "results/instructions/splits/table3_perturbations.json"}
    if name == "table6":
        return {"paper": paper, "para": prepared("para_instructions")}
    if name == "figure_drop":
        return {"scores": main_runs[name], "selection": sel, "paper": f"{PAPER_DIR}/instructions/table4.csv"}
    return {"paper": paper, "scores": main_runs[name], "selection": sel}


def instructions_context():
    cfg = instructions_cfg()
    models = {cfg["model"]: model_label(cfg["model"])}
    if cfg.get("second_model"):
        models[cfg["second_model"]] = model_label(cfg["second_model"])
    en, xl = cfg["english"], cfg["xlingual"]
    deviations = list(cfg.get("deviations", []))
    if not cfg.get("masked_lm"):
        deviations.append(f"insert/replace words: each word is proposed by the causal LM {cfg['proposer_model']} "
                          "from the left context (no masked LM offline); the paper used BERT fill-mask")
    return {
        "scale": config["scale"],
        "models": models,
        "seeds": cfg["seeds"],
        "data_note": (f"SuperNI test tasks from the data mirror: {en['tasks_per_category']} English task(s) per "
                      f"category x first {en['instances_per_task']} instances; {xl['tasks_per_category']} non-English "
                      f"task(s) per category x {xl['instances_per_task']} instances; Para-Instructions "
                      f"x {cfg['para']['instances_per_task']} instances; DiversePrompt x "
                      f"{cfg['diverse']['examples_per_task']} eval examples per prompt"),
        "deviations": deviations,
    }


def instructions_targets():
    if not instructions_enabled():
        return []
    base = "results/instructions"
    out = [f"{base}/tables/{t}.md" for t in INSTRUCTIONS_TABLES]
    out += [f"{base}/figures/{f}.png" for f in INSTRUCTIONS_FIGURES]
    return out


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
