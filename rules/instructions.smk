# Study `instructions` (Gu et al. 2023): finetune on SuperNI train (Tk-Instruct recipe), build perturbed /
# paraphrased / DiversePrompt splits, infer, score with the official SuperNI metrics. Tables 1-11 and the drop
# figure are declared in src/wobble/studies/instructions/spec.py and rendered by the generic rules of
# rules/report.smk. Paths, runs and each rule's params come from wobble.studies.instructions.layout: every rule
# gets only the config keys it reads (changing instructions.max_new_tokens re-runs inference, not the splits).
from wobble.paths import model_dir as ins_model_dir
from wobble.studies.instructions import layout as INS


rule instructions_selection:
    priority: 30  # upstream of the long inference jobs (see materialize_model)
    input:
        unpack(lambda wildcards: INS.selection_inputs(config)),
    output:
        INS.study_file(config, INS.SELECTION),
    params:
        cfg=lambda wildcards: INS.selection_params(config),
    log:
        log_file("instructions/selection.log"),
    benchmark:
        benchmark_file("instructions/selection.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_selection.py"


rule instructions_train_pairs:
    input:
        prepared("superni_train"),
    output:
        INS.study_file(config, INS.TRAIN_PAIRS),
    priority: 50
    params:
        cfg=lambda wildcards: INS.train_params(config),
    log:
        log_file("instructions/train_pairs.log"),
    benchmark:
        benchmark_file("instructions/train_pairs.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_train_pairs.py"


rule finetune:
    input:
        model=lambda wildcards: ins_model_dir(config, config["models"][wildcards.model]["finetune"]["base"]),
        data=INS.study_file(config, INS.TRAIN_PAIRS),
    output:
        directory("resources/models/finetuned/{model}"),
    # the longest job, and every gemma-270m-ni job (instructions, icl_bias) waits for it: Snakemake's scheduler
    # knows no critical path, so without a priority it starts after the second model's inference jobs
    priority: 50
    params:
        cfg=lambda wildcards: INS.finetune_params(config, wildcards.model),
        key=lambda wildcards: wildcards.model,
        spec=lambda wildcards: model_spec(wildcards.model),
    threads: MODEL_THREADS
    log:
        log_file("instructions/finetune_{model}.log"),
    benchmark:
        benchmark_file("instructions/finetune_{model}.tsv")
    # one process; N torchrun ranks when the job asks for N GPUs (--set-resources finetune:gpu=N) or N ranks
    # (finetune:ranks=N, e.g. on CPU), sharing its threads (wobble.training.launch)
    resources:
        mem_mb=sized("mem_mb", "finetune"),
        runtime=sized("runtime", "finetune"),
        gpu_mem_gib=sized("gpu_mem_gib", "finetune"),
        constraint=sized("constraint", "finetune"),
        disk_mb=sized("disk_mb", "finetune"),
        gpu=finetune_gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/finetune.py"


rule instructions_split:
    priority: 30  # upstream of the long inference jobs (see materialize_model)
    input:
        unpack(lambda wildcards: {**INS.split_inputs(config, wildcards.taskset, wildcards.condition),
                                  **({} if wildcards.taskset == "diverse" else masked_lm_input(wildcards.condition))}),
    output:
        INS.study_file(config, INS.SPLIT),
    params:
        cfg=lambda wildcards: INS.split_params(config, wildcards.taskset, wildcards.condition),
    log:
        log_file("instructions/split_{taskset}_{condition}_{setting}_{seed}.log"),
    benchmark:
        benchmark_file("instructions/split_{taskset}_{condition}_{setting}_{seed}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_split.py"


# One inference job per (model, task set, setting, seed), with the predictions of all the task set's conditions:
# the model is loaded once for them (per-condition jobs would spend 9-17 s of 20-70 s starting up and loading).
# One rule per task set, because their condition lists differ; none without an instructions section (a run whose
# studies leave it out).
for _taskset in INS.TASKSETS if "instructions" in config else ():

    rule:
        name:
            f"instructions_infer_{_taskset}"
        # the longest jobs of the run (Qwen on the 9 English W-EXAM conditions: ~15 CPU-min): started as soon as
        # their inputs exist, so that no long job is left running alone on one core at the end
        priority: 20
        input:
            model=lambda wildcards: ins_model_dir(config, wildcards.model),
            splits=INS.infer_splits(config, _taskset),
        output:
            INS.infer_outputs(config, _taskset),
        params:
            generation=lambda wildcards: INS.infer_params(config),
            spec=lambda wildcards: model_spec(wildcards.model),
            chat=lambda wildcards: wildcards.model in config["instructions"]["chat_models"],
            conditions=INS.taskset_conditions(config, _taskset),
        threads: MODEL_THREADS
        log:
            log_file(f"instructions/infer_{{model}}_{_taskset}_{{setting}}_{{seed}}.log"),
        benchmark:
            benchmark_file(f"instructions/infer_{{model}}_{_taskset}_{{setting}}_{{seed}}.tsv")
        resources:
            mem_mb=sized("mem_mb", "instructions_infer"),
            runtime=sized("runtime", "instructions_infer"),
            gpu_mem_gib=sized("gpu_mem_gib", "instructions_infer"),
            constraint=sized("constraint", "instructions_infer"),
            gpu=gpus,
        conda:
            "../envs/wobble.yaml"
        script:
            "../scripts/instructions_infer.py"


rule instructions_score:
    input:
        INS.study_file(config, INS.PREDICTIONS),
    output:
        INS.study_file(config, INS.SCORES),
    params:
        meta=lambda wildcards: INS.score_meta(config, wildcards.model, wildcards.taskset, wildcards.condition,
                                                   wildcards.setting, wildcards.seed),
    log:
        log_file("instructions/score_{model}_{taskset}_{condition}_{setting}_{seed}.log"),
    benchmark:
        benchmark_file("instructions/score_{model}_{taskset}_{condition}_{setting}_{seed}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_score.py"


rule instructions_perturbation_examples:
    input:
        unpack(lambda wildcards: {**INS.table3_inputs(config), **masked_lm_input()}),
    output:
        INS.study_file(config, INS.PERTURBATIONS),
    params:
        cfg=lambda wildcards: INS.table3_params(config),
    log:
        log_file("instructions/table3_perturbations.log"),
    benchmark:
        benchmark_file("instructions/table3_perturbations.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_perturbations.py"
