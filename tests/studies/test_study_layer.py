"""The shared study layer: registry invariants, the Snakefile's loops over the registry (plans, switching
a study off, one study's target), the generic render rules, and a fake third study registered at test time
that runs end to end without any shared file being edited."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNAKEMAKE, copy_workflow, run_snakemake
from wobble.config import validate_config
from wobble.snake import named_inputs
from wobble.studies import STUDIES, disabled_reason, enabled, registry, render_code_digest

SCHEMA = REPO / "schemas" / "config.schema.yaml"


def smoke_config() -> dict:
    return validate_config(yaml.safe_load((REPO / "configs/smoke.yaml").read_text()), SCHEMA)


# ---------------------------------------------------------------- registry invariants
@pytest.mark.parametrize("name", list(STUDIES))
def test_every_registered_study_declares_what_the_shared_layer_needs(name):
    spec = registry()[name]
    assert (REPO / spec.schema).is_file(), spec.schema
    assert (REPO / spec.rules).is_file(), spec.rules
    names = [o.name for o in spec.outputs]
    assert len(names) == len(set(names)), names
    for out in spec.outputs:
        assert out.study == name
        assert out.name.startswith(out.kind) and out.kind in ("table", "figure")
        assert out.caption.strip(), f"{name}/{out.name} has no caption"
        assert callable(out.builder()), out.build
        for stem in out.paper:
            assert (REPO / "paper" / name / f"{stem}.csv").is_file(), (name, stem)
    cfg = smoke_config()
    for target in spec.targets(cfg):
        assert target.startswith(f"results/{name}/"), target


@pytest.mark.parametrize("name", list(STUDIES))
def test_declared_inputs_of_every_output_are_paths(name):
    cfg = smoke_config()
    for out in registry()[name].outputs:
        inputs = {**out.inputs(cfg), **out.paper_inputs()}
        for key, value in inputs.items():
            values = value if isinstance(value, (list, tuple)) else [value]
            assert values and all(isinstance(v, str) and v for v in values), (out.name, key)


def test_a_study_is_off_without_section_when_switched_off_or_missing_sources():
    cfg = smoke_config()
    assert list(enabled(cfg)) == list(STUDIES)
    name = next(iter(STUDIES))
    off = dict(cfg, **{name: dict(cfg[name], enabled=False)})
    assert disabled_reason(off, name) == f"{name}.enabled is false" and name not in enabled(off)
    absent = {k: v for k, v in cfg.items() if k != name}
    assert "no 'instructions:' section" in disabled_reason(absent, "instructions")
    needed = registry()[name].sources[0]
    no_source = dict(cfg, data=dict(cfg["data"], sources=[s for s in cfg["data"]["sources"] if s != needed]))
    assert f"needs source(s) ['{needed}']" in disabled_reason(no_source, name)


def test_named_inputs_follow_the_declared_shape():
    declared = {"scores": ["a.json"], "paper_table4": "paper/x/table4.csv", "many": ["b", "c"]}
    given = {"scores": "a.json", "paper_table4": "paper/x/table4.csv", "many": ["b", "c"]}
    assert named_inputs(given, declared) == {"scores": ["a.json"], "paper_table4": "paper/x/table4.csv",
                                             "many": ["b", "c"]}


# ---------------------------------------------------------------- the workflow loops over the registry
def planned(workdir: Path, *targets: str) -> dict[str, str]:
    """output file -> rule of every job the workflow would run for ``targets`` (snakemake --summary)."""
    proc = run_snakemake(workdir, *targets, "--summary", timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    rows = [ln.split("\t") for ln in proc.stdout.splitlines() if "\t" in ln]
    assert rows and rows[0][:3] == ["output_file", "date", "rule"], proc.stdout[:500]
    return {r[0]: r[2] for r in rows[1:]}


@pytest.fixture
def workdir(tmp_path, mirror):
    copy_workflow(tmp_path)
    return tmp_path


def edit_config(workdir: Path, edit) -> None:
    cfg = yaml.safe_load((workdir / "run.yaml").read_text())
    edit(cfg)
    (workdir / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def test_smoke_config_plans_every_declared_table_and_figure_through_the_render_rules(workdir):
    plan = planned(workdir)
    for name, spec in registry().items():
        assert spec.outputs, f"study {name} declares no tables or figures"
        for out in spec.outputs:
            rule = "render_table" if out.kind == "table" else "render_figure"
            target = out.target({"results_root": "results"})
            assert plan.get(target) == rule, (target, plan.get(target))
            assert plan.get(f"results/{name}/tables/{out.name}.csv") == rule
    assert all(f"resources/prepared/{d}.jsonl" in plan for d in ("superni_test", "opinionqa_414", "mmlu"))


@pytest.mark.parametrize("name", list(STUDIES))
def test_switching_a_study_off_removes_its_targets_and_says_why(workdir, name):
    edit_config(workdir, lambda c: c[name].update(enabled=False))
    proc = run_snakemake(workdir, "--summary")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"wobble: study '{name}' is off: {name}.enabled is false" in proc.stderr
    assert proc.stderr.count(f"study '{name}' is off") == 1
    assert f"results/{name}/" not in proc.stdout
    cfg = smoke_config()
    others = [t for n, spec in registry().items() if n != name for t in spec.targets(cfg)]
    assert all(t in proc.stdout for t in others)


@pytest.mark.parametrize("name", list(STUDIES))
def test_one_study_target_plans_only_that_study(workdir, name):
    plan = planned(workdir, name)
    studies = {path.split("/")[1] for path, rule in plan.items() if rule.startswith("render_")}
    assert studies == {name}
    assert all(o.target({"results_root": "results"}) in plan for o in registry()[name].outputs)
    assert not any(p.startswith("results/probe/") for p in plan)


# ---------------------------------------------------------------- a third study, added without shared edits
TOY_SPEC = '''
"""A toy study registered only by the test: counts 0..n-1 and shows them beside a paper CSV."""
from wobble.report.spec import OutputSpec, StudySpec

INPUTS = lambda config: {"counts": "results/toy/scores/counts.json", "parts": ["results/toy/scores/counts.json"]}
OUTPUTS = (
    OutputSpec(study="toy", name="table1", kind="table", inputs=INPUTS, build="toy_study.tables:table1",
               caption="Toy **table 1**: our count beside the paper's.", paper=("table1",), join_keys=("item",)),
    OutputSpec(study="toy", name="figure1", kind="figure", inputs=INPUTS, build="toy_study.tables:figure1",
               caption="Toy figure 1: the counts as bars.", paper=("table1",)),
)
SPEC = StudySpec(name="toy", paper="Nobody 2024, Toy", sources=(), model_refs=(("model",),), outputs=OUTPUTS,
                 context=lambda config: {"scale": config["scale"], "n": config["toy"]["n"]})
'''

TOY_TABLES = '''
import json

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from wobble.report.spec import Figure, Table


def _frame(inputs):
    assert isinstance(inputs["parts"], list) and isinstance(inputs["counts"], str)
    counts = json.load(open(inputs["counts"]))["counts"]
    paper = pd.read_csv(inputs["paper_table1"])
    ours = pd.DataFrame({"item": range(len(counts)), "ours": counts})
    return ours.merge(paper, on="item", how="left")


def table1(inputs, context):
    tidy = _frame(inputs)
    display = tidy.astype(str)
    return Table("Toy table 1", display, tidy, (f"scale {context['scale']}, n = {context['n']}",))


def figure1(inputs, context):
    tidy = _frame(inputs)
    fig, ax = plt.subplots()
    ax.bar(tidy["item"], tidy["ours"])
    return Figure(fig, tidy, table=table1(inputs, context))
'''

TOY_RULES = '''
# The toy study's own step: count 0..n-1.
rule toy_count:
    output:
        "results/toy/scores/counts.json",
    params:
        n=lambda wildcards: config["toy"]["n"],
    log:
        "logs/toy/count.log",
    script:
        "../scripts/toy_count.py"
'''

# A study's steps are script: rules, as every study's: a run: job is re-executed by Snakemake 9 in a fresh
# process that merges config.yaml into the --configfile given (dicts such as icl_bias.paper_models merge).
TOY_SCRIPT = '''from wobble.io import write_json

write_json(snakemake.output[0], {"counts": list(range(snakemake.params.n))})
'''

TOY_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["model"],
              "properties": {"enabled": {"type": "boolean", "default": True},
                             "n": {"type": "integer", "minimum": 1, "default": 3},
                             "model": {"type": "string"}}}


def add_toy_study(workdir: Path, register: bool = True) -> dict:
    """Write what a new study writes (package, schema fragment, rules file, paper CSV, config section) and
    register it by one line, run in every Python process through a sitecustomize on PYTHONPATH."""
    pkg = workdir / "pkgs" / "toy_study"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "spec.py").write_text(TOY_SPEC)
    (pkg / "tables.py").write_text(TOY_TABLES)
    if register:
        (workdir / "pkgs" / "sitecustomize.py").write_text(
            "import wobble.studies\nwobble.studies.STUDIES['toy'] = 'toy_study.spec'\n")
    (workdir / "schemas" / "studies" / "toy.schema.yaml").write_text(yaml.safe_dump(TOY_SCHEMA))
    (workdir / "rules" / "toy.smk").write_text(TOY_RULES)
    (workdir / "scripts" / "toy_count.py").write_text(TOY_SCRIPT)
    (workdir / "paper" / "toy").mkdir()
    (workdir / "paper" / "toy" / "table1.csv").write_text("item,paper\n0,10\n1,11\n2,12\n")
    edit_config(workdir, lambda c: c.update(toy={"n": 2, "model": "tiny-causal"}))
    return {**os.environ, "PYTHONPATH": str(workdir / "pkgs")}


def snakemake_env(workdir: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    cmd = [str(SNAKEMAKE), *args, "--cores", "2", "--configfile", "run.yaml"]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=600, env=env)


def test_unregistered_study_section_is_refused_with_the_registered_list(workdir):
    env = add_toy_study(workdir, register=False)
    proc = snakemake_env(workdir, env, "-n")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "unknown section(s) ['toy']" in out and "registered study" in out


def test_toy_model_reference_is_checked(workdir):
    env = add_toy_study(workdir)
    edit_config(workdir, lambda c: c["toy"].update(model="nope-model"))
    proc = snakemake_env(workdir, env, "-n")
    assert proc.returncode != 0
    assert "config error at 'toy.model': model key 'nope-model' is not defined" in proc.stdout + proc.stderr


@pytest.mark.e2e
def test_a_registered_third_study_runs_renders_and_reports(workdir):
    env = add_toy_study(workdir)
    proc = snakemake_env(workdir, env, "all", "--summary")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {ln.split("\t")[0]: ln.split("\t")[2] for ln in proc.stdout.splitlines()[1:] if "\t" in ln}
    assert rows["results/toy/tables/table1.md"] == "render_table"
    assert rows["results/toy/figures/figure1.png"] == "render_figure"

    proc = snakemake_env(workdir, env, "toy")
    assert proc.returncode == 0, proc.stderr[-3000:]
    md = (workdir / "results/toy/tables/table1.md").read_text()
    assert "Toy table 1" in md and "scale smoke, n = 2" in md and "10" in md
    for ext in ("png", "pdf", "csv"):
        assert (workdir / f"results/toy/figures/figure1.{ext}").stat().st_size > 0
    assert (workdir / "results/toy/tables/figure1.md").is_file()
    prov = json.loads((workdir / "results/toy/tables/table1.md.prov.json").read_text())
    assert prov["rule"] == "render_table" and prov["wildcards"] == {"study": "toy", "name": "table1"}
    assert {i["path"] for i in prov["inputs"]} == {"results/toy/scores/counts.json", "paper/toy/table1.csv"}
    assert (workdir / "logs/toy/table1.log").exists() and (workdir / "results/benchmarks/toy/figure1.tsv").exists()

    proc = snakemake_env(workdir, env, "toy", "--report", "report.html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (workdir / "report.html").read_text()
    assert "Toy <strong>table 1</strong>: our count beside the paper" in html  # per-output caption, as rst
    assert "Toy figure 1: the counts as bars." in html


def test_render_code_digest_follows_the_studys_own_package_wherever_it_lives(tmp_path, monkeypatch):
    """The render rules' ``code`` param: a registered study outside wobble (its spec in ``pkgs/plug/spec.py``)
    is digested from its own package; editing its builder changes the digest, editing another study does not."""
    pkg = tmp_path / "pkgs" / "plug"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "spec.py").write_text("SPEC = None\n")
    (pkg / "tables.py").write_text("def build_table1(inputs, context):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    monkeypatch.setitem(STUDIES, "plug", "plug.spec")
    before = render_code_digest("plug")
    assert before == render_code_digest("plug") and len(before) == 32
    assert render_code_digest("followup") != render_code_digest("instructions")
    (pkg / "tables.py").write_text("def build_table1(inputs, context):\n    return 1\n")
    assert render_code_digest("plug") != before
    with pytest.raises(KeyError, match="unknown study 'nope'"):
        render_code_digest("nope")
