# Study `followup` ("Ask Again, Then Fail: Large Language Models' Vacillations in Judgement"): per dataset the
# evaluated and held-out items; per model x temperature x dataset x run label the dialogues (initial question,
# then closed-ended / open-ended / leading follow-ups, Direct or Progressive Form, annotator A/B/C, mitigation)
# asked through the shared dialogue runner; per model x dataset the Max / Min Progressive prompt sets; per model
# the summary. Tables and figures are made by the generic render rules (rules/report.smk) from
# src/wobble/studies/followup/spec.py. Logic: wobble.studies.followup.{layout,pipeline}.
from wobble.models.sizing import dialogue_units
from wobble.studies.followup import layout as FU
from wobble.studies.followup.prompts import BENCHMARKS as FU_BENCHMARKS

FU_CFG = config.get("followup", {})
FU_ROOT = study_dir("followup")


wildcard_constraints:
    fu_dataset=names_pattern(FU_BENCHMARKS),
    fu_run=r"(direct|progressive)_[A-Za-z.]+_[a-z_]+",
    fu_temp=r"[0-9][0-9.e-]*",


rule followup_items:
    input:
        prepared("{fu_dataset}"),
    output:
        FU.items_path(FU_ROOT, "{fu_dataset}"),
    params:
        n_items=lambda wildcards: FU_CFG["n_items"],
        n_heldout=lambda wildcards: FU_CFG["n_heldout"],
        seed=lambda wildcards: FU_CFG["seed"],
    log:
        log_file("followup/items_{fu_dataset}.log"),
    benchmark:
        benchmark_file("followup/items_{fu_dataset}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/followup_items.py"


# The Max / Min Progressive sets, one job per run: their prompts are chosen by followup_extremes from the
# Direct-Form runs of the model's run group, so they cannot be asked with them. No other rule makes these files.
rule followup_infer:
    input:
        unpack(lambda wildcards: FU.infer_inputs(config, wildcards.model, wildcards.fu_dataset, wildcards.fu_run)),
    output:
        FU.predictions_path(FU_ROOT, "{model}", "{fu_temp}", "{fu_dataset}", "{fu_run}"),
    wildcard_constraints:
        fu_run=FU.EXTREMES_RUN,
    params:
        job=lambda wildcards: FU.infer_params(config, wildcards.model, wildcards.fu_dataset,
                                              [FU.Run(wildcards.fu_dataset, wildcards.fu_run, wildcards.fu_temp)]),
    log:
        log_file("followup/infer_{model}_T{fu_temp}_{fu_dataset}_{fu_run}.log"),
    benchmark:
        benchmark_file("followup/infer_{model}_T{fu_temp}_{fu_dataset}_{fu_run}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "followup_dialogues"),
        runtime=sized(
            "runtime",
            "followup_dialogues",
            units=lambda input: dialogue_units(1, input.selection),
            models=lambda wildcards: [wildcards.model],
        ),
        gpu_mem_gib=sized("gpu_mem_gib", "followup_dialogues", models=lambda wildcards: [wildcards.model]),
        constraint=sized("constraint", "followup_dialogues", models=lambda wildcards: [wildcards.model]),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/followup_infer.py"


# Every other run, one job per model, dataset and temperature (FU.infer_groups): at the model's own temperature
# the run group (every run but Max / Min, the model loaded once: a job per run would spend ~7 of its 12-85 s
# importing and loading), at each other temperature of Table 3's sweep its run(s) there. Each file has this one
# maker: the groups never hold a Max / Min run.
for _name, _model, _dataset, _runs in FU.infer_groups(FU_CFG) if FU_CFG.get("models") else []:

    rule:
        name:
            _name
        input:
            **FU.infer_inputs(config, _model, _dataset, _runs[0].label),
        output:
            [FU.run_path(FU_ROOT, _model, r) for r in _runs],
        params:
            job=FU.infer_params(config, _model, _dataset, _runs),
        log:
            log_file(f"followup/infer_{_model}_T{_runs[0].temperature}_{_dataset}.log"),
        benchmark:
            benchmark_file(f"followup/infer_{_model}_T{_runs[0].temperature}_{_dataset}.tsv")
        threads: MODEL_THREADS
        resources:
            mem_mb=sized("mem_mb", "followup_dialogues"),
            runtime=sized(
                "runtime",
                "followup_dialogues",
                units=lambda input, n=len(_runs): dialogue_units(n, input.selection),
                models=lambda wildcards, m=_model: [m],
            ),
            gpu_mem_gib=sized("gpu_mem_gib", "followup_dialogues", models=lambda wildcards, m=_model: [m]),
            constraint=sized("constraint", "followup_dialogues", models=lambda wildcards, m=_model: [m]),
            gpu=gpus,
        conda:
            "../envs/wobble.yaml"
        script:
            "../scripts/followup_infer.py"


rule followup_extremes:
    input:
        lambda wildcards: [
            FU.run_path(FU_ROOT, wildcards.model, r)
            for r in FU.direct_runs_for_extremes(FU_CFG, wildcards.model, wildcards.fu_dataset)
        ],
    output:
        FU.extremes_path(FU_ROOT, "{model}", "{fu_dataset}"),
    log:
        log_file("followup/extremes_{model}_{fu_dataset}.log"),
    benchmark:
        benchmark_file("followup/extremes_{model}_{fu_dataset}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/followup_extremes.py"


rule followup_summary:
    input:
        lambda wildcards: [FU.run_path(FU_ROOT, wildcards.model, r) for r in FU.runs(FU_CFG, wildcards.model)],
    output:
        FU.summary_path(FU_ROOT, "{model}"),
    params:
        bootstrap=lambda wildcards: FU_CFG["bootstrap"],
    log:
        log_file("followup/summary_{model}.log"),
    benchmark:
        benchmark_file("followup/summary_{model}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/followup_summary.py"


rule followup_judge:
    input:
        unpack(lambda wildcards: FU.judge_inputs(config, wildcards.model)),
    output:
        FU.judge_path(FU_ROOT, "{model}"),
    params:
        judge=lambda wildcards: FU_CFG["judge_model"],
        spec=lambda wildcards: model_spec(FU_CFG["judge_model"]),
        n=lambda wildcards: FU_CFG["n_judge_examples"],
        seed=lambda wildcards: FU_CFG["seed"],
        max_new_tokens=lambda wildcards: FU_CFG["judge_max_new_tokens"],
        chunk_size=lambda wildcards: FU_CFG["chunk_size"],
    log:
        log_file("followup/judge_{model}.log"),
    benchmark:
        benchmark_file("followup/judge_{model}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "followup_judge"),
        runtime=sized("runtime", "followup_judge", models=lambda wildcards: [FU_CFG["judge_model"]]),
        gpu_mem_gib=sized("gpu_mem_gib", "followup_judge", models=lambda wildcards: [FU_CFG["judge_model"]]),
        constraint=sized("constraint", "followup_judge", models=lambda wildcards: [FU_CFG["judge_model"]]),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/followup_judge.py"
