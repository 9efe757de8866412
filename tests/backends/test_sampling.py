"""wobble.backends.sampling: the batched next-token draw is ``torch.multinomial`` on each row's CPU
probabilities with that row's seeded generator, token for token and generator state for generator state, in
any dtype, at any nucleus, in inference mode and with one or several threads; non-finite probabilities are
refused; the per-prompt seed and stop-string cut."""

from __future__ import annotations

import pytest
import torch

from wobble.backends.sampling import choose_next, prompt_seed, row_noise, stop_cut


def multinomial_per_row(logits, temperature, top_p, generators):
    """The reference: softmax / nucleus as choose_next, then one ``torch.multinomial`` per row on the CPU."""
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, idx = probs.sort(dim=-1, descending=True)
        sorted_p = sorted_p.masked_fill(sorted_p.cumsum(-1) - sorted_p > top_p, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, idx, sorted_p)
    picks = [torch.multinomial(probs[row].cpu(), 1, generator=g).item() for row, g in enumerate(generators)]
    return torch.tensor(picks, dtype=torch.long, device=logits.device)


def seeded(rows: int, base: int) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(base + r) for r in range(rows)]


def assert_draws_equal_multinomial(device: str, cases: int = 12, steps: int = 3):
    for case in range(cases):
        rows, vocab = (1, 3, 8, 32)[case % 4], (7, 1000, 49152)[case % 3]
        dtype = (torch.float32, torch.bfloat16)[case % 2]
        temperature, top_p = (0.3, 0.5, 1.0, 1.7)[case % 4], (1.0, 0.9, 0.5)[case % 3]
        mine, ref = seeded(rows, 100 * case), seeded(rows, 100 * case)
        source = torch.Generator().manual_seed(case)
        for step in range(steps):  # later steps continue each generator's stream
            logits = (torch.randn(rows, vocab, generator=source) * 4).to(device, dtype)
            got = choose_next(logits, temperature, top_p, mine)
            want = multinomial_per_row(logits, temperature, top_p, ref)
            assert got.device == logits.device and got.dtype == torch.long
            assert torch.equal(got, want), (case, step)
        assert all(torch.equal(a.get_state(), b.get_state()) for a, b in zip(mine, ref))


def test_draws_equal_torch_multinomial_row_by_row():
    assert_draws_equal_multinomial("cpu")


def test_draws_do_not_depend_on_threads_or_inference_mode():
    logits = torch.randn(16, 3000, generator=torch.Generator().manual_seed(0))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        serial = choose_next(logits, 0.8, 0.95, seeded(16, 5))
        torch.set_num_threads(max(threads, 4))
        with torch.inference_mode():
            parallel = choose_next(logits, 0.8, 0.95, seeded(16, 5))
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(serial, parallel)


def test_row_noise_is_each_generators_exponential_draw():
    noise = row_noise((3, 50), torch.bfloat16, seeded(3, 9))
    want = torch.stack([torch.empty(50, dtype=torch.bfloat16).exponential_(1, generator=g) for g in seeded(3, 9)])
    assert noise.device.type == "cpu" and torch.equal(noise, want)
    with pytest.raises(ValueError):
        row_noise((3, 50), torch.float32, seeded(2, 9))  # one generator per row


def test_greedy_and_tiny_nucleus_take_the_argmax():
    logits = torch.tensor([[0.1, 2.0, 0.3], [5.0, 1.0, 4.9]])
    assert choose_next(logits, 0, 1.0, None).tolist() == [1, 0]
    assert choose_next(logits, 1.0, 1e-6, seeded(2, 0)).tolist() == [1, 0]


def test_non_finite_logits_are_refused():
    logits = torch.tensor([[0.0, float("nan"), 1.0], [0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="nan or inf"):
        choose_next(logits, 1.0, 1.0, seeded(2, 0))


def test_prompt_seed_and_stop_cut():
    assert prompt_seed(1, "a") == prompt_seed(1, "a") != prompt_seed(2, "a")
    assert 0 <= prompt_seed(0, "x") < 1 << 63
    assert stop_cut("ab\nQ: cd", ["Q:", "\n"]) == 2
    assert stop_cut("abc", ["", "z"]) is None
