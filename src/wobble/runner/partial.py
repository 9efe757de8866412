"""The ``.partial`` file every resumable runner shares: what a killed job had finished.

A runner appends one JSON line per finished record (or per finished dialogue turn) to
``<out>.partial`` and flushes after each chunk. The next run of the same job loads it, skips what
is there and goes on. A kill can cut the last line in half: :func:`load_partial` keeps every line
before it and truncates the file to them, so later appends start on a fresh line. At the end
:func:`finish` writes the output atomically in input order and removes the ``.partial``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from tqdm import tqdm

from wobble.errors import DataError
from wobble.io import dumps_canonical, write_jsonl


def partial_path(out_path: str | os.PathLike) -> Path:
    """Where a resumable runner keeps the finished records of an unfinished job: ``<out>.partial``."""
    out_path = Path(out_path)
    return out_path.with_name(out_path.name + ".partial")


def _valid_lines(path: Path) -> tuple[list[dict], int]:
    """Records of the whole JSON-object lines at the start of ``path`` and the byte length they span."""
    records, good = [], 0
    with open(path, "rb") as f:
        data = f.read()
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:  # last line without newline: cut by a kill
            break
        line = data[start:end]
        if line.strip():
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                break
            if not isinstance(obj, dict):
                break
            records.append(obj)
        start = good = end + 1
    return records, good


def load_partial(out_path: str | os.PathLike, key: str = "uid", resuming: bool = True) -> dict[str, dict]:
    """``key`` -> the LAST record written for it in ``<out>.partial`` (empty when there is none).
    ``resuming``: the caller is about to go on from these records, which the job's log says (the evidence of a
    resumed job); a job reading back its own finished ``.partial`` says nothing.

    Lines after the first malformed one (a line cut by a kill) are dropped and the file is
    truncated to the good lines, so that the next append starts a fresh line.
    """
    path = partial_path(out_path)
    if not path.exists():
        return {}
    records, good = _valid_lines(path)
    if good < path.stat().st_size:
        with open(path, "r+b") as f:
            f.truncate(good)
    done: dict[str, dict] = {}
    for i, rec in enumerate(records, 1):
        if key not in rec:
            raise DataError(path, f"line {i}", f"field '{key}' in every record of a partial file")
        done[rec[key]] = rec
    if done and resuming:  # the job's log says where a killed run is picked up
        print(f"resuming from {path.name}: {len(done)} record(s) already finished by an earlier, killed run",
              file=sys.stderr)
    return done


def finished_uids(out_path: str | os.PathLike) -> set[str]:
    """uids already finished by an earlier, killed run writing ``out_path``."""
    return set(load_partial(out_path))


def check_unique_uids(records: Sequence[dict], out_path: str | os.PathLike) -> list[str]:
    """The records' uids in input order; a missing or repeated ``uid`` raises DataError."""
    uids, seen = [], set()
    for i, r in enumerate(records):
        if "uid" not in r:
            raise DataError(out_path, f"input record {i}", "a 'uid' field in every record")
        if r["uid"] in seen:
            raise DataError(out_path, r["uid"], "unique 'uid' per record")
        seen.add(r["uid"])
        uids.append(r["uid"])
    return uids


def finite_or_none(x: float) -> float | None:
    """A log-prob for JSON: ``None`` stands for a non-finite value (``-inf``: below a server's top-k)."""
    x = float(x)
    return x if math.isfinite(x) else None


class PartialFile:
    """Append-only writer of ``<out>.partial``; each :meth:`append` is flushed to disk."""

    def __init__(self, out_path: str | os.PathLike):
        self.path = partial_path(out_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a", encoding="utf-8")

    def append(self, records: Iterable[dict]) -> None:
        for rec in records:
            self._f.write(dumps_canonical(rec) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> "PartialFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def finish(out_path: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write the output atomically (records in input order), then remove the ``.partial``."""
    n = write_jsonl(out_path, records)
    partial_path(out_path).unlink(missing_ok=True)
    return n


def chunks(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    if int(size) < 1:
        raise ValueError(f"chunk_size must be >= 1, got {size!r}")
    for i in range(0, len(items), int(size)):
        yield list(items[i:i + int(size)])


def finish_partial(records: Sequence[dict], out_path: str | os.PathLike) -> int:
    """Write ``out_path`` from its complete ``.partial`` (records in input order), then remove the ``.partial``.

    For a job with several outputs: each output's records stay in its ``.partial`` until the whole job is done
    (``run_resumable(..., finish_now=False)``), because Snakemake deletes the outputs of a killed job before
    re-running it; a ``.partial`` is not an output, so no finished part is lost.
    """
    uids = check_unique_uids(records, out_path)
    done = load_partial(out_path, resuming=False)
    missing = [u for u in uids if u not in done]
    if missing:
        raise DataError(partial_path(out_path), missing[0], "a finished record for every input record")
    return finish(out_path, (done[u] for u in uids))


def run_resumable(records: Sequence[dict], out_path: str | os.PathLike, call: Callable[[list[dict]], list[dict]],
                  length_of: Callable[[dict], int], chunk_size: int, desc: str, finish_now: bool = True) -> int:
    """The loop of every one-call-per-record runner: resume, length-sort, call per chunk, append, finish.

    ``call(chunk)`` returns one finished record per input record of the chunk (same order). Records
    not yet in the ``.partial`` are processed longest first (``length_of``), so the backend's batches
    pad to similar lengths; the output keeps the input order. Progress is a tqdm bar on stderr.
    ``finish_now=False`` leaves the finished records in the ``.partial`` (see :func:`finish_partial`).
    """
    uids = check_unique_uids(records, out_path)
    done = load_partial(out_path)
    todo = sorted((r for r in records if r["uid"] not in done), key=lambda r: -length_of(r))
    with PartialFile(out_path) as part, tqdm(total=len(records), initial=len(records) - len(todo), desc=desc,
                                             mininterval=5) as bar:
        for chunk in chunks(todo, chunk_size):
            finished = call(chunk)
            if len(finished) != len(chunk):
                raise AssertionError(f"{desc}: {len(finished)} results for {len(chunk)} records")
            for rec in finished:
                done[rec["uid"]] = rec
            part.append(finished)
            bar.update(len(chunk))
    if not finish_now:
        return len(uids)
    return finish(out_path, (done[u] for u in uids))
