"""Small validation helpers shared by the loaders.

Every helper raises :class:`wobble.errors.DataError` naming the file, the record (line number, list
index or key) and what was expected, so that a malformed record is never silently dropped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, Sequence

from wobble.errors import DataError
from wobble.io import read_json

#: Paper metric spellings -> the metric names used in every normalized record.
METRIC_NAMES = {"EM": "exact_match", "exact_match": "exact_match", "ROUGE-L": "rougeL", "rougeL": "rougeL"}


def expect(ok: bool, path, record, expected: str) -> None:
    """Raise DataError(path, record, expected) unless ``ok``."""
    if not ok:
        raise DataError(path, record, expected)


def need_file(path: Path, what: str) -> Path:
    """Return ``path`` if it is a file, else raise DataError naming what the file should hold."""
    if not Path(path).is_file():
        raise DataError(path, "(file)", f"{what}: the file is missing")
    return Path(path)


def load_json(path: str | os.PathLike, what: str = "JSON data") -> Any:
    need_file(Path(path), what)
    return read_json(path)


def get(path, record, obj: Any, key: str, types, *, check=None, expected: str | None = None,
        optional: bool = False, default: Any = None) -> Any:
    """``obj[key]`` checked for type (and ``check``); a missing key is an error unless ``optional``."""
    if not isinstance(obj, dict):
        raise DataError(path, record, f"a JSON object, got {type(obj).__name__}")
    if key not in obj:
        if optional:
            return default
        raise DataError(path, record, f"field '{key}' is missing")
    value = obj[key]
    # bool is an int subclass: never accept it where a number is wanted unless bool is asked for.
    type_ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in _as_tuple(types))
    if not type_ok or (check is not None and not check(value)):
        want = expected or _type_names(types)
        raise DataError(path, record, f"field '{key}' should be {want}, got {value!r:.80}")
    return value


def str_list(path, record, obj: dict, key: str, *, nonempty: bool = True, optional: bool = False) -> list[str] | None:
    """A list of strings (non-empty unless ``nonempty=False``)."""
    what = "a non-empty list of strings" if nonempty else "a list of strings"
    return get(path, record, obj, key, list, optional=optional, expected=what,
               check=lambda v: (len(v) > 0 or not nonempty) and all(isinstance(x, str) for x in v))


def _as_tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _type_names(types) -> str:
    return " or ".join(t.__name__ for t in _as_tuple(types))


def read_tsv(path: str | os.PathLike, columns: Sequence[str] | None = None,
             required: Sequence[str] = ()) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line_number, row) from a plain TSV file with a header line (no quoting).

    ``columns``: the exact header expected; ``required``: columns that must be present. A row with
    the wrong number of fields is a DataError naming the line.
    """
    path = need_file(Path(path), "a TSV table")
    with open(path, encoding="utf-8", newline="") as f:
        header_line = f.readline()
        if not header_line:
            raise DataError(path, "line 1", "a header line")
        header = header_line.rstrip("\r\n").split("\t")
        if columns is not None and header != list(columns):
            raise DataError(path, "line 1", f"header {list(columns)}, got {header}")
        missing = [c for c in required if c not in header]
        if missing:
            raise DataError(path, "line 1", f"columns {missing} in the header {header}")
        for lineno, line in enumerate(f, 2):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != len(header):
                raise DataError(path, f"line {lineno}", f"{len(header)} tab-separated fields, got {len(fields)}")
            yield lineno, dict(zip(header, fields))


def read_lines(path: str | os.PathLike, what: str) -> list[str]:
    """Non-blank stripped lines of a text file (e.g. a split list)."""
    path = need_file(Path(path), what)
    with open(path, encoding="utf-8") as f:
        return [ln.strip() for ln in f if ln.strip()]


def normalize_metric(path, record, value: str) -> str:
    if value not in METRIC_NAMES:
        raise DataError(path, record, f"a metric among {sorted(METRIC_NAMES)}, got {value!r}")
    return METRIC_NAMES[value]
