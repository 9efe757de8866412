"""One-line descriptions of model keys for table footnotes (one copy for every study)."""

from __future__ import annotations

from typing import Any, Mapping


def model_label(models: Mapping[str, Mapping[str, Any]], key: str) -> str:
    """``key (source: origin, kind)``; a finetuned key names its base's label and the finetune."""
    spec = models.get(key, {})
    if "finetune" in spec:
        ft = spec["finetune"]
        return f"{key} = {model_label(models, ft['base'])} + {ft['method']} finetune on {ft['data']}"
    gguf = spec.get("gguf") or {}
    packages = gguf.get("packages") or []
    wheel = f"{packages[0]['name']}=={packages[0]['version']}" if packages else None
    if len(packages) > 1:
        wheel += f" + {len(packages) - 1} more wheels"
    origin = (spec.get("id") or spec.get("package") or wheel or spec.get("path") or spec.get("model")
              or f"seed {spec.get('seed', 0)}")
    return f"{key} ({spec.get('source')}: {origin}, {spec.get('kind', 'causal')})"
