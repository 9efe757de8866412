"""Acquire a pinned source into a folder: from the offline mirror when possible, else by download.

``acquire(source_key, dest_dir, mirror=None)`` fills ``dest_dir`` with the source's pinned files in the
same relative layout as the mirror folder (``<mirror>/<Source.mirror_subdir>/``), so every loader reads
an acquired folder and a mirror folder alike. For each pinned file:

1. if ``mirror`` is given and holds the file, it is copied and its sha256 must equal the pin;
2. otherwise, if the pin has an upstream URL, the file is downloaded (urllib, with a timeout, to a temp
   file that is renamed into place). Bytes identical to upstream must match the pinned sha256. For a
   file that is a documented trim of the upstream file (e.g. a SuperNI task cut to its first N
   instances), the trim is applied to the download; the entry records the observed sha256 and
   ``verified`` says whether it equals the pin (a later upstream edit makes it false, not an error);
3. otherwise, if a recipe (:mod:`wobble.data.recipes`) makes the file, it is rebuilt from the recipe's
   pinned upstream files after every other file of the source is in place (:mod:`wobble.data.derive`:
   each input and each output checked against its sha256);
4. otherwise the file is unavailable: an optional file (documentation, cross-check copies) is skipped,
   a required one raises :class:`SourceUnavailable` naming the source, the file and both places
   looked in (mirror path and URL).

Every download goes through :func:`wobble.data.download.download` (temp file, length check, rename), with the
config's ``url_prefixes`` applied. Returns provenance entries ``{source, relpath, sha256, mirror_path | url |
recipe, verified}`` (plus ``expected_sha256`` when a trimmed download differs from the pin), for
``provenance.tracked(sources=)``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any, Mapping

from wobble.data.derive import DerivationError, derive
from wobble.data.download import DownloadError, download, temp_beside
from wobble.data.recipes import RECIPES, recipe_for
from wobble.data.sources import Pin, get_source, pins_for
from wobble.errors import DataError, SourceUnavailable, WobbleError
from wobble.io import atomic_write, sha256_bytes, sha256_file

log = logging.getLogger(__name__)


class ChecksumMismatch(WobbleError):
    """A file's bytes differ from its pinned sha256."""

    def __init__(self, source: str, relpath: str, where: str, expected: str, actual: str):
        self.source, self.relpath, self.where, self.expected, self.actual = source, relpath, where, expected, actual
        super().__init__(f"source '{source}': file '{relpath}' from {where} has sha256 {actual}, "
                         f"but the pin expects {expected}")


def _write(data: bytes, target: Path) -> None:
    with atomic_write(target, "wb") as f:
        f.write(data)


def apply_trim(data: bytes, trim: dict[str, Any], where: str) -> bytes:
    """Reproduce a mirror file from the upstream bytes by the pin's documented trim.

    ``superni_instances``: keep the first ``keep`` Instances, drop ``drop_fields``, wrap a string
    Definition in a list (old-format files), repair a doubled comma; ``ambig_demos``: keep the first
    ``keep`` items of demos_1_1 and demos_0_0. The result is re-serialised with the recorded json style.
    """
    text = data.decode("utf-8")
    if trim.get("repair_double_comma"):
        text = re.sub(r'"(\s*),(\s*),', r'"\1,\2', text)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(where, f"at line {e.lineno} column {e.colno}", f"valid JSON to trim ({e.msg})") from None
    op = trim.get("op")
    if op == "superni_instances":
        if not isinstance(obj, dict) or not isinstance(obj.get("Instances"), list):
            raise DataError(where, "Instances", "a SuperNI task object with an Instances list")
        obj["Instances"] = obj["Instances"][: int(trim["keep"])]
        for name in trim.get("drop_fields", []):
            obj.pop(name, None)
        if trim.get("definition_to_list") and isinstance(obj.get("Definition"), str):
            obj["Definition"] = [obj["Definition"]]
    elif op == "ambig_demos":
        for key in ("demos_1_1", "demos_0_0"):
            if not isinstance(obj.get(key), list):
                raise DataError(where, key, "a list of demonstrations")
            obj[key] = obj[key][: int(trim["keep"])]
    else:
        raise WobbleError(f"unknown trim op {op!r} for {where}")
    style = trim.get("json") or {"indent": 4, "ensure_ascii": False, "trailing_newline": True}
    out = json.dumps(obj, indent=style.get("indent"), ensure_ascii=style.get("ensure_ascii", False))
    return (out + ("\n" if style.get("trailing_newline") else "")).encode("utf-8")


def _unavailable(source: str, pin: Pin, mirror_path: Path | None, why: str) -> SourceUnavailable:
    if mirror_path is None:
        looked = "mirror: none given"
    else:
        looked = f"mirror: {mirror_path}" + ("" if mirror_path.exists() else " (not found)")
    url = pin.url or "none, and no recipe rebuilds it (only the mirror has it)"
    return SourceUnavailable(f"source '{source}': file '{pin.relpath}' is unavailable ({why}). "
                             f"Looked in {looked}; URL: {url}")


def acquire_file(source_key: str, pin: Pin, dest_dir: Path, mirror_src: Path | None, timeout: float = 20,
                 url_prefixes: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """Acquire one pinned file from the mirror or its URL (see the module docstring). Returns its provenance
    entry, None if an optional file is skipped, or ``{"recipe": name}`` when only a recipe can build it."""
    target = dest_dir / pin.relpath
    mirror_path = mirror_src / pin.relpath if mirror_src is not None else None
    if mirror_path is not None and mirror_path.is_file():
        actual = sha256_file(mirror_path)
        if actual != pin.sha256:
            raise ChecksumMismatch(source_key, pin.relpath, f"mirror {mirror_path}", pin.sha256, actual)
        with atomic_write(target, "wb") as out, open(mirror_path, "rb") as src:
            shutil.copyfileobj(src, out)
        return {"source": source_key, "relpath": pin.relpath, "sha256": actual, "mirror_path": str(mirror_path),
                "verified": True}
    if not pin.url:
        recipe = recipe_for(source_key, pin.relpath)
        if recipe is not None:
            return {"recipe": recipe.name}
        if pin.optional:
            log.info("source %s: skipping optional file %s (not in the mirror, no upstream URL)", source_key, pin.relpath)
            return None
        raise _unavailable(source_key, pin, mirror_path, "not in the mirror and it has no upstream URL")
    raw_tmp = temp_beside(target, ".download")
    try:
        try:
            download(pin.url, raw_tmp, timeout=timeout, url_prefixes=url_prefixes)
        except DownloadError as e:
            if pin.optional:
                log.warning("source %s: skipping optional file %s (%s)", source_key, pin.relpath, e)
                return None
            raise _unavailable(source_key, pin, mirror_path, str(e)) from None
        data = raw_tmp.read_bytes()
    finally:
        with contextlib.suppress(FileNotFoundError):
            raw_tmp.unlink()
    entry: dict[str, Any] = {"source": source_key, "relpath": pin.relpath, "url": pin.url}
    if pin.trim:
        data = apply_trim(data, pin.trim, pin.url)
        actual = sha256_bytes(data)
        entry.update(sha256=actual, verified=actual == pin.sha256, trim=pin.trim)
        if actual != pin.sha256:
            entry["expected_sha256"] = pin.sha256
            log.warning("source %s: %s trimmed from %s has sha256 %s, pin %s (recorded as unverified)",
                        source_key, pin.relpath, pin.url, actual, pin.sha256)
    else:
        actual = sha256_bytes(data)
        if actual != pin.sha256 and pin.identical:
            raise ChecksumMismatch(source_key, pin.relpath, pin.url, pin.sha256, actual)
        entry.update(sha256=actual, verified=actual == pin.sha256)
    _write(data, target)
    return entry


def acquire(source_key: str, dest_dir: str | os.PathLike, mirror: str | os.PathLike | None = None,
            timeout: float = 20, url_prefixes: Mapping[str, str] | None = None,
            cache: str | os.PathLike | None = None) -> list[dict]:
    """Fill ``dest_dir`` with the pinned files of ``source_key``; return their provenance entries.

    Files only a recipe can build are built last, once per recipe, from upstream inputs kept in ``cache``
    (default: ``upstream/`` beside ``dest_dir``), so a recipe can read the source's other files.
    """
    source = get_source(source_key)
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    mirror_src = Path(mirror) / source.mirror_subdir if mirror not in (None, "") else None
    pins = pins_for(source_key)
    if not pins:
        raise SourceUnavailable(f"source '{source_key}' has no pinned files (rebuild pins.tsv with wobble.data.pin)")
    entries, recipes = [], []
    for pin in pins:
        entry = acquire_file(source_key, pin, dest, mirror_src, timeout=timeout, url_prefixes=url_prefixes)
        if entry is not None and "recipe" in entry and "relpath" not in entry:
            recipes += [entry["recipe"]] if entry["recipe"] not in recipes else []
        elif entry is not None:
            entries.append(entry)
    n_mirror = sum(1 for e in entries if "mirror_path" in e)
    n_built = 0
    for name in recipes:
        log.info("source %s: building with recipe %s from its upstream files", source_key, name)
        try:
            built = derive(name, dest, Path(cache) if cache else dest.parent / "upstream", timeout=timeout,
                           url_prefixes=url_prefixes)
        except (DownloadError, DerivationError) as e:
            first = next(p for p in pins if not p.url and RECIPES[name].makes(p.relpath))
            raise _unavailable(source_key, first, mirror_src / first.relpath if mirror_src else None,
                               f"not in the mirror; recipe '{name}' could not rebuild it: {e}") from None
        entries.extend(built)
        n_built += len(built)
    log.info("source %s: %d files into %s (%d from the mirror, %d downloaded, %d built by recipes, "
             "%d optional skipped)", source_key, len(entries), dest, n_mirror, len(entries) - n_mirror - n_built,
             n_built, len(pins) - len(entries))
    return entries
