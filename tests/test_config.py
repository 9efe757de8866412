"""Config validation: one-line errors naming the key and the expectation; defaults filled."""

import copy
import re
import subprocess

import pytest
import yaml

from conftest import REPO, SNAKEMAKE
from wobble.config import check_pinned_revisions, fill_defaults, load_schema, validate_config
from wobble.errors import ConfigError, WobbleError
from wobble.models.revisions import unpinned_revisions

SCHEMA = REPO / "schemas" / "config.schema.yaml"


def load(name):
    return yaml.safe_load((REPO / name).read_text())


@pytest.mark.parametrize("name", ["config.yaml", "configs/smoke.yaml", "configs/paper.yaml", "configs/reference.yaml"])
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
    ft = {"finetune": {"base": "nope", "data": "superni_train", "method": "lora"}}
    check_error(lambda c: c["models"].update(ft=ft), "models.ft.finetune.base", "'nope' is not defined")


def test_unknown_source():
    check_error(lambda c: c["data"]["sources"].append("imagenet"), "data.sources[17]", "unknown source 'imagenet'")


def test_defaults_are_filled():
    cfg = load("config.yaml")
    del cfg["data"]["download_timeout_s"]
    validate_config(cfg, SCHEMA)
    assert cfg["data"]["download_timeout_s"] == 30


def test_a_run_writes_under_results_unless_its_config_says_where_else_under_results():
    cfg = validate_config(load("config.yaml"), SCHEMA)
    assert cfg["results_root"] == "results"
    assert validate_config(load("configs/reference.yaml"), SCHEMA)["results_root"] == "results/reference"
    for bad in ("out", "results/", "/tmp/results", "results/../x"):
        check_error(lambda c, bad=bad: c.update(results_root=bad), "results_root", f"{bad!r} does not match")


def test_unknown_section_lists_registered_studies():
    cfg = load("config.yaml")
    cfg["icl_biass"] = {"enabled": True}
    with pytest.raises(ConfigError) as e:
        validate_config(cfg, SCHEMA)
    msg = str(e.value)
    assert e.value.key == "<root>" and "\n" not in msg
    assert "unknown section(s) ['icl_biass']" in msg
    from wobble.studies import STUDIES

    assert f"registered study {list(STUDIES)}" in msg and "'probe'" in msg


def test_every_study_model_reference_is_checked():
    check_error(lambda c: c["instructions"]["models"].__setitem__(0, "nope-model"), "instructions.models[0]",
                "model key 'nope-model' is not defined")
    check_error(lambda c: c["followup"].update(judge_model="nope-judge"), "followup.judge_model",
                "'nope-judge' is not defined")
    check_error(lambda c: c["first_token"].update(judge_model="nope-judge"), "first_token.judge_model",
                "'nope-judge' is not defined")
    check_error(lambda c: c["first_token"]["models"].append("nope-chat"),
                f"first_token.models[{len(load('config.yaml')['first_token']['models'])}]", "'nope-chat'")


@pytest.mark.parametrize("section, key, value", [("instructions", "models[0]", "nope-model"),
                                                 ("first_token", "judge_model", "nope-judge")])
def test_check_config_command_names_the_bad_model_in_one_line(tmp_path, section, key, value):
    cfg = load("configs/smoke.yaml")
    cfg[section][key.split("[")[0]] = [value] if "[" in key else value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([str(SNAKEMAKE.with_name("wobble")), "check-config", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"config error at '{section}.{key}': model key {value!r} is not defined" in lines[0]


SHA = "0123456789abcdef0123456789abcdef01234567"  # well-formed; these tests download nothing


def _pinned_paper():
    cfg = load("configs/paper.yaml")
    for spec in cfg["models"].values():
        if spec.get("source") == "hub":
            spec["revision"] = SHA
    return cfg


def test_paper_scale_refuses_a_hub_model_not_pinned_to_a_commit():
    cfg = validate_config(_pinned_paper(), SCHEMA)
    check_pinned_revisions(cfg)  # every hub model at a commit: fine
    for revision in ("main", "v1.0", SHA[:12], SHA.upper(), None):
        bad = copy.deepcopy(cfg)
        if revision is None:
            del bad["models"]["vicuna-13b-v1.3"]["revision"]  # absent = main
        else:
            bad["models"]["vicuna-13b-v1.3"]["revision"] = revision
        with pytest.raises(ConfigError) as e:
            check_pinned_revisions(bad)
        assert e.value.key == "models.vicuna-13b-v1.3.revision" and "\n" not in str(e.value)
        assert f"got {revision or 'main'!r}" in str(e.value) and "40-hex commit sha" in str(e.value)
    # below paper scale a branch is allowed; a config's other sources never count
    check_pinned_revisions({**cfg, "scale": "demo", "models": {"m": {"source": "hub", "id": "a/b"}}})
    assert unpinned_revisions({"models": {"g": {"source": "pypi-gguf"}, "h": {"source": "hub", "revision": SHA}}}) == {}


def test_shipped_paper_config_pins_every_hub_model_and_declares_none_it_does_not_run(tmp_path):
    """configs/paper.yaml pins its eleven hub models (the masked LM included) to commits and declares no model that
    nothing runs, so check-config passes; a config that runs a model at `main` is refused in one line naming it and
    the command that pins it."""
    from wobble.config import models_in_use

    cfg = load("configs/paper.yaml")
    hub = {k: spec for k, spec in cfg["models"].items() if spec.get("source") == "hub"}
    assert unpinned_revisions(cfg) == {} and len(hub) == 11
    assert all(re.fullmatch(r"[0-9a-f]{40}", str(spec["revision"])) for spec in hub.values())
    unused = set(cfg["models"]) - set(models_in_use(cfg)) - {"llama2-70b-chat-vllm"}  # the documented alternative
    assert unused == set(), unused
    assert "bert-base-multilingual-cased" in models_in_use(cfg)  # instructions.masked_lm, through the registry
    wobble = str(SNAKEMAKE.with_name("wobble"))
    proc = subprocess.run([wobble, "check-config", str(REPO / "configs" / "paper.yaml")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    cfg["models"]["tk-instruct-3b-def-pos"] = {"source": "hub", "id": "allenai/tk-instruct-3b-def-pos",
                                               "revision": "main", "kind": "seq2seq", "params_b": 2.9}
    cfg["instructions"]["models"] = ["tk-instruct-3b-def-pos"]
    path = tmp_path / "paper-tk.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([wobble, "check-config", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert "tk-instruct-3b-def-pos" in line and "wobble pin-revisions" in line


def test_study_fragment_defaults_are_filled():
    cfg = load("configs/smoke.yaml")
    for key in ("bootstrap", "finetune", "n_shuffles"):
        cfg["first_token"].pop(key)
    cfg["instructions"].pop("selection_seed")
    validate_config(cfg, SCHEMA)
    ft = cfg["first_token"]
    assert ft["enabled"] is True and ft["n_shuffles"] == 10 and ft["bootstrap"] == {"n": 1000, "seed": 0}
    assert ft["finetune"]["lora_r"] == 8
    assert cfg["instructions"]["enabled"] is True and cfg["instructions"]["selection_seed"] == 0


SYNTHETIC_SCHEMA = """
type: object
properties:
  a: &obj
    type: object
    default: {}
    properties:
      x: {type: integer, default: 1}
      inner: {type: object, default: {}, properties: {y: {type: integer, default: 2}}}
  b: *obj
  c: {$ref: "#/$defs/thing"}
  items: {type: array, items: {$ref: "#/$defs/thing"}}
  named: {type: object, additionalProperties: {$ref: "#/$defs/thing"}}
  kind: {type: object, if: {required: [fast]}, then: {properties: {speed: {default: 9}}},
         else: {properties: {speed: {default: 1}}}}
  both: {allOf: [{properties: {p: {default: 5}}}, {properties: {q: {default: 6}}}]}
$defs:
  thing: {type: object, properties: {z: {type: integer, default: 3}}}
"""


def test_fill_defaults_nested_refs_anchors_items_and_branches():
    schema = yaml.safe_load(SYNTHETIC_SCHEMA)
    inst = {"b": {"x": 7}, "c": {}, "items": [{}, {"z": 0}], "named": {"k": {}}, "kind": {"fast": True},
            "both": {}}
    fill_defaults(schema, inst)
    assert inst["a"] == {"x": 1, "inner": {"y": 2}}  # default object, then its own defaults
    assert inst["b"] == {"x": 7, "inner": {"y": 2}}  # same (anchored) schema, given value kept
    assert inst["c"] == {"z": 3} and inst["items"] == [{"z": 3}, {"z": 0}] and inst["named"] == {"k": {"z": 3}}
    assert inst["kind"] == {"fast": True, "speed": 9}
    assert inst["both"] == {"p": 5, "q": 6}
    slow = {"kind": {}}
    fill_defaults(schema, slow)
    assert slow["kind"] == {"speed": 1}


def test_yaml_anchors_in_a_config_do_not_share_filled_defaults():
    text = (REPO / "configs/smoke.yaml").read_text()
    ft = text.index("\nfirst_token:")
    text = text[:ft] + text[ft:].replace("bootstrap: {n: 50, seed: 0}", "bootstrap: &boot {n: 50}", 1)
    start = text.index("  finetune: {max_steps")
    end = text.index("\n", text.index("seed: 0}", start))
    cfg = yaml.safe_load(text[:start] + "  finetune: *boot" + text[end:])
    assert cfg["first_token"]["finetune"] is cfg["first_token"]["bootstrap"]
    validate_config(cfg, SCHEMA)
    assert cfg["first_token"]["bootstrap"] == {"n": 50, "seed": 0}
    finetune = cfg["first_token"]["finetune"]  # its own defaults filled; none leaked into bootstrap through the alias
    assert finetune["n"] == 50 and finetune["max_steps"] == 10 and "max_steps" not in cfg["first_token"]["bootstrap"]


def test_fragment_defs_are_hoisted_and_collisions_refused(tmp_path, monkeypatch):
    (tmp_path / "studies").mkdir()
    shared = yaml.safe_load((REPO / "schemas/config.schema.yaml").read_text())
    (tmp_path / "config.schema.yaml").write_text(yaml.safe_dump(shared))
    from wobble.studies import STUDIES

    for name in STUDIES:
        frag = yaml.safe_load((REPO / f"schemas/studies/{name}.schema.yaml").read_text())
        if name == "first_token":
            frag["$defs"] = {"ft_level": {"type": "integer", "default": 4}}
            frag["properties"]["level"] = {"$ref": "#/$defs/ft_level"}
        (tmp_path / "studies" / f"{name}.schema.yaml").write_text(yaml.safe_dump(frag))
    schema = load_schema(tmp_path / "config.schema.yaml")
    assert schema["$defs"]["ft_level"]["default"] == 4
    cfg = load("configs/smoke.yaml")
    validate_config(cfg, tmp_path / "config.schema.yaml")
    assert cfg["first_token"]["level"] == 4
    frag = yaml.safe_load((tmp_path / "studies/first_token.schema.yaml").read_text())
    frag["$defs"] = {"dtype": {"type": "string"}}
    (tmp_path / "studies/first_token.schema.yaml").write_text(yaml.safe_dump(frag))
    with pytest.raises(WobbleError, match="dtype is already defined"):
        load_schema(tmp_path / "config.schema.yaml")


def test_model_label_names_the_source_of_every_kind_of_model():
    from wobble.models.describe import model_label

    models = {"g": {"source": "pypi-gguf", "kind": "causal", "gguf": {"packages": [
                  {"name": "p-part1", "version": "0.9"}, {"name": "p-part2", "version": "0.9"}]}},
              "h": {"source": "hub", "id": "org/m", "kind": "seq2seq"},
              "t": {"finetune": {"base": "h", "method": "lora", "data": "superni_train"}}}
    assert model_label(models, "g") == "g (pypi-gguf: p-part1==0.9 + 1 more wheels, causal)"
    assert model_label(models, "t") == "t = h (hub: org/m, seq2seq) + lora finetune on superni_train"


# ---------------------------------------------------------------- one vocabulary: shared keys, retired keys
def _set_path(cfg, dotted, value):
    *parents, last = dotted.split(".")
    node = cfg
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


@pytest.mark.parametrize("old", sorted(__import__("wobble.config", fromlist=["RETIRED_KEYS"]).RETIRED_KEYS))
def test_a_retired_key_stops_validation_with_one_line_naming_its_replacement(old):
    from wobble.config import RETIRED_KEYS

    cfg = copy.deepcopy(load("config.yaml"))
    _set_path(cfg, old, 1)
    with pytest.raises(ConfigError) as e:
        validate_config(cfg, SCHEMA, source="config.yaml")
    assert str(e.value) == f"config.yaml: {old} is retired: use {RETIRED_KEYS[old]}"


def test_every_retired_keys_replacement_is_a_key_of_the_schema():
    from wobble.config import RETIRED_KEYS

    schema = load_schema(SCHEMA)
    for old, new in RETIRED_KEYS.items():
        node = schema
        for part in new.split(" ")[0].split("."):
            node = node["properties"][part]
            node = schema["$defs"][node["$ref"].split("/")[-1]] | node if "$ref" in node else node
        *parents, last = old.split(".")
        parent = schema
        for part in parents:
            parent = parent["properties"][part]
        assert last not in parent.get("properties", {}), f"{old} is retired but still a schema key"


def test_check_config_names_the_file_and_the_replacement_of_a_retired_key(tmp_path, capsys):
    from wobble.cli import main

    cfg = load("configs/smoke.yaml")
    cfg["followup"]["judge"] = cfg["followup"].pop("judge_model")
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["check-config", str(path)]) == 2
    assert capsys.readouterr().err == f"wobble: {path}: followup.judge is retired: use followup.judge_model\n"


def test_the_studies_share_one_definition_of_each_common_key():
    """models, judge_model, temperature(s), max_new_tokens, bootstrap and the n_<unit> sample sizes refer to the
    shared $defs of config.schema.yaml wherever a study has them; every n_<unit> key says its unit."""
    from wobble.studies import STUDIES

    shared = {"models": "model_keys", "judge_model": "judge_model", "temperature": "temperature",
              "temperatures": "temperatures", "max_new_tokens": "max_new_tokens", "bootstrap": "bootstrap"}
    schema = load_schema(SCHEMA)

    def keys(node, path):
        for key, sub in (node.get("properties") or {}).items():
            yield f"{path}.{key}", key, sub
            yield from keys(sub, f"{path}.{key}")

    seen = set()
    for study in STUDIES:
        for where, key, sub in keys(schema["properties"][study], study):
            if key in shared:
                assert sub.get("$ref") == f"#/$defs/{shared[key]}", where
                seen.add(key)
            if key.startswith("n_"):
                assert sub.get("description"), f"{where}: a sample size says its unit"
    assert seen == set(shared)


def test_temperature_is_the_main_one_and_temperatures_the_sweeps_others():
    cfg = load("config.yaml")
    validate_config(cfg, SCHEMA)
    assert cfg["first_token"]["temperature"] not in cfg["first_token"]["temperatures"]
    for study in ("first_token", "followup"):
        cfg = load("config.yaml")
        cfg[study]["temperatures"] = [cfg[study]["temperature"], *cfg[study]["temperatures"]]
        with pytest.raises(ConfigError, match=rf"'{study}.temperatures': the sweep's other temperatures only"):
            validate_config(cfg, SCHEMA)
