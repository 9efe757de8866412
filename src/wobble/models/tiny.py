"""Tiny randomly initialised models built in code, for tests and the smoke config.

They need no download: the tokenizer is ByT5's byte-level tokenizer, which has no vocabulary file.
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
