"""Dump what the rules receive from one config file, as JSON: every job of the workflow's DAG (target `all`,
every job planned as if nothing existed) with its rule, wildcards, named inputs, outputs, log and benchmark files
and params, and each study's spec values (footnote context, targets, table/figure inputs, claims-ledger and
scorecard inputs).

Run on two checkouts with the same config and diff the files to show that a config change renames keys only:

    PYTHONPATH=src .venv/bin/python tests/tools/dump_resolved.py configs/smoke.yaml > /tmp/smoke.json

It builds the DAG as a dry run does (no job runs, nothing is written) and replaces the checkout's absolute path
by ``<ROOT>`` so two checkouts compare equal. ``--no-code`` leaves out the render rules' ``code`` param (the digest
of the study's source, wobble.studies.render_code_digest), which any edit of a study's code changes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _plain(value, root: str):
    if isinstance(value, dict):
        return {str(k): _plain(v, root) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, root) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value.replace(root, "<ROOT>") if isinstance(value, str) else value
    if callable(value):
        return f"<callable {getattr(value, '__qualname__', type(value).__name__)}>"
    return str(value).replace(root, "<ROOT>")


def _named(namedlist) -> dict:
    names = dict(namedlist._allitems()) if hasattr(namedlist, "_allitems") else {}
    positional = [v for v in namedlist]
    return {"named": {k: v for k, v in names.items() if k is not None}, "all": positional}


def dump(configfile: str, code: bool = True) -> dict:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

    root = str(Path.cwd().resolve())
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        wf_api = api.workflow(resource_settings=ResourceSettings(cores=1),
                              config_settings=ConfigSettings(configfiles=[Path(configfile).resolve()]),
                              snakefile=Path("Snakefile"))
        dag_api = wf_api.dag(DAGSettings(forceall=True))
        workflow = dag_api.workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        workflow._build_dag()
        jobs = []
        for job in workflow.dag.jobs:
            params = _named(job.params)
            if not code and "code" in params["named"]:
                digest = params["named"].pop("code")
                params["all"] = [v for v in params["all"] if v != digest]
            jobs.append({"rule": job.rule.name, "wildcards": dict(job.wildcards_dict),
                         "input": _named(job.input), "output": sorted(map(str, job.output)), "params": params,
                         "log": sorted(map(str, job.log)), "benchmark": str(job.benchmark) if job.benchmark else None})
        config = workflow.config
        studies = _studies(config)
    jobs.sort(key=lambda j: (j["rule"], j["output"]))
    return _plain({"jobs": jobs, "studies": studies}, root)


def _studies(config) -> dict:
    from wobble.studies import disabled_reason, registry

    out = {}
    for name, spec in registry().items():
        if disabled_reason(config, name) is not None:
            out[name] = {"off": disabled_reason(config, name)}
            continue
        entry = {"context": spec.context(config), "targets": spec.targets(config),
                 "outputs": {o.name: o.inputs(config) for o in spec.outputs}}
        if spec.findings is not None:
            entry["findings"] = spec.findings.inputs(config)
        if spec.scorecard is not None:
            entry["scorecard"] = {m: spec.scorecard.inputs(config, m) for m in spec.scorecard.models(config)}
        out[name] = entry
    return out


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--no-code"]
    if len(args) != 1:
        sys.exit("usage: dump_resolved.py [--no-code] CONFIG.yaml")
    result = dump(args[0], code="--no-code" not in sys.argv[1:])
    json.dump(result, sys.stdout, indent=1, sort_keys=True, default=str)
    sys.stdout.write("\n")
