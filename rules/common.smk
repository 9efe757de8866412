# Shared helpers of every rules file: config validation (before any job runs), the study registry
# (which studies run and why not), data and model paths, and the render rules' input functions.
# Nothing study-specific lives here: a study declares itself in src/wobble/studies/<name>/spec.py and
# keeps its own helpers in rules/<name>.smk.
import functools
import os
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from wobble import paths
from wobble.config import check_pinned_revisions, models_in_use, validate_config
from wobble.data.prepare import DATASET_SOURCES, affected_tables
from wobble.data.sources import SOURCES
from wobble.errors import WobbleError
from wobble.resolve import resolve_in_place, selected
from wobble.models.describe import model_label as describe_model
from wobble.models.fetch import CONFIG_ENV as FETCH_CONFIG_ENV
from wobble.models.requests import attempt_runtime, gpu_constraint, gpu_need_gib
from wobble.models.revisions import unpinned_revisions
from wobble.models.sizing import input_models, job_resources, model_size
from wobble.snake import cancel_scheduler_timers
from wobble.studies import STUDIES, declared_outputs, disabled_reason, render_code_digest
from wobble.studies import get as study_spec

# The config file(s) in use, named by a retired key's one-line error.
CONFIG_SOURCE = ", ".join(os.path.relpath(f) for f in workflow.overwrite_configfiles) or "config.yaml"

# A job on a compute node (a cluster executor's job: Snakemake's remote mode) runs with the Hugging Face hub offline:
# what it loads was downloaded on a login node (`wobble fetch-models`), and a job that still needs the network stops
# in one line naming that command for this run's config (wobble.models.fetch). HF_HUB_OFFLINE=0 in the submitting
# environment (jobs inherit it: sbatch --export=ALL) lets nodes that reach the hub download.
os.environ[FETCH_CONFIG_ENV] = " ".join(os.path.relpath(f) for f in workflow.overwrite_configfiles) or "config.yaml"
if workflow.remote_exec:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

# A config that names a base is merged onto it first, its studies selected and its results folder derived from its
# name (wobble.resolve); the --configfile still replaces config.yaml: the base is named, never implied.
try:
    resolve_in_place(config, workflow.overwrite_configfiles, Path(workflow.basedir) / "config.yaml")
    validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml", source=CONFIG_SOURCE)
except WobbleError as e:
    raise WorkflowError(str(e)) from None

# At paper scale every hub model is pinned to a commit. A dry run (`snakemake -n`) plans an unpinned config and
# warns; a run refuses it before its first job (`onstart` in the Snakefile calls refuse_unpinned_revisions).
if config["scale"] == "paper" and unpinned_revisions(config, models_in_use(config)):
    logger.warning(f"wobble: scale 'paper' with hub models not pinned to a commit: "
                   f"{', '.join(f'{k} ({r})' for k, r in unpinned_revisions(config, models_in_use(config)).items())}; "
                   f"a run refuses them "
                   f"(set each models.<key>.revision to a 40-hex commit sha)")


def refuse_unpinned_revisions():
    """A WorkflowError before any job runs when a paper-scale config has an unpinned hub model."""
    try:
        check_pinned_revisions(config)
    except WobbleError as e:
        raise WorkflowError(str(e)) from None


def names_pattern(names):
    """A wildcard constraint matching exactly ``names`` (and nothing when there are none)."""
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


wildcard_constraints:
    source=names_pattern(SOURCES),
    dataset=names_pattern(DATASET_SOURCES),
    model="[A-Za-z0-9][A-Za-z0-9._-]*",
    taskset="english|xlingual|para|diverse",
    setting="wo_exam|w_exam",
    seed="[0-9]+",
    condition="[a-z][a-z0-9_]*",


# Where this run writes (config results_root): its results, and for any root but the default its logs and
# Snakemake benchmarks too (wobble.paths); every rule names its files through these.
RESULTS = paths.results_root(config)
LOGS = paths.log_dir(config)
BENCHMARKS = paths.benchmark_dir(config)


def result_file(path):
    """``path`` (Snakemake wildcards left as they are) under the run's results folder."""
    return f"{RESULTS}/{path}"


def log_file(path):
    return f"{LOGS}/{path}"


def benchmark_file(path):
    return f"{BENCHMARKS}/{path}"


def study_dir(name):
    """Study ``name``'s results folder."""
    return paths.study_root(config, name)


ENABLED_SOURCES = list(config["data"]["sources"])
PAPER_DIR = paths.PAPER_DIR  # published numbers of the four papers (copied from shared/paper, see paper/README.md)
_missing = sorted(set(SOURCES) - set(ENABLED_SOURCES))
if _missing:
    logger.warning(
        f"wobble: sources left out by config data.sources: {_missing}; "
        f"tables affected: {affected_tables(_missing) or 'none'}"
    )
for _name in STUDIES:
    _why = disabled_reason(config, _name)
    if _why is not None:
        logger.warning(f"wobble: study {_name!r} is off: {_why}")
    elif not study_spec(_name).targets(config):
        logger.warning(f"wobble: study {_name!r} declares no tables, figures or targets "
                       f"(src/wobble/studies/{_name}/spec.py); `all` has nothing of it")


def study_targets(name):
    """Every table and figure of study ``name`` (plus its extra targets), or [] when it is off."""
    if disabled_reason(config, name) is not None:
        return []
    return study_spec(name).targets(config)


def mirror_dir():
    """The offline mirror to read from (see config data.mirror), or None to download.

    A configured mirror that does not exist is still passed on when data.mirror_optional is true, so
    acquire downloads instead and its error message names both places it looked.
    """
    mirror = config["data"]["mirror"]
    if not mirror:
        return None
    if Path(mirror).is_dir():
        return str(Path(mirror).resolve())
    if config["data"]["mirror_optional"]:
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


prepared = paths.prepared


def model_spec(key):
    try:
        return config["models"][key]
    except KeyError:
        raise WorkflowError(f"model {key!r} is not defined under 'models' in the config") from None


def model_dir(key):
    """Directory of a materialized (or finetuned) model; finetuned ones are made by study rules."""
    model_spec(key)
    return paths.model_dir(config, key)


# Threads of a job that runs a model (config `model_threads`; torch follows them: wobble.threads.follow_threads).
# One rule can be given more with `snakemake --set-threads first_token_infer=8`.
MODEL_THREADS = config.get("model_threads", 1)


def gpus(wildcards, input):
    """The ``gpu`` resource of a model rule, per job: one when the job loads a model's weights, none when it
    runs no model (string matching, a model behind an OpenAI-compatible server); see wobble.paths."""
    return paths.gpus_for_inputs(config, input)


def finetune_gpus(wildcards, input):
    """A finetune job's ``gpu`` resource: its model's ``finetune.gpus`` (one torchrun rank per GPU), else what its
    base's weights book (:func:`gpus`)."""
    n = ((config["models"].get(wildcards.model) or {}).get("finetune") or {}).get("gpus")
    return int(n) if n else gpus(wildcards, input)


MODEL_SIZES = {}  # the sizes found so far (wobble.models.sizing.model_size)


def sized(resource, work, units=1, models=None):
    """A model rule's ``resource`` (``mem_mb``, ``runtime``, ``disk_mb``) per job, from the size of the model it
    loads and the rule's work (wobble.models.sizing, docs/cluster.md); ``--set-resources RULE:KEY=N`` overrides it.
    ``work``: the rule's kind (a key of sizing.RATES, or materialize_model); ``units``: the job's work in multiples
    of the rate's, a number or a function of the job's input (Snakemake evaluates resources again once a job's
    input exists, before it runs); ``models``: a function of the wildcards naming the job's models where its input
    does not (a model behind an API has no directory among them)."""

    def value(wildcards, input, attempt):
        by_wildcard = work in ("materialize_model", "finetune")  # the model made, not (only) an input
        keys = [wildcards.model] if by_wildcard else input_models(config, input)
        keys += models(wildcards) if models else []
        job = f"{work} {','.join(f'{k}={v}' for k, v in wildcards.items())}".strip()
        try:
            if resource in ("gpu_mem_gib", "constraint"):  # the GPU class a GPU job needs (wobble.models.requests)
                n_gpus = (finetune_gpus if work == "finetune" else gpus)(wildcards, input)
                sizes = {k: model_size(config, k, known=MODEL_SIZES) for k in keys}
                need = gpu_need_gib(config, work, keys, n_gpus, sizes) if n_gpus else None
                return gpu_constraint(need, job) if resource == "constraint" else need
            n = units(input) if callable(units) else units
            out = job_resources(config, work, keys, n, processes=set_ranks(work), known=MODEL_SIZES)[resource]
            # a retry (timeout, preemption) asks for more time, never over the per-job cap
            return attempt_runtime(work, out, attempt, RETRIES, job=job) if resource == "runtime" else out
        except WobbleError as e:
            raise WorkflowError(str(e)) from None

    return value


# The attempts a job gets (the profile's retries + 1), where Snakemake says (a run's main process; a dry run and a job
# on a node are not told them and check no count).
_settings = workflow.execution_settings if workflow.is_main_process else None
RETRIES = _settings.retries if _settings is not None else 10**6


def set_ranks(rule):
    """The processes a job of ``rule`` runs: a finetune's ranks from `--set-resources finetune:ranks=N` or
    `finetune:gpu=N` (as wobble.training.launch counts them), else 1."""
    given = (workflow.resource_settings.overwrite_resources.get(rule) if rule == "finetune" else None) or {}
    for name in ("ranks", "gpu"):
        value = given[name] if name in given else None
        value = str(getattr(value, "value", value))  # a parsed snakemake Resource, or the plain value
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


def masked_lm_input(condition=None):
    """The materialized fill-mask word proposer (``instructions.masked_lm``, a models: key) of a job that proposes
    words (``condition`` insert/replace_words, or any when None): loaded from its directory, so a node needs no hub."""
    key = config["instructions"].get("masked_lm") if "instructions" in config else None
    if not key or (condition is not None and condition not in ("insert_words", "replace_words")):
        return {}
    return {"masked_lm": model_dir(key)}


def model_label(key):
    """A short human description of a model key, for table footnotes."""
    return describe_model(config["models"], key)


def sourced_model_spec(wildcards):
    spec = model_spec(wildcards.model)
    if "finetune" in spec:
        raise WorkflowError(f"model {wildcards.model!r} is finetuned; it is produced by its study's finetune rule")
    return spec


def probe_targets():
    if "probe" not in config or not selected(config, "probe") or config["probe"]["dataset"] not in enabled_datasets():
        return []
    return [result_file(f"probe/predictions/{m}.jsonl") for m in config["probe"]["models"]]


def workflow_targets():
    """Target `all`: the prepared datasets, the probe, every enabled study's tables, figures and claims
    ledger, and the ledger across studies. A run that selects its studies (`studies:`) prepares only the datasets
    they read."""
    targets = [] if "studies" in config else [prepared(d) for d in enabled_datasets()]
    targets += probe_targets()
    for name in STUDIES:
        targets += study_targets(name)
        if study_targets(name):
            targets.append(f"{study_dir(name)}/provenance.jsonl")
    if findings_studies():
        targets.append(result_file("findings.md"))
    targets += [result_file(f"scorecard/{m}.md") for m in scorecard_models()]
    return targets + run_page_targets()


# ---------------------------------------------------------------- a named run's page (rules/report.smk)
def run_page_targets():
    """A named run's page, ``<root>/README.md`` (the default and reference runs have none)."""
    return [result_file("README.md")] if config.get("name") else []


def run_page_inputs(wildcards):
    """Everything else target `all` makes, so the page comes last and reads every job's benchmark file."""
    return {"ledger": [result_file("findings.csv")] if findings_studies() else [],
            "scorecards": [result_file(f"scorecard/{m}.md") for m in scorecard_models()],
            "rest": [t for t in workflow_targets() if t not in run_page_targets()]}


# ---------------------------------------------------------------- claims ledgers (rules/report.smk)
def findings_studies():
    """Enabled studies that declare a claims ledger, in registration order."""
    return [s for s in STUDIES if disabled_reason(config, s) is None and study_spec(s).findings is not None]


FINDINGS_STUDIES = names_pattern({s for s in STUDIES if study_spec(s).findings is not None})


def findings_spec(wildcards):
    why = disabled_reason(config, wildcards.study)
    if why is not None:
        raise WorkflowError(f"{study_dir(wildcards.study)}/findings.md was requested, but study "
                            f"{wildcards.study!r} is off: {why}")
    return study_spec(wildcards.study).findings


def findings_inputs(wildcards):
    return findings_spec(wildcards).inputs(config)


# ---------------------------------------------------------------- per-model scorecards (rules/report.smk)
def scorecard_parts(model):
    """(study, its ScorecardSpec) of every enabled study that scores ``model``."""
    out = []
    for s in STUDIES:
        spec = study_spec(s).scorecard
        if disabled_reason(config, s) is None and spec is not None and model in spec.models(config):
            out.append((s, spec))
    return out


def scorecard_models():
    """Every model some enabled study scores, in first-seen order."""
    seen = []
    for s in STUDIES:
        spec = study_spec(s).scorecard
        if disabled_reason(config, s) is None and spec is not None:
            seen += [m for m in spec.models(config) if m not in seen]
    return seen


def scorecard_inputs(wildcards):
    """Each scoring study's inputs for this model, named ``<study>__<name>``."""
    parts = scorecard_parts(wildcards.model)
    if not parts:
        raise WorkflowError(f"{result_file('scorecard')}/{wildcards.model}.md was requested, but no enabled study runs "
                            f"model {wildcards.model!r}")
    return {f"{s}__{k}": v for s, spec in parts for k, v in spec.inputs(config, wildcards.model).items()}


# ---------------------------------------------------------------- render rules (rules/report.smk)
TABLE_NAMES = names_pattern({o.name for o in declared_outputs("table")})
FIGURE_NAMES = names_pattern({o.name for o in declared_outputs("figure")})
STUDIES_WITH = {
    kind: names_pattern({o.study for o in declared_outputs(kind)}) for kind in ("table", "figure")
}


def declared_output(wildcards):
    """The OutputSpec that `<root>/{study}/.../{name}` stands for; refused when the study is off."""
    why = disabled_reason(config, wildcards.study)
    if why is not None:
        raise WorkflowError(f"{study_dir(wildcards.study)}/…/{wildcards.name} was requested, but study "
                            f"{wildcards.study!r} is off: {why}")
    try:
        return study_spec(wildcards.study).output(wildcards.name)
    except KeyError as e:
        raise WorkflowError(e.args[0]) from None


def render_inputs(wildcards):
    """Named inputs of one table/figure: what its declaration reads, plus the paper CSV(s) it sits beside."""
    output = declared_output(wildcards)
    inputs, paper = output.inputs(config), output.paper_inputs()
    clash = sorted(set(inputs) & set(paper))
    if clash:
        raise WorkflowError(f"{output.study}/{output.name}: input name(s) {clash} clash with its paper inputs")
    return {**inputs, **paper}


def render_context(wildcards):
    """The study's footnote context (models, scale, sample): one value for all its tables."""
    return study_spec(wildcards.study).context(config)


_render_code = functools.cache(render_code_digest)  # one digest per study and Snakemake process


def render_code(wildcards):
    """The digest of the code that renders ``wildcards.study``'s outputs (wobble.studies.render_code_digest)."""
    return _render_code(wildcards.study)


def render_caption(wildcards):
    """The report caption of one table/figure (shown by report/output.rst)."""
    return declared_output(wildcards).caption



# ---------------------------------------------------------------- targets on the command line
def check_targets():
    """A target that names no rule, study or declared table stops the run in one line listing what exists, before
    Snakemake's "No rule to produce" (wobble.snake.target_problem); the main process only, where the command line
    holds the user's targets."""
    if not workflow.is_main_process:
        return
    from wobble.snake import command_line_targets, target_problem

    for target in command_line_targets():
        problem = target_problem(target, {r.name for r in workflow.rules}, RESULTS)
        if problem:
            raise WorkflowError(problem)
