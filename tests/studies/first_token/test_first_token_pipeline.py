"""first_token pipeline: the config section (schema defaults, cross-field checks, the runs, inputs and targets it
plans) and an end-to-end scratch snakemake run. Prompts and inference are in test_first_token_inference.py,
the classifiers in test_first_token_classifiers.py, the metrics in test_first_token_aggregate.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from wobble.errors import ConfigError
from wobble.io import read_jsonl
from wobble.studies.first_token import layout


# ---------------------------------------------------------------------------------------------- config


def _section(**section):
    """A first_token section validated against the schema fragment (defaults filled) in the smoke config."""
    from wobble.config import validate_config

    repo = Path(__file__).resolve().parents[3]
    cfg = yaml.safe_load((repo / "configs" / "smoke.yaml").read_text())
    cfg["models"].update({k: {"source": "tiny", "kind": "causal"} for k in ("m", "a", "b", "j", "c")})
    cfg["first_token"] = section
    return validate_config(cfg, repo / "schemas" / "config.schema.yaml")["first_token"]


def test_schema_defaults_and_cross_field_checks():
    cfg = _section(models=["m"])
    assert cfg["n_shuffles"] == 10 and cfg["constraints"] == ["low", "medium", "high", "example", "example_abc"]
    assert layout.evaluator_names(cfg) == ["paper_regex", "string_match"]
    layout.check_section(cfg)  # the schema's defaults make a section the pipeline accepts
    cfg = _section(models=["m"], judge_model="j", classifier_base="c", judge_shots=[4, 0], peft_train_sizes=[1000, 80],
                   finetune={"max_steps": 3}, classifier="peft_80")
    assert layout.evaluator_names(cfg) == ["paper_regex", "string_match", "judge_0shot", "judge_4shot", "peft_80", "peft_1000"]
    assert cfg["finetune"]["max_steps"] == 3 and cfg["finetune"]["lora_r"] == 8  # nested default from the schema
    for bad, key in [({"classifier": "peft_80"}, "classifier"), ({"temperatures": [0.7, 0.701]}, "temperatures"),
                     ({"temperatures": [0.001, 0.7]}, "the main one \\(first_token.temperature 0.0\\) is not listed"),
                     ({"sweep_constraints": ["high"], "constraints": ["low"]}, "sweep_constraints")]:
        with pytest.raises(ConfigError, match=key):
            layout.check_section(_section(models=["m"], **bad))
    for bad, key in [({"constraints": ["extreme"]}, "constraints"), ({"paper_models": {"m": "gpt-4"}}, "paper_models"),
                     ({"colour": 1}, "colour")]:
        with pytest.raises(ConfigError, match=key):
            _section(models=["m"], **bad)


def test_paths_inputs_and_targets():
    from wobble.studies.first_token.spec import SPEC

    cfg = _section(models=["a", "b"], temperatures=[0.7], judge_model="j", judge_shots=[0], classifier_base="c",
                   peft_train_sizes=[80])
    assert layout.runs(cfg) == [("a", "0.00"), ("a", "0.70"), ("b", "0.00"), ("b", "0.70")]
    assert layout.run_constraints(cfg, "0.70") == ["medium"] and len(layout.run_constraints(cfg, "0.00")) == 5
    md = lambda k: f"resources/models/{k}"  # noqa: E731
    root = "results/first_token"
    assert "reuse" not in layout.infer_inputs(cfg, root, "a", "0.00", md)
    assert layout.infer_inputs(cfg, root, "a", "0.70", md)["reuse"] == "results/first_token/predictions/a/t0.00.jsonl"
    inputs = layout.label_inputs(cfg, root, "a", "0.00", md)
    assert inputs["judge_judge_0shot"] == "resources/models/j"
    assert inputs["classifier_peft_80"] == "results/first_token/finetune/classifier_peft_80"
    only_sm = layout.label_inputs({**cfg, "classifier": "string_match"}, root, "a", "0.00", md)
    assert set(only_sm) == {"predictions", "scores"}
    config = {"first_token": cfg, "results_root": "results"}
    targets = SPEC.targets(config)
    assert "results/first_token/tables/table5.md" in targets and "results/first_token/figures/figure7.png" in targets
    assert "results/first_token/findings.md" in targets
    ri = SPEC.output("figure2").inputs(config)
    assert ri["paper_mapping"] == "resources/prepared/opinionqa_paper_mapping.jsonl" and "metrics" in ri
    assert ri["metrics"] == "results/first_token/scores/metrics.jsonl"
    reference = {"first_token": cfg, "results_root": "results/reference"}
    targets = SPEC.targets(reference)
    assert "results/reference/first_token/tables/table5.md" in targets
    assert "results/reference/first_token/findings.md" in targets
    assert SPEC.output("figure2").inputs(reference)["metrics"] == "results/reference/first_token/scores/metrics.jsonl"


# ---------------------------------------------------------------------------------------------- end to end


@pytest.mark.e2e
def test_end_to_end_smoke_run(smoke_run):
    """The first_token rules on configs/smoke.yaml's tiny models, in the session's smoke run (a scratch copy of
    the workflow that ran every study; one smoke-scale run fewer than a first_token-only copy)."""
    from conftest import run_snakemake

    run = smoke_run
    section = yaml.safe_load((run / "run.yaml").read_text())["first_token"]
    from wobble.studies.first_token.spec import SPEC

    targets = [t for t in SPEC.targets({"first_token": section}) if "findings" not in t]
    ft = run / "results" / "first_token"
    for t in targets:
        assert (run / t).is_file(), t
    preds = read_jsonl(ft / "predictions" / "tiny-causal" / "t0.00.jsonl")
    cfg = _section(**section)
    assert len(preds) == cfg["n_questions"] * len(cfg["constraints"]) * cfg["n_shuffles"]
    assert all(p["first_token_letter"] in p["letters"] and isinstance(p["output"], str) for p in preds)
    labeled = read_jsonl(ft / "scores" / "labeled" / "tiny-t5" / f"t{layout.temp_tag(cfg['temperatures'][-1])}.jsonl")
    assert {r["constraint"] for r in labeled} == set(cfg["sweep_constraints"])
    assert all("output" in r and "text_label" in r for r in labeled)
    scores = read_jsonl(ft / "scores" / "classifiers.jsonl")
    assert sum(r["selected"] for r in scores if r["model"] == "Avg") == 1
    assert "Ours: model(s) tiny-causal" in (ft / "tables" / "table3.md").read_text()
    assert (run / "logs" / "first_token" / "prompts.log").is_file()
    assert (run / "results" / "benchmarks" / "first_token" / "prompts.tsv").is_file()
    # same inputs -> byte-identical outputs: re-run the metrics and every table/figure
    before = {p: p.read_bytes() for p in [*(ft / "scores").glob("*.jsonl"), *(ft / "tables").glob("*"),
                                          *(ft / "figures").glob("*")] if not p.name.endswith(".prov.json")}
    proc = run_snakemake(run, *targets, "--forcerun", "first_token_metrics", "render_table", "render_figure")
    assert proc.returncode == 0, proc.stderr[-3000:]
    changed = [p.name for p, b in before.items() if p.read_bytes() != b]
    assert not changed, changed
