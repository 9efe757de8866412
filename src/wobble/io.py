"""File helpers shared by every stage: atomic writes, strict JSONL reading, hashing.

Every writer goes through :func:`atomic_write` so that a crash never leaves a half-written
output; every JSONL reader reports the file and line of a malformed record.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from wobble.errors import DataError, WobbleError


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8"):
    """Open a temp file next to ``path``; rename it over ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise WobbleError(f"{path}: could not be written: {e.strerror} (nothing was left behind; free space "
                              "and re-run)") from None
        raise


def dumps_canonical(obj: Any) -> str:
    """JSON with sorted keys and no NaN: the same object always gives the same bytes."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, allow_nan=False)


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write records atomically, one canonical JSON object per line. Returns the count."""
    n = 0
    with atomic_write(path) as f:
        for rec in records:
            f.write(dumps_canonical(rec))
            f.write("\n")
            n += 1
    return n


def write_json(path: str | os.PathLike, obj: Any, indent: int = 2) -> None:
    with atomic_write(path) as f:
        json.dump(obj, f, ensure_ascii=False, sort_keys=True, indent=indent, allow_nan=False)
        f.write("\n")


def read_json(path: str | os.PathLike) -> Any:
    """Load a JSON file; a syntax error names the file, line and column."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DataError(path, f"at line {e.lineno} column {e.colno}", f"valid JSON ({e.msg})") from None


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """Yield (line_number, object) for each non-blank line; a bad line (not UTF-8, not JSON, not an object)
    raises DataError naming the file and the line."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DataError(path, f"line {lineno}", f"UTF-8 text (byte {raw[e.start]:#04x} at column "
                                                        f"{e.start + 1} is not)") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(path, f"line {lineno}", f"a JSON object ({e.msg} at column {e.colno})") from None
            if not isinstance(obj, dict):
                raise DataError(path, f"line {lineno}", f"a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    return [obj for _, obj in iter_jsonl(path)]


def require(path, record, obj: dict, key: str, types: type | tuple[type, ...], check: Callable[[Any], bool] | None = None,
            expected: str | None = None) -> Any:
    """Return ``obj[key]`` if present and of the right type (and passing ``check``), else raise DataError."""
    if key not in obj:
        raise DataError(path, record, f"field '{key}' is missing")
    value = obj[key]
    if not isinstance(value, types) or (check is not None and not check(value)):
        want = expected or (types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types))
        raise DataError(path, record, f"field '{key}' should be {want}, got {value!r:.80}")
    return value
