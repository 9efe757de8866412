"""The ``hf`` backend: transformers models (decoder-only ``causal`` and encoder-decoder ``seq2seq``).

Conventions (every study relies on them, so they are fixed here):

Prompts
    A text prompt is used as is. Chat messages are rendered with
    ``tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)`` when the
    tokenizer has a chat template (the model's own: e.g. ChatML for SmolLM2 / Qwen2.5, saved from the
    GGUF by :mod:`wobble.models.materialize`), else with :func:`wobble.backends.base.render_chat_fallback`;
    ``has_chat_template`` says which, so tables can state it. ``Generation.rendered_prompt`` is that
    exact string.

Prompt tokens
    *causal*: the rendered string tokenized **without** special tokens, then the tokenizer's BOS
    prepended if it normally adds one and the string does not already start with it (chat templates
    often write ``<bos>`` themselves) — never an EOS at the end. *seq2seq*: the tokenizer's default
    (``add_special_tokens=True``: T5 appends ``</s>``). With ``max_length`` set, longer prompts are
    truncated with a warning: causal keeps BOS + the *last* tokens (the end of the prompt, which the
    model continues), seq2seq keeps the first tokens + the final ``</s>``.

Continuations and candidates
    Tokenized **on their own, without special tokens** (``tokenizer(c, add_special_tokens=False)``)
    and appended to the prompt ids — the same split as the finetuning data (wobble.training.data), so
    prompt tokens never change with the continuation. ``next_token_logprobs`` scores the *first*
    token of each candidate exactly so; hence ``next_token_logprobs(p, [c])[c] ==
    continuation_logprobs([p], [c])[0][0]``. Whitespace is the caller's choice: after ``"Answer:"``
    ask for ``" A"`` (SentencePiece ``▁A``), after ``"Answer: "`` for ``"A"``. For seq2seq models the
    candidate/continuation is the decoder's target: the first decoder step (after the decoder start
    token) gives the next-token distribution, and continuation tokens are the decoder labels.
    Log-probs are log-softmax over the full vocabulary, in float32, of the model's raw logits.

Batching
    Inputs are sorted by length (longest first) and cut into batches of ``batch_size``; results come
    back in input order. Causal models are left-padded with an attention mask and explicit
    ``position_ids`` (cumulative sum of the mask), so a padded row computes what the unpadded prompt
    would (up to float rounding); seq2seq encoders and decoders are right-padded with masks. tqdm shows
    progress over batches on stderr (``progress=False`` silences it). Causal scoring runs a prefix that
    several prompts share once (:mod:`.hf_prefix`); generation does so too when the model spec says
    ``prefix_generation: true``: each row then continues its group's prefix cache, rows of several groups
    share a batch (left-padded caches, as continued dialogue turns; per group for sliding-window models),
    so texts can differ from the plain path at near-ties, as with any change of batch shape.

Decoding
    ``temperature == 0``: greedy (argmax). Otherwise softmax(logits / temperature), optionally
    nucleus-filtered (``top_p``), sampled with a per-prompt ``torch.Generator`` seeded from
    sha256(``params.seed``, rendered prompt): a prompt's sample depends only on (model, prompt,
    params) — not on batch size, order or the other prompts. To draw several samples of one prompt,
    vary ``GenParams.seed``. Generation ends at an end token (the model's/tokenizer's EOS, plus chat
    end-of-turn tokens such as ``<end_of_turn>`` when the vocabulary has them; ``finish_reason
    "stop"``), when a stop string appears (text cut *before* it; ``"stop"``), or after
    ``max_new_tokens`` (``"length"``). ``tokens``/``token_logprobs`` (when ``return_logprobs``) are the
    generated tokens (decoded one by one) up to the one that completes the text or stop string, with
    their log-probs under the model's raw (untempered) distribution; end tokens are not included.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
from typing import Iterator, Sequence

import torch
from tqdm.auto import tqdm

from wobble.backends.base import Generation, GenParams, Prompt, render_with_tokenizer
from wobble.backends.hf_attention import use_attention
from wobble.backends.hf_head import contiguous_lm_head, float32_output_layer
from wobble.backends.hf_generate import generate_batch
from wobble.backends.hf_cache import cache_arg, returned_cache, sliding_window
from wobble.backends.hf_prefix import PrefixCache, generation_groups, prefix_layers, tail_logits
from wobble.backends.hf_turns import TurnCache
from wobble.errors import WobbleError

log = logging.getLogger(__name__)

KINDS = ("causal", "seq2seq")
# End-of-turn tokens of common chat formats; added to the end tokens when the vocabulary has them.
END_OF_TURN_TOKENS = ("<end_of_turn>", "<|eot_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>")


def _as_id_set(value) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    return {int(v) for v in value}


def input_device(model) -> torch.device:
    """Where a model's input tensors go: its parameters' device, or for a model accelerate spread over devices
    (``hf_device_map``) the first GPU it computes on, else the CPU (layers offloaded to the CPU or disk run there)."""
    placed = getattr(model, "hf_device_map", None)
    if not placed:
        return next(model.parameters()).device
    gpus = [d for d in placed.values() if str(d) not in ("cpu", "disk", "meta")]
    return torch.device(f"cuda:{gpus[0]}" if gpus and isinstance(gpus[0], int) else gpus[0] if gpus else "cpu")


class HFBackend:
    """Batched transformers backend implementing :class:`wobble.backends.base.Backend`.

    Internal API: the helper modules (:mod:`.hf_prefix`, :mod:`.hf_turns`, :mod:`.hf_generate`) take the backend
    as their first argument and use only public names: the state ``model``, ``tokenizer``, ``kind``, ``device``
    (where input tensors go), ``batch_size``, ``pad_id``, ``end_ids``, ``decoder_start_id`` (seq2seq),
    ``takes_logits_to_keep``, ``reuse_prefix``, ``prefix_cache`` and ``turn_cache`` (the open dialogue session's,
    else None); batches and padded tensors (:meth:`batches`, :meth:`left_pad`, :meth:`right_pad`); one forward
    pass (:meth:`causal_logits`, :meth:`forward_at`, :meth:`run_encoder`); token ids (:meth:`candidate_tokens`,
    :meth:`encode_prompt`, :meth:`encode_continuation`).
    """

    supports_first_token_logprobs = True

    def __init__(self, model, tokenizer, kind: str, model_key: str, batch_size: int = 8,
                 max_length: int | None = None, progress: bool = True, reuse_prefix: bool = True,
                 reuse_prefix_generation: bool = False, output_fp32: bool = False, reuse_turns: bool = False,
                 attention: str | None = None):
        if kind not in KINDS:
            raise WobbleError(f"model {model_key!r}: kind must be one of {KINDS}, got {kind!r}")
        if int(batch_size) < 1:
            raise WobbleError(f"model {model_key!r}: batch_size must be >= 1, got {batch_size!r}")
        self.model = model.eval()
        # float32 output layer under a bf16 body (hf_head): off unless the model spec asks (output_fp32)
        self.output_fp32 = bool(output_fp32) and kind == "causal" and float32_output_layer(self.model)
        contiguous_lm_head(self.model)
        if kind == "causal":  # hf_attention: the model spec's attention implementation (None: as loaded, sdpa)
            use_attention(self.model, attention)
        self.tokenizer = tokenizer
        self.kind = kind
        self.model_key = model_key
        self.batch_size = int(batch_size)
        self.max_length = int(max_length) if max_length else None
        self.progress = progress
        # exact shared-prefix reuse for causal scoring (wobble.backends.hf_prefix); False = plain batches
        self.reuse_prefix = bool(reuse_prefix) and kind == "causal"
        # the same for generation (hf_prefix.prefix_start): off unless the model spec asks (prefix_generation)
        self.reuse_prefix_generation = bool(reuse_prefix_generation) and self.reuse_prefix
        self.prefix_cache = PrefixCache()
        # shared-prefix groups batched together through the turn path's per-row caches (not for sliding windows)
        self.mix_prefix_groups = self.reuse_prefix_generation and sliding_window(self.model) is None
        # cross-turn reuse inside a dialogue_session (hf_turns): off unless the model spec asks (turn_reuse)
        self.reuse_turns = bool(reuse_turns) and self.reuse_prefix and sliding_window(self.model) is None
        self.turn_cache: TurnCache | None = None
        self.turn_stats = (0, 0)  # the last session's (prompts continued, ids not re-encoded)
        self.device = input_device(model)

        tok = tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.pad_id = int(pad if pad is not None else 0)
        bos = tok.bos_token_id
        self.bos_id = None
        if bos is not None and kind == "causal":
            probe = tok("x", add_special_tokens=True)["input_ids"]
            if probe and probe[0] == bos:
                self.bos_id = int(bos)
        gen_cfg = getattr(model, "generation_config", None)
        ends = _as_id_set(getattr(gen_cfg, "eos_token_id", None)) | _as_id_set(model.config.eos_token_id)
        ends |= _as_id_set(tok.eos_token_id)
        added = tok.get_added_vocab() if hasattr(tok, "get_added_vocab") else {}
        ends |= {added[t] for t in END_OF_TURN_TOKENS if t in added}
        self.end_ids = ends
        if kind == "seq2seq":
            start = getattr(model.config, "decoder_start_token_id", None)
            if start is None and gen_cfg is not None:
                start = getattr(gen_cfg, "decoder_start_token_id", None)
            self.decoder_start_id = int(start if start is not None else self.pad_id)
        # whether the forward computes logits only where asked (logits_to_keep): older models lack it
        self.takes_logits_to_keep = "logits_to_keep" in inspect.signature(model.forward).parameters
        self._warned_trunc = False

    # ------------------------------------------------------------------------------ rendering / ids

    @property
    def has_chat_template(self) -> bool:
        """True when chat prompts use the tokenizer's own chat template (else the plain fallback)."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def render(self, prompt: Prompt) -> str:
        """The exact string the model sees (chat template or fallback for chat messages)."""
        return render_with_tokenizer(self.tokenizer, prompt)

    def _truncate_warning(self, n: int) -> None:
        if not self._warned_trunc:
            log.warning("%s: prompt of %d tokens truncated to max_length=%d (further truncations not logged)",
                        self.model_key, n, self.max_length)
            self._warned_trunc = True

    def encode_prompt(self, text: str) -> list[int]:
        """Token ids of a rendered prompt (see module docstring, "Prompt tokens")."""
        tok = self.tokenizer
        if self.kind == "causal":
            ids = list(tok(text, add_special_tokens=False)["input_ids"])
            if self.bos_id is not None and (not ids or ids[0] != self.bos_id):
                ids = [self.bos_id] + ids
            if not ids:
                raise WobbleError(f"model {self.model_key!r}: empty prompt and no BOS token: nothing to condition on")
            if self.max_length and len(ids) > self.max_length:
                self._truncate_warning(len(ids))
                head = [self.bos_id] if self.bos_id is not None else []
                ids = head + ids[len(ids) - (self.max_length - len(head)):]
            return ids
        ids = list(tok(text, add_special_tokens=True)["input_ids"])
        if self.max_length and len(ids) > self.max_length:
            self._truncate_warning(len(ids))
            ids = ids[: self.max_length - 1] + ids[-1:]
        return ids

    def encode_continuation(self, text: str) -> list[int]:
        """Token ids of a continuation/candidate: tokenized on its own, no special tokens."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # ------------------------------------------------------------------------------------ batching

    def batches(self, lengths: Sequence[int], desc: str) -> Iterator[list[int]]:
        """Row indices in batches of ``batch_size``, longest first (ties in input order), with a progress bar."""
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        chunks = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        yield from tqdm(chunks, desc=f"{self.model_key} {desc}", unit="batch", file=sys.stderr,
                        disable=not self.progress or not chunks, leave=False)

    def left_pad(self, seqs: Sequence[Sequence[int]]):
        """``(ids, attention mask, position ids)`` of ``seqs`` left-padded to the longest, on ``device``."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, s in enumerate(seqs):
            if s:
                ids[row, width - len(s):] = torch.tensor(s, dtype=torch.long)
                mask[row, width - len(s):] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        return ids.to(self.device), mask.to(self.device), pos.to(self.device)

    def right_pad(self, seqs: Sequence[Sequence[int]], min_width: int = 1):
        """``(ids, attention mask)`` of ``seqs`` right-padded to the longest (at least ``min_width``), on ``device``."""
        width = max([min_width] + [len(s) for s in seqs])
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, s in enumerate(seqs):
            if s:
                ids[row, : len(s)] = torch.tensor(s, dtype=torch.long)
                mask[row, : len(s)] = 1
        return ids.to(self.device), mask.to(self.device)

    def causal_logits(self, ids, mask, pos, keep: int, past=None):
        """Logits of the last ``keep`` positions (float32) and the cache."""
        kw = {"input_ids": ids, "attention_mask": mask, "position_ids": pos, "use_cache": past is not None}
        if past is not None:
            kw.update(cache_arg(self.model, past))
        if self.takes_logits_to_keep:
            kw["logits_to_keep"] = keep
        out = self.model(**kw)
        return out.logits[:, -keep:].float(), returned_cache(out)

    def forward_at(self, ids, mask, pos, cache, wanted: Sequence[int]):
        """One causal forward pass over ``ids`` continuing ``cache``, whose logits are read only at the columns
        ``wanted`` (sorted) of ``ids``: ``(output, {column: its index along output.logits' position axis})``.
        Where the forward takes ``logits_to_keep``, only those positions' logits are computed."""
        kw = {"logits_to_keep": torch.tensor(wanted, device=self.device)} if self.takes_logits_to_keep else {}
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                         **cache_arg(self.model, cache), **kw)
        return out, ({j: k for k, j in enumerate(wanted)} if kw else {j: j for j in wanted})

    def run_encoder(self, prompt_ids):
        """Seq2seq: ``(encoder outputs, attention mask)`` of the right-padded prompts."""
        ids, mask = self.right_pad(prompt_ids)
        enc = self.model.get_encoder()(input_ids=ids, attention_mask=mask, return_dict=True)
        return enc, mask

    def candidate_tokens(self, candidates: Sequence[str]) -> dict[str, int]:
        """Candidate -> its first token id (tokenized alone, as a continuation)."""
        cand_tok: dict[str, int] = {}
        for c in candidates:
            ids = self.encode_continuation(c)
            if not ids:
                raise WobbleError(f"model {self.model_key!r}: candidate {c!r} tokenizes to no tokens")
            cand_tok[c] = ids[0]
        return cand_tok

    # ------------------------------------------------------------------------------------- methods

    @torch.inference_mode()
    def next_token_logprobs(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Log-prob of each candidate's first token as the next token after each prompt."""
        cand_tok = self.candidate_tokens(candidates)
        prompt_ids = [self.encode_prompt(self.render(p)) for p in prompts]
        out: list[dict[str, float]] = [{} for _ in prompts]
        tok_index = torch.tensor(list(cand_tok.values()), dtype=torch.long, device=self.device)
        if self.kind == "causal":
            last = tail_logits(self, prompt_ids, [1] * len(prompt_ids), "next-token")
            for i, lg in enumerate(last):
                lp = torch.log_softmax(lg[-1], dim=-1)[tok_index].cpu().tolist()
                out[i] = {c: v for c, v in zip(cand_tok, lp)}
            return out
        for chunk in self.batches([len(x) for x in prompt_ids], "next-token"):
            seqs = [prompt_ids[i] for i in chunk]
            enc, mask = self.run_encoder(seqs)
            dec = torch.full((len(seqs), 1), self.decoder_start_id, dtype=torch.long, device=self.device)
            logits = self.model(encoder_outputs=enc, attention_mask=mask, decoder_input_ids=dec,
                                use_cache=False).logits[:, -1].float()
            lp = torch.log_softmax(logits, dim=-1)[:, tok_index].cpu().tolist()
            for row, i in enumerate(chunk):
                out[i] = {c: v for c, v in zip(cand_tok, lp[row])}
        return out

    @torch.inference_mode()
    def continuation_logprobs(self, prompts: Sequence[Prompt], continuations: Sequence[str]) -> list[list[float]]:
        """Per-token log-probs of ``continuations[i]`` (tokenized alone) following ``prompts[i]``."""
        if len(prompts) != len(continuations):
            raise WobbleError(f"continuation_logprobs: {len(prompts)} prompts but {len(continuations)} continuations")
        prompt_ids = [self.encode_prompt(self.render(p)) for p in prompts]
        cont_ids = [self.encode_continuation(c) for c in continuations]
        out: list[list[float]] = [[] for _ in prompts]
        if self.kind == "causal":
            # positions len(prompt)-1 .. len-2 predict the continuation's tokens
            scored = [i for i, c in enumerate(cont_ids) if c]
            tails = tail_logits(self, [prompt_ids[i] + cont_ids[i] for i in scored],
                                [len(cont_ids[i]) + 1 for i in scored], "continuation")
            for i, lg in zip(scored, tails):
                lp = torch.log_softmax(lg[:-1], dim=-1)
                out[i] = lp.gather(-1, torch.tensor(cont_ids[i], device=self.device)[:, None])[:, 0].cpu().tolist()
            return out
        lengths = [len(p) + len(c) for p, c in zip(prompt_ids, cont_ids)]
        for chunk in self.batches(lengths, "continuation"):
            conts = [cont_ids[i] for i in chunk]
            if max(len(c) for c in conts) == 0:
                continue
            enc, mask = self.run_encoder([prompt_ids[i] for i in chunk])
            dec_in, dec_mask = self.right_pad([[self.decoder_start_id] + c[:-1] for c in conts])
            logits = self.model(encoder_outputs=enc, attention_mask=mask, decoder_input_ids=dec_in,
                                decoder_attention_mask=dec_mask, use_cache=False).logits
            for row, (i, c) in enumerate(zip(chunk, conts)):
                if c:
                    lp = torch.log_softmax(logits[row, : len(c)].float(), dim=-1)
                    out[i] = lp.gather(-1, torch.tensor(c, device=self.device)[:, None])[:, 0].cpu().tolist()
        return out

    @contextlib.contextmanager
    def dialogue_session(self):
        """While open, generations keep their KV caches and later prompts continuing them run only their new
        ids (:mod:`.hf_turns`; with ``reuse_turns``). The dialogue runner opens one per job."""
        self.turn_cache = TurnCache() if self.reuse_turns else None
        try:
            yield self
        finally:
            if self.turn_cache is not None:
                self.turn_stats = (self.turn_cache.hits, self.turn_cache.reused_tokens)
                log.info("%s: turn reuse ran %d prompts from kept caches (%d tokens not re-encoded)",
                         self.model_key, *self.turn_stats)
            self.turn_cache = None

    @torch.inference_mode()
    def generate(self, prompts: Sequence[Prompt], params: GenParams) -> list[Generation]:
        """Greedy (temperature 0) or seeded sampled generation, batched; see the module docstring.

        With ``params.first_token_candidates`` each Generation also carries ``first_token_logprobs``:
        the raw (untempered) log-softmax at the first generation step for each candidate's first
        token — what :meth:`next_token_logprobs` returns for the same prompt, from the same forward
        pass that starts the generation.
        """
        if params.max_new_tokens < 0:
            raise WobbleError(f"max_new_tokens must be >= 0, got {params.max_new_tokens}")
        rendered = [self.render(p) for p in prompts]
        prompt_ids = [self.encode_prompt(r) for r in rendered]
        out: list[Generation | None] = [None] * len(prompts)
        kept = self.turn_cache.take(prompt_ids) if self.turn_cache is not None else {}
        rest = [i for i in range(len(prompts)) if i not in kept]
        groups = [(0, rest)]
        if self.reuse_prefix_generation:
            groups = [(p, [rest[j] for j in rows])
                      for p, rows in generation_groups(self, [prompt_ids[i] for i in rest], params.max_new_tokens)]
        if self.mix_prefix_groups:
            # every row of a shared-prefix group continues its group's prefix cache, so rows of different
            # groups share a batch (full decode batches when groups are small: hf_prefix.prefix_layers)
            shared = [(p, rows) for p, rows in groups if p]
            for (p, rows), got in zip(shared, prefix_layers(self, [(prompt_ids[rows[0]], p) for p, rows in shared])):
                kept.update({i: got for i in rows})
            groups = [(p, rows) for p, rows in groups if not p]
        plain = [i for p, rows in groups if p == 0 for i in rows]
        batches = [(0, [plain[j] for j in chunk]) for chunk in self.batches([len(prompt_ids[i]) for i in plain],
                                                                             "generate")]
        # shared-prefix groups, longest rows first, and rows continuing a kept cache ("turn"), longest part
        # still to run first (a batch pads its rows' new ids to the longest)
        for p, rows in [(p, rows) for p, rows in groups if p] + [("turn", sorted(kept))] * bool(kept):
            run = (lambda i: len(prompt_ids[i]) - kept[i][1]) if p == "turn" else (lambda i: len(prompt_ids[i]))
            rows = sorted(rows, key=lambda i: (-run(i), -len(prompt_ids[i]), i))
            batches += [(p, rows[k: k + self.batch_size]) for k in range(0, len(rows), self.batch_size)]
        for p, chunk in batches:
            gens = generate_batch(self, [prompt_ids[i] for i in chunk], [rendered[i] for i in chunk], params,
                                  0 if p == "turn" else p, [kept[i] for i in chunk] if p == "turn" else None)
            for i, g in zip(chunk, gens):
                out[i] = g
        return out  # type: ignore[return-value]
