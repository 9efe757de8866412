"""End to end: snakemake on configs/smoke.yaml (tiny random models, real mirrored data) in a scratch copy."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import OTHER_CLEAN_SMOKE_RUNS, REPO, SNAKEMAKE, copy_workflow, run_snakemake
from wobble.io import sha256_file
from wobble.provenance import audit, sidecar_path

pytestmark = pytest.mark.e2e


def test_every_rule_ran_with_logs_and_benchmarks(smoke_run):
    for rule in ("acquire", "prepare", "models", "probe", "instructions"):
        assert any((smoke_run / "logs" / rule).iterdir()), rule
        assert any((smoke_run / "results" / "benchmarks" / rule).glob("*.tsv")), rule


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
    assert "config.yaml is replaced by the --configfile(s) run.yaml" in out  # no silent merge of two configs
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


# ----------------------------------------------------------------------------- reproducibility and kills

def _bytes(workdir):
    """Every file a run made under results/ and resources/prepared/; provenance records (sidecars and the
    study bundles `provenance.jsonl` that collect them: start times, wall times, hosts), the run's Snakemake
    timings (results/benchmarks/) and partial files left out."""
    out = {}
    timings = workdir / "results" / "benchmarks"
    for top in ("results", "resources/prepared"):
        for p in sorted((workdir / top).rglob("*")):
            if timings in p.parents:
                continue
            if p.is_file() and not p.name.endswith((".prov.json", ".partial")) and p.name != "provenance.jsonl":
                out[str(p.relative_to(workdir))] = p.read_bytes()
    return out


def test_data_splits_and_prompts_match_the_committed_sha256(smoke_run):
    """Made by seeded pure code from pinned files: the same bytes on any machine."""
    import sys

    sys.path.insert(0, str(REPO / "tests" / "tools"))
    from repro_hashes import hashes

    committed = json.loads((REPO / "tests" / "fixtures" / "smoke_sha256.json").read_text())
    ours = hashes(smoke_run)
    assert sorted(ours) == sorted(committed)
    assert [k for k in committed if ours[k] != committed[k]] == []


def test_two_clean_runs_give_the_same_bytes(smoke_run, tmp_path):
    """Two clean runs of configs/smoke.yaml on this machine: the same bytes. The second run is the SLURM test's when
    it ran and passed this session (the same files run through SLURM job groups), else a local run made here."""
    if OTHER_CLEAN_SMOKE_RUNS:
        other = OTHER_CLEAN_SMOKE_RUNS[0]
    else:
        other = tmp_path
        copy_workflow(other)
        proc = run_snakemake(other, timeout=2400)
        assert proc.returncode == 0, proc.stderr[-4000:]
    a, b = _bytes(smoke_run), _bytes(other)
    assert sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []


def _run_files(results: Path) -> list[str]:
    """Every file a run made under its results folder but its logs and benchmarks, by path under that folder."""
    return sorted(p.relative_to(results).as_posix() for p in results.rglob("*")
                  if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "benchmarks"))


def test_killed_three_times_and_resumed_under_another_root_gives_the_same_tables(smoke_run, tmp_path):
    """SIGKILL of the whole Snakemake process group at 3 seeded moments, `wobble resume` after each (it removes
    the stale lock only when no Snakemake of the checkout is alive), in a run with results_root results/alt: the
    smoke run's tables, figures and ledgers, every file the smoke run made under results/ made under results/alt,
    the run's logs and Snakemake benchmarks there too, and nothing else under results/ and no logs/ or
    benchmarks/ beside it."""
    import sys

    sys.path.insert(0, str(REPO / "tests" / "tools"))
    from kill_test import artifacts, run_with_kills

    copy_workflow(tmp_path, results_root="results/alt")
    kills = run_with_kills(tmp_path, 3, seed=0, min_s=4.0, max_s=20.0, timeout=2400)
    assert sum(k["killed"] for k in kills) >= 1, kills
    alt = tmp_path / "results" / "alt"
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["alt"]
    assert not (tmp_path / "logs").exists() and not (tmp_path / "benchmarks").exists()
    for rule in ("acquire", "prepare", "models", "probe", "instructions", "first_token", "followup", "icl_bias"):
        assert any((alt / "logs" / rule).iterdir()), rule
        assert any((alt / "benchmarks" / rule).glob("*.tsv")), rule
    assert _run_files(alt) == _run_files(smoke_run / "results")
    ours, theirs = artifacts(tmp_path, "results/alt"), artifacts(smoke_run)
    assert ours and sorted(ours) == sorted(theirs)
    # A footnote that names the run's own folder (followup's Progressive tables) names results/alt/ here: that
    # path is the one difference allowed, and it must appear exactly where the default run names results/.
    named = [name for name in ours if b"results/alt/" in ours[name]]
    assert named and all(name.startswith("followup/tables/") for name in named), named
    same = {name: data.replace(b"results/alt/", b"results/") for name, data in ours.items()}
    assert [name for name in same if same[name] != theirs[name]] == []


def test_audit_from_a_fresh_copy_of_the_committed_results(smoke_run, tmp_path, monkeypatch):
    """Only what a clone holds (tables, figures, ledgers, their sidecars, results/<study>/provenance.jsonl):
    `wobble audit` still walks the whole chain down to the pinned sources and the models' weights sha256,
    marking the files that are not here as recorded only, and flags a committed file that changed."""
    import shutil

    from wobble.provenance import is_committed

    for p in smoke_run.rglob("*"):
        rel = p.relative_to(smoke_run).as_posix()
        if p.is_file() and is_committed(rel, "results"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, tmp_path / rel)
    assert (tmp_path / "results" / "instructions" / "provenance.jsonl").exists()
    monkeypatch.chdir(tmp_path)
    target = "results/instructions/tables/table4.md"
    report = audit(target)
    assert not report.problems, report.render()
    statuses = {ln.status for ln in report.lines}
    assert {"ok", "recorded", "source"} <= statuses
    assert any("/shared/data/" in ln.path for ln in report.lines if ln.status == "source")
    assert any("models " in ln.detail for ln in report.lines)  # the weights sha256 of the model that ran
    text = report.render()
    assert "recorded only" in text and "committed results/*/provenance.jsonl" in text
    (tmp_path / target).write_text("edited\n")
    assert [ln.path for ln in audit(target).problems] == [target]


def test_numerics_benchmark_reruns_a_study_in_float32(smoke_run):
    """benchmarks/bench_numerics.py on the smoke run: the study's predictions re-made with every model in
    float32, compared record by record, and every claim's verdict read from both ledgers."""
    import sys

    out = smoke_run.parent / "numerics.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_numerics.py"), "--run", str(smoke_run),
                           "--study", "first_token", "--configfile", "run.yaml", "--json", str(out)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    res = json.loads(out.read_text())
    assert res["predictions"]["files"] >= 1 and res["predictions"]["records"] > 0
    assert res["predictions"]["records_with_logprobs"] > 0
    ledger = (smoke_run / "results" / "first_token" / "findings.csv").read_text()
    assert [v["claim"] for v in res["verdicts"]] and all(v["claim"].split(" [")[0] in ledger for v in res["verdicts"])
    assert all(v["perturbed"] for v in res["verdicts"])
    assert not (smoke_run.parent / f"{smoke_run.name}-numerics-first_token-float32").exists()  # the scratch copy is gone
