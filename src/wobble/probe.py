"""Probe: a small, real multiple-choice evaluation that exercises every backend method.

For the first ``n`` records of a prepared multiple-choice dataset (schema of wobble.data: ``id``,
``question``, ``choices`` = ["A. text", ...], ``answer`` = letter) it asks the model once as chat
messages and records, per record: the greedy text answer (``generate``), the next-token log-probs of
the option letters (``next_token_logprobs``) and the per-token log-probs of the gold option's text
as a continuation (``continuation_logprobs``). Output records carry the exact prompt, rendered
prompt, model key and decoding parameters, so they can be re-scored without the model.
"""

from __future__ import annotations

from typing import Sequence

from wobble.backends.base import Backend, GenParams
from wobble.errors import DataError


def mcq_messages(question: str, choices: Sequence[str]) -> list[dict]:
    body = question.strip() + "\n" + "\n".join(choices) + "\nAnswer with the letter of the correct option."
    return [{"role": "user", "content": body}]


def select_records(records: list[dict], n: int, path: str = "<records>") -> list[dict]:
    """The first ``n`` records that are multiple-choice (deterministic: file order)."""
    picked = []
    for i, rec in enumerate(records):
        if rec.get("choices"):
            if not isinstance(rec.get("answer"), str):
                raise DataError(path, f"line {i + 1}", "a string 'answer' letter for a multiple-choice record")
            picked.append(rec)
        if len(picked) == n:
            break
    if not picked:
        raise DataError(path, "all", "at least one record with non-empty 'choices'")
    return picked


def run_probe(backend: Backend, records: list[dict], max_new_tokens: int = 16) -> list[dict]:
    prompts = [mcq_messages(r["question"], r["choices"]) for r in records]
    letters = [[c.split(".", 1)[0].strip() for c in r["choices"]] for r in records]
    params = GenParams(max_new_tokens=max_new_tokens, temperature=0.0)
    gens = backend.generate(prompts, params)
    all_letters = sorted({ltr for ls in letters for ltr in ls})
    nt = backend.next_token_logprobs(prompts, all_letters)
    gold_text = []
    for r, ls in zip(records, letters):
        choice = r["choices"][ls.index(r["answer"])] if r["answer"] in ls else r["answer"]
        gold_text.append(" " + choice)
    cont = backend.continuation_logprobs(prompts, gold_text)
    out = []
    for r, p, g, lp, ls, ct, cl in zip(records, prompts, gens, nt, letters, gold_text, cont):
        option_lp = {ltr: lp[ltr] for ltr in ls}
        first = max(ls, key=lambda ltr: (option_lp[ltr], -ls.index(ltr)))
        out.append({
            "id": r["id"],
            "model": getattr(backend, "model_key", None),
            "prompt": p,
            "rendered_prompt": g.rendered_prompt,
            "gen_params": params.to_dict(),
            "output": g.text,
            "next_token_logprobs": option_lp,
            "first_token_choice": first,
            "gold": r["answer"],
            "first_token_correct": first == r["answer"],
            "continuation": ct,
            "continuation_logprobs": cl,
            "continuation_logprob_sum": sum(cl),
        })
    return out
