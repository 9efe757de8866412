"""The in-process vLLM engine (``engine: vllm``) against the hf backend on one GPU: a random Llama small enough to
build here (head size 64, which vLLM's attention kernels take) and the tiny ByT5 tokenizer, both backends in
bfloat16 on the same weights; prints and writes how far they agree (greedy texts, first-token and continuation
log-probs, the chat path; a sampled generation's repeatability across batch orders, reported only, since bf16 batch
numerics can flip a near-tie). Exit 1 when vLLM cannot run the model or a
log-prob differs by more than ``--tol`` nats; 3 when vLLM is not installed (nothing checked).

    python benchmarks/vllm_check.py --json out/vllm-check.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile

PROMPTS = ["Hi", "The quick brown fox jumps over the lazy dog.", "Q: 2+2? A:", "Definition: answer in one word.\nInput: sky?"]
CONTS = [" there", " And then it slept.", " 4", " blue"]
CANDIDATES = ["A", " B", "blue", "\n"]
CHAT = [{"role": "user", "content": "Which option, A or B?"}]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--tol", type=float, default=0.15, help="largest log-prob difference accepted (nats, bf16)")
    args = ap.parse_args()
    try:
        import vllm  # noqa: F401
    except ImportError as e:
        print(f"vllm_check: vllm is not importable ({e}); nothing checked")
        return 3
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from wobble.backends.base import GenParams
    from wobble.backends.hf import HFBackend
    from wobble.backends.vllm_engine import VLLMBackend
    from wobble.models.tiny import build_tiny

    _, tok = build_tiny("causal", chat_template=True)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id,
                      tie_word_embeddings=True, torch_dtype="bfloat16")
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    with tempfile.TemporaryDirectory(prefix="vllm-check-") as d:
        model.save_pretrained(d)
        tok.save_pretrained(d)
        hf = HFBackend(model.cuda().eval(), tok, "causal", "check", progress=False)
        vl = VLLMBackend(d, "check", dtype="bfloat16", top_logprobs=2, gpu_memory_utilization=0.3, progress=False)
        greedy = GenParams(max_new_tokens=16, stop=("zz",), return_logprobs=True, first_token_candidates=tuple(CANDIDATES))
        g_hf, g_vl = hf.generate(PROMPTS + [CHAT], greedy), vl.generate(PROMPTS + [CHAT], greedy)
        n_hf, n_vl = hf.next_token_logprobs(PROMPTS + [CHAT], CANDIDATES), vl.next_token_logprobs(PROMPTS + [CHAT], CANDIDATES)
        c_hf, c_vl = hf.continuation_logprobs(PROMPTS, CONTS), vl.continuation_logprobs(PROMPTS, CONTS)
        sampled = GenParams(max_new_tokens=16, temperature=1.0, seed=3)
        s1, s2 = vl.generate(PROMPTS, sampled), vl.generate(PROMPTS[::-1], sampled)[::-1]

    def gap(a, b):
        return max((abs(x - y) for x, y in zip(a, b)), default=0.0)

    out = {
        "greedy_text_agree": sum(a.text == b.text for a, b in zip(g_hf, g_vl)) / len(g_hf),
        "first_token_gap": max(gap(list(a.values()), list(b.values())) for a, b in zip(n_hf, n_vl)),
        "generate_first_token_gap": max(gap(list(a.first_token_logprobs.values()), list(b.first_token_logprobs.values()))
                                        for a, b in zip(g_hf, g_vl)),
        "continuation_gap": max(gap(a, b) for a, b in zip(c_hf, c_vl)),
        "continuation_lengths_agree": [len(a) for a in c_hf] == [len(b) for b in c_vl],
        "rendered_prompts_agree": [a.rendered_prompt for a in g_hf] == [b.rendered_prompt for b in g_vl],
        "sampled_repeatable": [a.text for a in s1] == [b.text for b in s2],
        "rescored_pairs": vl.rescored, "vllm": sys.modules["vllm"].__version__, "gpu": torch.cuda.get_device_name(0),
    }
    ok = (max(out["first_token_gap"], out["generate_first_token_gap"], out["continuation_gap"]) <= args.tol
          and out["continuation_lengths_agree"] and out["rendered_prompts_agree"])
    out["ok"] = ok
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
