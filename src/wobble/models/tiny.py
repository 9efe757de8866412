"""Tiny randomly initialised models built in code, for tests and the smoke config.

They need no download: the tokenizer is ByT5's byte-level tokenizer, which has no vocabulary file;
:func:`write_tiny_gguf` writes a tiny GGUF file (with a ChatML template) for the GGUF and server paths.
Weights are a deterministic function of ``seed``.
"""

from __future__ import annotations

# A minimal Jinja chat template, so the chat-template code path is exercised by tests.
TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def build_tiny(kind: str, seed: int = 0, chat_template: bool = False):
    """Return ``(model, tokenizer)``: a tiny T5 (``kind='seq2seq'``) or Llama-style (``'causal'``) model."""
    import torch
    from transformers import ByT5Tokenizer, LlamaConfig, LlamaForCausalLM, T5Config, T5ForConditionalGeneration

    tok = ByT5Tokenizer()
    vocab = len(tok)
    torch.manual_seed(seed)
    if kind == "seq2seq":
        cfg = T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                       num_heads=4, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                       decoder_start_token_id=tok.pad_token_id)
        model = T5ForConditionalGeneration(cfg)
    elif kind == "causal":
        cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                          pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                          bos_token_id=tok.eos_token_id, tie_word_embeddings=True)
        model = LlamaForCausalLM(cfg)
    else:
        raise ValueError(f"tiny model kind must be 'seq2seq' or 'causal', got {kind!r}")
    if chat_template:
        tok.chat_template = TINY_CHAT_TEMPLATE
    model.eval()
    return model, tok


# ChatML (SmolLM2, Qwen2.5): what the tiny GGUF carries, so tests see a real model's template path.
CHATML_TEMPLATE = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def write_tiny_gguf(path, seed: int = 0, chat_template: str | None = CHATML_TEMPLATE, context: int = 512) -> None:
    """Write a tiny random Llama model as a float32 GGUF file (~100 KB) that both transformers
    (``gguf_file=``) and llama.cpp load: a byte-level BPE vocabulary (256 bytes, one merge, ChatML's
    ``<|im_start|>``/``<|im_end|>``), 2 layers of width 32, and ``chat_template`` in the metadata.
    For tests of the ``pypi-gguf`` source and of a llama.cpp server; weights depend only on ``seed``. ``context``:
    the trained context length, which llama.cpp holds a request to.
    """
    import gguf
    import numpy as np
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    byte_chars = bytes_to_unicode()
    tokens = [byte_chars[b] for b in range(256)] + ["He", "<|im_start|>", "<|im_end|>"]
    width, ff, heads, kv_heads, layers = 32, 64, 4, 2, 2
    kv_width = kv_heads * width // heads
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(layers)
    w.add_context_length(context)
    w.add_embedding_length(width)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(width // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - 2) + [3, 3])  # 3 = control
    w.add_token_merges(["H e"])
    w.add_bos_token_id(len(tokens) - 2)
    w.add_eos_token_id(len(tokens) - 1)
    w.add_add_bos_token(False)
    if chat_template:
        w.add_chat_template(chat_template)
    rng = np.random.default_rng(seed)

    def rand(name: str, *shape: int) -> None:
        w.add_tensor(name, (rng.standard_normal(shape) * 0.1).astype(np.float32))

    rand("token_embd.weight", len(tokens), width)
    # Output rows only for printable ASCII: other tokens get logit 0, below the largest of ~95 random
    # logits, so greedy text is whole UTF-8 characters (llama.cpp returns no log-probs for a partial
    # UTF-8 byte) and never ends early.
    head = (rng.standard_normal((len(tokens), width)) * 0.1).astype(np.float32)
    head[[i for i in range(len(tokens)) if not 32 <= i < 127]] = 0.0
    w.add_tensor("output.weight", head)
    w.add_tensor("output_norm.weight", np.ones(width, np.float32))
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(width, np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(width, np.float32))
        rand(f"blk.{i}.attn_q.weight", width, width)
        rand(f"blk.{i}.attn_k.weight", kv_width, width)
        rand(f"blk.{i}.attn_v.weight", kv_width, width)
        rand(f"blk.{i}.attn_output.weight", width, width)
        rand(f"blk.{i}.ffn_gate.weight", ff, width)
        rand(f"blk.{i}.ffn_up.weight", ff, width)
        rand(f"blk.{i}.ffn_down.weight", width, ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
