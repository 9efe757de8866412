# Probe: a real inference rule that calls every backend method (generate, next_token_logprobs,
# continuation_logprobs) on prepared records and writes predictions with provenance.


rule probe:
    input:
        model=lambda wildcards: model_dir(wildcards.model),
        data=prepared(config.get("probe", {}).get("dataset", "mmlu")),
    output:
        result_file("probe/predictions/{model}.jsonl"),
    params:
        probe=config.get("probe", {}),
        spec=lambda wildcards: model_spec(wildcards.model),
    log:
        log_file("probe/{model}.log"),
    benchmark:
        benchmark_file("probe/{model}.tsv")
    resources:
        mem_mb=sized("mem_mb", "probe"),
        runtime=sized("runtime", "probe"),
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/probe.py"
