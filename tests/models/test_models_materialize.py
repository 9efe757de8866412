"""Model materialization: tiny, local copies, hub offline, the finetune spec, openai server dirs, the
materialize script. No test downloads anything."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from wobble.backends import load_backend
from wobble.errors import ConfigError, WobbleError
from wobble.io import sha256_file
from wobble.models import materialize as mat
from wobble.models.load import load_model
from wobble.models.materialize import MANIFEST, materialize, weights_sha256
from wobble.models.tiny import build_tiny

ROOT = Path(__file__).resolve().parents[2]
TINY_CAUSAL = {"source": "tiny", "kind": "causal", "seed": 0, "chat_template": True}
TINY_T5 = {"source": "tiny", "kind": "seq2seq", "seed": 0}
TK = {"source": "hub", "id": "allenai/tk-instruct-3b-def-pos", "revision": "main", "kind": "seq2seq"}


def same_weights(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("key,spec", [("tiny-causal", TINY_CAUSAL), ("tiny-t5", TINY_T5)])
def test_tiny_round_trip(tmp_path, key, spec):
    out = tmp_path / key
    manifest = materialize(key, spec, out)
    on_disk = json.loads((out / MANIFEST).read_text())
    assert on_disk == manifest
    assert manifest["key"] == key and manifest["spec"] == spec and manifest["source"] == "tiny"
    assert manifest["kind"] == spec["kind"] and manifest["dtype"] == "float32"
    assert manifest["origin"] == {"tiny": {"kind": spec["kind"], "seed": 0,
                                           "chat_template": spec.get("chat_template", False)}}
    assert manifest["weights_sha256"] == weights_sha256(out)
    assert "model.safetensors" in manifest["files"] and "config.json" in manifest["files"]
    assert all(sha256_file(out / n) == h for n, h in manifest["files"].items())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temp dirs left behind"

    model, tok, m2 = load_model(out, dtype="float32")
    ref_model, ref_tok = build_tiny(spec["kind"], seed=0, chat_template=spec.get("chat_template", False))
    assert m2 == manifest
    assert same_weights(model, ref_model)
    assert bool(tok.chat_template) == spec.get("chat_template", False)
    b = load_backend(out, key, batch_size=2, dtype="float32", progress=False)
    assert b.kind == spec["kind"] and b.batch_size == 2 and b.model_key == key
    from wobble.backends.hf import HFBackend

    ref = HFBackend(ref_model, ref_tok, spec["kind"], key, progress=False)
    prompts = ["hello", "a longer prompt here"]
    assert b.next_token_logprobs(prompts, ["A"]) == ref.next_token_logprobs(prompts, ["A"])


def test_tiny_weights_sha256_deterministic(tmp_path):
    a = materialize("tiny-causal", TINY_CAUSAL, tmp_path / "a")
    b = materialize("tiny-causal", TINY_CAUSAL, tmp_path / "b")
    c = materialize("tiny-causal", {**TINY_CAUSAL, "seed": 1}, tmp_path / "c")
    assert a["weights_sha256"] == b["weights_sha256"]
    assert a["files"] == b["files"]
    assert c["weights_sha256"] != a["weights_sha256"]
    # re-materializing over an existing model directory replaces it
    again = materialize("tiny-causal", TINY_CAUSAL, tmp_path / "a")
    assert again["weights_sha256"] == a["weights_sha256"]


def test_local_source_copies(tmp_path):
    src = tmp_path / "src"
    first = materialize("tiny-causal", TINY_CAUSAL, src)
    copy = materialize("my-model", {"source": "local", "path": str(src), "kind": "causal"}, tmp_path / "copy")
    assert copy["origin"] == {"path": str(src.resolve())}
    assert copy["source"] == "local" and copy["dtype"] == "float32"
    assert copy["weights_sha256"] == first["weights_sha256"]
    with pytest.raises(WobbleError, match="'my-model'.*not a directory"):
        materialize("my-model", {"source": "local", "path": str(tmp_path / "nope"), "kind": "causal"}, tmp_path / "x")


def test_refuses_to_overwrite_unrelated_dir(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "precious.txt").write_text("keep me")
    with pytest.raises(WobbleError, match="refusing to overwrite"):
        materialize("tiny-causal", TINY_CAUSAL, tmp_path / "busy")
    assert (tmp_path / "busy" / "precious.txt").read_text() == "keep me"


def test_finetune_spec_is_not_materialized(tmp_path):
    spec = {"finetune": {"base": "gemma-270m", "data": "superni_train", "method": "lora"}}
    with pytest.raises(WobbleError, match=r"'gemma-270m-ni'.*finetune rule"):
        materialize("gemma-270m-ni", spec, tmp_path / "ni")
    assert not (tmp_path / "ni").exists()


@pytest.mark.parametrize("spec,where", [({"source": "ftp", "kind": "causal"}, "models.m.source"),
                                        ({"source": "tiny", "kind": "encoder"}, "models.m.kind"),
                                        ({"source": "hub", "kind": "causal"}, "models.m.id")])
def test_bad_specs(tmp_path, spec, where):
    with pytest.raises(ConfigError, match=where):
        materialize("m", spec, tmp_path / "m")


def test_hub_offline_error_subprocess(tmp_path):
    """Offline with an empty cache: one WobbleError naming key, id and revision; no chained traceback."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    code = ("from wobble.models.materialize import materialize\n"
            f"materialize('tk-instruct-3b', {TK!r}, {str(tmp_path / 'tk')!r})\n")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert time.perf_counter() - t0 < 60
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("wobble.errors.WobbleError: model 'tk-instruct-3b'"), proc.stderr[-2000:]
    assert "'allenai/tk-instruct-3b-def-pos'" in last and "revision 'main'" in last and "HF_HUB_OFFLINE" in last
    assert "During handling of the above exception" not in proc.stderr
    assert not (tmp_path / "tk").exists()


def test_hub_unreachable_error(tmp_path, monkeypatch):
    monkeypatch.setattr(mat, "_hub_offline", lambda: False)
    monkeypatch.setattr(mat, "_hub_unreachable", lambda timeout_s=5.0: "cannot connect to huggingface.co:443 (test)")
    spec = {"source": "hub", "id": "wobble-tests/no-such-model", "revision": "v9", "kind": "causal"}
    with pytest.raises(WobbleError) as err:
        materialize("ghost", spec, tmp_path / "ghost")
    msg = str(err.value)
    assert "'ghost'" in msg and "'wobble-tests/no-such-model'" in msg and "revision 'v9'" in msg
    assert "unreachable" in msg and err.value.__cause__ is None and err.value.__suppress_context__


def test_materialize_script(tmp_path, monkeypatch):
    class Namespace(dict):
        __getattr__ = dict.__getitem__

    out = tmp_path / "resources" / "models" / "tiny-t5"
    log = tmp_path / "logs" / "tiny-t5.log"
    log.parent.mkdir(parents=True)
    smk = Namespace(wildcards=Namespace(model="tiny-t5"), params=Namespace(spec=dict(TINY_T5), wheel_dir="wheels"),
                    output=[str(out)],
                    log=[str(log)], input=[], rule="materialize_model")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(ROOT / "scripts" / "materialize_model.py"), init_globals={"snakemake": smk})
    manifest = json.loads((out / MANIFEST).read_text())
    prov = json.loads(out.with_name("tiny-t5.prov.json").read_text())
    assert prov["models"] == {"tiny-t5": manifest["weights_sha256"]}
    assert prov["config"] == TINY_T5 and prov["rule"] == "materialize_model"
    assert "materialized tiny-t5" in log.read_text()


OPENAI = {"source": "openai", "kind": "causal", "base_url": "http://127.0.0.1:8999/v1", "model": "served",
          "api_key_env": "WOBBLE_TEST_API_KEY", "chat": "chat", "top_logprobs": 50}


def test_openai_model_dir_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("WOBBLE_TEST_API_KEY", "sk-secret-value")
    out = tmp_path / "models" / "server"
    manifest = materialize("server", OPENAI, out)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST]
    assert manifest["source"] == "openai" and manifest["weights_sha256"] is None and manifest["files"] == {}
    assert manifest["spec"] == OPENAI and manifest["chat_template"] is None
    assert manifest["origin"] == {"base_url": OPENAI["base_url"], "model": "served", "api_key_env": "WOBBLE_TEST_API_KEY"}
    assert "sk-secret-value" not in (out / MANIFEST).read_text()
    from wobble.backends import backend_from_spec
    from wobble.backends.openai_compat import OpenAICompatBackend

    b = load_backend(out, "server", progress=False)
    assert isinstance(b, OpenAICompatBackend) and b.model_key == "server" and b.model == "served"
    assert b.base_url == OPENAI["base_url"] and b.top_logprobs == 50 and b.has_chat_template and not b.progress
    assert b._api_key == "sk-secret-value"  # read from the environment at load time
    assert isinstance(backend_from_spec("server", OPENAI, out, batch_size=4), OpenAICompatBackend)


@pytest.mark.parametrize("extra,where", [({"api_key": "sk-1"}, "models.s.api_key"), ({"model": ""}, "models.s.model")])
def test_openai_spec_refuses_secrets_and_gaps(tmp_path, extra, where):
    with pytest.raises(ConfigError, match=where):
        materialize("s", {**OPENAI, **extra}, tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_a_masked_lm_goes_through_the_registry_and_proposes_from_its_directory(tmp_path):
    """instructions.masked_lm names a models: entry of kind masked: materialized like any model, then loaded from its
    directory by the word proposer (no hub name in the job)."""
    import torch
    import transformers

    from wobble.studies.instructions.insert_replace import MaskSlot
    from wobble.studies.instructions.proposers import MaskedLMProposer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "in", "this", "task", "you", "will", "answer", "the"]
    src = tmp_path / "src"
    src.mkdir()
    (src / "vocab.txt").write_text("\n".join(vocab) + "\n")
    transformers.BertTokenizer(str(src / "vocab.txt")).save_pretrained(src)
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=64)
    transformers.BertForMaskedLM(cfg).save_pretrained(src)
    manifest = materialize("bert", {"source": "local", "path": str(src), "kind": "masked"}, tmp_path / "bert")
    assert manifest["kind"] == "masked" and manifest["weights_sha256"]
    (word,) = MaskedLMProposer(str(tmp_path / "bert"), top_k=len(vocab)).propose_many([MaskSlot("in this ", " you", None)])
    assert word in vocab[5:] or word == ""


def test_a_saved_tokenizer_does_not_record_how_it_was_loaded(tmp_path):
    """HF_HUB_OFFLINE (a cluster job's) makes transformers load with local_files_only=True and save that into
    tokenizer_config.json: the same tokenizer saved by save_tokenizer has the same bytes either way."""
    import transformers

    materialize("tiny-causal", TINY_CAUSAL, tmp_path / "m")
    saved = {}
    for offline in (False, True):
        tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "m", local_files_only=offline)
        assert tok.init_kwargs.get("local_files_only") is offline  # what would be saved without save_tokenizer
        mat.save_tokenizer(tok, tmp_path / str(offline))
        saved[offline] = (tmp_path / str(offline) / "tokenizer_config.json").read_bytes()
    assert saved[False] == saved[True]
    assert not set(mat.LOAD_TIME_TOKENIZER_KEYS) & set(json.loads(saved[True]))
