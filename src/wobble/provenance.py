"""Provenance sidecars (``X.prov.json``) and the audit that walks them back to the sources.

Every output ``X`` of the workflow gets ``X.prov.json`` recording: the rule and wildcards, every input
path with its sha256 (and the input's own sidecar, if it has one), the config subset the rule used,
model keys with their weights sha256, seeds, package versions, the git commit, and wall time.
``audit(X)`` re-hashes every file along that chain and flags any whose bytes changed since.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from wobble.errors import WobbleError
from wobble.io import sha256_file, write_json
from wobble.paths import RESULTS

SIDECAR_SUFFIX = ".prov.json"
TRACKED_PACKAGES = ("wobble", "torch", "transformers", "peft", "datasets", "snakemake", "deepspeed",
                    "rouge-score", "spacy", "pandas", "matplotlib", "numpy", "gguf", "accelerate", "scipy",
                    "scikit-learn", "xllamacpp")


def sidecar_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def content_hash(path: str | os.PathLike) -> str | None:
    """sha256 of a file; for a directory, sha256 over its sorted (relative path, file sha256) list.

    Sidecars and hidden temp files inside a directory are ignored. Returns None if the path is gone.
    """
    p = Path(path)
    if p.is_file():
        return sha256_file(p)
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            rel = f.relative_to(p).as_posix()
            if rel.endswith(SIDECAR_SUFFIX) or any(part.startswith(".") for part in f.relative_to(p).parts):
                continue
            h.update(f"{rel}\t{sha256_file(f)}\n".encode())
        return "tree:" + h.hexdigest()
    return None


def source_digest(root: str | os.PathLike, parts: Iterable[str]) -> str:
    """A short sha256 over the Python sources of ``parts`` (files or folders under ``root``): each ``.py`` file's
    path relative to ``root`` and its bytes, in sorted order (compiled caches ignored). As a Snakemake param of a
    cheap rule it re-runs the rule when that code changes; Snakemake's own code trigger sees only the rule's script."""
    base = Path(root)
    files = set()
    for part in parts:
        p = base / part
        if not p.exists():
            raise FileNotFoundError(f"source_digest: {p} does not exist")
        files |= {p} if p.is_file() else set(p.rglob("*.py"))
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.relative_to(base).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def package_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    out = {}
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            out[name] = importlib.metadata.version(name)
    out["python"] = sys.version.split()[0]
    return out


def git_commit(cwd: str | os.PathLike = ".") -> dict[str, Any]:
    """The workflow repo's HEAD commit and whether tracked files differ from it.

    ``dirty`` looks at the code, configs and data pins — not at ``results/``: the committed tables
    are outputs, and regenerating them must not mark the run that regenerates them as dirty.
    """
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":(top)",
                                ":(exclude,top)results"], cwd=cwd, capture_output=True, text=True, timeout=10)
        return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}


def describe_input(path: str | os.PathLike) -> dict[str, Any]:
    p = Path(path)
    entry = {"path": str(path), "sha256": content_hash(p)}
    sc = sidecar_path(p)
    if sc.exists():
        entry["prov"] = str(sc)
    return entry


def write_sidecar(output: str | os.PathLike, *, rule: str, inputs: Iterable[str | os.PathLike] = (),
                  wildcards: Mapping[str, str] | None = None, config: Any = None,
                  models: Mapping[str, str | None] | None = None, seeds: Any = None,
                  wall_time_s: float | None = None, sources: Iterable[Mapping[str, Any]] = (),
                  extra: Mapping[str, Any] | None = None) -> Path:
    """Write ``output.prov.json``. ``sources`` lists external origins (mirror file or URL) for acquire rules."""
    record = {
        "output": str(output),
        "sha256": content_hash(output),
        "rule": rule,
        "wildcards": dict(wildcards or {}),
        "inputs": [describe_input(p) for p in inputs],
        "sources": [dict(s) for s in sources],
        "config": config,
        "models": dict(models or {}),
        "seeds": seeds,
        "packages": package_versions(),
        "git": git_commit(),
        "wall_time_s": None if wall_time_s is None else round(wall_time_s, 3),
    }
    if extra:
        record["extra"] = dict(extra)
    path = sidecar_path(output)
    write_json(path, record)
    return path


def _flatten(paths) -> list[str]:
    out: list[str] = []
    for p in paths:
        if isinstance(p, (list, tuple)):
            out.extend(_flatten(p))
        else:
            out.append(str(p))
    return out


MODEL_MANIFEST = "wobble-model.json"


def models_in(paths: Iterable[str]) -> dict[str, str | None]:
    """Model key -> weights sha256 for every input directory holding a wobble-model.json manifest."""
    found = {}
    for p in paths:
        manifest = Path(p) / MODEL_MANIFEST
        if manifest.is_file():
            with open(manifest, encoding="utf-8") as f:
                m = json.load(f)
            found[m.get("key", Path(p).name)] = m.get("weights_sha256")
    return found


@contextlib.contextmanager
def tracked(snakemake, *, config: Any = None, models: Mapping[str, str | None] | None = None,
            seeds: Any = None, sources: Iterable[Mapping[str, Any]] = (), extra: Mapping[str, Any] | None = None,
            inputs_of: Callable[[str], Iterable[str]] | None = None):
    """Context manager for ``script:`` entry points: time the block, then write a sidecar per output.

    ``snakemake`` is the object Snakemake injects into scripts (rule, input, output, wildcards).
    Model manifests among the inputs contribute their weights sha256 automatically. ``inputs_of(output)``
    narrows what one output of a many-output job is recorded to rest on (default: every input of the job).
    """
    start = time.perf_counter()
    yield
    wall = time.perf_counter() - start
    inputs = _flatten(list(snakemake.input))
    models = {**models_in(inputs), **dict(models or {})}
    wildcards = {k: v for k, v in dict(snakemake.wildcards).items() if not str(k).startswith("_")}
    for out in _flatten(list(snakemake.output)):
        write_sidecar(out, rule=snakemake.rule, inputs=inputs if inputs_of is None else _flatten(list(inputs_of(out))),
                      wildcards=wildcards, config=config, models=models, seeds=seeds, wall_time_s=wall,
                      sources=sources, extra=extra)


# ------------------------------------------------------------------------------ the committed chain

#: What a run commits of its results, as patterns under its results folder (config ``results_root``), besides the
#: paper's numbers (``paper/*``); everything else its outputs rest on (splits, predictions, scores, prepared data,
#: acquired files, models) lives only on the machine that ran it.
COMMITTED = ("*/tables/*", "*/figures/*", "*/findings.*", "findings.*", "scorecard/*", "*/provenance.jsonl")
PAPER = "paper/*"
BUNDLE = "provenance.jsonl"
_SLIM = ("output", "sha256", "rule", "wildcards", "inputs", "sources", "models", "seeds", "git")


def is_committed(path: str, results_root: str) -> bool:
    """Whether ``path`` is committed: a paper CSV, or a table, figure, ledger, scorecard or provenance bundle of
    the run whose results folder is ``results_root``."""
    if fnmatch.fnmatch(path, PAPER):
        return True
    prefix = results_root.rstrip("/") + "/"
    return path.startswith(prefix) and any(fnmatch.fnmatch(path[len(prefix):], p) for p in COMMITTED)


def chain_records(outputs: Iterable[str | os.PathLike], results_root: str) -> list[dict]:
    """The sidecar records of every uncommitted file the ``outputs`` rest on (their transitive inputs), slimmed
    to what an audit needs (no package list or config), sorted by path: committed beside the results as
    ``<results_root>/<study>/provenance.jsonl`` so that a fresh clone can audit the whole chain."""
    found: dict[str, dict] = {}
    todo = [str(o) for o in outputs]
    seen: set[str] = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        sc = sidecar_path(p)
        if not sc.exists():
            continue
        with open(sc, encoding="utf-8") as f:
            prov = json.load(f)
        if not is_committed(p, results_root):
            rec = {k: prov.get(k) for k in _SLIM}
            rec["git"] = (prov.get("git") or {}).get("commit")
            found[p] = rec
        todo += [inp["path"] for inp in prov.get("inputs", [])]
    return [found[k] for k in sorted(found)]


def bundles_root(path: str | os.PathLike, root: str | os.PathLike = ".") -> str:
    """The results folder of the run ``path`` belongs to: the nearest folder above it that holds study bundles
    (``<folder>/<study>/provenance.jsonl``), else the default run's ``results``."""
    for parent in Path(path).parents:
        if parent != Path(".") and any((Path(root) / parent).glob(f"*/{BUNDLE}")):
            return parent.as_posix()
    return RESULTS


def load_bundles(root: str | os.PathLike = ".", results_root: str = RESULTS) -> dict[str, dict]:
    """path -> recorded sidecar of every ``<results_root>/*/provenance.jsonl`` under ``root``."""
    out: dict[str, dict] = {}
    for bundle in sorted(Path(root).glob(f"{results_root}/*/{BUNDLE}")):
        with open(bundle, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    out[rec["output"]] = rec
    return out


@dataclass
class AuditLine:
    depth: int
    path: str
    status: str  # ok | changed | missing | no-provenance | source | recorded
    detail: str = ""


@dataclass
class AuditReport:
    lines: list[AuditLine] = field(default_factory=list)
    results_root: str = RESULTS  # the run whose committed bundles supplied the "recorded only" lines

    @property
    def problems(self) -> list[AuditLine]:
        return [ln for ln in self.lines if ln.status in ("changed", "missing")]

    def render(self) -> str:
        marks = {"ok": "ok", "changed": "CHANGED", "missing": "MISSING", "no-provenance": "no provenance",
                 "source": "source", "recorded": "recorded only"}
        rows = [f"{'  ' * ln.depth}{ln.path}  [{marks[ln.status]}]{(' ' + ln.detail) if ln.detail else ''}"
                for ln in self.lines]
        n = len(self.problems)
        rows.append(f"{n} file(s) changed or missing since they were produced" if n else
                    "all files present match their recorded sha256")
        recorded = sum(1 for ln in self.lines if ln.status == "recorded")
        if recorded:
            rows.append(f"{recorded} file(s) not on this machine: their sha256 and provenance come from the committed "
                        f"{self.results_root}/*/{BUNDLE} (run the workflow to re-make and re-hash them)")
        return "\n".join(rows)


def _check(path: str, recorded: str | None) -> tuple[str, str]:
    now = content_hash(path)
    if now is None:
        return "missing", "file is gone"
    if recorded is not None and now != recorded:
        return "changed", f"sha256 recorded {recorded[:12]}…, now {now[:12]}…"
    return "ok", ""


def audit(path: str | os.PathLike, bundles: Mapping[str, dict] | None = None) -> AuditReport:
    """Walk the provenance chain from ``path`` back to acquired sources and model weights, re-hashing every
    file present. A file whose sidecar is not here (a fresh clone has only the committed results) is read from
    the committed chain records of the run ``path`` belongs to (:func:`load_bundles`, :func:`bundles_root`):
    re-hashed against them when the file is present, marked "recorded only" when it is not."""
    report = AuditReport(results_root=bundles_root(path))
    seen: set[str] = set()
    bundles = load_bundles(results_root=report.results_root) if bundles is None else bundles
    if not os.path.exists(path) and not sidecar_path(path).exists() and str(path) not in bundles:
        raise WobbleError(f"{path}: no such file, and no run recorded one there (no sidecar, not in "
                          f"{report.results_root}/*/{BUNDLE}): a path that never existed; check its spelling")

    def visit(p: str, recorded: str | None, depth: int) -> None:
        status, detail = _check(p, recorded)
        sc = sidecar_path(p)
        if sc.exists():
            with open(sc, encoding="utf-8") as f:
                prov = json.load(f)
        elif p in bundles:
            prov = bundles[p]
            if status == "missing":
                status, detail = "recorded", f"sha256 {str(prov.get('sha256'))[:12]}…"
        else:
            report.lines.append(AuditLine(depth, p, status if status != "ok" else "no-provenance", detail))
            return
        if recorded is None and status != "recorded":
            status, detail = _check(p, prov.get("sha256"))
        rule = prov.get("rule")
        info = f"rule {rule}" + (f" {prov['wildcards']}" if prov.get("wildcards") else "")
        if prov.get("models"):
            info += " models " + ", ".join(f"{k}={str(v)[:12]}" for k, v in prov["models"].items())
        report.lines.append(AuditLine(depth, p, status, (detail + "; " if detail else "") + info))
        if p in seen:
            return
        seen.add(p)
        for src in prov.get("sources") or []:
            where = src.get("mirror_path") or src.get("url") or "?"
            s_status, s_detail = ("source", "")
            if src.get("mirror_path") and Path(src["mirror_path"]).exists():
                s_status, s_detail = _check(src["mirror_path"], src.get("sha256"))
                s_status = "source" if s_status == "ok" else s_status
            report.lines.append(AuditLine(depth + 1, where, s_status,
                                          (s_detail + "; " if s_detail else "") + f"source {src.get('source', '')}"))
        for inp in prov.get("inputs") or []:
            visit(inp["path"], inp.get("sha256"), depth + 1)

    visit(str(path), None, 0)
    return report
