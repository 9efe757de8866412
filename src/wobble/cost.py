"""What a study will cost before it runs: its model calls, counted from the config, and a time from measured
per-job times, scaled as configs/reference.yaml's plan scales them (by the items and by a model-size ratio).

**Calls** (:func:`model_calls`) are the studied models' own calls (the study's ``models``): first_token's
generations, followup's dialogue replies, icl_bias's scored prompts (content-free calibration prompts included),
instructions' generations. The helper models' calls (a judge, a classifier, a proposer) are in the study's other
jobs below. Where a sample is data-dependent (tasks per category, "all" items) the counts of the mirrored data are
used, so a count is exact for the default data and about right otherwise.

**Time** (:func:`estimate`): the reference run's Snakemake benchmark files (``results/reference/benchmarks/``,
committed; one 1-thread job at a time per core on a 2-core CPU) give, for the largest model a study ran there,
its inference jobs' seconds per call per billion parameters (model loading included). A model's inference time is
its calls x that rate x its billions of parameters: linear in parameters, as :data:`wobble.models.sizing.RATES`
(measured: the 1.5B at 3.38x the 0.5B's CPU time, 3.1x by parameters). The study's other jobs (labelling,
judging, scoring, splits, tables) cost what the reference run measured: those named after a studied model once
per model of the run, the rest once. Wall time on a 2-core CPU is the job time / 2 (two 1-thread jobs at a time,
the reference plan's rule). A model more than twice or less than half the measured one's size, or calls more
than 4x the measured ones, is an extrapolation and is said to be one.

**GPU-hours**: the job seconds / :data:`GPU_THREADS` / 3600, the assumption sizing's runtimes rest on (one GPU
does the work of 100 CPU threads, the slow end of the studies' pages) and only that: never measured here.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

#: Billions of parameters of the reference run's models (their GGUF tensor counts; they carry no ``params_b``).
REFERENCE_PARAMS_B = {"smollm2-135m-instruct": 0.135, "qwen2.5-coder-0.5b-instruct": 0.494,
                      "qwen2.5-coder-1.5b-instruct": 1.54, "gemma-270m": 0.268, "gemma-270m-ni": 0.268}
#: CPU threads one GPU is assumed to do the work of (sizing's runtime assumption).
GPU_THREADS = 100
#: The reference plan's wall-time rule: two 1-thread jobs at a time on a 2-core CPU.
CPU_CORES = 2
#: SuperNI test tasks per category with instances in the mirror (English: 12 categories; non-English: 3).
ENGLISH_CATEGORY_TASKS = (1, 2, 5, 7, 7, 8, 9, 11, 13, 14, 18, 24)
XLINGUAL_CATEGORY_TASKS = (1, 3, 30)
PARA_TASKS = 23
#: Prompts per DiversePrompt task (24 tasks, 186 prompts in all).
DIVERSE_PROMPTS = (8, 9, 9, 8, 9, 9, 6, 9, 9, 8, 8, 8, 8, 7, 6, 8, 8, 8, 8, 9, 6, 4, 4, 10)
OPINIONQA_QUESTIONS = 414
#: Test items per followup dataset, used when ``n_items`` is null (all items).
FOLLOWUP_ITEMS = {"gsm8k": 1319, "svamp": 1000, "multiarith": 600, "csqa": 1221, "strategyqa": 2290,
                  "last_letters": 500, "coin_flip": 500, "mmlu": 14042}
#: Follow-up replies of a run after the initial answer: the Progressive Form asks three.
PROGRESSIVE_FOLLOWUPS = 3
ICL_CALIBRATION_PROMPTS = 3
ICL_TEST_CELLS = 2  # the two disagreeing cells


# --------------------------------------------------------------------------------------------------- calls

def _first_token(sec: Mapping[str, Any], model: str) -> int:
    questions = sec["n_questions"] or OPINIONQA_QUESTIONS
    levels = len(sec["constraints"]) + len(sec["temperatures"]) * len(sec["sweep_constraints"])
    return questions * sec["n_shuffles"] * levels


def _followup(sec: Mapping[str, Any], model: str) -> int:
    """Replies: per dataset and temperature one initial answer shared by the plain runs, and per run its
    follow-up replies (three in the Progressive Form); a run with a mitigation asks its own initial answer."""
    from wobble.studies.followup.layout import runs

    calls, groups = 0, set()
    for run in runs(sec, model):
        items = sec["n_items"] or FOLLOWUP_ITEMS.get(run.dataset, 1000)
        followups = PROGRESSIVE_FOLLOWUPS if run.label.startswith("progressive") else 1
        if run.label.endswith("_none"):
            if (run.dataset, run.temperature) not in groups:
                groups.add((run.dataset, run.temperature))
                calls += items
            calls += items * followups
        else:
            calls += items * (1 + followups)
    return calls


def _icl_bias(sec: Mapping[str, Any], model: str) -> int:
    from wobble.studies.icl_bias.layout import run_pairs

    sp = sec["splits"]
    conditions = 1 + 2 * len(sec["interventions"])  # the baseline, and each intervention towards h1 and h2
    per_set = ICL_TEST_CELLS * sp["n_test_per_cell"] + ICL_CALIBRATION_PROMPTS
    return len(run_pairs(sec)) * conditions * sp["n_sets"] * per_set


def _tasks(n_tasks_per_category: int, sizes: tuple[int, ...]) -> int:
    return sum(min(n_tasks_per_category, n) for n in sizes)


def _instructions(sec: Mapping[str, Any], model: str) -> int:
    en, xl = sec["english"], sec["xlingual"]
    prompts = {"english": _tasks(en["n_tasks_per_category"], ENGLISH_CATEGORY_TASKS) * en["n_instances_per_task"],
               "xlingual": _tasks(xl["n_tasks_per_category"], XLINGUAL_CATEGORY_TASKS) * xl["n_instances_per_task"]}
    seeds, conditions = len(sec["seeds"]), len(sec["conditions"])
    if model != sec["models"][0]:  # the second model: W-EXAM only, English and non-English
        return sum(prompts.values()) * conditions * seeds
    calls = sum(prompts.values()) * conditions * len(sec["settings"]) * seeds
    para, diverse = sec.get("para") or {}, sec.get("diverse") or {}
    calls += len(para.get("tasks") or range(PARA_TASKS)) * para.get("n_instances_per_task", 1) * 4 * seeds
    cap = diverse.get("max_prompts")
    n_diverse = sum(min(cap, n) if cap else n for n in DIVERSE_PROMPTS)
    if diverse.get("tasks"):
        n_diverse = round(n_diverse * len(diverse["tasks"]) / len(DIVERSE_PROMPTS))
    return calls + n_diverse * diverse.get("n_examples_per_task", 1) * seeds


COUNTERS = {"first_token": _first_token, "followup": _followup, "icl_bias": _icl_bias,
            "instructions": _instructions}


def model_calls(config: Mapping[str, Any], study: str) -> dict[str, int]:
    """Per model of ``study``'s ``models``, the calls the study makes to it (see the module docstring)."""
    sec = config[study]
    return {model: COUNTERS[study](sec, model) for model in sec["models"]}


# ---------------------------------------------------------------------------------------------- measured

def read_benchmarks(folder: str | Path) -> dict[str, float]:
    """``{"<study>/<job>": wall seconds}`` of every Snakemake benchmark file under ``folder`` (its last row)."""
    out = {}
    for path in sorted(Path(folder).rglob("*.tsv")):
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        try:
            out[path.relative_to(folder).with_suffix("").as_posix()] = float(rows[-1]["s"])
        except (IndexError, KeyError, TypeError, ValueError):
            continue  # not a benchmark file with a row: no time to learn from
    return out


def _names(job: str, model: str) -> bool:
    return f"_{model}_" in job or job.endswith(f"_{model}")


@dataclass(frozen=True)
class Rate:
    """What the reference run measured for one study: its largest model's inference seconds per call per billion
    parameters, and the seconds of its other jobs (per studied model, and once)."""
    model: str
    params_b: float
    calls: int
    s_per_call_b: float
    other_per_model_s: float
    other_once_s: float


def measure(jobs: Mapping[str, float], study: str, calls: Mapping[str, int],
            params_b: Mapping[str, float] = REFERENCE_PARAMS_B) -> Rate:
    """The study's :class:`Rate` from benchmark ``jobs`` (:func:`read_benchmarks`) and the measured run's
    ``calls`` per model (:func:`model_calls` of its config). A finetune job is a model's preparation, not the
    study's, and is left out."""
    mine = {k.split("/", 1)[1]: s for k, s in jobs.items() if k.startswith(f"{study}/")}
    mine = {k: s for k, s in mine.items() if not k.startswith("finetune")}
    model = max(calls, key=lambda m: (params_b[m], m))
    infer = sum(s for k, s in mine.items() if k.startswith("infer_") and _names(k, model))
    other = {k: s for k, s in mine.items() if not k.startswith("infer_")}
    per_model = sum(s for k, s in other.items() if any(_names(k, m) for m in calls))
    once = sum(other.values()) - per_model
    return Rate(model, params_b[model], calls[model], infer / calls[model] / params_b[model],
                per_model / len(calls), once)


# -------------------------------------------------------------------------------------------------- estimate

@dataclass(frozen=True)
class Estimate:
    study: str
    calls: int
    job_s: float | None  # None: a model behind a server elsewhere, whose speed is not known here
    notes: tuple[str, ...] = ()

    @property
    def wall_min(self) -> float | None:
        return None if self.job_s is None else self.job_s / CPU_CORES / 60

    @property
    def gpu_h(self) -> float | None:
        return None if self.job_s is None else self.job_s / GPU_THREADS / 3600


def estimate(study: str, calls: Mapping[str, int], sizes: Mapping[str, float | None], rate: Rate) -> Estimate:
    """The study's calls and job seconds for models of ``sizes`` (billions of parameters; None: behind a server
    elsewhere, not timed) from the measured ``rate``."""
    infer, timed, ratios, scale = 0.0, True, [], []
    for model, n in calls.items():
        size = sizes.get(model)
        if size is None:
            timed = False
            continue
        infer += n * rate.s_per_call_b * size
        ratios += [size / rate.params_b] if not 0.5 <= size / rate.params_b <= 2 else []
        scale += [n / rate.calls] if n > 4 * rate.calls else []
    notes = []
    if ratios:
        low, high = f"{min(ratios):.2g}x", f"{max(ratios):.2g}x"
        span = low if low == high else f"{low}-{high}"
        notes.append(f"extrapolated: model size {span} the measured")
    if scale:
        notes.append(f"extrapolated: calls up to {max(scale):.0f}x the measured")
    if not timed:
        return Estimate(study, sum(calls.values()), None, tuple(notes))
    job_s = infer + rate.other_per_model_s * len(calls) + rate.other_once_s
    return Estimate(study, sum(calls.values()), job_s, tuple(notes))


def _minutes(minutes: float) -> str:
    if minutes < 120:
        return f"~{minutes:,.0f} min"
    return f"~{minutes / 60:.1f} h" if minutes < 6000 else f"~{minutes / 60:,.0f} h"


def line(est: Estimate, rate: Rate) -> str:
    """check-config's line for one study: calls, CPU time, GPU-hours, how they are reckoned, what is extrapolated."""
    head = f"{est.study}: {est.calls:,} model calls"
    if est.job_s is None:
        return head + ", time not estimated (a model behind a server elsewhere: its speed decides)"
    gpu = est.gpu_h
    gpu_text = f"{gpu:.2g}" if gpu < 10 else f"{gpu:,.0f}"
    tail = f"; {'; '.join(est.notes)}" if est.notes else ""
    return (f"{head}, {_minutes(est.wall_min)} on a {CPU_CORES}-core CPU, ~{gpu_text} GPU-h (CPU: the reference "
            f"run's per-call time of {rate.model} scaled by calls and size; GPU: assumes one GPU does the work of "
            f"{GPU_THREADS} CPU threads{tail})")


# ------------------------------------------------------------------------------------------------ the run

REFERENCE_CONFIG = "configs/reference.yaml"
REFERENCE_BENCHMARKS = "results/reference/benchmarks"


def model_params_b(config: Mapping[str, Any], key: str, root: Path) -> tuple[float | None, str | None]:
    """``(billions of parameters, note)`` of a studied model: its known size; a model behind a server elsewhere
    is None (not timed); an unknown size is costed as sizing's :data:`UNKNOWN_PARAMS_B`, with a note."""
    from wobble.models.sizing import UNKNOWN_PARAMS_B, model_size

    spec = config["models"][key]
    size = model_size(config, key, root)
    if size is not None:
        return size.params_b, None
    if spec.get("source") == "openai" and not spec.get("server"):
        return None, None
    if key in REFERENCE_PARAMS_B:
        return REFERENCE_PARAMS_B[key], None
    return UNKNOWN_PARAMS_B, f"{key}'s size unknown: costed as {UNKNOWN_PARAMS_B:g}B (params_b sizes it)"


def study_lines(config: Mapping[str, Any], studies: list[str], root: Path, schema: Path) -> list[str]:
    """check-config's cost line per study in ``studies`` (those that run), measured against the reference run."""
    from wobble.config import validate_config
    from wobble.resolve import resolve_file

    jobs = read_benchmarks(root / REFERENCE_BENCHMARKS)
    if not jobs or not (root / REFERENCE_CONFIG).is_file():
        return [f"cost: not estimated (no {REFERENCE_CONFIG} with benchmark files under {REFERENCE_BENCHMARKS}/)"]
    reference = validate_config(resolve_file(root / REFERENCE_CONFIG), schema, source=REFERENCE_CONFIG)
    out = []
    for study in studies:
        rate = measure(jobs, study, model_calls(reference, study))
        calls = model_calls(config, study)
        sized = {key: model_params_b(config, key, root) for key in calls}
        est = estimate(study, calls, {k: v[0] for k, v in sized.items()}, rate)
        notes = tuple(note for _, note in sized.values() if note)
        out.append(line(Estimate(est.study, est.calls, est.job_s, notes + est.notes), rate))
    return out
