"""Check every recipe against the offline mirror, byte for byte, from upstream repositories read with git.

    python tests/tools/check_recipes.py --snapshots DIR --mirror ../shared/data [--write docs/data.md]

``DIR`` holds git snapshots of the upstream repositories as ``<owner>+<name>/repo`` (the layout the search tool's
``fetch`` leaves). For each recipe the script reads every ``file`` input at its pinned commit (``git show``), every
``archive`` input's folder (``git archive``), every ``pin`` input from the mirror, checks each input's sha256 (or
tree digest) against the recipe's table, runs ``build`` and compares each output with its pin and with the mirror
file. It prints one Markdown table (with ``--write``, it replaces the part of that file between the
``recipes-check`` markers). Exit 1 if any output that could be built differs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from fnmatch import fnmatchcase
from pathlib import Path

from wobble.data.derive import archive_files, build_outputs, load_inputs, tree_digest
from wobble.data.recipes import RECIPES
from wobble.data.sources import get_source, pins_for
from wobble.io import atomic_write, sha256_bytes, sha256_file

START, END = "<!-- recipes-check:start -->", "<!-- recipes-check:end -->"


def _git(repo_dir: Path, *args: str) -> bytes | None:
    proc = subprocess.run(["git", "-C", str(repo_dir), *args], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def extract_tree(repo_dir: Path, commit: str, folder: str, dest: Path, keep: tuple[str, ...] | None) -> bool:
    """Write the files under ``folder`` at ``commit`` (those ``keep`` matches) into ``dest``, as an archive input's
    folder; False if the snapshot lacks any of them (``git cat-file --batch`` reads the blobs in one process)."""
    listing = _git(repo_dir, "ls-tree", "-r", "-z", commit, folder.rstrip("/") + "/")
    if not listing:
        return False
    wanted = []
    for entry in listing.decode("utf-8").split("\0"):
        if not entry:
            continue
        meta, rel = entry.split("\t", 1)
        rel = rel[len(folder.rstrip("/")) + 1:]
        if meta.split()[1] == "blob" and (keep is None or any(fnmatchcase(rel, k) for k in keep)):
            wanted.append((meta.split()[2], rel))
    proc = subprocess.run(["git", "-C", str(repo_dir), "cat-file", "--batch"], capture_output=True,
                          input="".join(f"{sha}\n" for sha, _ in wanted).encode())
    out, pos = proc.stdout, 0
    for sha, rel in wanted:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        if len(header) < 3 or header[1] != b"blob":
            return False
        size = int(header[2])
        target = dest / folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[header_end + 1:header_end + 1 + size])
        pos = header_end + 1 + size + 1
    return True


def materialize(recipe: str, snapshots: Path, mirror: Path, work: Path) -> tuple[dict[str, Path], list[str]]:
    """Local copies of the recipe's inputs and the problems met (input missing, checksum differs)."""
    source_dir = mirror / get_source(RECIPES[recipe].source).mirror_subdir
    paths, problems = {}, []
    for i, inp in enumerate(load_inputs(recipe)):
        if inp.kind == "pin":
            path = source_dir / inp.path
            if not path.is_file() or sha256_file(path) != inp.sha256:
                problems.append(f"pin input {inp.path} absent or changed in the mirror")
            paths[inp.name] = path
            continue
        repo_dir = snapshots / inp.repo.replace("/", "+") / "repo"
        if not repo_dir.is_dir():
            problems.append(f"{inp.repo} not fetched")
            continue
        if inp.kind == "file":
            data = _git(repo_dir, "show", f"{inp.commit}:{inp.path}")
            if data is None:
                problems.append(f"{inp.repo}@{inp.commit[:8]}:{inp.path} not in the snapshot")
                continue
            if sha256_bytes(data) != inp.sha256:
                problems.append(f"{inp.path}: sha256 differs from the recipe's table")
            path = work / f"in{i}" / Path(inp.path).name
            path.parent.mkdir(parents=True)
            path.write_bytes(data)
        else:
            path = work / f"in{i}"
            if not extract_tree(repo_dir, inp.commit, inp.path, path, archive_files(recipe, inp.name)):
                problems.append(f"{inp.repo}@{inp.commit[:8]}:{inp.path}/ not in the snapshot")
                continue
            path = path / inp.path
            if tree_digest(path) != inp.sha256:
                problems.append(f"{inp.path}/: tree digest differs from the recipe's table")
        paths[inp.name] = path
    return paths, problems


def check(recipe: str, snapshots: Path, mirror: Path) -> list[dict]:
    r = RECIPES[recipe]
    pins = [p for p in pins_for(r.source) if r.makes(p.relpath)]
    n_inputs = len(load_inputs(recipe))
    with tempfile.TemporaryDirectory() as tmp:
        paths, problems = materialize(recipe, snapshots, mirror, Path(tmp))
        built = {} if problems else build_outputs(r, paths)
    rows = []
    for pin in pins:
        mirror_file = mirror / get_source(r.source).mirror_subdir / pin.relpath
        if problems:
            status, note = "not checked", "; ".join(problems[:2]) + (f" (+{len(problems) - 2})" if len(problems) > 2 else "")
        else:
            got = sha256_bytes(built.get(pin.relpath, b""))
            same_mirror = mirror_file.is_file() and sha256_file(mirror_file) == got
            status = "identical" if got == pin.sha256 and same_mirror else "DIFFERS"
            note = "" if status == "identical" else f"built {got[:12]}, pin {pin.sha256[:12]}"
        rows.append({"recipe": recipe, "source": r.source, "file": pin.relpath, "inputs": n_inputs,
                     "status": status, "note": note})
    return rows


def table(rows: list[dict]) -> str:
    """One line per recipe: its files, how many were rebuilt identical, and what kept the others from it."""
    lines = ["| recipe | source | upstream inputs | files | rebuilt = mirror | not identical |",
             "|---|---|---:|---:|---:|---|"]
    for name in dict.fromkeys(r["recipe"] for r in rows):
        mine = [r for r in rows if r["recipe"] == name]
        odd = "; ".join(f"{r['file']}: {r['status']} {r['note']}".strip() for r in mine if r["status"] != "identical")
        lines.append(f"| {name} | {mine[0]['source']} | {mine[0]['inputs']} | {len(mine)} | "
                     f"{sum(r['status'] == 'identical' for r in mine)} | {odd or '-'} |")
    counts = {s: sum(r["status"] == s for r in rows) for s in ("identical", "DIFFERS", "not checked")}
    lines.append("")
    lines.append(f"{counts['identical']} of {len(rows)} files rebuilt byte for byte; {counts['DIFFERS']} differ; "
                 f"{counts['not checked']} not checked.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshots", type=Path, required=True)
    ap.add_argument("--mirror", type=Path, required=True)
    ap.add_argument("--write", type=Path, help="a Markdown file whose recipes-check part is replaced")
    ap.add_argument("recipes", nargs="*", help="default: every recipe")
    args = ap.parse_args(argv)
    rows = [row for name in (args.recipes or sorted(RECIPES)) for row in check(name, args.snapshots, args.mirror)]
    text = table(rows)
    if args.write:
        doc = args.write.read_text()
        if START not in doc or END not in doc:
            print(f"{args.write}: no {START} ... {END} markers", file=sys.stderr)
            return 2
        head, rest = doc.split(START, 1)
        with atomic_write(args.write) as f:
            f.write(head + START + "\n" + text + END + rest.split(END, 1)[1])
    print(text, end="")
    return 1 if any(r["status"] == "DIFFERS" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
