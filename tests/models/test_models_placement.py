"""A model spread over devices by accelerate (``device_map`` / ``max_memory`` / ``offload_folder`` in the model
spec, wobble.models.load): on the CPU, a tiny model with some layers offloaded to disk computes the unsplit model's
log-probs and generations, through every path of the hf backend (plain and shared-prefix scoring, continuation
log-probs, generation with shared prefixes and continued dialogue turns)."""

from __future__ import annotations

import pytest

from wobble.backends import load_backend
from wobble.backends.base import GenParams
from wobble.errors import ConfigError
from wobble.models.load import load_model, placement
from wobble.models.materialize import materialize

TINY = {"source": "tiny", "kind": "causal", "seed": 0, "chat_template": True, "dtype": "float32",
        "prefix_generation": True, "turn_reuse": True}
# ~70 shared tokens (ByT5 bytes), so scoring and generation reuse the prefix (hf_prefix.MIN_PREFIX_TOKENS = 64)
HEAD = "".join(f"Item {i} is {'good' if i % 3 else 'bad'}. " for i in range(6))
PROMPTS = [HEAD + "Item x is", HEAD + "Item yy is", "Unrelated.", [{"role": "user", "content": HEAD + "Item z?"}]]
# every module of the tiny Llama; layer 1 on disk (its weights read from the offload folder as it runs)
SPLIT = {"model.embed_tokens": "cpu", "model.layers.0": "cpu", "model.layers.1": "disk", "model.norm": "cpu",
         "model.rotary_emb": "cpu", "lm_head": "cpu"}


def _materialized(tmp_path, name, **placement_keys):
    out = tmp_path / name
    materialize(name, {**TINY, **placement_keys}, out)
    return out


def _everything(backend):
    """Every backend method's output on PROMPTS, a dialogue's second turn included."""
    params = GenParams(max_new_tokens=6, temperature=0.0, return_logprobs=True, first_token_candidates=(" A", " B"))
    out = {"next": backend.next_token_logprobs(PROMPTS, [" good", " bad", "x"]),
           "cont": backend.continuation_logprobs(PROMPTS, [" good.", " bad", "!", " ok"])}
    with backend.dialogue_session():
        first = backend.generate(PROMPTS, params)
        second = backend.generate([p + g.text + " Sure?" for p, g in zip(PROMPTS[:2], first)], params)
    out["gen"] = [(g.text, g.finish_reason, g.token_logprobs, g.first_token_logprobs) for g in first + second]
    return out


def _same(got, want, atol=1e-6):
    assert [(t, r) for t, r, _, _ in got["gen"]] == [(t, r) for t, r, _, _ in want["gen"]]
    for (_, _, lp, first), (_, _, lp_w, first_w) in zip(got["gen"], want["gen"]):
        assert lp == pytest.approx(lp_w, abs=atol) and first == pytest.approx(first_w, abs=atol)
    for g, w in zip(got["next"], want["next"]):
        assert g == pytest.approx(w, abs=atol)
    for g, w in zip(got["cont"], want["cont"]):
        assert g == pytest.approx(w, abs=atol)


@pytest.fixture(scope="module")
def unsplit(tmp_path_factory):
    backend = load_backend(_materialized(tmp_path_factory.mktemp("whole"), "tiny"), "tiny", batch_size=2,
                           progress=False)
    assert not hasattr(backend.model, "hf_device_map")
    return _everything(backend)


def test_a_model_with_a_layer_offloaded_to_disk_computes_the_unsplit_models_numbers(tmp_path, unsplit):
    d = _materialized(tmp_path, "tiny-split", device_map=SPLIT, offload_folder=str(tmp_path / "offload"))
    backend = load_backend(d, "tiny-split", batch_size=2, progress=False)
    assert backend.model.hf_device_map["model.layers.1"] == "disk"
    assert backend.model.model.layers[1].self_attn.q_proj.weight.device.type == "meta"  # not in memory
    assert str(backend.device) == "cpu" and backend.reuse_turns and backend.reuse_prefix_generation
    _same(_everything(backend), unsplit)
    assert backend.prefix_cache.misses > 0 and backend.turn_stats[0] > 0  # the reuse paths ran


def test_max_memory_reaches_accelerate_and_what_does_not_fit_goes_to_disk(tmp_path, unsplit):
    d = _materialized(tmp_path, "tiny-auto", device_map="auto", max_memory={"cpu": "90KB"},
                      offload_folder=str(tmp_path / "offload"))
    model, _, manifest = load_model(d, dtype="float32")
    placed = model.hf_device_map
    assert manifest["spec"]["max_memory"] == {"cpu": "90KB"}
    assert "cpu" in placed.values() and "disk" in placed.values(), placed
    _same(_everything(load_backend(d, "tiny-auto", batch_size=2, progress=False)), unsplit)


def test_placement_keywords_come_from_the_spec():
    assert placement({"source": "tiny"}) == {}
    # a manifest's JSON writes max_memory's GPU keys as strings: they go back to ints for accelerate
    assert placement({"device_map": "auto", "max_memory": {"0": "70GiB", "cpu": "200GiB"}, "offload_folder": "off"}) \
        == {"device_map": "auto", "max_memory": {0: "70GiB", "cpu": "200GiB"}, "offload_folder": "off"}
    with pytest.raises(ConfigError, match=r"models\.big\.max_memory.*only takes effect with device_map"):
        placement({"key": "big", "max_memory": {"cpu": "1GiB"}})


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_model_split_between_the_gpu_and_the_cpu_computes_the_models_numbers_on_cuda(tmp_path, dtype):
    """On a GPU, layer 1 offloaded to the CPU's memory (run on the GPU as it comes) against the whole model on the
    GPU; in bf16 with the float32 output layer as well."""
    keys = {"dtype": dtype, "output_fp32": dtype == "bfloat16"}
    whole = load_backend(_materialized(tmp_path, "tiny", **keys), "tiny", batch_size=2, progress=False)
    on_gpu = {**{k: 0 for k in SPLIT}, "model.layers.1": "cpu"}
    split = load_backend(_materialized(tmp_path, "tiny-split", device_map=on_gpu, **keys), "tiny-split",
                         batch_size=2, progress=False)
    assert whole.device.type == "cuda" and str(split.device) == "cuda:0"
    assert split.model.hf_device_map["model.layers.1"] == "cpu"
    _same(_everything(split), _everything(whole), atol=1e-5 if dtype == "float32" else 2e-2)
