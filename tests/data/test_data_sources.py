"""Pinned sources and acquisition: pins match the mirror, mirror copies, downloads (file:// and failing)."""

from __future__ import annotations

import importlib
import json
import runpy
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from wobble.data import pin as pin_mod
from wobble.data.acquire import ChecksumMismatch, acquire, apply_trim
from wobble.data.prepare import DATASET_SOURCES, DATASETS, affected_datasets, affected_tables
from wobble.data.sources import SOURCES, Pin, describe_tables, load_pins, parse_pins, pins_for, pins_path
from wobble.errors import DataError, SourceUnavailable, WobbleError
from wobble.io import sha256_file

acquire_mod = importlib.import_module("wobble.data.acquire")  # the package re-exports the function
REPO = Path(__file__).resolve().parents[2]
MIRROR = REPO.parent / "shared" / "data"
SOURCE_KEYS = {"superni", "para_instructions", "diverse_prompt", "robustness_tk_results", "opinionqa", "ambigprompt",
               "icl_imdb", "icl_yelp", "icl_mnli", "gsm8k", "svamp", "multiarith", "csqa", "strategyqa",
               "last_letters", "coin_flip", "mmlu"}


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy files without their (read-only) modes, so tests can edit and pytest can clean up."""
    for f in src.rglob("*"):
        if f.is_file():
            (dst / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dst / f.relative_to(src))


@pytest.fixture(scope="module")
def mirror_dir() -> Path:
    if not MIRROR.is_dir():
        pytest.skip(f"offline data mirror {MIRROR} is not present")
    return MIRROR


# ---------------------------------------------------------------- the source registry and pins.tsv


def test_source_keys_and_metadata():
    assert set(SOURCES) == SOURCE_KEYS
    for key, s in SOURCES.items():
        assert s.key == key and s.mirror_subdir and s.license and s.studies and s.tables
        assert set(s.studies) <= {"instructions", "first_token", "icl_bias", "followup"}
        assert len(s.commit) == 40 and "/" in s.repo
        assert all(t.split("/")[0] in s.studies for t in s.tables), key
    assert SOURCES["gsm8k"].mirror_subdir == "followup/gsm8k"
    assert SOURCES["icl_imdb"].mirror_subdir == "icl_raw/imdb"
    assert SOURCES["para_instructions"].tables_text == "instructions: tables 6, 7"
    assert SOURCES["opinionqa"].tables_text == "first_token: tables 2, 3, 4, 5; figures 2, 3, 7"
    assert describe_tables(["followup/table3", "instructions/table4"]) == "instructions: table 4; followup: table 3"


def test_pins_are_well_formed():
    pins = load_pins()
    assert set(pins) == SOURCE_KEYS and all(pins[k] for k in SOURCE_KEYS)
    for key, group in pins.items():
        relpaths = [p.relpath for p in group]
        assert len(set(relpaths)) == len(relpaths), key
        for p in group:
            assert len(p.sha256) == 64 and p.size > 0
            if p.identical:
                assert p.url and not p.trim, p
            if p.url:
                assert p.url == f"https://raw.githubusercontent.com/{p.repo}/{p.commit}/{p.upstream_path.replace(' ', '%20')}"
                assert len(p.commit) == 40
            if p.trim:
                assert p.url and not p.identical
    # curated derivatives have no URL; byte-identical originals do
    by = {(p.source, p.relpath): p for g in pins.values() for p in g}
    assert by[("opinionqa", "subset_414.jsonl")].url == ""
    assert by[("mmlu", "test_sample500.jsonl")].url == ""
    assert by[("gsm8k", "test.jsonl")].identical and by[("gsm8k", "test.jsonl")].url.endswith(
        "/dataset/grade-school-math/test.jsonl")
    assert by[("gsm8k", "normalized.jsonl")].optional
    sn = by[("superni", "tasks/task1342_amazon_us_reviews_title.json")]
    assert sn.trim["op"] == "superni_instances" and sn.trim["keep"] == 100 and not sn.identical
    assert by[("superni", "tasks/task1728_web_nlg_data_to_text.json")].trim["repair_double_comma"]
    assert by[("superni", "tasks/task304_numeric_fused_head_resolution.json")].trim["definition_to_list"]
    assert by[("ambigprompt", "comments_toxicity_uppercase.json")].trim == {
        "op": "ambig_demos", "keep": 1000, "json": {"indent": None, "ensure_ascii": False, "trailing_newline": False}}
    assert by[("ambigprompt", "boolq_answer_length.json")].identical


def test_pins_match_mirror(mirror_dir):
    """Every pinned file exists in the mirror with the pinned sha256 and size."""
    bad = []
    for key, group in load_pins().items():
        src = mirror_dir / SOURCES[key].mirror_subdir
        for p in group:
            f = src / p.relpath
            if not f.is_file() or f.stat().st_size != p.size or sha256_file(f) != p.sha256:
                bad.append(f"{key}/{p.relpath}")
    assert not bad, bad[:10]


def test_pin_generator_reproduces_packaged_pins(mirror_dir, tmp_path, capsys):
    """``python -m wobble.data.pin <mirror>`` rebuilds exactly the packaged pins.tsv."""
    assert pin_mod.main([str(mirror_dir), "--check"]) == 0
    assert "0 pin(s) differ" in capsys.readouterr().out
    out = tmp_path / "pins.tsv"
    assert pin_mod.main([str(mirror_dir), "--out", str(out)]) == 0
    assert out.read_bytes() == pins_path().read_bytes()


def test_pin_generator_rejects_unknown_file(mirror_dir, tmp_path):
    fake = tmp_path / "m"
    _copy_tree(mirror_dir / "followup" / "coin_flip", fake / "followup" / "coin_flip")
    (fake / "followup" / "coin_flip" / "extra.csv").write_text("x\n")
    with pytest.raises(WobbleError, match="no provenance rule for mirror file 'extra.csv' of source 'coin_flip'"):
        pin_mod.rule_for("coin_flip", "extra.csv", fake / "followup" / "coin_flip", {})


def test_parse_pins_reports_bad_row(tmp_path):
    good = pins_path().read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "pins.tsv"
    bad.write_text(good[0] + "\n" + good[1].replace("\tfalse\t", "\tmaybe\t", 1) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"pins.tsv: record line 2: 'identical' true or false"):
        parse_pins(bad)


# ---------------------------------------------------------------- acquire from the mirror


def test_acquire_from_mirror(mirror_dir, tmp_path):
    for key in ("gsm8k", "opinionqa", "ambigprompt"):
        dest = tmp_path / key
        entries = acquire(key, dest, mirror=mirror_dir)
        pins = pins_for(key)
        assert [e["relpath"] for e in entries] == [p.relpath for p in pins]
        for e, p in zip(entries, pins):
            assert e["source"] == key and e["verified"] is True and e["sha256"] == p.sha256
            assert Path(e["mirror_path"]) == mirror_dir / SOURCES[key].mirror_subdir / p.relpath
            assert sha256_file(dest / p.relpath) == p.sha256
        assert not list(dest.rglob(".*")), "no temp files left behind"
    assert (tmp_path / "opinionqa" / "paper_mapping_results" / "High_Constraint" / "Llama2-7b-Chat"
            / "mapping_result.json").is_file()


def test_acquire_detects_checksum_mismatch(mirror_dir, tmp_path):
    fake = tmp_path / "mirror"
    _copy_tree(mirror_dir / "followup" / "coin_flip", fake / "followup" / "coin_flip")
    target = fake / "followup" / "coin_flip" / "coin_flip.json"
    target.write_bytes(target.read_bytes() + b" ")
    with pytest.raises(ChecksumMismatch) as err:
        acquire("coin_flip", tmp_path / "out", mirror=fake)
    msg = str(err.value)
    pin = next(p for p in pins_for("coin_flip") if p.relpath == "coin_flip.json")
    assert "'coin_flip'" in msg and "coin_flip.json" in msg and pin.sha256 in msg and sha256_file(target) in msg


def test_unknown_source():
    with pytest.raises(WobbleError, match="unknown data source 'nope'"):
        acquire("nope", "/tmp/never")


# ---------------------------------------------------------------- downloads


def test_download_failure_names_source_file_and_both_places(tmp_path):
    """The real urllib download (short timeout): without network it fails fast and cleanly (no hang), naming the
    source, the file and both places; with network the file arrives, checked against its pinned sha256."""
    dest = tmp_path / "gsm8k"
    pin = next(p for p in pins_for("gsm8k") if p.relpath == "test.jsonl")
    try:
        acquire("gsm8k", dest, mirror=None, timeout=3)
    except SourceUnavailable as e:
        msg = str(e)
        assert "source 'gsm8k'" in msg and "'test.jsonl'" in msg
        assert "mirror: none given" in msg
        assert pin.url in msg
        assert not (dest / "test.jsonl").exists()
    else:  # the network is reachable here
        assert sha256_file(dest / "test.jsonl") == pin.sha256


def test_missing_everywhere_names_mirror_path_and_url(tmp_path, monkeypatch):
    """Deterministic version (no DNS involved): a refused connection on localhost."""
    pin = Pin("coin_flip", "coin_flip.json", "0" * 64, 1, "r/r", "c" * 40, "coin_flip.json",
              "http://127.0.0.1:9/coin_flip.json", True, False)
    monkeypatch.setattr(acquire_mod, "pins_for", lambda key: [pin])
    empty_mirror = tmp_path / "mirror"
    empty_mirror.mkdir()
    with pytest.raises(SourceUnavailable) as err:
        acquire("coin_flip", tmp_path / "out", mirror=empty_mirror, timeout=2)
    msg = str(err.value)
    assert "source 'coin_flip'" in msg and "'coin_flip.json'" in msg
    assert str(empty_mirror / "followup" / "coin_flip" / "coin_flip.json") + " (not found)" in msg
    assert "http://127.0.0.1:9/coin_flip.json" in msg


def test_file_without_url_or_recipe_is_unavailable(tmp_path, monkeypatch):
    pin = Pin("mmlu", "curated.tsv", "0" * 64, 1, "", "", "", "", False, False)
    monkeypatch.setattr(acquire_mod, "pins_for", lambda key: [pin])
    with pytest.raises(SourceUnavailable) as err:
        acquire("mmlu", tmp_path / "mmlu", mirror=tmp_path / "nowhere", timeout=1)
    msg = str(err.value)
    assert "source 'mmlu'" in msg and "curated.tsv" in msg and "no recipe rebuilds it" in msg
    assert str(tmp_path / "nowhere" / "followup" / "mmlu" / "curated.tsv") in msg


def test_a_recipe_that_cannot_download_names_source_file_and_recipe(tmp_path):
    """Without the mirror and without network, mmlu's recipe fails in one line naming what was looked for."""
    with pytest.raises(SourceUnavailable) as err:
        acquire("mmlu", tmp_path / "mmlu", mirror=tmp_path / "nowhere", timeout=1,
                url_prefixes={"https://raw.githubusercontent.com/": "http://127.0.0.1:9/"})
    msg = str(err.value)
    assert "source 'mmlu'" in msg and "dev_5shot.jsonl" in msg and "recipe 'mmlu' could not rebuild it" in msg
    assert "\n" not in msg and not (tmp_path / "mmlu" / "dev_5shot.jsonl").exists()


def _file_url(path: Path) -> str:
    return path.resolve().as_uri()


def test_download_identical_and_trimmed_files_via_file_urls(mirror_dir, tmp_path, monkeypatch):
    """The real download path (urllib, temp + rename), fed file:// URLs that stand in for upstream."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    # an identical file
    coin = mirror_dir / "followup" / "coin_flip" / "coin_flip.json"
    shutil.copyfile(coin, upstream / "coin_flip.json")
    # an "upstream" SuperNI task: a truncated mirror file plus more instances and the Instance License field
    task = "task893_gap_fill_the_blank_coreference_resolution"
    mirror_task = mirror_dir / "superni" / "tasks" / f"{task}.json"
    data = json.loads(mirror_task.read_text(encoding="utf-8"))
    assert "Instance License" not in data
    full = dict(data)
    full["Instances"] = data["Instances"] + [{"id": "x-1", "input": "more", "output": ["more"]}] * 5
    full["Instance License"] = ["Unknown"]
    (upstream / f"{task}.json").write_text(json.dumps(full, indent=4), encoding="utf-8")
    trim = {"op": "superni_instances", "keep": len(data["Instances"]), "drop_fields": ["Instance License"],
            "json": {"indent": 4, "ensure_ascii": False, "trailing_newline": True}}
    pins = [
        Pin("superni", "coin.json", sha256_file(coin), coin.stat().st_size, "r/r", "c" * 40, "coin.json",
            _file_url(upstream / "coin_flip.json"), True, False),
        Pin("superni", f"tasks/{task}.json", sha256_file(mirror_task), mirror_task.stat().st_size, "r/r", "c" * 40,
            f"tasks/{task}.json", _file_url(upstream / f"{task}.json"), False, False, trim),
        Pin("superni", "tasks/changed.json", sha256_file(mirror_task), 1, "r/r", "c" * 40, "x",
            _file_url(upstream / f"{task}.json"), False, False, {**trim, "keep": 3}),
        Pin("superni", "README.md", "1" * 64, 1, "", "", "", "", False, True),
    ]
    monkeypatch.setattr(acquire_mod, "pins_for", lambda key: pins)
    dest = tmp_path / "dest"
    entries = acquire("superni", dest, mirror=None)
    assert [e["relpath"] for e in entries] == ["coin.json", f"tasks/{task}.json", "tasks/changed.json"]
    assert entries[0]["verified"] is True and entries[0]["url"].startswith("file://")
    assert entries[1]["verified"] is True and (dest / f"tasks/{task}.json").read_bytes() == mirror_task.read_bytes()
    assert entries[2]["verified"] is False and entries[2]["expected_sha256"] == sha256_file(mirror_task)
    assert entries[2]["sha256"] == sha256_file(dest / "tasks/changed.json")
    assert not (dest / "README.md").exists()
    # an identical-upstream file whose download differs is an error, not a silent 'unverified'
    (upstream / "coin_flip.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ChecksumMismatch, match="coin.json"):
        acquire("superni", tmp_path / "dest2", mirror=None)


def test_apply_trim_variants(tmp_path):
    old = {"Contributors": ["x"], "Definition": "Do it.", "Positive Examples": [], "Instances":
           [{"input": "a", "output": ["b"]}, {"input": "c", "output": ["d"]}], "Instance License": ["MIT"]}
    text = json.dumps(old, indent=4).replace('"Do it.",', '"Do it.",,')
    out = apply_trim(text.encode(), {"op": "superni_instances", "keep": 1, "drop_fields": ["Instance License"],
                                     "definition_to_list": True, "repair_double_comma": True,
                                     "json": {"indent": 4, "ensure_ascii": False, "trailing_newline": True}}, "u")
    assert json.loads(out) == {"Contributors": ["x"], "Definition": ["Do it."], "Positive Examples": [],
                               "Instances": [{"input": "a", "output": ["b"]}]}
    assert out.endswith(b"}\n")
    amb = {"dataset": "d", "demos_1_1": list(range(5)), "demos_0_0": list(range(3)), "testset_1_0": [1]}
    out = apply_trim(json.dumps(amb).encode(), {"op": "ambig_demos", "keep": 2}, "u")
    assert json.loads(out)["demos_1_1"] == [0, 1] and json.loads(out)["testset_1_0"] == [1]
    with pytest.raises(DataError, match="valid JSON to trim"):
        apply_trim(b"{not json", {"op": "ambig_demos", "keep": 2}, "u")


# ---------------------------------------------------------------- registry helpers and the script


def test_dataset_sources_and_affected_tables():
    assert set(DATASET_SOURCES) == set(DATASETS)
    assert all(set(v) <= SOURCE_KEYS for v in DATASET_SOURCES.values())
    assert {s for v in DATASET_SOURCES.values() for s in v} == SOURCE_KEYS, "every source feeds a dataset"
    assert affected_tables([]) == []
    assert affected_tables(["opinionqa"]) == ["first_token/table2", "first_token/table3", "first_token/table4",
                                              "first_token/table5", "first_token/figure2", "first_token/figure3",
                                              "first_token/figure7"]
    t = affected_tables(["para_instructions", "strategyqa"])
    assert t[:2] == ["instructions/table6", "instructions/table7"] and "followup/table3" in t
    assert "followup/table3" not in affected_tables(["gsm8k"])
    assert affected_datasets(["superni"]) == ["superni_test", "superni_tasks", "superni_train"]
    with pytest.raises(WobbleError, match="unknown data source"):
        affected_tables(["nope"])


class _Named(list):
    def __init__(self, items=(), **named):
        super().__init__(items)
        self.__dict__.update(named)


class _Wildcards(dict):
    __getattr__ = dict.__getitem__


def test_acquire_script_writes_files_sidecar_and_log(mirror_dir, tmp_path):
    out, log = tmp_path / "resources" / "data" / "coin_flip", tmp_path / "acquire.log"
    smk = SimpleNamespace(input=_Named(), output=_Named([str(out)]), log=_Named([str(log)]), rule="acquire",
                          wildcards=_Wildcards(source="coin_flip"), params=SimpleNamespace(mirror=str(mirror_dir), timeout=5))
    runpy.run_path(str(REPO / "scripts" / "acquire_source.py"), init_globals={"snakemake": smk})
    assert (out / "coin_flip.json").is_file()
    prov = json.loads((tmp_path / "resources" / "data" / "coin_flip.prov.json").read_text())
    assert [s["relpath"] for s in prov["sources"]] == ["coin_flip.json", "normalized.jsonl"]
    assert prov["rule"] == "acquire" and prov["wildcards"] == {"source": "coin_flip"}
    assert "coin_flip: 2 files" in log.read_text()


def test_prepare_script(mirror_dir, tmp_path):
    out, log = tmp_path / "coin_flip.jsonl", tmp_path / "prepare.log"
    smk = SimpleNamespace(input=_Named([str(mirror_dir / "followup" / "coin_flip")]), output=_Named([str(out)]),
                          log=_Named([str(log)]), rule="prepare", wildcards=_Wildcards(dataset="coin_flip"),
                          params=SimpleNamespace(sources=["coin_flip"]))
    runpy.run_path(str(REPO / "scripts" / "prepare_dataset.py"), init_globals={"snakemake": smk})
    assert len(out.read_text().splitlines()) == 500
    assert json.loads((tmp_path / "coin_flip.jsonl.prov.json").read_text())["rule"] == "prepare"
    assert "dataset coin_flip: 500 records" in log.read_text()
