"""The KV cache's keyword (wobble.backends.hf_prefix.cache_arg / returned_cache): ``cache`` where a model's forward
takes it (transformers 5.24 deprecates ``past_key_values``, to be removed in 5.40), ``past_key_values`` where
it does not; and no path of the hf backend passes the deprecated name to the installed transformers."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

from wobble.backends.base import GenParams
from wobble.backends.hf import HFBackend
from wobble.backends.hf_prefix import cache_arg, returned_cache
from wobble.models.tiny import build_tiny


class _NewForward:
    def forward(self, input_ids=None, cache=None, use_cache=None):
        return None


class _OldForward:
    def forward(self, input_ids=None, past_key_values=None, use_cache=None):
        return None


def test_the_keyword_follows_the_forward_signature():
    assert cache_arg(_NewForward(), "kv") == {"cache": "kv"}
    assert cache_arg(_OldForward(), "kv") == {"past_key_values": "kv"}
    assert returned_cache(SimpleNamespace(cache="new", past_key_values="old")) == "new"
    assert returned_cache(SimpleNamespace(past_key_values="old")) == "old"
    assert returned_cache(SimpleNamespace(cache=None)) is None


def test_no_backend_path_passes_a_deprecated_cache_keyword():
    model, tok = build_tiny("causal", seed=0)
    model.float()
    demos = "".join(f"Item {i} is {'good' if i % 3 else 'bad'}.\n" for i in range(12))
    prompts = [demos + "Item x is", demos + "Item y is", "Unrelated."]
    backend = HFBackend(model, tok, "causal", "tiny", batch_size=2, progress=False, reuse_prefix=True,
                        reuse_prefix_generation=True, reuse_turns=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backend.next_token_logprobs(prompts, ["good", "bad"])
        backend.generate(prompts, GenParams(max_new_tokens=4, temperature=0))
        with backend.dialogue_session():
            backend.generate(prompts, GenParams(max_new_tokens=4, temperature=0))
            backend.generate([p + " good. Are you sure?" for p in prompts], GenParams(max_new_tokens=4))
        t5, t5_tok = build_tiny("seq2seq", seed=0)
        HFBackend(t5, t5_tok, "seq2seq", "tiny", progress=False).generate(prompts, GenParams(max_new_tokens=3))
    assert [str(w.message) for w in caught if "past_key_values" in str(w.message)] == []
