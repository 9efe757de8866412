"""wobble.models.load: a LoRA adapter directory loads merged; loading errors are one clear line."""

from __future__ import annotations

import pytest
import torch

from wobble.errors import ConfigError, WobbleError
from wobble.models.load import load_model, resolve_dtype
from wobble.models.materialize import materialize, write_manifest
from wobble.models.tiny import build_tiny

TINY_CAUSAL = {"source": "tiny", "kind": "causal", "seed": 0, "chat_template": True}


def test_lora_adapter_dir_loads_merged(tmp_path):
    from peft import LoraConfig, get_peft_model

    base_dir = tmp_path / "base"
    materialize("tiny-causal", TINY_CAUSAL, base_dir)
    model, _ = build_tiny("causal", seed=0)
    torch.manual_seed(1)
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                  init_lora_weights=False))
    ad = tmp_path / "tiny-ni"
    peft_model.save_pretrained(ad)
    spec = {"finetune": {"base": "tiny-causal", "data": "superni_train", "method": "lora"}}
    write_manifest(ad, key="tiny-ni", spec=spec, kind="causal", source="finetune",
                   origin={"base": "tiny-causal"}, base_dir=str(base_dir))
    merged, tok, manifest = load_model(ad, dtype="float32")
    assert manifest["base_dir"] == str(base_dir)
    ids = torch.tensor([tok("lora test", add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        want = peft_model(input_ids=ids).logits
        got = merged(input_ids=ids).logits
        base_logits = build_tiny("causal", seed=0)[0](input_ids=ids).logits
    assert torch.allclose(got, want, atol=1e-5)
    assert not torch.allclose(got, base_logits, atol=1e-3)
    assert not hasattr(merged, "peft_config")  # merged into a plain model


def test_adapter_base_relative_to_its_checkout_loads_from_anywhere(tmp_path, monkeypatch):
    """The workflow writes ``base_dir`` relative to the checkout; a benchmark run elsewhere still finds the base."""
    checkout = tmp_path / "checkout"
    materialize("tiny-causal", TINY_CAUSAL, checkout / "resources/models/tiny-causal")
    ad = checkout / "resources/models/finetuned/tiny-ni"
    model, _ = build_tiny("causal", seed=0)
    from peft import LoraConfig, get_peft_model

    get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj"])).save_pretrained(ad)
    write_manifest(ad, key="tiny-ni", spec={}, kind="causal", source="finetune", origin={"base": "tiny-causal"},
                   base_dir="resources/models/tiny-causal")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    _, _, manifest = load_model(ad, dtype="float32")
    assert manifest["base_dir"] == "resources/models/tiny-causal"
    write_manifest(ad, key="tiny-ni", spec={}, kind="causal", source="finetune", origin={"base": "tiny-causal"},
                   base_dir="resources/models/absent")
    with pytest.raises(WobbleError, match="adapter's base model directory 'resources/models/absent' not found"):
        load_model(ad, dtype="float32")


def test_load_errors(tmp_path):
    with pytest.raises(WobbleError, match="not a materialized model directory"):
        load_model(tmp_path)
    with pytest.raises(ConfigError, match="dtype"):
        resolve_dtype("float8")
    assert resolve_dtype("float32") == torch.float32
