"""Resumable batched inference shared by every study.

Records are processed in chunks; after each chunk the finished predictions are appended to
``<out>.partial`` so a killed job resumes where it stopped (records are matched by ``uid``). The
final file is written atomically in input order, then the partial file is removed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Sequence

from tqdm import tqdm

from wobble.backends.base import Backend, Generation, GenParams
from wobble.errors import DataError
from wobble.io import dumps_canonical, iter_jsonl, write_jsonl


def _load_partial(path: Path) -> dict[str, dict]:
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    try:
        for _, rec in iter_jsonl(path):
            done[rec["uid"]] = rec
    except DataError:
        # A line cut by a kill: keep what parsed before it; the rest is redone.
        pass
    return done


def partial_path(out_path: str | os.PathLike) -> Path:
    """Where :func:`generate_resumable` keeps the finished predictions of an unfinished job."""
    out_path = Path(out_path)
    return out_path.with_name(out_path.name + ".partial")


def finished_uids(out_path: str | os.PathLike) -> set[str]:
    """uids already predicted by an earlier, killed run writing ``out_path``."""
    return set(_load_partial(partial_path(out_path)))


def generate_resumable(backend: Backend, records: Sequence[dict], params: GenParams, out_path: str | os.PathLike,
                       prompt_of: Callable[[dict], object] = lambda r: r["prompt"], chunk_size: int = 32,
                       desc: str = "generate", annotate: Callable[[dict, Generation], dict] | None = None) -> int:
    """Generate an answer for each record (which must carry a unique ``uid``) and write predictions.

    Each prediction record = the input record + ``rendered_prompt``, ``output`` (raw text),
    ``model``, ``gen_params`` (and ``token_logprobs`` when requested) + the fields
    ``annotate(record, generation)`` returns (e.g. answers derived from ``first_token_logprobs``).
    """
    uids = [r["uid"] for r in records]
    if len(set(uids)) != len(uids):
        dup = next(u for u in uids if uids.count(u) > 1)
        raise DataError(out_path, dup, "unique 'uid' per record")
    partial = partial_path(out_path)
    done = _load_partial(partial)
    # Longest prompts first, so each batch pads to similar lengths; output order is restored at the end.
    todo = sorted((r for r in records if r["uid"] not in done), key=lambda r: -len(str(prompt_of(r))))
    partial.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "a", encoding="utf-8") as f, tqdm(total=len(records), initial=len(records) - len(todo),
                                                          desc=desc, mininterval=5) as bar:
        for i in range(0, len(todo), chunk_size):
            chunk = todo[i:i + chunk_size]
            gens = backend.generate([prompt_of(r) for r in chunk], params)
            for rec, gen in zip(chunk, gens):
                pred = dict(rec)
                pred.update(rendered_prompt=gen.rendered_prompt, output=gen.text,
                            model=getattr(backend, "model_key", None), gen_params=params.to_dict())
                if params.return_logprobs:
                    pred["token_logprobs"] = gen.token_logprobs
                if annotate is not None:
                    pred.update(annotate(rec, gen))
                done[rec["uid"]] = pred
                f.write(dumps_canonical(pred) + "\n")
            f.flush()
            bar.update(len(chunk))
    n = write_jsonl(out_path, (done[u] for u in uids))
    partial.unlink(missing_ok=True)
    return n
