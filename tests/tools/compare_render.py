"""Re-render a study's tables and figures with the current code and compare them byte for byte with a
reference rendering: the same results after code moves.

Two modes:

``run``      the current build functions on the inputs of an existing workflow run (its score files,
             selection, prepared data and paper CSVs), compared with the files that run rendered::

                 python tests/tools/compare_render.py run --root /tmp/baseline --config /tmp/baseline/run.yaml

``fixtures`` the current build functions and an older renderer (``render(table_id, inputs, out_stem,
             context)`` of ``<module>``, imported from ``--old-src``) on the synthetic fixtures of
             ``tests/fixtures/instructions``::

                 python tests/tools/compare_render.py fixtures --old-src /tmp/baseline-src/src \\
                     --old-module wobble.instructions.report

Prints one line per file (``same`` / ``DIFFERS`` / ``new`` = no counterpart) and, for a differing text
file, the differing lines. Exit status 1 if any file differs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "instructions"
TEXT = {".md", ".csv", ".tex"}
#: The footnote context the fixture tests use (tests/studies/instructions/test_instructions_report.py).
FIXTURE_CONTEXT = {"scale": "fixture",
                   "models": {"fixture-main": "main fixture model", "fixture-second": "second fixture model"},
                   "seeds": [1, 2], "data_note": "synthetic fixture data", "deviations": ["a synthetic deviation"]}


def render_current(study: str, inputs_of, context, out: Path) -> dict[str, list[Path]]:
    """Every output of ``study`` built by the current code into ``out/{tables,figures}``."""
    from wobble.report.render import write_result
    from wobble.studies import get

    written = {}
    for o in get(study).outputs:
        result = o.builder()(inputs_of(o), context)
        written[o.name] = write_result(result, table_stem=out / "tables" / o.name,
                                       figure_stem=out / "figures" / o.name if o.kind == "figure" else None)
    return written


def compare_file(new: Path, ref: Path, max_lines: int = 12) -> tuple[str, list[str]]:
    if not ref.is_file():
        return "new", []
    a, b = ref.read_bytes(), new.read_bytes()
    if a == b:
        return "same", []
    lines: list[str] = []
    if new.suffix in TEXT:
        diff = difflib.unified_diff(a.decode().splitlines(), b.decode().splitlines(), "reference", "current",
                                    n=0, lineterm="")
        lines = [d for d in diff if not d.startswith(("---", "+++"))][:max_lines]
    return "DIFFERS", lines


def report(written: dict[str, list[Path]], out: Path, ref_root: Path) -> int:
    n_diff = 0
    for name, paths in written.items():
        for p in paths:
            rel = p.relative_to(out)
            status, lines = compare_file(p, ref_root / rel)
            n_diff += status == "DIFFERS"
            print(f"{status:8s} {rel}")
            for line in lines:
                print(f"         {line[:300]}")
    print(f"{n_diff} file(s) differ")
    return 1 if n_diff else 0


def run_mode(args) -> int:
    import yaml

    from wobble.config import validate_config
    from wobble.paths import study_root
    from wobble.studies import get

    root = Path(args.root).resolve()
    config = yaml.safe_load(Path(args.config).read_text())
    validate_config(config, REPO / "schemas" / "config.schema.yaml")
    spec = get(args.study)
    out = Path(args.out or tempfile.mkdtemp(prefix="compare_render_")).resolve()
    os.chdir(root)

    def inputs_of(o):
        return {**o.inputs(config), **o.paper_inputs()}

    written = render_current(args.study, inputs_of, spec.context(config), out)
    reference = root / study_root(config, args.study)
    print(f"current: {out}\nreference: {reference}")
    return report(written, out, reference)


_OLD_RENDER = """
import json, sys
from importlib import import_module
render = import_module(sys.argv[1]).render
jobs = json.loads(sys.argv[2])
for name, inputs, stem, context in jobs:
    render(name, inputs, stem, context)
"""


def fixture_inputs(names: dict[str, str], scores: list[str]) -> dict:
    return {**names, "scores": scores, "tasks": str(FIXTURES / "tasks.jsonl"),
            "instances": str(FIXTURES / "instances.jsonl"), "para": str(FIXTURES / "para.jsonl"),
            "perturbations": str(FIXTURES / "perturbations.json"), "selection": str(FIXTURES / "selection.json")}


def fixtures_mode(args) -> int:
    from wobble.studies import get

    spec = get("instructions")
    paper_dir = REPO / "paper" / "instructions"
    scores = sorted(str(p) for p in (FIXTURES / "scores").rglob("*.json"))
    out = Path(args.out or tempfile.mkdtemp(prefix="compare_render_")).resolve()
    old = out / "reference"
    jobs = []
    for o in spec.outputs:
        folder = "figures" if o.kind == "figure" else "tables"
        (old / folder).mkdir(parents=True, exist_ok=True)
        paper = {"paper": str(paper_dir / f"{o.paper[0]}.csv")}
        jobs.append((o.name, fixture_inputs(paper, scores), str(old / folder / o.name), FIXTURE_CONTEXT))
    env = dict(os.environ, PYTHONPATH=str(Path(args.old_src).resolve()))
    subprocess.run([sys.executable, "-c", _OLD_RENDER, args.old_module, json.dumps(jobs)], check=True, env=env)

    def inputs_of(o):
        paper = {f"paper_{p}": str(paper_dir / f"{p}.csv") for p in o.paper}
        return fixture_inputs(paper, scores)

    written = render_current("instructions", inputs_of, FIXTURE_CONTEXT, out / "current")
    print(f"current: {out / 'current'}\nreference: {old}")
    return report(written, out / "current", old)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run", help="inputs of an existing workflow run vs what it rendered")
    r.add_argument("--root", required=True, help="the run's working directory")
    r.add_argument("--config", required=True, help="the run's config file")
    r.add_argument("--study", default="instructions")
    r.add_argument("--out", help="where to write (default: a new temp dir)")
    f = sub.add_parser("fixtures", help="synthetic fixtures: current code vs an older renderer")
    f.add_argument("--old-src", required=True, help="PYTHONPATH of the older code")
    f.add_argument("--old-module", default="wobble.instructions.report")
    f.add_argument("--out", help="where to write (default: a new temp dir)")
    args = ap.parse_args(argv)
    return run_mode(args) if args.mode == "run" else fixtures_mode(args)


if __name__ == "__main__":
    sys.exit(main())
