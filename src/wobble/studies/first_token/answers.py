"""Both answers of one model to every prompt (§3 "First-Token Evaluation" and the text output): the
first-token answer — the argmax of the next-token probabilities over the shown option letters, the refusal
letter included, a letter's probability summing its spellings "A" and " A" — and the text answer decoded
at the run's temperature, from one model call where the backend allows, resumable through the runner."""

from __future__ import annotations

from dataclasses import replace
import math
import os
from typing import Mapping, Sequence


from wobble.errors import DataError
from wobble.studies.first_token.metrics import (
    first_token_choice,
)
from wobble.studies.first_token.prompts import (
    letter_to_option,
)


# ------------------------------------------------------------------------------------------- infer

PROMPT_FIELDS = ("uid", "question_uid", "question", "constraint", "shuffle", "letters", "shown_options",
                 "refusal_letter", "messages")


def check_prompts(prompts: Sequence[Mapping], path: str | os.PathLike = "<prompts>") -> None:
    for i, p in enumerate(prompts, 1):
        missing = [k for k in PROMPT_FIELDS if k not in p]
        if missing:
            raise DataError(path, f"line {i}", f"a prompt record with fields {list(PROMPT_FIELDS)}; missing {missing}")
        if len(p["letters"]) != len(p["shown_options"]):
            raise DataError(path, f"line {i}", "as many letters as shown options")


#: Spellings of a letter that may start the answer: "A" right after the generation prompt, " A" after a
#: template ending in a word ("Assistant:"). Both are scored; see :func:`letter_variants`.
LETTER_PREFIXES = ("", " ")


def letter_variants(backend, letters: Sequence[str], prefixes: Sequence[str] = LETTER_PREFIXES) -> dict[str, list[str]]:
    """Letter -> the candidate strings whose next-token probability counts for that letter.

    A prefix (``""``, ``" "``) is used only when the first tokens of ``prefix + letter`` are distinct
    across all ``letters`` (so the token names the letter: ByT5's ``" A"`` starts with the space byte
    for every letter and is dropped); spellings of one letter that share a first token count once. A
    backend without ``encode_continuation`` (not the hf backend) gets the bare letters.
    """
    enc = getattr(backend, "encode_continuation", None)
    if enc is None:
        return {lt: [lt] for lt in letters}
    first = {(pre, lt): tuple(enc(pre + lt)[:1]) for pre in prefixes for lt in letters}
    usable = [pre for pre in prefixes if all(first[(pre, lt)] for lt in letters)
              and len({first[(pre, lt)] for lt in letters}) == len(letters)]
    out: dict[str, list[str]] = {}
    for lt in letters:
        seen: set[tuple] = set()
        variants = []
        for pre in usable:
            if first[(pre, lt)] not in seen:
                seen.add(first[(pre, lt)])
                variants.append(pre + lt)
        out[lt] = variants or [lt]
    return out


def _logsumexp(values: Sequence[float]) -> float:
    vals = [float(v) for v in values if not math.isnan(float(v))]
    if not vals:
        return float("nan")
    m = max(vals)
    return m if m == -math.inf else m + math.log(sum(math.exp(v - m) for v in vals))


def first_token_fields(letters: Sequence[str], shown_options: Sequence[str], logprobs: Mapping[str, float],
                       variants: Mapping[str, Sequence[str]] | None = None) -> dict:
    """The first-token answer of one prompt from next-token log-probs (only the shown letters compete).

    A letter's log-prob is the log of the summed probabilities of its ``variants`` (default: the bare
    letter), i.e. the probability that the answer starts with that letter however it is spelled.
    """
    variants = variants or {lt: [lt] for lt in letters}
    lp = {lt: _logsumexp([logprobs[v] for v in variants[lt]]) for lt in letters}
    letter = first_token_choice(lp)
    return {"first_token_logprobs": lp, "first_token_letter": letter,
            "first_token_option": letter_to_option(letters, shown_options, letter),
            "first_token_candidates": sorted({v for lt in letters for v in variants[lt]})}


def letter_candidates(backend, prompts: Sequence[Mapping]) -> tuple[dict[str, list[str]], list[str]]:
    """(letter -> spellings, sorted candidate strings) for every letter shown in ``prompts``."""
    letters = sorted({lt for p in prompts for lt in p["letters"]})
    variants = letter_variants(backend, letters)
    return variants, sorted({v for vs in variants.values() for v in vs})


def first_token_answers(backend, prompts: Sequence[Mapping]) -> dict[str, dict]:
    """uid -> first-token fields, from ONE ``next_token_logprobs`` call over all prompts."""
    if not prompts:
        return {}
    variants, candidates = letter_candidates(backend, prompts)
    lps = backend.next_token_logprobs([p["messages"] for p in prompts], candidates)
    return {p["uid"]: first_token_fields(p["letters"], p["shown_options"], lp, variants) for p, lp in zip(prompts, lps)}


def infer(backend, prompts: Sequence[Mapping], out_path: str | os.PathLike, *, temperature: float,
          max_new_tokens: int, seed: int = 0, reuse: Sequence[Mapping] | None = None, chunk_size: int = 32) -> int:
    """First-token and text answers of every prompt; writes the predictions JSONL (resumable).

    Text answers come from :func:`wobble.runner.generate_resumable` in chunks (a killed job resumes
    from ``<out>.partial``). First-token answers come from ``reuse`` when given (prediction records
    of the same prompts at another temperature, matched by ``uid`` and checked to hold the same
    messages), else from the same ``generate`` call when the backend supports it (one model call
    per prompt), else from one ``next_token_logprobs`` call before generating. Each prediction = the
    prompt record + ``first_token_logprobs``, ``first_token_letter``, ``first_token_option``,
    ``rendered_prompt``, ``output`` (raw text), ``model``, ``gen_params``.
    """
    from wobble.backends.base import GenParams
    from wobble.runner import finished_uids, generate_resumable

    done = finished_uids(out_path)
    todo = [p for p in prompts if p["uid"] not in done]
    params = GenParams(max_new_tokens=int(max_new_tokens), temperature=float(temperature), seed=int(seed))
    ft: dict[str, dict] = {}
    annotate = None
    if reuse is not None:
        by_uid = {r["uid"]: r for r in reuse}
        for p in todo:
            r = by_uid.get(p["uid"])
            if r is None or r.get("messages") != p["messages"] or "first_token_letter" not in r:
                raise DataError("<reused predictions>", p["uid"],
                                "a main-temperature prediction with the same messages and first-token fields")
            ft[p["uid"]] = {k: r[k] for k in ("first_token_logprobs", "first_token_letter", "first_token_option",
                                              "first_token_candidates") if k in r}
    elif getattr(backend, "supports_first_token_logprobs", False):
        variants, candidates = letter_candidates(backend, prompts)
        params = replace(params, first_token_candidates=tuple(candidates))

        def annotate(rec: Mapping, gen) -> dict:
            return first_token_fields(rec["letters"], rec["shown_options"], gen.first_token_logprobs, variants)
    else:
        ft = first_token_answers(backend, todo)
    records = [{**p, **ft.get(p["uid"], {})} for p in prompts]
    return generate_resumable(backend, records, params, out_path, prompt_of=lambda r: r["messages"],
                              chunk_size=chunk_size, desc=f"{getattr(backend, 'model_key', '')} t={temperature}",
                              annotate=annotate)
