"""From a model's outputs on a pair's requests (:mod:`.requests`) to one answer per test item and prompt
set: the calibrated label from label-word scores, or the label a generated explanation ends with.

An output is ``{"logprobs": {word: log-prob}}`` (label-word requests) or ``{"text": str}``
(generation). A score record: ``{"pair", "condition", "intervention", "target", "set", "uid" (test
item), "h1", "h2", "pred" (0 / 1 / None), "probs" (normalized label-word probabilities or None),
"calibrated" (bool)}``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping

from wobble.studies.icl_bias.metrics import content_free_probs, label_probs, parse_generated_label, predict_label


def _output(outputs: Mapping[str, Mapping], uid: str) -> Mapping:
    if uid not in outputs:
        raise KeyError(f"no model output for request {uid!r}")
    return outputs[uid]


def score_records(requests: Iterable[Mapping], outputs: Mapping[str, Mapping], items: Mapping[str, Mapping],
                  calibrate: bool = True) -> list[dict]:
    """One score record per test request, in request order (see the module docstring).

    With ``calibrate`` each (condition, prompt set) is calibrated by its content-free prompts; where
    none of them has finite label-word scores the answer is left uncalibrated (``calibrated: false``).
    """
    requests = list(requests)
    cf: dict[tuple[str, int], list[Mapping]] = defaultdict(list)
    for r in requests:
        if r["content_free"] is not None:
            cf[(r["condition"], r["set"])].append(_output(outputs, r["uid"])["logprobs"])
    out = []
    for r in requests:
        if r["item"] is None:
            continue
        got, item = _output(outputs, r["uid"]), items[r["item"]]
        probs, calibrated = None, False
        if r["generate"]:
            pred = parse_generated_label(got["text"])
        else:
            p_cf = content_free_probs(cf[(r["condition"], r["set"])], r["candidates"]) if calibrate else None
            pred = predict_label(got["logprobs"], r["candidates"], p_cf)
            probs, calibrated = [float(p) for p in label_probs(got["logprobs"], r["candidates"])], p_cf is not None
        out.append({"pair": r["pair"], "condition": r["condition"], "intervention": r["intervention"],
                    "target": r["target"], "set": r["set"], "uid": r["item"], "h1": item["h1"], "h2": item["h2"],
                    "pred": pred, "probs": probs, "calibrated": calibrated})
    return out
