"""The decoding loop of the ``hf`` backend: one batch of prompts to :class:`Generation` s.

:meth:`wobble.backends.hf.HFBackend.generate` plans the batches (plain, shared-prefix, continued turns);
this module runs one: the first forward pass (plain, :func:`.hf_prefix.prefix_start` or
:func:`.hf_turns.continuation_start`), then one token per step for every unfinished row. Finished causal
rows leave the batch (their cache rows are dropped, or kept for the next turn by :class:`.hf_turns.TurnCache`),
so a batch never decodes padding it does not need. The decoding rules (greedy / seeded sampling, end tokens,
stop strings, log-probs) are the ones the ``hf`` module docstring fixes.
"""

from __future__ import annotations

import torch

from wobble.backends.base import Generation, GenParams
from wobble.backends.hf_head import decode_steps_head
from wobble.backends.hf_cache import cache_arg, new_cache, returned_cache
from wobble.backends.hf_prefix import prefix_start
from wobble.backends.hf_turns import continuation_start
from wobble.backends.sampling import choose_next, prompt_seed, stop_cut


def _first_step(backend, prompt_ids: list[list[int]], prefix_len: int, kept: list | None):
    """The forward pass over the prompts: ``(logits (n, 1, vocab) float32, cache, mask, pos, encoder)``;
    ``mask``/``pos`` are None for seq2seq, ``encoder`` (outputs, mask) is None for causal models."""
    if kept:
        return (*continuation_start(backend, prompt_ids, kept), None)
    if prefix_len:
        return (*prefix_start(backend, prompt_ids, prefix_len), None)
    if backend.kind == "causal":
        ids, mask, pos = backend.left_pad(prompt_ids)
        logits, past = backend.causal_logits(ids, mask, pos, keep=1, past=new_cache(backend.model))
        return logits, past, mask, pos[:, -1:], None
    enc, enc_mask = backend.run_encoder(prompt_ids)
    dec = torch.full((len(prompt_ids), 1), backend.decoder_start_id, dtype=torch.long, device=backend.device)
    res = backend.model(encoder_outputs=enc, attention_mask=enc_mask, decoder_input_ids=dec, use_cache=True)
    return res.logits[:, -1:].float(), returned_cache(res), None, None, (enc, enc_mask)


def generate_batch(backend, prompt_ids: list[list[int]], rendered: list[str], params: GenParams,
                   prefix_len: int = 0, kept: list | None = None) -> list[Generation]:
    """One batch; with ``prefix_len`` its rows share that many leading ids, run once (hf_prefix); with
    ``kept`` each row continues a kept turn's cache (hf_turns)."""
    n = len(prompt_ids)
    dev = backend.device
    generators = None
    if params.temperature != 0:
        generators = [torch.Generator(device="cpu").manual_seed(prompt_seed(params.seed, r)) for r in rendered]
    stops = [s for s in params.stop if s]
    cand_tok = backend.candidate_tokens(params.first_token_candidates)
    first_lps: list[dict[str, float]] = [{} for _ in range(n)]
    new: list[list[int]] = [[] for _ in range(n)]
    lps: list[list[float]] = [[] for _ in range(n)]
    done = [False] * n
    reason = ["length"] * n
    turns = backend.turn_cache
    if params.max_new_tokens > 0 or cand_tok:
        logits, past, mask, pos, encoder = _first_step(backend, prompt_ids, prefix_len, kept)
        if cand_tok:
            index = torch.tensor(list(cand_tok.values()), dtype=torch.long, device=dev)
            lp = torch.log_softmax(logits[:, -1], dim=-1)[:, index].cpu().tolist()
            first_lps = [dict(zip(cand_tok, row)) for row in lp]
        active = list(range(n))  # original row of each tensor row; finished causal rows leave the batch
        # output_fp32: the first step's logits (scored, and the first token chosen) were float32; the rest bf16
        with decode_steps_head(backend.model):
            for step in range(params.max_new_tokens):
                last = logits[:, -1]
                gens_now = [generators[r] for r in active] if generators is not None else None
                nxt = choose_next(last, params.temperature, params.top_p, gens_now)
                logp = torch.log_softmax(last, dim=-1).gather(-1, nxt[:, None])[:, 0].tolist() \
                    if params.return_logprobs else None
                for k, (row, t) in enumerate(zip(active, nxt.tolist())):
                    if done[row]:
                        continue
                    if t in backend.end_ids:
                        done[row], reason[row] = True, "stop"
                        continue
                    new[row].append(t)
                    if logp is not None:
                        lps[row].append(logp[k])
                    if stops and stop_cut(backend.tokenizer.decode(new[row], skip_special_tokens=True), stops) is not None:
                        done[row], reason[row] = True, "stop"
                if all(done) or step == params.max_new_tokens - 1:
                    break
                if encoder is None and any(done[r] for r in active):
                    if turns is not None:
                        turns.keep(past, mask, [k for k, r in enumerate(active) if done[r]], active, prompt_ids, new)
                    keep = [k for k, r in enumerate(active) if not done[r]]
                    sel = torch.tensor(keep, dtype=torch.long)  # on the CPU: it indexes cache layers on any device
                    past.batch_select_indices(sel)
                    mask, pos, nxt = mask[sel], pos[sel], nxt[sel]
                    active = [active[k] for k in keep]
                cur = torch.tensor([backend.pad_id if done[r] else t for r, t in zip(active, nxt.tolist())],
                                   dtype=torch.long, device=dev)[:, None]
                if encoder is None:
                    mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype, device=dev)], dim=1)
                    pos = pos + 1
                    logits, past = backend.causal_logits(cur, mask, pos, keep=1, past=past)
                else:
                    res = backend.model(encoder_outputs=encoder[0], attention_mask=encoder[1], decoder_input_ids=cur,
                                        use_cache=True, **cache_arg(backend.model, past))
                    logits, past = res.logits[:, -1:].float(), returned_cache(res)
        if turns is not None:
            turns.keep(past, mask, list(range(len(active))), active, prompt_ids, new)
    gens = [finish(backend.tokenizer, new[r], lps[r], rendered[r], reason[r], stops, params.return_logprobs)
            for r in range(n)]
    for g, first in zip(gens, first_lps):
        g.first_token_logprobs = first
    return gens


def finish(tokenizer, ids: list[int], lps: list[float], rendered: str, reason: str, stops, want_lp: bool) -> Generation:
    """The Generation of one row: text decoded and cut before the first stop string, tokens / log-probs up to
    the fewest tokens whose text covers the kept text."""
    decode = tokenizer.decode
    text = decode(ids, skip_special_tokens=True)
    cut = stop_cut(text, stops) if stops else None
    if cut is not None:
        text = text[:cut]
        keep = len(ids)
        for k in range(len(ids) + 1):
            if len(decode(ids[:k], skip_special_tokens=True)) >= cut:
                keep = k
                break
        ids, lps = ids[:keep], lps[:keep]
    tokens = [decode([t]) for t in ids] if want_lp else []
    return Generation(text=text, rendered_prompt=rendered, tokens=tokens,
                      token_logprobs=list(lps) if want_lp else [], finish_reason=reason)
