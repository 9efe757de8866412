"""Snakemake entry point: the claims ledger of the icl_bias study (results/icl_bias/findings.*)."""
from pathlib import Path

from wobble.io import read_jsonl
from wobble.provenance import tracked
from wobble.report.claims import ledger_rows, write_ledger
from wobble.snake import logged
from wobble.studies.icl_bias.claims import CLAIMS, measure

sm = snakemake  # noqa: F821 (injected by Snakemake)
paper_models, boot = dict(sm.params.paper_models), dict(sm.params.bootstrap)
with logged(sm), tracked(sm, config={"paper_models": paper_models, "bootstrap": boot}, seeds=boot["seed"]):
    by_model = {m: [] for m in paper_models}
    for path in sm.input:
        by_model[Path(path).parent.name].extend(read_jsonl(path))
    rows = ledger_rows(CLAIMS, measure(by_model, paper_models, n=boot["n"], seed=boot["seed"]))
    stand_ins = ", ".join(f"{m} for {p}" for m, p in paper_models.items()) or "none (icl_bias.paper_models is empty)"
    write_ledger(rows, Path(sm.output.md).with_suffix(""), "Claims ledger: icl_bias (Si et al. 2023)",
                 [f"Models standing in for the paper's: {stand_ins}."])
    print(f"{len(rows)} claims: {[r['verdict'] for r in rows]}")
