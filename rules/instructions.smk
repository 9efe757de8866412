# Study `instructions` (Gu et al. 2023): finetune on SuperNI train (Tk-Instruct recipe), build
# perturbed / paraphrased / DiversePrompt splits, infer, score with the official SuperNI metrics,
# render Tables 1-11 and the drop figure under results/instructions/.

INS = "results/instructions"


rule instructions_selection:
    input:
        tasks=prepared("superni_tasks"),
        para=prepared("para_instructions"),
        diverse=prepared("diverse_prompt"),
    output:
        f"{INS}/splits/selection.json",
    params:
        cfg=lambda wildcards: instructions_cfg(),
    log:
        "logs/instructions/selection.log",
    benchmark:
        "benchmarks/instructions/selection.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_selection.py"


rule instructions_train_pairs:
    input:
        prepared("superni_train"),
    output:
        f"{INS}/splits/train_pairs.jsonl",
    params:
        cfg=lambda wildcards: instructions_cfg()["train"],
    log:
        "logs/instructions/train_pairs.log",
    benchmark:
        "benchmarks/instructions/train_pairs.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_train_pairs.py"


rule finetune:
    input:
        model=lambda wildcards: model_dir(config["models"][wildcards.model]["finetune"]["base"]),
        data=f"{INS}/splits/train_pairs.jsonl",
    output:
        directory("resources/models/finetuned/{model}"),
    params:
        cfg=lambda wildcards: finetune_cfg(wildcards.model),
        key=lambda wildcards: wildcards.model,
        spec=lambda wildcards: model_spec(wildcards.model),
    log:
        "logs/instructions/finetune_{model}.log",
    benchmark:
        "benchmarks/instructions/finetune_{model}.tsv"
    resources:
        mem_mb=16000,
        gpu=1,
        runtime=720,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/finetune.py"


rule instructions_split:
    input:
        unpack(instructions_split_inputs),
    output:
        f"{INS}/splits/{{taskset}}/{{condition}}/{{setting}}/seed{{seed}}.jsonl",
    params:
        cfg=lambda wildcards: instructions_cfg(),
        proposer_key=lambda wildcards: instructions_cfg().get("proposer_model"),
    log:
        "logs/instructions/split_{taskset}_{condition}_{setting}_{seed}.log",
    benchmark:
        "benchmarks/instructions/split_{taskset}_{condition}_{setting}_{seed}.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_split.py"


rule instructions_infer:
    input:
        model=lambda wildcards: model_dir(wildcards.model),
        split=f"{INS}/splits/{{taskset}}/{{condition}}/{{setting}}/seed{{seed}}.jsonl",
    output:
        f"{INS}/predictions/{{model}}/{{taskset}}/{{condition}}/{{setting}}/seed{{seed}}.jsonl",
    params:
        generation=lambda wildcards: instructions_cfg()["generation"],
        spec=lambda wildcards: model_spec(wildcards.model),
    log:
        "logs/instructions/infer_{model}_{taskset}_{condition}_{setting}_{seed}.log",
    benchmark:
        "benchmarks/instructions/infer_{model}_{taskset}_{condition}_{setting}_{seed}.tsv"
    resources:
        mem_mb=8000,
        gpu=1,
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_infer.py"


rule instructions_score:
    input:
        f"{INS}/predictions/{{model}}/{{taskset}}/{{condition}}/{{setting}}/seed{{seed}}.jsonl",
    output:
        f"{INS}/scores/{{model}}/{{taskset}}/{{condition}}/{{setting}}/seed{{seed}}.json",
    params:
        meta=lambda wildcards: {
            "model": wildcards.model,
            "model_label": model_label(wildcards.model),
            "taskset": wildcards.taskset,
            "condition": wildcards.condition,
            "setting": wildcards.setting,
            "seed": int(wildcards.seed),
            "scale": config["scale"],
        },
    log:
        "logs/instructions/score_{model}_{taskset}_{condition}_{setting}_{seed}.log",
    benchmark:
        "benchmarks/instructions/score_{model}_{taskset}_{condition}_{setting}_{seed}.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_score.py"


rule instructions_perturbation_examples:
    input:
        unpack(instructions_table3_inputs),
    output:
        f"{INS}/splits/table3_perturbations.json",
    params:
        proposer_key=lambda wildcards: instructions_cfg().get("proposer_model"),
        masked_lm=lambda wildcards: instructions_cfg().get("masked_lm"),
        seed=lambda wildcards: instructions_cfg()["seeds"][0],
    log:
        "logs/instructions/table3_perturbations.log",
    benchmark:
        "benchmarks/instructions/table3_perturbations.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_perturbations.py"


rule instructions_table:
    input:
        unpack(instructions_table_inputs),
    output:
        md=report(f"{INS}/tables/{{table}}.md", category="instructions", caption="../report/table.rst"),
        csv=f"{INS}/tables/{{table}}.csv",
        tex=f"{INS}/tables/{{table}}.tex",
    params:
        context=lambda wildcards: instructions_context(),
    log:
        "logs/instructions/{table}.log",
    benchmark:
        "benchmarks/instructions/{table}.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_table.py"


rule instructions_figure:
    input:
        unpack(instructions_table_inputs),
    output:
        png=report(f"{INS}/figures/{{figure}}.png", category="instructions", caption="../report/figure.rst"),
        pdf=f"{INS}/figures/{{figure}}.pdf",
        csv=f"{INS}/figures/{{figure}}.csv",
    params:
        context=lambda wildcards: instructions_context(),
    log:
        "logs/instructions/{figure}.log",
    benchmark:
        "benchmarks/instructions/{figure}.tsv"
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/instructions_figure.py"
