"""Training memory per rank (wobble.models.training_fit), against hand-computed values: the ZeRO paper's example
and the paper plan's T5-11B."""

from __future__ import annotations

import json

import pytest

from wobble.errors import ConfigError, WobbleError
from wobble.models.training_fit import (GIB, TrainingMemory, Zero, check_training_fits, ranks_needed, training_memory,
                                        training_misfits, zero_settings)

DS = {s: Zero(stage=s, deepspeed=True) for s in range(4)}


def gb(m: TrainingMemory) -> float:
    return m.gpu / 1e9


def test_the_zero_papers_example():
    """7.5 B parameters, 64 GPUs, K = 12 (Rajbhandari et al. 2020, Figure 1): 120, 31.4, 16.6 and 1.9 GB per GPU.
    By hand: 16 x 7.5 = 120; 2 x 7.5 + 2 x 7.5 + 12 x 7.5 / 64 = 31.40625; 15 + 14 x 7.5 / 64 = 16.640625;
    120 / 64 = 1.875."""
    p = 7.5e9
    assert [gb(training_memory(p, zero=DS[s], ranks=64)) for s in range(4)] == pytest.approx(
        [120, 31.40625, 16.640625, 1.875])
    m = training_memory(p, zero=DS[2], ranks=64)
    assert (m.weights, m.gradients, m.optimizer) == pytest.approx((15e9, 15e9 / 64, 90e9 / 64))


def test_without_deepspeed_fp32_weights_gradients_and_adam_make_16_bytes():
    m = training_memory(1e9)
    assert (m.weights, m.gradients, m.optimizer, m.host) == (4e9, 4e9, 8e9, 0)
    assert training_memory(1e9, ranks=8).gpu == 16e9  # DDP: a whole copy per rank


def test_offload_moves_state_to_the_host():
    p = 1e9
    opt = training_memory(p, zero=Zero(2, offload_optimizer=True, deepspeed=True), ranks=4)
    # weights 2 on the GPU; (2 + 12) / 4 = 3.5 bytes per parameter to the host
    assert (opt.gpu, opt.host) == pytest.approx((2e9, 3.5e9))
    both = training_memory(p, zero=Zero(3, offload_optimizer=True, offload_params=True, deepspeed=True), ranks=4)
    assert (both.gpu, both.host) == pytest.approx((0, 4e9))


def test_lora_holds_the_frozen_base_and_a_small_trainable_share():
    # 1e9 parameters, rank 16: 5e7 trainable (5 %); base 2 bytes + 16 per trainable = 2e9 + 8e8
    m = training_memory(1e9, method="lora", base_bytes=2, lora_r=16)
    assert (m.weights, m.gradients, m.optimizer) == pytest.approx((2e9 + 2e8, 2e8, 4e8))
    assert m.gpu == pytest.approx(2.8e9)
    z3 = training_memory(1e9, zero=DS[3], ranks=2, method="lora", base_bytes=2, lora_r=16)
    assert z3.gpu == pytest.approx((2e9 + 16 * 5e7) / 2)


def test_t5_11b_needs_several_gpus_with_zero3():
    """11.3 B parameters x 16 bytes = 180.8 GB (168.4 GiB): not on one 80 GiB GPU (85.9 GB); 180.8 / N <= 85.9 from
    N = 3 (56.1 GiB each)."""
    p, gpu = 11.3e9, 80 * GIB
    assert training_memory(p, zero=DS[3]).gpu == pytest.approx(180.8e9)
    assert ranks_needed(p, gpu, zero=DS[3]) == 3
    assert training_memory(p, zero=DS[3], ranks=3).gpu / GIB == pytest.approx(180.8e9 / 3 / GIB)
    assert ranks_needed(p, gpu) is None  # DDP: every rank holds all 16 bytes per parameter
    assert ranks_needed(p, gpu, zero=DS[2]) == 3  # 22.6 GB of weights + 158.2 GB / N <= 85.9 GB: N >= 2.5


def test_zero_settings_read_the_config(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"},
                                                      "offload_param": {"device": "none"}}}))
    assert zero_settings(str(path)) == Zero(3, offload_optimizer=True, offload_params=False, deepspeed=True)
    assert zero_settings("ds.json", root=tmp_path).stage == 3  # a relative path is under root
    assert zero_settings(None) == Zero()
    assert zero_settings({"zero_optimization": {"stage": 1}}) == Zero(1, deepspeed=True)
    with pytest.raises(ConfigError, match="a readable DeepSpeed JSON config"):
        zero_settings("no/such.json", root=tmp_path)
    with pytest.raises(ConfigError, match="stage 0 to 3, got 4"):
        zero_settings({"zero_optimization": {"stage": 4}})


def _config(tmp_path, **finetune):
    ds = tmp_path / "zero3.json"
    ds.write_text(json.dumps({"zero_optimization": {"stage": 3}}))
    return {"gpu_mem_gib": 80,
            "models": {"t5-11b": {"source": "hub", "id": "google-t5/t5-11b", "kind": "seq2seq", "dtype": "bfloat16",
                                  "params_b": 11.3},
                       "tk-11b": {"finetune": {"base": "t5-11b", "data": "superni_train", "method": "full",
                                               **finetune}},
                       "unsized": {"source": "hub", "id": "x/y", "kind": "causal"},
                       "unsized-ft": {"finetune": {"base": "unsized", "data": "superni_train", "method": "lora"}}},
            "instructions": {"finetune": {"deepspeed": str(ds)}}}


def test_check_config_refuses_t5_11b_on_one_gpu(tmp_path):
    config = _config(tmp_path)
    lines, sized = training_misfits(config, tmp_path)
    assert sized == ["tk-11b"]  # the unsized base is skipped
    assert lines == ["finetune of tk-11b (full, 11.3B parameters, ZeRO-3) needs ~168.4 GiB per GPU for weights, "
                     "gradients and optimizer state on 1 GPU of 80.0 GiB; it needs 3 GPUs "
                     "(--set-resources finetune:gpu=N)"]
    with pytest.raises(WobbleError, match="^finetune of tk-11b .* it needs 3 GPUs"):
        check_training_fits(config, tmp_path)
    assert check_training_fits(config, tmp_path, ranks={"tk-11b": 4}) == ["tk-11b"]
    assert check_training_fits(_config(tmp_path, gpus=3), tmp_path) == ["tk-11b"]
