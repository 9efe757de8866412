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
3. otherwise the file is unavailable: an optional file (documentation, cross-check copies) is skipped,
   a required one raises :class:`SourceUnavailable` naming the source, the file and both places
   looked in (mirror path and URL).

Returns provenance entries ``{source, relpath, sha256, mirror_path | url, verified}`` (plus
``expected_sha256`` when a trimmed download differs from the pin), for ``provenance.tracked(sources=)``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from wobble.data.sources import Pin, get_source, pins_for
from wobble.errors import DataError, SourceUnavailable, WobbleError
from wobble.io import sha256_bytes, sha256_file

log = logging.getLogger(__name__)

USER_AGENT = "wobble-data-acquire/0.1"


class ChecksumMismatch(WobbleError):
    """A file's bytes differ from its pinned sha256."""

    def __init__(self, source: str, relpath: str, where: str, expected: str, actual: str):
        self.source, self.relpath, self.where, self.expected, self.actual = source, relpath, where, expected, actual
        super().__init__(f"source '{source}': file '{relpath}' from {where} has sha256 {actual}, "
                         f"but the pin expects {expected}")


def _place(tmp: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, target)


def _temp_in(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
    os.close(fd)
    return Path(tmp)


def download(url: str, dest: Path, timeout: float = 20) -> None:
    """Fetch ``url`` into ``dest`` (temp file + rename); raises OSError / urllib errors on failure."""
    tmp = _temp_in(dest.parent, dest.name)
    try:
        req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        with urllib.request.urlopen(req, timeout=timeout) as resp, open(tmp, "wb") as out:
            shutil.copyfileobj(resp, out, length=1 << 20)
        _place(tmp, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


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
    url = pin.url or "none (a curated file that no upstream file holds; only the mirror has it)"
    return SourceUnavailable(f"source '{source}': file '{pin.relpath}' is unavailable ({why}). "
                             f"Looked in {looked}; URL: {url}")


def acquire_file(source_key: str, pin: Pin, dest_dir: Path, mirror_src: Path | None,
                 timeout: float = 20) -> dict[str, Any] | None:
    """Acquire one pinned file (see the module docstring). Returns its provenance entry, or None if skipped."""
    target = dest_dir / pin.relpath
    mirror_path = mirror_src / pin.relpath if mirror_src is not None else None
    if mirror_path is not None and mirror_path.is_file():
        actual = sha256_file(mirror_path)
        if actual != pin.sha256:
            raise ChecksumMismatch(source_key, pin.relpath, f"mirror {mirror_path}", pin.sha256, actual)
        tmp = _temp_in(target.parent, target.name)
        try:
            shutil.copyfile(mirror_path, tmp)
            _place(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        return {"source": source_key, "relpath": pin.relpath, "sha256": actual, "mirror_path": str(mirror_path),
                "verified": True}
    if not pin.url:
        if pin.optional:
            log.info("source %s: skipping optional file %s (not in the mirror, no upstream URL)", source_key, pin.relpath)
            return None
        raise _unavailable(source_key, pin, mirror_path, "not in the mirror and it has no upstream URL")
    raw_tmp = _temp_in(target.parent, target.name + ".download")
    try:
        try:
            download(pin.url, raw_tmp, timeout=timeout)
        except (urllib.error.URLError, OSError, socket.timeout, ValueError) as e:
            if pin.optional:
                log.warning("source %s: skipping optional file %s (download failed: %s)", source_key, pin.relpath, e)
                return None
            reason = getattr(e, "reason", None) or e
            raise _unavailable(source_key, pin, mirror_path, f"download failed: {reason}") from None
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
    tmp = _temp_in(target.parent, target.name)
    try:
        tmp.write_bytes(data)
        _place(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return entry


def acquire(source_key: str, dest_dir: str | os.PathLike, mirror: str | os.PathLike | None = None,
            timeout: float = 20) -> list[dict]:
    """Fill ``dest_dir`` with the pinned files of ``source_key``; return their provenance entries."""
    source = get_source(source_key)
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    mirror_src = Path(mirror) / source.mirror_subdir if mirror not in (None, "") else None
    pins = pins_for(source_key)
    if not pins:
        raise SourceUnavailable(f"source '{source_key}' has no pinned files (rebuild pins.tsv with wobble.data.pin)")
    entries = []
    for pin in pins:
        entry = acquire_file(source_key, pin, dest, mirror_src, timeout=timeout)
        if entry is not None:
            entries.append(entry)
    n_mirror = sum(1 for e in entries if "mirror_path" in e)
    log.info("source %s: %d files into %s (%d from the mirror, %d downloaded, %d optional skipped)",
             source_key, len(entries), dest, n_mirror, len(entries) - n_mirror, len(pins) - len(entries))
    return entries
