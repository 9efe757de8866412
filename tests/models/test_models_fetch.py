"""`wobble fetch-models`: what a login node downloads so that compute-node jobs run with the hub offline
(wobble.models.fetch), without the network: the hub client is faked."""

from __future__ import annotations

import pytest

from wobble import cli
from wobble.errors import WobbleError
from wobble.models import fetch as F

SHA = "3f076fdb1ab68d5b2880cb87a0886f315b8146f8"


def test_hub_files_keep_one_weights_format_and_what_from_pretrained_reads():
    repo = ["config.json", "model.safetensors", "pytorch_model.bin", "tf_model.h5", "flax_model.msgpack",
            "tokenizer.json", "vocab.txt", "README.md", ".gitattributes", "onnx/model.onnx", "coreml/x.mlmodel"]
    assert F.hub_files(repo) == ["config.json", "model.safetensors", "tokenizer.json", "vocab.txt"]
    assert F.hub_files(["config.json", "pytorch_model.bin", "spiece.model"]) == [
        "config.json", "pytorch_model.bin", "spiece.model"]  # no safetensors: the .bin


def test_fetch_models_downloads_each_hub_model_at_its_revision():
    calls = []
    config = {"models": {"bert": {"source": "hub", "id": "google-bert/bert-base-multilingual-cased",
                                  "revision": SHA, "kind": "masked"},
                         "tiny": {"source": "tiny", "kind": "causal"}}}
    lines = F.fetch_models(config, ["bert", "tiny"], list_files=lambda repo, rev: ["config.json", "model.safetensors",
                                                                                 "tf_model.h5"],
                           download=lambda repo, rev, files: calls.append((repo, rev, files)) or "/cache/x")
    assert calls == [("google-bert/bert-base-multilingual-cased", SHA, ["config.json", "model.safetensors"])]
    assert lines[0].startswith("models.bert: google-bert/bert-base-multilingual-cased@3f076fdb1ab6, 2 files")
    assert lines[1] == "models.tiny: source tiny, nothing to download"

    def offline(repo, rev):
        raise OSError("Cannot reach https://huggingface.co\nmore detail")

    with pytest.raises(WobbleError) as e:
        F.fetch_models(config, ["bert"], list_files=offline)
    assert "\n" not in str(e.value) and str(e.value).startswith("models.bert: cannot download google-bert/")


def test_the_command_a_failed_job_names_is_the_runs(monkeypatch):
    monkeypatch.setenv(F.CONFIG_ENV, "configs/paper.yaml")
    assert F.fetch_command() == "wobble fetch-models --configfile configs/paper.yaml"


def test_cli_fetch_models_acquires_the_data_then_the_models_the_run_loads(monkeypatch, capsys):
    ran, fetched = [], []
    monkeypatch.setattr(cli, "_snakemake", lambda args, *targets: ran.append(targets) or 0)
    monkeypatch.setattr("wobble.models.fetch.fetch_models",
                        lambda config, keys, wheel_dir: fetched.extend(keys) or [f"models.{k}: ok" for k in keys])
    assert cli.main(["fetch-models", "--configfile", str(cli.ROOT / "configs" / "paper.yaml")]) == 0
    assert ran == [("data",)]
    assert "bert-base-multilingual-cased" in fetched and "t5-11b" in fetched and "tk-11b" not in fetched
    out = capsys.readouterr().out.splitlines()
    assert out[-1].endswith("cluster jobs run with HF_HUB_OFFLINE=1 (docs/cluster.md)")
    assert cli.main(["fetch-models", "--configfile", "no-such.yaml"]) == 2
