"""End to end: snakemake on configs/smoke.yaml (tiny random models, real mirrored data) in a scratch copy."""

import json
import subprocess

import pytest
import yaml

from conftest import SNAKEMAKE, copy_workflow, run_snakemake
from wobble.io import sha256_file
from wobble.provenance import audit, sidecar_path

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory, mirror):
    work = tmp_path_factory.mktemp("smoke")
    copy_workflow(work)
    proc = run_snakemake(work, timeout=2400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return work


def test_every_rule_ran_with_logs_and_benchmarks(smoke_run):
    for rule in ("acquire", "prepare", "models", "probe", "instructions"):
        assert any((smoke_run / "logs" / rule).iterdir()), rule
        assert any((smoke_run / "benchmarks" / rule).glob("*.tsv")), rule


def test_probe_predictions_call_every_backend_method(smoke_run):
    for model in ("tiny-causal", "tiny-t5"):
        path = smoke_run / "results" / "probe" / "predictions" / f"{model}.jsonl"
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(recs) == 3
        for r in recs:
            assert r["model"] == model and isinstance(r["output"], str)
            assert set(r["next_token_logprobs"]) == {"A", "B", "C", "D"}
            assert all(v < 0 for v in r["continuation_logprobs"]) and r["continuation_logprobs"]
            assert r["rendered_prompt"] and r["gen_params"]["temperature"] == 0.0
        prov = json.loads(sidecar_path(path).read_text())
        assert prov["rule"] == "probe" and prov["models"][model]
        assert any(i["path"].startswith("resources/models/") for i in prov["inputs"])


def test_audit_walks_back_to_mirror_and_flags_changes(smoke_run, monkeypatch):
    monkeypatch.chdir(smoke_run)
    target = "results/probe/predictions/tiny-t5.jsonl"
    report = audit(target)
    assert not report.problems
    assert any(ln.status == "source" and "/shared/data/" in ln.path for ln in report.lines)
    prepared = smoke_run / "resources" / "prepared" / "mmlu.jsonl"
    original = prepared.read_bytes()
    try:
        prepared.write_bytes(original + b"\n")
        problems = audit(target).problems
        assert [ln.path for ln in problems] == ["resources/prepared/mmlu.jsonl"]
        cli = subprocess.run([str(SNAKEMAKE.with_name("wobble")), "audit", target], cwd=smoke_run,
                             capture_output=True, text=True)
        assert cli.returncode == 1 and "CHANGED" in cli.stdout
    finally:
        prepared.write_bytes(original)


def test_prepare_is_byte_identical_on_rerun(smoke_run):
    out = smoke_run / "resources" / "prepared" / "superni_tasks.jsonl"
    before = sha256_file(out)
    proc = run_snakemake(smoke_run, "resources/prepared/superni_tasks.jsonl", "--forcerun", "prepare")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sha256_file(out) == before


def test_bad_config_stops_before_any_job(tmp_path, mirror):
    copy_workflow(tmp_path)
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    cfg["models"]["tiny-t5"]["batchsize"] = 4
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(tmp_path, "-n")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config error at 'models.tiny-t5': unknown key(s) ['batchsize']" in out
    assert "is replaced by additional config" in out  # --configfile replaces config.yaml, no silent merge
    assert not (tmp_path / "resources").exists()


def test_instructions_tables_and_figure(smoke_run):
    base = smoke_run / "results" / "instructions"
    for i in range(1, 12):
        for ext in ("md", "csv", "tex"):
            path = base / "tables" / f"table{i}.{ext}"
            assert path.stat().st_size > 0, path
            assert sidecar_path(path).exists(), path
    for ext in ("png", "pdf", "csv"):
        assert (base / "figures" / f"figure_drop.{ext}").stat().st_size > 0
    for ext in ("md", "csv", "tex"):  # a figure's numbers beside the paper's, from the same render job
        assert (base / "tables" / f"figure_drop.{ext}").stat().st_size > 0
    prov = json.loads(sidecar_path(base / "tables" / "table4.md").read_text())
    assert prov["rule"] == "render_table" and prov["wildcards"] == {"study": "instructions", "name": "table4"}
    table4 = (base / "tables" / "table4.md").read_text()
    assert "tiny-causal-ni" in table4 and "49.8 ± 0.6" in table4  # ours beside the paper's T5-3B cell
    finetuned = smoke_run / "resources" / "models" / "finetuned" / "tiny-causal-ni" / "wobble-model.json"
    assert json.loads(finetuned.read_text())["source"] == "finetune"


def test_one_table_reruns_only_what_it_needs(smoke_run):
    proc = run_snakemake(smoke_run, "results/instructions/tables/table6.md", "-n", "--forcerun", "render_table")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "render_table" in out and "instructions_infer" not in out


def test_left_out_source_names_affected_tables(tmp_path, mirror):
    copy_workflow(tmp_path)
    cfg = yaml.safe_load((tmp_path / "run.yaml").read_text())
    cfg["data"]["sources"].remove("opinionqa")
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(tmp_path, "-n")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert "sources left out by config data.sources: ['opinionqa']" in out
    assert "first_token/table" in out
    assert "study 'first_token' is off: it needs source(s) ['opinionqa']" in out
    assert "resources/prepared/opinionqa_414.jsonl" not in out


def test_paper_scale_dag_plans(tmp_path, mirror):
    copy_workflow(tmp_path, "configs/paper.yaml")
    proc = run_snakemake(tmp_path, "-n", "--quiet", "rules", timeout=120)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    out = proc.stdout + proc.stderr
    assert "instructions_infer" in out and "first_token_infer" in out and "finetune" in out
    assert "render_table" in out and "render_figure" in out
