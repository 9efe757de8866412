"""Acquire every source without the mirror, as a user does, from a loopback GitHub built out of git snapshots.

    python tests/tools/acquire_from_snapshots.py --snapshots DIR [--out DIR] [SOURCE ...]

``DIR`` holds git snapshots of the upstream repositories as ``<owner>+<name>/repo`` (the layout the search tool's
``fetch`` leaves). A loopback server answers ``/raw/<owner>/<name>/<commit>/<path>`` with ``git show`` and
``/codeload/<owner>/<name>/tar.gz/<commit>`` with a ``git archive`` of the blobs the snapshot holds; the real
:func:`wobble.data.acquire` runs with ``data.url_prefixes`` pointed at it and no mirror, so every URL, trim and
recipe is exercised and every file checked against its pin. Prints one line per source (files, by URL, by
recipe, or the one-line error) and exits 1 if any source whose repositories are all present fails.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the loopback server
from loopback_http import Upstream  # noqa: E402
from wobble.data import SOURCES, acquire  # noqa: E402
from wobble.data.derive import load_inputs
from wobble.data.recipes import RECIPES
from wobble.data.sources import pins_for
from wobble.errors import WobbleError

START, END = "<!-- acquire-check:start -->", "<!-- acquire-check:end -->"


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes | None:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, input=data)
    return proc.stdout if proc.returncode == 0 else None


def _tarball(repo: Path, commit: str, top: str) -> bytes | None:
    """A .tar.gz of every blob at ``commit`` that the snapshot holds, under ``top/`` (as codeload lays it out); the
    blobs come from one ``git cat-file --batch``, and those over the snapshot's size limit are left out."""
    listing = _git(repo, "ls-tree", "-r", "-z", commit)
    if listing is None:
        return None
    blobs = []
    for entry in listing.decode().split("\0"):
        if entry and entry.split("\t", 1)[0].split()[1] == "blob":
            meta, path = entry.split("\t", 1)
            blobs.append((meta.split()[2], path))
    out = _git(repo, "cat-file", "--batch", data="".join(f"{sha}\n" for sha, _ in blobs).encode()) or b""
    buf, pos = io.BytesIO(), 0
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for _, path in blobs:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            if header[-1] == b"missing":
                pos = end + 1
                continue
            size = int(header[2])
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = size
            tar.addfile(info, io.BytesIO(out[end + 1:end + 1 + size]))
            pos = end + 1 + size + 1
    return buf.getvalue()


class Snapshots:
    """URL path -> bytes out of the git snapshots, read on request: the ``files`` of a :class:`loopback_http.Upstream`
    (``/raw/<owner>/<name>/<commit>/<path>`` by ``git show``, ``/codeload/<owner>/<name>/tar.gz/<commit>`` as an
    archive); None where the snapshot has no such file."""

    def __init__(self, snapshots: Path):
        self.snapshots = snapshots

    def get(self, path: str) -> bytes | None:
        from urllib.parse import unquote

        parts = unquote(path).lstrip("/").split("/")
        if len(parts) < 5:
            return None
        repo = self.snapshots / f"{parts[1]}+{parts[2]}" / "repo"
        if not repo.is_dir():
            return None
        if parts[0] == "raw":
            return _git(repo, "show", f"{parts[3]}:{'/'.join(parts[4:])}")
        if parts[0] == "codeload" and len(parts) == 5:
            return _tarball(repo, parts[4], f"{parts[2]}-{parts[4]}")
        return None


def repos_of(source: str) -> set[str]:
    repos = {p.repo for p in pins_for(source) if p.url and not p.optional}
    for r in RECIPES.values():
        if r.source == source:
            repos |= {i.repo for i in load_inputs(r.name) if i.kind != "pin"}
    return repos


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshots", type=Path, required=True)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--write", type=Path, help="a Markdown file whose acquire-check part is replaced")
    ap.add_argument("sources", nargs="*")
    args = ap.parse_args(argv)
    up = Upstream({})
    up.files = Snapshots(args.snapshots)
    up.__enter__()
    base = up.url
    prefixes = {"https://raw.githubusercontent.com/": base + "/raw/", "https://codeload.github.com/": base + "/codeload/"}
    out = args.out or Path(tempfile.mkdtemp(prefix="wobble-acquire-"))
    bad, lines = 0, []
    for source in args.sources or list(SOURCES):
        missing = sorted(r for r in repos_of(source) if not (args.snapshots / r.replace("/", "+") / "repo").is_dir())
        try:
            entries = acquire(source, out / "data" / source, mirror=None, timeout=120, url_prefixes=prefixes,
                              cache=out / "upstream")
        except WobbleError as e:
            bad += not missing
            why = (f"not checked: no snapshot of {', '.join(missing)} (its files stay checked on each download "
                   "against their pins)") if missing else f"FAILED: {e}"
            lines.append(f"* `{source}`: {why}")
            continue
        n_recipe = sum(1 for e in entries if "recipe" in e)
        unverified = [e["relpath"] for e in entries if not e.get("verified")]
        bad += bool(unverified)
        lines.append(f"* `{source}`: {len(entries)} files, {len(entries) - n_recipe} by URL, {n_recipe} by recipe"
                     + (f"; UNVERIFIED: {unverified[:3]}" if unverified else "; every file equals its pin"))
    up.__exit__(None, None, None)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.write:
        doc = args.write.read_text()
        head, rest = doc.split(START, 1)
        args.write.write_text(head + START + "\n" + text + END + rest.split(END, 1)[1])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
