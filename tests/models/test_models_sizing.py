"""What a model job asks a cluster for (wobble.models.sizing): memory, disk and runtime from the model's size, each
value computed here by hand from the formulas of the module docstring."""

from __future__ import annotations

import json

import pytest

from wobble.models import sizing
from wobble.models.materialize import materialize

MIB = 1 << 20
SHA = "0123456789abcdef0123456789abcdef01234567"
HUB = {"source": "hub", "id": "org/big", "revision": SHA, "kind": "causal", "dtype": "bfloat16"}
CONFIG = {"models": {
    "llama70": {**HUB, "params_b": 69.0, "device_map": "auto", "max_memory": {0: "70GiB", 1: "70GiB"}},
    "llama7": {**HUB, "params_b": 6.7},
    "t5-11b": {**HUB, "kind": "seq2seq", "params_b": 11.3},
    "tk-11b": {"finetune": {"base": "t5-11b", "data": "superni_train", "method": "full"}},
    "lora7": {"finetune": {"base": "llama7", "data": "superni_train", "method": "lora"}},
    "fp32": {**HUB, "dtype": "float32", "params_b": 1.0},
    "unsized": dict(HUB),
    "api": {"source": "openai", "base_url": "http://x/v1", "model": "m", "kind": "causal"},
}}


def resources(work, *keys, **kw):
    return sizing.job_resources(CONFIG, work, keys, **kw)


def test_inference_memory_is_the_weights_plus_4_gib_and_runtime_grows_with_the_parameters():
    # 69 B x 2 bytes = 138e9 bytes = 131,607.1 MiB; + 4,096 MiB = 135,703.1 -> 136,000. Runtime 30 + 5 x 69 = 375
    assert resources("first_token_infer", "llama70") == {"mem_mb": 136000, "runtime": 380}
    # 6.7 B x 2 = 13.4e9 bytes = 12,779.2 MiB; + 4,096 = 16,875.2 -> 17,000. Runtime 30 + 5 x 6.7 = 63.5
    assert resources("first_token_infer", "llama7") == {"mem_mb": 17000, "runtime": 70}
    # icl_bias: 30 + 50 x 6.7 = 365; instructions: 30 + 56 x 11.3 = 662.8
    assert resources("icl_bias_infer", "llama7")["runtime"] == 210  # 30 + 26 x 6.7
    assert resources("instructions_infer", "t5-11b") == {"mem_mb": 26000, "runtime": 350}  # 21,553 + 4,096 MiB
    # float32 counts 4 bytes a parameter: 4e9 bytes = 3,814.7 MiB + 4,096 = 7,910.7
    assert resources("probe", "fp32") == {"mem_mb": 8000, "runtime": 40}  # 30 + 1 x 1.0


def test_a_dialogue_job_takes_its_rate_per_run_and_a_label_job_its_largest_model(tmp_path):
    # 30 + 6 x 6.7 x 3 runs = 150.6
    assert resources("followup_dialogues", "llama7", units=3)["runtime"] == 160
    selection = tmp_path / "strategyqa.json"
    assert sizing.dialogue_units(3, selection) == 3  # no selection yet: 2,270 items a run
    selection.write_text(json.dumps({"dataset": "strategyqa", "seed": 0, "eval": list(range(454)), "heldout": [1]}))
    assert sizing.dialogue_units(3, selection) == pytest.approx(0.6)  # 3 x 454 / 2,270
    assert resources("first_token_label", "llama7", "llama70") == resources("first_token_label", "llama70")
    assert resources("first_token_label", "llama70")["runtime"] == 520  # 30 + 7 x 69 = 513


def test_materializing_holds_a_float32_copy_and_writes_it():
    # mem 2.4 x 138e9 bytes = 315,856.9 MiB + 4,096 = 319,952.9; disk 3 x 138e9 = 394,821.2 MiB + 1,024;
    # runtime 30 + 1.5 x 128.52 GiB = 222.8
    assert resources("materialize_model", "llama70") == {"mem_mb": 320000, "runtime": 230, "disk_mb": 396000}


def test_a_full_finetune_holds_fp32_master_weights_per_rank_and_writes_checkpoints():
    # the finetuned key weighs its base: 11.3 B x 2 = 22.6e9 bytes = 21,553.0 MiB
    # mem 3 x 21,553.0 + 8,192 = 72,851.1; disk 14 x 21,553.0 + 1,024 = 302,766.6; runtime 60 + 21 x 11.3 = 297.3
    assert resources("finetune", "tk-11b") == {"mem_mb": 73000, "runtime": 300, "disk_mb": 303000}
    assert resources("finetune", "tk-11b", processes=4)["mem_mb"] == 292000  # 4 x 72,851.1 = 291,404.4
    # LoRA: the base stays in its dtype, the adapter is small: 12,779.2 + 8,192 = 20,971.2; disk 1,024 MiB -> 2,000
    assert resources("finetune", "lora7") == {"mem_mb": 21000, "runtime": 210, "disk_mb": 2000}  # 60 + 140.7
    # PEFT training: 60 + 7 x 6.7 = 106.9
    assert resources("first_token_peft_train", "llama7") == {"mem_mb": 21000, "runtime": 90, "disk_mb": 2000}


def test_unknown_sizes_keep_the_former_memory_and_a_small_models_runtime():
    # a hub id without params_b (not in any cache here): 8,000 MB, 30 + 5 x 1.5 = 37.5
    assert resources("first_token_infer", "unsized") == {"mem_mb": 8000, "runtime": 40}
    # a model behind an API: no weights here, its time costed as a 13 B model's: 30 + 6 x 13 x 2 runs = 186
    assert resources("followup_dialogues", "api", units=2) == {"mem_mb": 8000, "runtime": 190}
    assert resources("followup_dialogues", "api", "unsized")["runtime"] == 40  # not all behind an API
    assert resources("finetune", "unsized")["mem_mb"] == 16000
    # 2 x 1.5e9 bytes = 2.79 GiB: runtime 30 + 4.2, disk 3 x 2,861.0 + 1,024 MiB = 9,607
    assert resources("materialize_model", "unsized") == {"mem_mb": 12000, "runtime": 40, "disk_mb": 10000}
    # string matching runs no model: the family's base runtime
    assert resources("first_token_classifier_eval") == {"mem_mb": 8000, "runtime": 30}


def test_weights_on_disk_size_the_jobs(tmp_path):
    cfg, known = {"models": {"tiny": {"source": "tiny", "kind": "causal", "dtype": "float32"}}}, {}
    assert sizing.job_resources(cfg, "first_token_infer", ["tiny"], root=tmp_path, known=known)["mem_mb"] == 8000
    assert known == {}  # unknown until materialized: asked again
    materialize("tiny", cfg["models"]["tiny"], tmp_path / "resources" / "models" / "tiny")
    size = sizing.model_size(cfg, "tiny", tmp_path)
    assert 0 < size.bytes < MIB and size.params_b == pytest.approx(size.bytes / 4 / 1e9)
    assert sizing.job_resources(cfg, "first_token_infer", ["tiny"], root=tmp_path, known=known)["mem_mb"] == 5000
    assert known == {"tiny": size}  # 4,096 MiB + the weights; kept for the next pass of the scheduler
    known["tiny"] = sizing.Size(10 * (1 << 30), 5.0)
    assert sizing.job_resources(cfg, "first_token_infer", ["tiny"], root=tmp_path, known=known)["mem_mb"] == 15000


def test_the_models_of_a_jobs_inputs():
    inputs = ["resources/models/llama7", "resources/models/finetuned/lora7", "results/x.jsonl",
              "resources/models/not-a-key", "resources/prepared/mmlu.jsonl"]
    assert sizing.input_models(CONFIG, inputs) == ["llama7", "lora7"]
    assert sizing.inference_mem_mb(CONFIG, "llama70") == 136000
    assert sizing.RATES.keys() >= {"first_token_infer", "finetune", "followup_dialogues", "instructions_infer"}
