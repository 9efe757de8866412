# Data: acquire each pinned source (mirror or download, sha256-checked), then prepare one
# normalized JSONL per dataset (schemas in the docstrings of src/wobble/data/*.py).


# `snakemake data` (make data, wobble fetch-data): acquire every source the config names and nothing else, e.g. once
# on a login node with internet before the compute jobs run.
rule data:
    input:
        expand("resources/data/{source}", source=config["data"]["sources"]),


rule acquire:
    # upstream of every study's long jobs; Snakemake's priorities do not reach a job's inputs, so the data chain
    # gets its own (without it, instructions' splits wait behind other studies' inference for most of the run)
    priority: 30
    output:
        directory("resources/data/{source}"),
    params:
        mirror=lambda wildcards: mirror_dir(),
        timeout=config["data"]["download_timeout_s"],
        url_prefixes=config["data"]["url_prefixes"],
        cache="resources/upstream",
    log:
        log_file("acquire/{source}.log"),
    benchmark:
        benchmark_file("acquire/{source}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/acquire_source.py"


rule prepare:
    priority: 30
    input:
        dataset_inputs,
    output:
        "resources/prepared/{dataset}.jsonl",
    params:
        sources=lambda wildcards: DATASET_SOURCES[wildcards.dataset],
    log:
        log_file("prepare/{dataset}.log"),
    benchmark:
        benchmark_file("prepare/{dataset}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/prepare_dataset.py"
