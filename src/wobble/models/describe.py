"""One-line descriptions of model keys for table footnotes (one copy for every study)."""

from __future__ import annotations

from typing import Any, Mapping


def model_label(models: Mapping[str, Mapping[str, Any]], key: str) -> str:
    """``key (source: origin, kind)``; a finetuned key names its base's label and the finetune."""
    spec = models.get(key, {})
    if "finetune" in spec:
        ft = spec["finetune"]
        return f"{key} = {model_label(models, ft['base'])} + {ft['method']} finetune on {ft['data']}"
    origin = (spec.get("id") or spec.get("package") or spec.get("path") or spec.get("model")
              or f"seed {spec.get('seed', 0)}")
    return f"{key} ({spec.get('source')}: {origin}, {spec.get('kind', 'causal')})"
