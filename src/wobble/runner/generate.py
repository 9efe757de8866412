"""Resumable batched generation shared by every study.

Records are processed in chunks, longest prompt first; after each chunk the finished predictions
are appended to ``<out>.partial`` (:mod:`wobble.runner.partial`) so a killed job resumes where it
stopped (records are matched by ``uid``). The final file is written atomically in input order.
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

from wobble.backends.base import Backend, Generation, GenParams
from wobble.runner.partial import run_resumable


def generate_resumable(backend: Backend, records: Sequence[dict], params: GenParams, out_path: str | os.PathLike,
                       prompt_of: Callable[[dict], object] = lambda r: r["prompt"], chunk_size: int = 32,
                       desc: str = "generate", annotate: Callable[[dict, Generation], dict] | None = None,
                       finish_now: bool = True) -> int:
    """Generate an answer for each record (which must carry a unique ``uid``) and write predictions.

    Each prediction record = the input record + ``rendered_prompt``, ``output`` (raw text),
    ``finish_reason`` ("stop": an end token or stop string; "length": cut at ``max_new_tokens``), ``model``, ``gen_params`` (and ``token_logprobs`` when requested) + the fields
    ``annotate(record, generation)`` returns (e.g. answers derived from ``first_token_logprobs``).
    """
    model = getattr(backend, "model_key", None)
    gen_params = params.to_dict()

    def call(chunk: list[dict]) -> list[dict]:
        gens = backend.generate([prompt_of(r) for r in chunk], params)
        out = []
        for rec, gen in zip(chunk, gens):
            pred = dict(rec)
            pred.update(rendered_prompt=gen.rendered_prompt, output=gen.text, finish_reason=gen.finish_reason,
                        model=model, gen_params=gen_params)
            if params.return_logprobs:
                pred["token_logprobs"] = gen.token_logprobs
            if annotate is not None:
                pred.update(annotate(rec, gen))
            out.append(pred)
        return out

    return run_resumable(records, out_path, call, lambda r: len(str(prompt_of(r))), chunk_size, desc, finish_now)
