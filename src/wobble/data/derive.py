"""Rebuilding a source's derived files from their public upstreams: fetch a recipe's inputs, check, build, check.

A recipe (:mod:`wobble.data.recipes`) declares its inputs in ``recipes/<name>.tsv`` and builds its outputs in
``recipes/<name>.py``. :func:`derive` fetches every input into a cache (``<cache>/files/<repo>/<commit>/<path>``
for a file, ``<cache>/trees/<repo>/<commit>/<path>/`` for an archive's folder; a cached input whose checksum
still holds is reused), hands them to the recipe's ``build``, and checks each output's sha256 against its pin
before anything is written: an output that differs, a pin the recipe does not make or a file the recipe makes
that no pin names is one line naming the recipe and the file, and nothing is written.

The tree digest (:func:`tree_digest`) pins a folder read out of a repository archive: GitHub's archives are
not byte-stable, but the files inside them are, so the digest is taken over every file's sha256 and path — the
files the recipe reads (its module's ``ARCHIVE_FILES``), or every file of the folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import shutil
import tarfile
from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping

from wobble.data._util import read_tsv
from wobble.data.download import download, temp_beside
from wobble.data.recipes import RECIPES, Recipe
from wobble.data.sources import Pin, pins_for
from wobble.errors import DataError, WobbleError
from wobble.io import atomic_write, sha256_bytes, sha256_file

INPUT_COLUMNS = ("name", "kind", "repo", "commit", "path", "url", "sha256", "size")
KINDS = ("file", "archive", "pin")


class DerivationError(WobbleError):
    """A recipe could not rebuild its files exactly; nothing was written."""


@dataclass(frozen=True)
class Input:
    """One upstream input of a recipe (a row of ``recipes/<name>.tsv``)."""

    name: str
    kind: str
    repo: str
    commit: str
    path: str
    url: str
    sha256: str
    size: int | None


def inputs_file(recipe: str) -> Path:
    return Path(str(resources.files("wobble.data.recipes").joinpath(f"{recipe}.tsv")))


def load_inputs(recipe: str) -> list[Input]:
    """The inputs ``recipes/<recipe>.tsv`` declares; a malformed row is a DataError naming its line."""
    path = inputs_file(recipe)
    if not path.is_file():
        raise WobbleError(f"recipe '{recipe}' has no input table {path}")
    out = []
    for lineno, row in read_tsv(path, columns=INPUT_COLUMNS):
        where = f"line {lineno}"
        if row["kind"] not in KINDS:
            raise DataError(path, where, f"kind one of {', '.join(KINDS)}, got {row['kind']!r}")
        if len(row["sha256"]) != 64:
            raise DataError(path, where, f"a 64-hex sha256, got {row['sha256']!r}")
        if row["kind"] != "pin" and not row["url"]:
            raise DataError(path, where, f"a URL for a {row['kind']} input")
        try:
            size = int(row["size"]) if row["size"] else None
        except ValueError:
            raise DataError(path, where, f"an integer size, got {row['size']!r}") from None
        out.append(Input(row["name"], row["kind"], row["repo"], row["commit"], row["path"], row["url"],
                         row["sha256"], size))
    return out


def load_build(recipe: str) -> Callable[[Mapping[str, Path]], dict[str, bytes]]:
    return importlib.import_module(f"wobble.data.recipes.{recipe}").build


def tree_digest(folder: str | os.PathLike) -> str:
    """sha256 of one line ``"<sha256>  <relative path>\\n"`` per file under ``folder``, sorted by path."""
    folder = Path(folder)
    files = sorted((p.relative_to(folder).as_posix(), p) for p in folder.rglob("*") if p.is_file())
    text = "".join(f"{sha256_file(p)}  {rel}\n" for rel, p in files)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def archive_files(recipe: str, name: str) -> tuple[str, ...] | None:
    """The ``fnmatch`` patterns (relative to the archive input's folder) of the files recipe ``recipe`` reads from
    its archive input ``name`` (its module's ``ARCHIVE_FILES``), or None for every file of the folder."""
    patterns = getattr(importlib.import_module(f"wobble.data.recipes.{recipe}"), "ARCHIVE_FILES", {})
    return tuple(patterns[name]) if name in patterns else None


def _extract_folder(archive: Path, inner: str, target: Path, url: str, keep: tuple[str, ...] | None) -> None:
    """Extract the files under ``<top>/<inner>/`` of a repository tarball into ``target`` (a fresh folder), only
    those matching ``keep`` if given."""
    prefix = inner.strip("/") + "/"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                parts = member.name.split("/", 1)
                if len(parts) < 2 or not parts[1].startswith(prefix) or not member.isfile():
                    continue
                rel = Path(parts[1][len(prefix):])
                if keep is not None and not any(fnmatchcase(rel.as_posix(), k) for k in keep):
                    continue
                if rel.is_absolute() or ".." in rel.parts:
                    raise DerivationError(f"archive {url} holds an unsafe path {member.name!r}")
                dest = target / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(member)
                with src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise DerivationError(f"archive {url} could not be read: {exc} (re-run to download it again)") from None


def fetch_input(inp: Input, cache: Path, acquired: Path, *, timeout: float = 20,
                url_prefixes: Mapping[str, str] | None = None, keep: tuple[str, ...] | None = None) -> Path:
    """A local path holding ``inp``'s checked bytes (a folder for an archive input, with only the files ``keep``
    matches), fetching it if needed."""
    if inp.kind == "pin":
        path = acquired / inp.path
        if not path.is_file():
            raise DerivationError(f"input {inp.path} (a file of the same source) has not been acquired")
        if sha256_file(path) != inp.sha256:
            raise DerivationError(f"input {path} has sha256 {sha256_file(path)}, the recipe expects {inp.sha256}")
        return path
    if inp.kind == "file":
        path = cache / "files" / inp.repo / inp.commit / inp.path
        if path.is_file() and sha256_file(path) == inp.sha256:
            return path
        download(inp.url, path, sha256=inp.sha256, timeout=timeout, url_prefixes=url_prefixes)
        return path
    folder = cache / "trees" / inp.repo / inp.commit / inp.path
    marker = folder.parent / f".{folder.name}.tree_digest"
    if folder.is_dir() and marker.is_file() and marker.read_text().strip() == inp.sha256:
        return folder
    archive = cache / "archives" / f"{inp.repo.replace('/', '+')}@{inp.commit}.tar.gz"
    if not archive.is_file():
        download(inp.url, archive, timeout=max(timeout, 60), url_prefixes=url_prefixes)
    staging = temp_beside(folder, suffix=".extracting")
    staging.unlink()
    try:
        _extract_folder(archive, inp.path, staging, inp.url, keep)
        digest = tree_digest(staging)
        if digest != inp.sha256:
            archive.unlink()
            raise DerivationError(f"folder {inp.path} of {inp.url} has tree digest {digest}, the recipe expects "
                                  f"{inp.sha256} (archive removed; re-run to download it again)")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
        marker.write_text(digest + "\n")
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    archive.unlink()
    return folder


def build_outputs(recipe: Recipe, paths: Mapping[str, Path]) -> dict[str, bytes]:
    """Run ``recipe``'s build on local inputs; an error inside it becomes one line naming the recipe."""
    try:
        out = load_build(recipe.name)(paths)
    except WobbleError:
        raise
    except Exception as exc:  # a recipe's parse of an unexpected upstream file
        raise DerivationError(f"recipe '{recipe.name}' failed on its inputs: {type(exc).__name__}: {exc}") from None
    if not isinstance(out, dict) or not all(isinstance(v, bytes) for v in out.values()):
        raise DerivationError(f"recipe '{recipe.name}' must return a dict of relpath -> bytes")
    return out


def check_outputs(recipe: Recipe, built: Mapping[str, bytes], pins: list[Pin]) -> list[tuple[Pin, bytes]]:
    """Pair every pin the recipe makes with its built bytes, checking sha256; raise on any difference."""
    mine = {p.relpath: p for p in pins if recipe.makes(p.relpath)}
    extra = sorted(set(built) - set(mine))
    if extra:
        raise DerivationError(f"recipe '{recipe.name}' made {extra[0]}, which no pin of source "
                              f"'{recipe.source}' names")
    missing = sorted(set(mine) - set(built))
    if missing:
        raise DerivationError(f"recipe '{recipe.name}' did not make {missing[0]} (source '{recipe.source}')")
    pairs = []
    for relpath, pin in sorted(mine.items()):
        actual = sha256_bytes(built[relpath])
        if actual != pin.sha256:
            raise DerivationError(f"recipe '{recipe.name}' built {recipe.source}/{relpath} with sha256 {actual}, "
                                  f"but the pin expects {pin.sha256} (nothing written)")
        pairs.append((pin, built[relpath]))
    return pairs


def derive(recipe_name: str, dest_dir: str | os.PathLike, cache: str | os.PathLike, *, timeout: float = 20,
           url_prefixes: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Build the files of ``recipe_name`` into ``dest_dir`` (the source's acquired folder); return provenance
    entries, one per file."""
    recipe = RECIPES[recipe_name]
    dest, cache = Path(dest_dir), Path(cache)
    if cache.is_dir():
        clear_partial(cache)  # what a killed run left half-written: its inputs are fetched again from the start
    inputs = load_inputs(recipe.name)
    paths = {inp.name: fetch_input(inp, cache, dest, timeout=timeout, url_prefixes=url_prefixes,
                                   keep=archive_files(recipe.name, inp.name))
             for inp in inputs}
    pairs = check_outputs(recipe, build_outputs(recipe, paths), pins_for(recipe.source))
    table_sha = sha256_file(inputs_file(recipe.name))
    entries = []
    for pin, data in pairs:
        with atomic_write(dest / pin.relpath, "wb") as f:
            f.write(data)
        entries.append({"source": recipe.source, "relpath": pin.relpath, "sha256": pin.sha256,
                        "recipe": recipe.name, "recipe_inputs": len(inputs), "recipe_inputs_sha256": table_sha,
                        "verified": True})
    return entries


def clear_partial(folder: Path) -> None:
    """Remove the temp files and folders a killed acquisition left in ``folder`` (``.X.*.part``,
    ``.X.*.extracting``)."""
    for p in list(folder.rglob(".*.part")) + list(folder.rglob(".*.extracting")):
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
