"""A user's config in ten lines: its base merged under it, its studies selected, its own results folder; the checks
check-config makes before any job runs; every example under configs/examples/ checked and dry-run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNAKEMAKE
from loopback_http import Upstream
from support import planned_jobs
from wobble import preflight
from wobble.config import models_in_use, validate_config
from wobble.errors import ConfigError
from wobble.models.tiny import write_tiny_gguf
from wobble.resolve import deep_merge, resolve, resolve_file
from wobble.studies import STUDIES

SCHEMA = REPO / "schemas" / "config.schema.yaml"
EXAMPLES = sorted((REPO / "configs" / "examples").glob("*.yaml"))
WOBBLE = str(SNAKEMAKE.with_name("wobble"))


def write(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def user(tmp_path: Path, **keys) -> dict:
    """The resolved and validated config of a file in ``tmp_path`` holding ``keys`` on the checkout's config.yaml."""
    return validate_config(resolve_file(write(tmp_path / "mine.yaml", {"base": str(REPO / "config.yaml"), **keys})),
                           SCHEMA)


def check_config(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([WOBBLE, "check-config", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_mappings_merge_key_by_key_and_lists_and_scalars_replace():
    base = {"a": {"x": 1, "y": [1, 2], "z": {"p": 1}}, "b": 2}
    merged = deep_merge(base, {"a": {"y": [3], "z": {"q": 2}}, "b": None, "c": 4})
    assert merged == {"a": {"x": 1, "y": [3], "z": {"p": 1, "q": 2}}, "b": None, "c": 4}
    assert base == {"a": {"x": 1, "y": [1, 2], "z": {"p": 1}}, "b": 2}  # the base is not changed


def test_a_config_with_a_base_says_only_what_differs(tmp_path):
    cfg = user(tmp_path, name="mine", studies=["first_token"],
               models={"m": {"source": "tiny", "kind": "causal"}}, first_token={"models": ["m"], "n_questions": 4})
    assert cfg["results_root"] == "results/mine" and "base" not in cfg
    assert cfg["first_token"]["models"] == ["m"] and cfg["first_token"]["n_questions"] == 4
    assert cfg["first_token"]["n_shuffles"] == 10 and "gemma-270m" in cfg["models"]  # from the base
    from wobble.studies import disabled_reason

    assert [s for s in STUDIES if disabled_reason(cfg, s) is None] == ["first_token"]
    assert "not in studies" in disabled_reason(cfg, "followup")
    assert models_in_use(cfg) == ["m", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct"]  # judge, classifier


def test_the_base_path_is_relative_to_the_file_and_its_name_and_results_root_are_not_inherited(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "mid.yaml", {"base": str(REPO / "configs" / "reference.yaml"), "name": "mid"})
    cfg = resolve_file(write(tmp_path / "run.yaml", {"base": "sub/mid.yaml"}))
    assert cfg["results_root"] == "results/run" and cfg["name"] == "run"  # the file's stem, not results/reference
    with pytest.raises(ConfigError, match=r"'base': 'nope.yaml': no such file"):
        resolve_file(write(tmp_path / "bad.yaml", {"base": "nope.yaml"}))


def test_a_study_given_its_own_models_drops_the_bases_entries_of_the_others(tmp_path):
    cfg = user(tmp_path, models={"m": {"source": "tiny", "kind": "causal"}},
               followup={"models": ["m"], "paper_models": {"m": "Vicuna-13B"}}, icl_bias={"models": ["m"]})
    assert cfg["followup"]["paper_models"] == {"m": "Vicuna-13B"} and cfg["icl_bias"]["paper_models"] == {}


@pytest.mark.parametrize("keys, pattern", [
    ({"results_root": "results"}, r"'results_root': 'results' is the default run's committed results"),
    ({"name": "first_token"}, r"'results/first_token' is a folder of the committed results"),
    ({"name": "reference"}, r"'results/reference' is a folder of the committed results"),
])
def test_a_users_run_never_writes_into_the_committed_results(tmp_path, keys, pattern):
    with pytest.raises(ConfigError, match=pattern) as e:
        user(tmp_path, **keys)
    assert "\n" not in str(e.value)


def test_a_named_run_keeps_its_logs_and_benchmarks_in_its_folder(tmp_path):
    from wobble.paths import benchmark_dir, log_dir

    cfg = user(tmp_path, name="mine")
    assert (log_dir(cfg), benchmark_dir(cfg)) == ("results/mine/logs", "results/mine/benchmarks")
    assert resolve({"scale": "demo"}, tmp_path) == {"scale": "demo"}  # a whole config without base or name: as is


@pytest.mark.parametrize("edit, pattern", [
    ({"studies": ["first_tokn"]}, r"'studies\[0\]': unknown study 'first_tokn'; did you mean 'first_token'\?"),
    ({"first_token": {"n_question": 3}}, r"unknown key\(s\) \['n_question'\]; did you mean 'n_questions'\?"),
    ({"folowup": {}}, r"unknown section\(s\) \['folowup'\]; did you mean 'followup'\?"),
])
def test_a_mistyped_name_suggests_the_nearest(tmp_path, edit, pattern):
    with pytest.raises(ConfigError, match=pattern) as e:
        user(tmp_path, **edit)
    assert "\n" not in str(e.value)


def test_a_finetuned_model_without_the_instructions_recipe_is_refused():
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    del cfg["instructions"]
    with pytest.raises(ConfigError, match=r"'models\.gemma-270m-ni\.finetune': .* no instructions: section"):
        validate_config(cfg, SCHEMA)


def test_preflight_finds_missing_files_commands_and_servers(tmp_path):
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    models = {
        "ok": {"source": "local", "path": str(tmp_path / "ckpt"), "kind": "causal"},
        "gone": {"source": "local", "path": str(tmp_path / "nope"), "kind": "causal"},
        "nogguf": {"source": "local", "path": str(tmp_path), "gguf_file": "x.gguf", "kind": "causal"},
        "srv": {"source": "openai", "kind": "causal", "model": "s",
                "server": {"command": ["no-such-server-xyz", "-m", str(tmp_path / "m.gguf"), "--port", "{port}"]}},
        "srv2": {"source": "openai", "kind": "causal", "model": "s",
                 "server": {"command": ["{python}", "-m", "no_such_module_xyz", "-m", str(tmp_path / "x.gguf"),
                                        "--port", "{port}"]}},
    }
    cfg = user(tmp_path, models=models, studies=["followup"], followup={"models": list(models)})
    assert preflight.missing_files(cfg) == [
        f"models.gone.path: {tmp_path / 'nope'} does not exist",
        f"models.nogguf.gguf_file: {tmp_path / 'x.gguf'} does not exist",
        f"models.srv2.server.command: the GGUF file {tmp_path / 'x.gguf'} does not exist"]
    assert preflight.missing_commands(cfg) == [
        "models.srv.server.command: 'no-such-server-xyz' is not installed (not found on PATH)",
        "models.srv2.server.command: python module 'no_such_module_xyz' is not installed (pip install no_such_module_xyz)"]


def test_a_running_server_that_does_not_answer_is_named(tmp_path):
    with Upstream({"/v1/models": b'{"data": []}'}) as up:
        live = up.url
        models = {"live": {"source": "openai", "kind": "causal", "model": "s", "base_url": f"{live}/v1"},
                  "dead": {"source": "openai", "kind": "causal", "model": "s", "base_url": "http://127.0.0.1:9/v1"}}
        cfg = user(tmp_path, models=models, studies=["followup"], followup={"models": ["live", "dead"]})
        (line, local), = preflight.silent_servers(cfg, timeout_s=2)
    assert local and line.startswith("models.dead.base_url: no server answers at http://127.0.0.1:9/v1")


def test_an_unpinned_hub_revision_is_refused_with_the_command_that_pins_it(tmp_path):
    hub = {"source": "hub", "id": "a/b", "revision": "main", "kind": "causal"}
    path = write(tmp_path / "mine.yaml", {"base": str(REPO / "config.yaml"), "studies": ["icl_bias"],
                                          "models": {"h": hub}, "icl_bias": {"models": ["h"]}})
    proc = check_config(str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "models.h.revision: 'main' is not a 40-hex commit sha" in line and f"wobble pin-revisions {path}" in line
    proc = check_config(str(path), "--allow-unpinned")
    assert proc.returncode == 0 and "study icl_bias: runs" in proc.stdout
    (warning,) = proc.stderr.splitlines()
    assert "warning" in warning and "models.h.revision" in warning


def test_check_config_prints_the_resolved_config(tmp_path):
    path = REPO / "configs" / "examples" / "hub.yaml"
    proc = check_config(str(path), "--resolved")
    assert proc.returncode == 0, proc.stderr
    cfg = yaml.safe_load(proc.stdout)
    assert cfg["results_root"] == "results/mistral-7b" and cfg["studies"] == ["first_token", "followup"]
    assert cfg["first_token"]["n_questions"] == 16 and "base" not in cfg
    validate_config(cfg, SCHEMA)  # what it prints is a whole config


def test_a_config_with_no_model_of_known_size_says_not_checked():
    proc = check_config("config.yaml")
    assert proc.returncode == 0 and "model weights: not checked" in proc.stdout


# What each shipped example needs on this machine, and the one line check-config prints without it.
NEEDS = {
    "gguf.yaml": ("/models/gguf", "model.Q4_K_M.gguf", "models.my-gguf.path: /models/gguf does not exist"),
    "local.yaml": ("/models/my-checkpoint", None, "models.my-ckpt.path: /models/my-checkpoint does not exist"),
    "llamacpp.yaml": (None, "/models/model.Q4_K_M.gguf",
                      "models.my-llamacpp.server.command: the GGUF file /models/model.Q4_K_M.gguf does not exist"),
    "server.yaml": (None, None, "models.my-server.base_url: no server answers at http://localhost:8080/v1"),
    "hub.yaml": (None, None, None),
}


def test_every_example_is_short_and_has_its_case():
    assert {p.name for p in EXAMPLES} == set(NEEDS)
    for path in EXAMPLES:
        text = path.read_text()
        assert len(text.splitlines()) <= 13 and "base: ../../config.yaml" in text, path


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_each_example_passes_check_config_once_what_it_needs_exists(name, tmp_path):
    src = REPO / "configs" / "examples" / name
    folder, gguf, line = NEEDS[name]
    proc = check_config(f"configs/examples/{name}")
    if line is None:
        assert proc.returncode == 0, proc.stderr
    else:  # as shipped, what it points at is not on this machine: the one line naming it
        assert proc.returncode == 2 and proc.stderr.splitlines() == [f"wobble: configs/examples/{name}: " + line
                                                                     + proc.stderr.split(line, 1)[1].rstrip("\n")]
    text = src.read_text().replace("../../config.yaml", str(REPO / "config.yaml"))
    fake = tmp_path / "fake"
    if folder:
        (fake / folder.lstrip("/")).mkdir(parents=True)
        text = text.replace(folder, str(fake / folder.lstrip("/")))
    if gguf:
        target = fake / folder.lstrip("/") / gguf if folder else fake / gguf.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        write_tiny_gguf(target)
    if gguf and not folder:
        text = text.replace(gguf, str(target))
    with Upstream({"/v1/models": b'{"data": []}'}) as up:
        text = text.replace("http://localhost:8080", up.url)
        proc = check_config(str(write_text(tmp_path / name, text)))
    assert proc.returncode == 0, proc.stderr
    assert f"(results under results/{yaml.safe_load(text)['name']}/)" in proc.stdout


def write_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def dry_run(configfile: str, *targets: str) -> subprocess.CompletedProcess:
    cmd = [str(SNAKEMAKE), "-n", *targets, "--cores", "2", "--configfile", configfile]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_each_example_plans_every_study_it_selects(name):
    proc = dry_run(f"configs/examples/{name}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = resolve_file(REPO / "configs" / "examples" / name)
    jobs = planned_jobs(proc)
    for study in cfg["studies"]:
        assert any(rule.startswith(study) for rule in jobs), (study, jobs)
    assert not any(rule.startswith(s) for s in set(STUDIES) - set(cfg["studies"]) for rule in jobs), jobs
    assert "probe" not in jobs and f"log: results/{cfg['name']}/logs/" in proc.stdout


@pytest.mark.parametrize("left_out", list(STUDIES))
def test_a_study_left_out_needs_no_section(left_out, tmp_path):
    """Without the base: the file holds every section but the left-out one, which no rule reads."""
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    del cfg[left_out]
    cfg["studies"] = [s for s in STUDIES if s != left_out]
    cfg["name"] = f"without-{left_out}"
    if left_out == "instructions":  # its finetune made gemma-270m-ni: icl_bias takes the base model alone
        cfg["icl_bias"].update(models=["gemma-270m"], paper_models={"gemma-270m": "Davinci"})
        del cfg["models"]["gemma-270m-ni"]
    proc = dry_run(str(write(tmp_path / "run.yaml", cfg)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not any(rule.startswith(left_out) for rule in planned_jobs(proc))


def test_a_mistyped_target_lists_the_valid_ones():
    proc = dry_run("configs/examples/hub.yaml", "first_tokn")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "No rule to produce" not in out
    (line,) = [ln for ln in out.splitlines() if "first_tokn" in ln and "Command:" not in ln]
    assert line.startswith("no study or rule named 'first_tokn'; did you mean 'first_token'? the targets are")


def test_a_mistyped_table_lists_the_studys_tables():
    from wobble.snake import command_line_targets, target_problem

    rules = {"all", "first_token"}
    assert target_problem("results/first_token/tables/table3.md", rules, "results") is None
    assert target_problem("results/first_token/tables/figure2.md", rules, "results") is None  # a figure's numbers
    line = target_problem("results/first_token/tables/tabel3.md", rules, "results")
    assert line.startswith("results/first_token/tables/tabel3.md: study 'first_token' has no table 'tabel3'; "
                           "did you mean 'table3'? its tables are ['table1'")
    assert "no study named 'first_tokn'" in target_problem("results/first_tokn/tables/table3.md", rules, "results")
    assert target_problem("results/first_token/findings.md", rules, "results") is None
    assert command_line_targets(["/x/snakemake", "-n", "first_tokn", "--configfile", "a.yaml"]) == ["first_tokn"]
    assert command_line_targets(["pytest", "first_tokn"]) == []


def test_audit_of_a_path_that_never_existed_says_so(capsys):
    from wobble import cli

    assert cli.main(["audit", "results/first_token/tables/tabel3.md"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "no such file, and no run recorded one there" in line and "never existed" in line


def test_the_readme_shows_the_gguf_example_as_shipped():
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Run your own model", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    shipped = (REPO / "configs" / "examples" / "gguf.yaml").read_text()
    assert block == "".join(ln for ln in shipped.splitlines(keepends=True) if not ln.startswith("#"))
