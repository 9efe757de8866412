"""Do a model's weights fit what its jobs request (wobble.models.fit, run by ``wobble check-config``): sizes read
as accelerate reads them, weights estimated from the spec or from tensor headers on disk, what a job gets from
the model's size and placement, and the one line check-config stops with."""

from __future__ import annotations

import math

import pytest
import yaml

from conftest import REPO
from wobble.cli import main
from wobble import paths
from wobble.errors import WobbleError
from wobble.models import fit, sizing
from wobble.models.materialize import materialize
from wobble.models.tiny import build_tiny, write_tiny_gguf

GIB = 1 << 30
SHA = "0123456789abcdef0123456789abcdef01234567"
HUB = {"source": "hub", "id": "org/big", "revision": SHA, "kind": "causal", "dtype": "bfloat16"}


def config(**models):
    return {"gpu_mem_gib": 80, "models": models}


@pytest.mark.parametrize("size", ["70GiB", "80GB", "512MiB", "1.5GiB", "300KB", "2KiB", "0.5MB", 12345])
def test_sizes_are_read_as_accelerate_reads_them(size):
    from accelerate.utils.modeling import convert_file_size_to_int

    assert fit.size_bytes(size) == convert_file_size_to_int(size)


def test_a_size_without_a_unit_accelerate_knows_is_one_line():
    with pytest.raises(WobbleError, match="'70 gigs' is not a memory size"):
        fit.size_bytes("70 gigs")


def test_weights_from_the_spec_its_base_or_unknown(tmp_path):
    cfg = config(big={**HUB, "params_b": 69.0}, sized={**HUB, "weights_gib": 12.5},
                 auto={**HUB, "dtype": "auto", "params_b": 1.0}, fp32={**HUB, "dtype": "float32", "params_b": 1.0},
                 ft={"finetune": {"base": "big", "data": "superni_train", "method": "lora"}},
                 unknown=dict(HUB), tiny={"source": "tiny", "kind": "causal"},
                 server={"source": "openai", "base_url": "http://x/v1", "model": "m", "kind": "causal"})
    est = {k: fit.weight_estimate(cfg, k, tmp_path) for k in cfg["models"]}
    assert est["big"].bytes == 138 * 10**9 and est["big"].how == "params_b 69.0 x 2 bytes"
    assert est["sized"].bytes == 12.5 * GIB
    assert est["auto"].bytes == 2 * 10**9 and est["fp32"].bytes == 4 * 10**9  # auto counts bfloat16
    assert est["ft"].bytes == est["big"].bytes and est["ft"].how.startswith("its base's")
    assert est["unknown"] is None and est["tiny"] is None and est["server"] is None


def test_weights_on_disk_are_counted_from_their_tensor_headers(tmp_path):
    materialize("tiny", {"source": "tiny", "kind": "causal"}, tmp_path / "resources" / "models" / "tiny")
    n = sum(p.numel() for p in build_tiny("causal")[0].parameters())  # the tied head counted (and saved) once
    write_tiny_gguf(tmp_path / "m.gguf")
    cfg = config(tiny={"source": "tiny", "kind": "causal", "dtype": "float32"},
                 gg={"source": "local", "path": str(tmp_path), "gguf_file": "m.gguf", "kind": "causal"})
    assert fit.weight_estimate(cfg, "tiny", tmp_path).bytes == 4 * n
    import gguf

    elements = sum(int(t.n_elements) for t in gguf.GGUFReader(str(tmp_path / "m.gguf")).tensors)
    assert fit.weight_estimate(cfg, "gg", tmp_path).bytes == 2 * elements


def test_a_device_map_model_may_fill_the_memory_its_jobs_ask_for_by_its_size():
    # no max_memory: accelerate offloads to the CPU what does not fit the GPU, within the job's mem_mb, which is
    # sized from the weights (wobble.models.sizing: 138e9 bytes + 4 GiB -> 136,000 MiB), so the 70B fits one GPU
    big = {**HUB, "params_b": 69.0, "device_map": "auto"}
    assert sizing.check_model_fits(config(m=big), REPO) == ["m"]
    mem = sizing.inference_mem_mb(config(m=big), "m")
    assert mem == 136000 and fit.job_capacity(config(m=big), "m", mem).bytes == 80 * GIB + mem * (1 << 20)
    with pytest.raises(WobbleError, match=r"model m needs ~128.5 GiB .* request 80.0 GiB \(resources gpu=1, "):
        sizing.check_model_fits(config(m={**big, "device_map": None}), REPO)


def test_what_a_job_gets_gpus_cpu_and_disk():
    cap = fit.job_capacity(config(m=HUB), "m", 8000)
    assert cap.bytes == 80 * GIB and cap.resources == "gpu=1, gpu_mem_gib 80 each"
    split = {**HUB, "device_map": "auto", "max_memory": {0: "70GiB", "cpu": "200GiB"}}
    cap = fit.job_capacity(config(m=split), "m", 8000)
    assert cap.bytes == 70 * GIB + 8000 * (1 << 20)  # the cpu share within the job's mem_mb
    assert cap.resources == "gpu=1, max_memory 0: 70GiB, max_memory cpu: 200GiB, mem_mb=8000"
    cap = fit.job_capacity(config(m={**split, "max_memory": {0: "70GiB", "cpu": "1GiB"}}), "m", 8000)
    assert cap.bytes == 71 * GIB
    assert fit.job_capacity(config(m={**split, "offload_folder": "off"}), "m", 8000).bytes == math.inf
    # two GPU entries: its jobs book two GPUs (the rules' gpu resource), and the weights may fill both
    two = {**HUB, "device_map": "auto", "max_memory": {0: "70GiB", 1: "70GiB"}}
    assert paths.gpus_for_inputs(config(m=two), ["resources/models/m"]) == 2
    cap = fit.job_capacity(config(m=two), "m", 8000)
    assert cap.bytes == 140 * GIB and cap.resources == "gpu=2, max_memory 0: 70GiB, 1: 70GiB, mem_mb=8000"


def _paper(tmp_path, mutate=None):
    cfg = yaml.safe_load((REPO / "configs" / "paper.yaml").read_text())
    for spec in cfg["models"].values():
        if spec.get("source") == "hub":
            spec["revision"] = SHA
    if mutate:
        mutate(cfg["models"])
    path = tmp_path / "paper.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_paper_configs_models_fit_their_jobs(tmp_path, capsys):
    assert main(["check-config", str(_paper(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "model weights: within their jobs' resources" in out


def test_a_70b_model_on_one_gpu_stops_check_config_in_one_line(tmp_path, capsys):
    def one_gpu(models):
        for key in ("llama2-70b-chat", "mixtral-8x7b-instruct-v0.1"):
            for k in ("device_map", "max_memory"):
                models[key].pop(k, None)

    assert main(["check-config", str(_paper(tmp_path, one_gpu))]) == 2
    out, err = capsys.readouterr()
    (line,) = err.strip().splitlines()
    assert out == ""
    assert line.startswith("wobble: model llama2-70b-chat needs ~128.5 GiB of weights (params_b 69.0 x 2 bytes); "
                           "its jobs request 80.0 GiB (resources gpu=1, gpu_mem_gib 80 each)"), line
    assert "(also: model mixtral-8x7b-instruct-v0.1 needs ~87.0 GiB" in line
