"""Where a transformers model's time goes during generation, by phase.

:func:`forward_phases` wraps a model's ``forward`` for the length of a ``with`` block and sorts every call into

* ``prefill, empty cache``: a prompt encoded from scratch (a first turn, or a whole conversation re-encoded);
* ``prefill, continuing a cache``: more than one new position on top of a KV cache (a dialogue's next user
  turn, the suffix after a shared prefix);
* ``decode step``: one new position per row on top of a cache (one generated token per row).

Each phase gets its calls, wall seconds and positions (rows × new positions); whatever the block spends outside
``forward`` (tokenizing, sampling, cache copies, Python bookkeeping) is the remainder of its own wall time.
A benchmark helper, not part of wobble.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

PHASES = ("prefill, empty cache", "prefill, continuing a cache", "decode step")


def _cached_length(past) -> int:
    if past is None:
        return 0
    if hasattr(past, "get_seq_length"):
        return int(past.get_seq_length())
    return int(past[0][0].shape[-2]) if len(past) else 0  # legacy tuple cache


@contextmanager
def forward_phases(model):
    """``with forward_phases(model) as stats:`` ... ``stats[phase] = {"calls", "s", "positions"}`` and
    ``stats["total_s"]`` (the block's wall time) once the block ends."""
    stats: dict = {p: {"calls": 0, "s": 0.0, "positions": 0} for p in PHASES}
    original = model.forward

    def timed(*args, **kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            ids = kwargs["inputs_embeds"]
        past = _cached_length(kwargs.get("cache", kwargs.get("past_key_values")))
        phase = PHASES[2] if past and ids.shape[1] == 1 else PHASES[1] if past else PHASES[0]
        t0 = time.perf_counter()
        out = original(*args, **kwargs)
        s = stats[phase]
        s["calls"] += 1
        s["s"] += time.perf_counter() - t0
        s["positions"] += int(ids.shape[0] * ids.shape[1])
        return out

    model.forward = timed
    t_start = time.perf_counter()
    try:
        yield stats
    finally:
        del model.forward  # the class's forward again
        stats["total_s"] = time.perf_counter() - t_start


def summary(stats: dict) -> dict:
    """Flat row fields: seconds and positions per phase, the time outside ``forward`` and each share (%)."""
    total = stats["total_s"] or 1e-9
    inside = sum(stats[p]["s"] for p in PHASES)
    row = {}
    for p in PHASES:
        key = p.replace(", ", "_").replace(" ", "_")
        row[f"{key}_s"] = round(stats[p]["s"], 3)
        row[f"{key}_pct"] = round(100 * stats[p]["s"] / total, 1)
        row[f"{key}_positions"] = stats[p]["positions"]
        row[f"{key}_calls"] = stats[p]["calls"]
    row["outside_forward_s"] = round(stats["total_s"] - inside, 3)
    row["outside_forward_pct"] = round(100 * (stats["total_s"] - inside) / total, 1)
    return row
