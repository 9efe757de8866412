# Study `icl_bias` (Si et al. 2023, "Measuring Inductive Biases of In-Context Learning with Underspecified
# Demonstrations"): per dataset/feature pair a split (16 demonstrations where h1 = h2, a disambiguating test set
# where they disagree), every condition's prompts (baseline; verbalizer, instruction, explanation, disambiguation
# towards h1 and towards h2), each model's label-word scores / generated explanations, calibrated answers and the
# per-model summary. Tables and figures are made by the generic render rules (rules/report.smk) from
# src/wobble/studies/icl_bias/spec.py. Logic: wobble.studies.icl_bias.{layout,pipeline}.
from wobble.studies.icl_bias import layout as ICL
from wobble.studies.icl_bias.pairs import PAIRS as ICL_PAIRS

ICL_CFG = config.get("icl_bias", {})
ICL_ROOT = study_dir("icl_bias")


wildcard_constraints:
    icl_pair=names_pattern(ICL_PAIRS),


rule icl_bias_split:
    input:
        unpack(lambda wildcards: {d: prepared(d) for d in ICL.split_datasets(wildcards.icl_pair, ICL_CFG["splits"]["prefer"])}),
    output:
        ICL.split_path(ICL_ROOT, "{icl_pair}"),
    params:
        prefer=lambda wildcards: ICL_CFG["splits"]["prefer"],
        splits=lambda wildcards: ICL.split_config(ICL_CFG),
    log:
        log_file("icl_bias/split_{icl_pair}.log"),
    benchmark:
        benchmark_file("icl_bias/split_{icl_pair}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/icl_bias_split.py"


rule icl_bias_requests:
    input:
        split=ICL.split_path(ICL_ROOT, "{icl_pair}"),
        paper=expand(f"{PAPER_DIR}/icl_bias/table{{n}}.csv", n=range(6, 11)),
    output:
        ICL.requests_path(ICL_ROOT, "{icl_pair}"),
    params:
        interventions=lambda wildcards: ICL_CFG["interventions"],
        targets=lambda wildcards: ICL_CFG["targets"],
    log:
        log_file("icl_bias/requests_{icl_pair}.log"),
    benchmark:
        benchmark_file("icl_bias/requests_{icl_pair}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/icl_bias_requests.py"


rule icl_bias_infer:
    input:
        requests=ICL.requests_path(ICL_ROOT, "{icl_pair}"),
        model=lambda wildcards: model_dir(wildcards.model),
    output:
        ICL.predictions_path(ICL_ROOT, "{model}", "{icl_pair}"),
    params:
        spec=lambda wildcards: model_spec(wildcards.model),
        max_new_tokens=lambda wildcards: ICL_CFG["max_new_tokens"],
        seed=lambda wildcards: ICL_CFG["splits"]["seed"],
    log:
        log_file("icl_bias/infer_{model}_{icl_pair}.log"),
    benchmark:
        benchmark_file("icl_bias/infer_{model}_{icl_pair}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "icl_bias_infer"),
        runtime=sized("runtime", "icl_bias_infer"),
        gpu_mem_gib=sized("gpu_mem_gib", "icl_bias_infer"),
        constraint=sized("constraint", "icl_bias_infer"),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/icl_bias_infer.py"


rule icl_bias_score:
    input:
        split=ICL.split_path(ICL_ROOT, "{icl_pair}"),
        requests=ICL.requests_path(ICL_ROOT, "{icl_pair}"),
        predictions=ICL.predictions_path(ICL_ROOT, "{model}", "{icl_pair}"),
    output:
        ICL.scores_path(ICL_ROOT, "{model}", "{icl_pair}"),
    params:
        calibrate=lambda wildcards: ICL_CFG["calibrate"],
    log:
        log_file("icl_bias/score_{model}_{icl_pair}.log"),
    benchmark:
        benchmark_file("icl_bias/score_{model}_{icl_pair}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/icl_bias_score.py"


rule icl_bias_summary:
    input:
        lambda wildcards: [ICL.scores_path(ICL_ROOT, wildcards.model, p) for p in ICL.run_pairs(ICL_CFG)],
    output:
        ICL.summary_path(ICL_ROOT, "{model}"),
    params:
        bootstrap=lambda wildcards: ICL_CFG["bootstrap"],
    log:
        log_file("icl_bias/summary_{model}.log"),
    benchmark:
        benchmark_file("icl_bias/summary_{model}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/icl_bias_summary.py"
