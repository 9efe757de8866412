"""Downloads and recipes against a loopback server: whole files land, every failure is one line and leaves
nothing behind, archives are pinned by their tree digest, a recipe's outputs are checked before any is written."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from loopback_http import Upstream
from wobble.data import derive as derive_mod
from wobble.data.derive import DerivationError, Input, derive, load_inputs, tree_digest
from wobble.data.download import DownloadError, download, rewrite
from wobble.data.recipes import RECIPES, Recipe, recipe_for
from wobble.data.sources import Pin, pins_for, load_pins

BODY = b"line one\nline two\n" * 50


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_rewrite_takes_the_longest_prefix():
    prefixes = {"https://a/": "http://x/", "https://a/b/": "http://y/"}
    assert rewrite("https://a/b/c.txt", prefixes) == "http://y/c.txt"
    assert rewrite("https://a/c.txt", prefixes) == "http://x/c.txt"
    assert rewrite("https://z/c.txt", prefixes) == "https://z/c.txt"
    assert rewrite("https://z/c.txt", None) == "https://z/c.txt"


def test_download_writes_the_whole_file_through_the_prefix(tmp_path):
    with Upstream({"/raw/o/r/c/f.txt": BODY}) as up:
        got = download("https://raw.githubusercontent.com/o/r/c/f.txt", tmp_path / "f.txt", sha256=sha(BODY),
                       url_prefixes={"https://raw.githubusercontent.com/": up.url + "/raw/"})
    assert got == sha(BODY) and (tmp_path / "f.txt").read_bytes() == BODY
    assert leftovers(tmp_path) == ["f.txt"]


@pytest.mark.parametrize("fault, message", [
    ("404", "HTTP 404"),
    ("stops", "is truncated: 100 of 900 bytes"),
    ("checksum", "but the pin expects"),
])
def test_a_failed_download_is_one_line_and_leaves_nothing(tmp_path, fault, message):
    files = {"/f.txt": BODY if fault != "checksum" else BODY + b"edited upstream\n"}
    with Upstream(files if fault != "404" else {}) as up:
        if fault == "stops":
            up.cut["/f.txt"] = 100
        with pytest.raises(DownloadError) as err:
            download(up.url + "/f.txt", tmp_path / "f.txt", sha256=sha(BODY), timeout=5)
    text = str(err.value)
    assert "\n" not in text and up.url + "/f.txt" in text and message in text
    assert leftovers(tmp_path) == []


def test_a_failed_download_keeps_the_good_file_already_there_and_a_rerun_restarts(tmp_path):
    target = tmp_path / "f.txt"
    with Upstream({"/f.txt": BODY}) as up:
        up.cut["/f.txt"] = 10
        with pytest.raises(DownloadError):
            download(up.url + "/f.txt", target, sha256=sha(BODY), timeout=5)
        assert not target.exists()
        del up.cut["/f.txt"]  # the server recovers: the re-run fetches the whole file from the start
        download(up.url + "/f.txt", target, sha256=sha(BODY), timeout=5)
    assert target.read_bytes() == BODY and leftovers(tmp_path) == ["f.txt"]


def test_no_server_at_all_is_one_line(tmp_path):
    with Upstream({}) as up:
        dead = up.url
    with pytest.raises(DownloadError, match="no connection"):
        download(dead + "/f.txt", tmp_path / "f.txt", timeout=2)
    assert leftovers(tmp_path) == []


def _tarball(top: str, files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_tree_digest_by_hand(tmp_path):
    """Lines in path order, whatever the hashes' order (b'a' hashes after b'z')."""
    (tmp_path / "b").mkdir()
    (tmp_path / "a.txt").write_bytes(b"a")
    (tmp_path / "b" / "c.txt").write_bytes(b"z")
    assert sha(b"z") < sha(b"a")
    text = f"{sha(b'a')}  a.txt\n{sha(b'z')}  b/c.txt\n"
    assert tree_digest(tmp_path) == sha(text.encode())


@pytest.fixture
def toy_recipe(monkeypatch, tmp_path):
    """A recipe 'toy' of source 'mmlu' that joins a file input, an archive folder and a pinned file."""
    out = b"".join([b"A:", BODY, b"B:", b"pos1", b"C:", b"pinned"])
    pins = [Pin("mmlu", "built.txt", sha(out), len(out), "", "", "", "", False, False),
            Pin("mmlu", "kept.txt", sha(b"pinned"), 6, "", "", "", "u", True, False)]
    monkeypatch.setitem(RECIPES, "toy", Recipe("toy", "mmlu", ("built.txt",)))
    monkeypatch.setattr(derive_mod, "pins_for", lambda key: pins)
    table = tmp_path / "toy.tsv"
    table.write_text("unused\n")
    monkeypatch.setattr(derive_mod, "inputs_file", lambda name: table)

    def build(inputs):
        return {"built.txt": b"A:" + inputs["f"].read_bytes() + b"B:" + (inputs["t"] / "pos" / "1.txt").read_bytes()
                + b"C:" + inputs["p"].read_bytes()}

    monkeypatch.setattr(derive_mod, "load_build", lambda name: build)
    monkeypatch.setattr(derive_mod, "archive_files", lambda recipe, name: None)
    archive = _tarball("repo-abc", {"data/pos/1.txt": b"pos1", "other/x.txt": b"not read"})
    folder = tmp_path / "expected"
    (folder / "pos").mkdir(parents=True)
    (folder / "pos" / "1.txt").write_bytes(b"pos1")
    inputs = [Input("f", "file", "o/r", "abc", "f.txt", "https://raw.githubusercontent.com/o/r/abc/f.txt",
                    sha(BODY), len(BODY)),
              Input("t", "archive", "o/r", "abc", "data", "https://codeload.github.com/o/r/tar.gz/abc",
                    tree_digest(folder), None),
              Input("p", "pin", "", "", "kept.txt", "", sha(b"pinned"), 6)]
    monkeypatch.setattr(derive_mod, "load_inputs", lambda name: inputs)
    files = {"/raw/o/r/abc/f.txt": BODY, "/codeload/o/r/tar.gz/abc": archive}
    prefixes = {"https://raw.githubusercontent.com/": "/raw/", "https://codeload.github.com/": "/codeload/"}
    return files, prefixes, out


def _serve(up, prefixes):
    return {k: up.url + v for k, v in prefixes.items()}


def test_a_recipe_builds_checks_and_records_its_outputs(tmp_path, toy_recipe):
    files, prefixes, out = toy_recipe
    dest, cache = tmp_path / "dest", tmp_path / "cache"
    dest.mkdir()
    (dest / "kept.txt").write_bytes(b"pinned")
    with Upstream(files) as up:
        entries = derive("toy", dest, cache, url_prefixes=_serve(up, prefixes), timeout=5)
        assert (dest / "built.txt").read_bytes() == out
        assert entries == [{"source": "mmlu", "relpath": "built.txt", "sha256": sha(out), "recipe": "toy",
                            "recipe_inputs": 3, "recipe_inputs_sha256": sha(b"unused\n"), "verified": True}]
        n = len(up.requests)
        derive("toy", dest, cache, url_prefixes=_serve(up, prefixes), timeout=5)
        assert len(up.requests) == n  # checked inputs in the cache are reused, not fetched again
    assert not list(cache.rglob("*.tar.gz"))  # the archive is dropped once its folder is extracted and checked


def test_a_killed_runs_half_downloads_are_cleared_and_fetched_again(tmp_path, toy_recipe):
    files, prefixes, out = toy_recipe
    dest, cache = tmp_path / "dest", tmp_path / "cache"
    dest.mkdir()
    (dest / "kept.txt").write_bytes(b"pinned")
    half = cache / "files" / "o" / "r" / "abc" / ".f.txt.x1y2.part"
    half.parent.mkdir(parents=True)
    half.write_bytes(BODY[:10])
    (cache / "trees" / "o" / "r" / "abc" / ".data.z3.extracting" / "pos").mkdir(parents=True)
    with Upstream(files) as up:
        derive("toy", dest, cache, url_prefixes=_serve(up, prefixes), timeout=5)
    assert (dest / "built.txt").read_bytes() == out
    assert not list(cache.rglob(".*.part")) and not list(cache.rglob(".*.extracting"))


def test_a_recipe_whose_output_differs_writes_nothing(tmp_path, toy_recipe, monkeypatch):
    files, prefixes, _ = toy_recipe
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "kept.txt").write_bytes(b"pinned")
    monkeypatch.setattr(derive_mod, "load_build", lambda name: lambda inputs: {"built.txt": b"something else"})
    with Upstream(files) as up, pytest.raises(DerivationError) as err:
        derive("toy", dest, tmp_path / "cache", url_prefixes=_serve(up, prefixes), timeout=5)
    assert "built mmlu/built.txt with sha256" in str(err.value) and "nothing written" in str(err.value)
    assert leftovers(dest) == ["kept.txt"]


def test_an_archive_whose_folder_differs_is_one_line_and_removed(tmp_path, toy_recipe):
    files, prefixes, _ = toy_recipe
    files["/codeload/o/r/tar.gz/abc"] = _tarball("repo-abc", {"data/pos/1.txt": b"edited"})
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "kept.txt").write_bytes(b"pinned")
    with Upstream(files) as up, pytest.raises(DerivationError, match="tree digest"):
        derive("toy", dest, tmp_path / "cache", url_prefixes=_serve(up, prefixes), timeout=5)
    assert not (tmp_path / "cache" / "trees" / "o" / "r" / "abc" / "data").exists()
    assert not list((tmp_path / "cache").rglob("*.tar.gz"))
    assert leftovers(dest) == ["kept.txt"]


def test_a_recipe_that_raises_is_one_line_naming_it(tmp_path, toy_recipe, monkeypatch):
    files, prefixes, _ = toy_recipe
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "kept.txt").write_bytes(b"pinned")

    def broken(inputs):
        raise KeyError("column 'stars'")

    monkeypatch.setattr(derive_mod, "load_build", lambda name: broken)
    with Upstream(files) as up, pytest.raises(DerivationError, match="recipe 'toy' failed on its inputs: KeyError"):
        derive("toy", dest, tmp_path / "cache", url_prefixes=_serve(up, prefixes), timeout=5)


def test_every_required_file_has_a_way_in():
    """A URL, or a recipe whose module and input table exist: no required file only the mirror can provide."""
    for source, pins in load_pins().items():
        for pin in pins:
            if pin.optional or pin.url:
                continue
            recipe = recipe_for(source, pin.relpath)
            assert recipe is not None, f"{source}/{pin.relpath}: no URL and no recipe"
            assert derive_mod.inputs_file(recipe.name).is_file(), f"recipe {recipe.name}: no input table"
            load_inputs(recipe.name)  # well-formed
            assert callable(derive_mod.load_build(recipe.name))


def test_every_recipe_makes_only_pinned_files_of_its_source():
    for recipe in RECIPES.values():
        made = [p.relpath for p in pins_for(recipe.source) if recipe.makes(p.relpath)]
        assert made, f"recipe {recipe.name} makes no pinned file of {recipe.source}"
        assert all(not p.url for p in pins_for(recipe.source) if recipe.makes(p.relpath))


def test_the_data_page_shows_the_current_catalog():
    """docs/data.md's cost table is catalog_markdown()'s output (regenerate: python -m wobble.data.catalog docs/data.md)."""
    from conftest import REPO
    from wobble.data.catalog import END, START, catalog_markdown

    doc = (REPO / "docs" / "data.md").read_text()
    assert doc.split(START, 1)[1].split(END, 1)[0] == "\n" + catalog_markdown()


def test_the_readme_states_the_catalogs_download_size():
    import re

    from conftest import REPO
    from wobble.data.catalog import SOURCES, source_cost

    total = sum(source_cost(k).download_bytes for k in SOURCES)
    stated = re.search(r"at least (\d+) MB", (REPO / "README.md").read_text().replace("\n", " "))
    assert stated and int(stated.group(1)) == round(total / 1e6)
