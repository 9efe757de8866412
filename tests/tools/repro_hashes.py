"""The artifacts that must be bit-identical on ANY machine: prepared data, splits, prompts and
request bundles of a run — made by seeded pure code from pinned files, no model involved — and their sha256.

    .venv/bin/python tests/tools/repro_hashes.py RUN_DIR > tests/fixtures/smoke_sha256.json

``tests/workflow/test_workflow_e2e.py`` checks a smoke run against the committed ``tests/fixtures/smoke_sha256.json``.
Everything downstream of a model call (predictions, scores, tables) is numerically sensitive instead: bf16
kernels differ between CPUs and greedy decoding flips at near-ties (README, "Reproducibility").
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

PATTERNS = ("resources/prepared/*.jsonl", "results/*/splits/**/*.json*", "results/followup/items/*.json",
            "results/icl_bias/requests/*.json")


def hashes(workdir: str | Path) -> dict[str, str]:
    root = Path(workdir)
    out = {}
    for pattern in PATTERNS:
        for p in sorted(root.glob(pattern)):
            if p.is_file() and not p.name.endswith((".prov.json", ".partial")):
                out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return dict(sorted(out.items()))


if __name__ == "__main__":
    print(json.dumps(hashes(sys.argv[1]), indent=1))
