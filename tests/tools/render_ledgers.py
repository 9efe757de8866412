"""Write every enabled study's claims ledger and every scorecard from an existing run's results with the current
code and one config, as the `study_findings` and `scorecard` rules do: the outputs that read the config itself
(the measurers get the whole validated config), not only their params.

Run with two checkouts (and their own vocabulary of the same run's config) and compare the two folders byte for
byte, e.g. to show a config rename changes no ledger or scorecard:

    PYTHONPATH=src .venv/bin/python tests/tools/render_ledgers.py RUN/config.yaml RUN /tmp/ledgers-new
    diff -r /tmp/ledgers-old /tmp/ledgers-new

RUN is the run's folder (its results folder, config results_root, and paper/ are read; nothing there is written).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def main(config_path: str, run: str, out: str) -> int:
    from wobble.config import validate_config
    from wobble.models.describe import model_label
    from wobble.report.findings import write_findings
    from wobble.report.scorecard import write_scorecard
    from wobble.studies import STUDIES, enabled

    config = validate_config(yaml.safe_load(Path(config_path).read_text()), REPO / "schemas" / "config.schema.yaml")
    out_dir = Path(out).resolve()
    (out_dir / "scorecard").mkdir(parents=True, exist_ok=True)
    os.chdir(run)
    studies = enabled(config)
    for name, spec in studies.items():
        if spec.findings is None:
            continue
        found = spec.findings.measurer()(spec.findings.inputs(config), config)
        (out_dir / name).mkdir(exist_ok=True)
        write_findings(found.rows(), out_dir / name / "findings", found.title, found.notes)
        print(f"{name}: findings written", file=sys.stderr)
    models: dict[str, list[str]] = {}
    for name, spec in studies.items():
        if spec.scorecard is not None:
            for m in spec.scorecard.models(config):
                models.setdefault(m, []).append(name)
    for model, names in models.items():
        rows = []
        for name in names:
            sc = studies[name].scorecard
            rows += sc.measurer()(sc.inputs(config, model), config, model)
        others = [s for s in STUDIES if s not in names and s in config]
        write_scorecard(model, model_label(config["models"], model), rows, out_dir / "scorecard" / model, others)
        print(f"{model}: scorecard written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: render_ledgers.py CONFIG.yaml RUN_DIR OUT_DIR")
    sys.exit(main(*sys.argv[1:]))
