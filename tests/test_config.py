"""Config validation: one-line errors naming the key and the expectation; defaults filled."""

import copy

import pytest
import yaml

from conftest import REPO
from wobble.config import validate_config
from wobble.errors import ConfigError

SCHEMA = REPO / "schemas" / "config.schema.yaml"


def load(name):
    return yaml.safe_load((REPO / name).read_text())


@pytest.mark.parametrize("name", ["config.yaml", "configs/smoke.yaml", "configs/paper.yaml"])
def test_shipped_configs_are_valid(name):
    validate_config(load(name), SCHEMA)


def check_error(mutate, key, fragment):
    cfg = copy.deepcopy(load("config.yaml"))
    mutate(cfg)
    with pytest.raises(ConfigError) as e:
        validate_config(cfg, SCHEMA)
    msg = str(e.value)
    assert "\n" not in msg
    assert e.value.key == key, msg
    assert fragment in msg, msg


def test_unknown_key_is_named():
    check_error(lambda c: c["data"].update(mirorr="x"), "data", "unknown key(s) ['mirorr']")


def test_unknown_key_in_model_spec():
    check_error(lambda c: c["models"]["gemma-270m"].update(colour="red"), "models.gemma-270m", "['colour']")


def test_wrong_type_is_named():
    check_error(lambda c: c["models"]["gemma-270m"].update(batch_size="eight"), "models.gemma-270m.batch_size",
                "expected integer")


def test_missing_required_by_source():
    check_error(lambda c: c["models"]["gemma-270m"].pop("package"), "models.gemma-270m", "'package' is required")


def test_undefined_model_reference():
    check_error(lambda c: c["probe"].update(models=["gpt-17"]), "probe.models[0]", "'gpt-17' is not defined")


def test_undefined_finetune_base():
    check_error(lambda c: c["models"].update(ft={"finetune": {"base": "nope", "data": "superni_train", "method": "lora"}}),
                "models.ft.finetune.base", "'nope' is not defined")


def test_unknown_source():
    check_error(lambda c: c["data"]["sources"].append("imagenet"), "data.sources[17]", "unknown source 'imagenet'")


def test_defaults_are_filled():
    cfg = load("config.yaml")
    del cfg["data"]["download_timeout_s"]
    validate_config(cfg, SCHEMA)
    assert cfg["data"]["download_timeout_s"] == 30
