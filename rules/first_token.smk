# Study `first_token` (Wang et al. 2024, "My Answer is C"): OpinionQA questions under four instruction
# constraint levels (+ the Example "A/B/C" control) x 10 option shuffles; per prompt the first-token
# answer and the text answer of each model; text -> option classifiers compared on the paper's
# annotated responses (string matching, LLM judge 0/k-shot, PEFT/LoRA classifier); mismatch,
# refusal, choice distribution and answer-consistency entropy with bootstrap intervals; Tables 1-5,
# Figures 2, 3, 4, 7 under <results_root>/first_token/ (declared in wobble.studies.first_token.spec and rendered by
# the generic rules of rules/report.smk). Logic: wobble.studies.first_token.
from wobble.studies.first_token import layout as FTL

# The validated section (defaults filled by wobble.config); read only inside input functions and params.
FT_CFG = config.get("first_token", {})

FT = study_dir("first_token")


rule first_token_prompts:
    input:
        prepared("opinionqa_414"),
    output:
        f"{FT}/splits/prompts.jsonl",
    params:
        n_questions=lambda wildcards: FT_CFG["n_questions"],
        n_shuffles=lambda wildcards: FT_CFG["n_shuffles"],
        constraints=lambda wildcards: FT_CFG["constraints"],
        seed=lambda wildcards: FT_CFG["seed"],
    log:
        log_file("first_token/prompts.log"),
    benchmark:
        benchmark_file("first_token/prompts.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_prompts.py"


rule first_token_infer:
    priority: 20  # long jobs first (see instructions_infer_*)
    input:
        unpack(lambda wildcards: FTL.infer_inputs(FT_CFG, FT, wildcards.model, wildcards.ft_temp, model_dir)),
    output:
        f"{FT}/predictions/{{model}}/t{{ft_temp}}.jsonl",
    wildcard_constraints:
        ft_temp=r"[0-9]+\.[0-9]{2}",
    params:
        constraints=lambda wildcards: FTL.run_constraints(FT_CFG, wildcards.ft_temp),
        max_new_tokens=lambda wildcards: FT_CFG["max_new_tokens"],
        seed=lambda wildcards: FT_CFG["seed"],
        spec=lambda wildcards: model_spec(wildcards.model),
    log:
        log_file("first_token/infer_{model}_t{ft_temp}.log"),
    benchmark:
        benchmark_file("first_token/infer_{model}_t{ft_temp}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "first_token_infer"),
        runtime=sized("runtime", "first_token_infer"),
        gpu_mem_gib=sized("gpu_mem_gib", "first_token_infer"),
        constraint=sized("constraint", "first_token_infer"),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_infer.py"


rule first_token_classifier_data:
    input:
        prepared("opinionqa_annotated"),
    output:
        test=f"{FT}/splits/classifier_test.jsonl",
        test_all=f"{FT}/splits/classifier_test_all.jsonl",
        train=f"{FT}/splits/classifier_train.jsonl",
        shots=f"{FT}/splits/judge_shots.jsonl",
        select=f"{FT}/splits/classifier_select.jsonl",
    params:
        seed=lambda wildcards: FT_CFG["seed"],
        n_eval_per_model=lambda wildcards: FT_CFG["n_eval_per_model"],
        n_shots=lambda wildcards: max([0, *FT_CFG["judge_shots"]]),
        n_reserved=lambda wildcards: max([0, *FT_CFG["peft_train_sizes"]]) if FT_CFG.get("classifier_base") else 0,
    log:
        log_file("first_token/classifier_data.log"),
    benchmark:
        benchmark_file("first_token/classifier_data.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_classifier_data.py"


rule first_token_peft_train:
    input:
        model=lambda wildcards: model_dir(FT_CFG["classifier_base"]),
        train=f"{FT}/splits/classifier_train.jsonl",
    output:
        directory(f"{FT}/finetune/classifier_peft_{{n_train}}"),
    wildcard_constraints:
        n_train="[0-9]+",
    params:
        cfg=lambda wildcards: FT_CFG["finetune"],
        base_key=lambda wildcards: FT_CFG["classifier_base"],
        max_chars=lambda wildcards: FT_CFG["max_response_chars"],
    log:
        log_file("first_token/peft_train_{n_train}.log"),
    benchmark:
        benchmark_file("first_token/peft_train_{n_train}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "first_token_peft_train"),
        runtime=sized("runtime", "first_token_peft_train"),
        gpu_mem_gib=sized("gpu_mem_gib", "first_token_peft_train"),
        constraint=sized("constraint", "first_token_peft_train"),
        disk_mb=sized("disk_mb", "first_token_peft_train"),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_peft_train.py"


rule first_token_classifier_eval:
    input:
        unpack(lambda wildcards: {"test": FTL.evaluator_data(FT, wildcards.evaluator, wildcards.cpart),
                                  "shots": f"{FT}/splits/judge_shots.jsonl",
                                  **FTL.evaluator_models(wildcards.evaluator, FT_CFG, FT, model_dir)}),
    output:
        f"{FT}/predictions/classifiers/{{cpart}}/{{evaluator}}.jsonl",
    wildcard_constraints:
        evaluator="paper_regex|string_match|judge_[0-9]+shot|peft_[0-9]+",
        cpart="test|select",
    params:
        judge_max_new_tokens=lambda wildcards: FT_CFG["judge_max_new_tokens"],
        classifier_max_new_tokens=lambda wildcards: FT_CFG["classifier_max_new_tokens"],
        max_chars=lambda wildcards: FT_CFG["max_response_chars"],
    log:
        log_file("first_token/classifier_eval_{cpart}_{evaluator}.log"),
    benchmark:
        benchmark_file("first_token/classifier_eval_{cpart}_{evaluator}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "first_token_classifier_eval"),
        runtime=sized("runtime", "first_token_classifier_eval"),
        gpu_mem_gib=sized("gpu_mem_gib", "first_token_classifier_eval"),
        constraint=sized("constraint", "first_token_classifier_eval"),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_classifier_eval.py"


rule first_token_classifier_scores:
    input:
        preds=lambda wildcards: [FTL.evaluator_path(FT, name) for name in FTL.evaluator_names(FT_CFG)],
        select=lambda wildcards: ([FTL.evaluator_path(FT, name, "select") for name in FTL.evaluator_names(FT_CFG)]
                                  if FT_CFG["classifier"] == "auto" else []),
    output:
        scores=f"{FT}/scores/classifiers.jsonl",
        selection=f"{FT}/scores/classifier_selection.jsonl",
    params:
        classifier=lambda wildcards: FT_CFG["classifier"],
    log:
        log_file("first_token/classifier_scores.log"),
    benchmark:
        benchmark_file("first_token/classifier_scores.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_classifier_scores.py"


rule first_token_label:
    input:
        unpack(lambda wildcards: {**FTL.label_inputs(FT_CFG, FT, wildcards.model, wildcards.ft_temp, model_dir),
                                  "shots": f"{FT}/splits/judge_shots.jsonl"}),
    output:
        f"{FT}/scores/labeled/{{model}}/t{{ft_temp}}.jsonl",
    wildcard_constraints:
        ft_temp=r"[0-9]+\.[0-9]{2}",
    params:
        classifier=lambda wildcards: FT_CFG["classifier"],
        judge_max_new_tokens=lambda wildcards: FT_CFG["judge_max_new_tokens"],
        classifier_max_new_tokens=lambda wildcards: FT_CFG["classifier_max_new_tokens"],
        max_chars=lambda wildcards: FT_CFG["max_response_chars"],
    log:
        log_file("first_token/label_{model}_t{ft_temp}.log"),
    benchmark:
        benchmark_file("first_token/label_{model}_t{ft_temp}.tsv")
    threads: MODEL_THREADS
    resources:
        mem_mb=sized("mem_mb", "first_token_label"),
        runtime=sized("runtime", "first_token_label"),
        gpu_mem_gib=sized("gpu_mem_gib", "first_token_label"),
        constraint=sized("constraint", "first_token_label"),
        gpu=gpus,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_label.py"


rule first_token_metrics:
    input:
        labeled=lambda wildcards: [FTL.labeled_path(FT, m, t) for m, t in FTL.runs(FT_CFG)],
    output:
        metrics=f"{FT}/scores/metrics.jsonl",
        choices=f"{FT}/scores/choices.jsonl",
        mapping=f"{FT}/scores/mapping_summary.jsonl",
    params:
        bootstrap=lambda wildcards: FT_CFG["bootstrap"],
    log:
        log_file("first_token/metrics.log"),
    benchmark:
        benchmark_file("first_token/metrics.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/first_token_metrics.py"
