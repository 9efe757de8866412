"""Provenance sidecars and the audit walk."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from wobble.io import write_jsonl
from wobble.provenance import audit, content_hash, sidecar_path, source_digest, tracked, write_sidecar


def test_content_hash_of_dir_ignores_sidecars_and_hidden(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.txt").write_text("x")
    h1 = content_hash(d)
    (d / "a.txt.prov.json").write_text("{}")
    (d / ".tmp").write_text("junk")
    assert content_hash(d) == h1
    (d / "a.txt").write_text("y")
    assert content_hash(d) != h1


def test_chain_and_change_detection(tmp_path):
    src = tmp_path / "mirror.txt"
    src.write_text("raw")
    acquired = tmp_path / "acquired.txt"
    acquired.write_text("raw")
    write_sidecar(acquired, rule="acquire", sources=[{"source": "demo", "mirror_path": str(src),
                                                      "sha256": content_hash(src)}])
    prepared = tmp_path / "prepared.jsonl"
    write_jsonl(prepared, [{"a": 1}])
    write_sidecar(prepared, rule="prepare", inputs=[acquired], wildcards={"dataset": "demo"})
    table = tmp_path / "table.md"
    table.write_text("| a |\n")
    write_sidecar(table, rule="render", inputs=[prepared], models={"m": "abc"}, seeds=[1])

    prov = json.loads(sidecar_path(table).read_text())
    assert prov["inputs"][0]["path"] == str(prepared)
    assert prov["inputs"][0]["prov"] == str(sidecar_path(prepared))
    for field in ("rule", "wildcards", "config", "models", "seeds", "packages", "git", "wall_time_s", "sha256"):
        assert field in prov

    report = audit(table)
    assert not report.problems
    paths = [ln.path for ln in report.lines]
    assert paths == [str(table), str(prepared), str(acquired), str(src)]

    acquired.write_text("tampered")
    report = audit(table)
    assert [ln.path for ln in report.problems] == [str(acquired)]
    assert "CHANGED" in report.render()

    src.write_text("mirror changed too")
    assert str(src) in [ln.path for ln in audit(table).problems]


def test_missing_input_is_flagged(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("1")
    b = tmp_path / "b.txt"
    b.write_text("2")
    write_sidecar(b, rule="r", inputs=[a])
    a.unlink()
    report = audit(b)
    assert [(ln.path, ln.status) for ln in report.problems] == [(str(a), "missing")]


def test_tracked_writes_sidecar_per_output(tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("i")
    model = tmp_path / "model"
    model.mkdir()
    (model / "wobble-model.json").write_text(json.dumps({"key": "tiny", "weights_sha256": "feed"}))
    outs = [tmp_path / "o1.txt", tmp_path / "o2.txt"]
    smk = SimpleNamespace(input=[str(inp), str(model)], output=[str(o) for o in outs], rule="demo",
                          wildcards={"x": "1"})
    with tracked(smk, config={"k": 1}, seeds=[3]):
        for o in outs:
            o.write_text("done")
    for o in outs:
        prov = json.loads(sidecar_path(o).read_text())
        assert prov["rule"] == "demo" and prov["wildcards"] == {"x": "1"}
        assert prov["models"] == {"tiny": "feed"}
        assert prov["seeds"] == [3] and prov["config"] == {"k": 1}


def test_tracked_records_each_output_on_its_own_inputs(tmp_path):
    """A job with one output per input split: each sidecar names its own split (and the shared model)."""
    splits = [tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"]
    for s in splits:
        s.write_text(s.name)
    model = tmp_path / "model"
    model.mkdir()
    (model / "wobble-model.json").write_text(json.dumps({"key": "tiny", "weights_sha256": "feed"}))
    outs = [tmp_path / "p1.jsonl", tmp_path / "p2.jsonl"]
    smk = SimpleNamespace(input=[str(model), [str(s) for s in splits]], output=[str(o) for o in outs], rule="r",
                          wildcards={})
    own = dict(zip(map(str, outs), map(str, splits)))
    with tracked(smk, inputs_of=lambda out: [str(model), own[out]]):
        for o in outs:
            o.write_text("done")
    for o, s in zip(outs, splits):
        prov = json.loads(sidecar_path(o).read_text())
        assert [i["path"] for i in prov["inputs"]] == [str(model), str(s)]
        assert prov["models"] == {"tiny": "feed"}


def test_tracked_writes_nothing_on_failure(tmp_path):
    out = tmp_path / "o.txt"
    smk = SimpleNamespace(input=[], output=[str(out)], rule="demo", wildcards={})
    try:
        with tracked(smk):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert not sidecar_path(out).exists()


def test_git_dirty_ignores_results_but_not_code(tmp_path):
    import subprocess

    from wobble.provenance import git_commit

    def git(*args):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "table.md").write_text("old\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "init")
    assert git_commit(tmp_path)["dirty"] is False
    (tmp_path / "results" / "table.md").unlink()  # a committed table being regenerated
    assert git_commit(tmp_path)["dirty"] is False
    assert git_commit(tmp_path / "results")["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    info = git_commit(tmp_path)
    assert info["dirty"] is True and len(info["commit"]) == 40


def test_chain_records_let_a_clone_audit_what_it_does_not_hold(tmp_path, monkeypatch):
    from wobble.provenance import chain_records, is_committed, load_bundles

    monkeypatch.chdir(tmp_path)
    Path("data").mkdir()
    Path("data/raw.txt").write_text("raw\n")
    Path("results/s/scores").mkdir(parents=True)
    Path("results/s/tables").mkdir(parents=True)
    Path("results/s/scores/x.jsonl").write_text('{"a": 1}\n')
    write_sidecar("results/s/scores/x.jsonl", rule="score", inputs=["data/raw.txt"])
    Path("results/s/tables/t.md").write_text("| a |\n")
    write_sidecar("results/s/tables/t.md", rule="render", inputs=["results/s/scores/x.jsonl"])
    assert is_committed("results/s/tables/t.md", "results") and not is_committed("results/s/scores/x.jsonl", "results")
    records = chain_records(["results/s/tables/t.md"], "results")
    assert [r["output"] for r in records] == ["results/s/scores/x.jsonl"]  # the committed table is not repeated
    assert records[0]["inputs"][0]["path"] == "data/raw.txt" and "packages" not in records[0]
    write_jsonl("results/s/provenance.jsonl", records)
    # a fresh clone: the scores file and its sidecar are gone
    Path("results/s/scores/x.jsonl").unlink()
    sidecar_path("results/s/scores/x.jsonl").unlink()
    report = audit("results/s/tables/t.md", load_bundles())
    assert [(ln.path, ln.status) for ln in report.lines] == [
        ("results/s/tables/t.md", "ok"), ("results/s/scores/x.jsonl", "recorded"), ("data/raw.txt", "no-provenance")]
    assert not report.problems and "1 file(s) not on this machine" in report.render()
    # present again but different from the record: CHANGED
    Path("results/s/scores/x.jsonl").write_text('{"a": 2}\n')
    assert [ln.path for ln in audit("results/s/tables/t.md", load_bundles()).problems] == ["results/s/scores/x.jsonl"]


def test_each_run_commits_and_audits_under_its_own_results_root(tmp_path, monkeypatch):
    """The reference run (results_root results/reference) beside the default one: each commits its own tables and
    bundles, and an audit reads the bundles of the run the audited file belongs to."""
    from wobble.provenance import bundles_root, chain_records, is_committed, load_bundles

    ref = "results/reference"
    assert is_committed(f"{ref}/s/tables/t.md", ref) and is_committed(f"{ref}/findings.md", ref)
    assert is_committed(f"{ref}/scorecard/m.md", ref) and is_committed(f"{ref}/s/provenance.jsonl", ref)
    assert not is_committed(f"{ref}/s/scores/x.jsonl", ref) and not is_committed("results/s/tables/t.md", ref)
    assert is_committed("paper/s/table1.csv", ref) and not is_committed("resources/prepared/x.jsonl", ref)
    monkeypatch.chdir(tmp_path)
    for root, text in (("results", "default"), (ref, "reference")):
        Path(f"{root}/s/scores").mkdir(parents=True)
        Path(f"{root}/s/tables").mkdir(parents=True)
        Path(f"{root}/s/scores/x.jsonl").write_text(text + "\n")
        write_sidecar(f"{root}/s/scores/x.jsonl", rule="score")
        Path(f"{root}/s/tables/t.md").write_text(text + "\n")
        write_sidecar(f"{root}/s/tables/t.md", rule="render", inputs=[f"{root}/s/scores/x.jsonl"])
        write_jsonl(f"{root}/s/provenance.jsonl", chain_records([f"{root}/s/tables/t.md"], root))
        Path(f"{root}/s/scores/x.jsonl").unlink()
        sidecar_path(f"{root}/s/scores/x.jsonl").unlink()
    assert bundles_root(f"{ref}/s/tables/t.md") == ref and bundles_root("results/s/tables/t.md") == "results"
    assert bundles_root("resources/prepared/x.jsonl") == "results"
    assert list(load_bundles(results_root=ref)) == [f"{ref}/s/scores/x.jsonl"]
    for root in ("results", ref):
        report = audit(f"{root}/s/tables/t.md")
        assert [(ln.path, ln.status) for ln in report.lines] == [
            (f"{root}/s/tables/t.md", "ok"), (f"{root}/s/scores/x.jsonl", "recorded")], report.render()
        assert report.render().splitlines()[-1].startswith(
            f"1 file(s) not on this machine: their sha256 and provenance come from the committed {root}/*/"), root


def test_source_digest_follows_the_python_sources_only(tmp_path):
    """The render rules' ``code`` param: a changed or added .py file changes it, a compiled cache or another
    file does not, nor does where the tree lives; a part that is not there is an error, not an empty digest."""
    def tree(root):
        (root / "studies" / "s" / "__pycache__").mkdir(parents=True)
        (root / "studies" / "s" / "tables.py").write_text("X = 1\n")
        (root / "stats.py").write_text("Y = 2\n")
        return root

    a = tree(tmp_path / "a")
    first = source_digest(a, ["studies/s", "stats.py"])
    assert first == source_digest(tree(tmp_path / "b"), ["studies/s", "stats.py"])
    (a / "studies" / "s" / "__pycache__" / "tables.cpython-311.pyc").write_bytes(b"\x00\x01")
    (a / "studies" / "s" / "notes.txt").write_text("not code")
    assert source_digest(a, ["studies/s", "stats.py"]) == first
    (a / "studies" / "s" / "tables.py").write_text("X = 2\n")
    changed = source_digest(a, ["studies/s", "stats.py"])
    assert changed != first
    (a / "studies" / "s" / "figures.py").write_text("")
    assert source_digest(a, ["studies/s", "stats.py"]) not in (first, changed)
    assert source_digest(a, ["studies/s"]) != source_digest(a, ["studies/s", "stats.py"])
    with pytest.raises(FileNotFoundError, match="nope"):
        source_digest(a, ["nope"])
