"""The benchmark scripts run (``--quick``: a tiny random model, seconds) and their agreement columns hold;
no timing is asserted (speed is measured by running the scripts, see benchmarks/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_icl_scoring_benchmark_quick_agrees_with_the_float32_reference(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_icl_scoring.py"), "--quick",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res["meta"]["items"] == 12 and res["meta"]["quick"]
    engines = [r["engine"] for r in res["rows"]]
    assert engines == ["plain transformers, per-item full forward", "wobble hf, batched, no prefix reuse",
                       "wobble hf, exact prefix reuse"]
    for r in res["rows"]:  # float32 everywhere in --quick: every engine equals the reference
        assert r["max_abs_dlogprob_vs_fp32"] < 1e-4 and r["argmax_agree_vs_fp32"] == "12/12", r
        assert r["items_per_s"] > 0 and r["speedup_vs_per_item"] > 0
