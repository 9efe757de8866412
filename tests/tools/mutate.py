"""Mutation testing of wobble's pure modules: do the tests fail when the code is wrong?

Usage (``make mutation`` runs every module)::

    python tests/tools/mutate.py [MODULE ...] [--list] [--jobs N] [--timeout S] [--fail-under PCT] [--recheck]
                                 [--render]

MODULE is a key of :data:`TARGETS` (e.g. ``superni``) or a path. For each module the script

1. parses the source and enumerates *mutants* (tests/tools/mutants.py) in a fixed order (same source -> same
   mutants, same ids):
   the syntactic kinds, operator swaps (``+``/``-``, ``*``/``/``, ...), comparison changes (``<`` -> ``<=``,
   ``==`` -> ``!=``, ``in`` -> ``not in``, ...), ``and``/``or``, dropping ``not``/unary minus, constants
   (n -> n+1, x -> x+1, True/False, "s" -> "XXsXX"), ``min``/``max`` and ``any``/``all``, dropping one
   keyword argument of a call, ``return x`` -> ``return None`` and removing one statement (a call
   statement, ``+=``, ``raise``, ``break``/``continue``, a re-assignment); and the semantic kinds of
   tests/tools/semantic_mutants.py, the mistakes people write: a guard's operand dropped, an early
   return removed, a filter removed, a string normalisation dropped or added, a regex anchor, boundary
   or lookaround removed, a slice or window bound shifted, a part repeated per item;
2. runs the module's test files once unmutated (they must pass), then once per mutant with ``-x -q``
   in a forked child whose import system serves the mutated module (third-party imports stay warm in
   the parent, so a mutant costs a test run, not an interpreter start), with a per-mutant timeout;
3. counts a mutant *killed* when the tests fail (or time out), *equivalent* when its id is listed in
   ``tests/tools/equivalent_mutants.txt`` with a reason, and *survived* otherwise;
4. prints the survivors (id, line, what changed) and writes ``tests/mutation/scores.{json,md}``: per
   module the score and the mutants of each kind (a module whose source changed since its run, or that
   has not run, is marked so).

Not mutated: docstrings, type annotations (and ``Literal[...]`` types), decorators, ``__all__``, and the
message text of ``raise`` statements (wording is not behaviour; the ``raise`` itself is still removed once).

``--recheck`` re-tests only the survivors of a module's last run when its source is unchanged since (tests are
only added, so what was killed stays killed) and updates that run's counts.

The score of a module is killed / (total - equivalent); ``--fail-under`` (default 90) makes the exit
status non-zero when a module scores below it or a mutant survives without being recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.abc
import importlib.util
import json
import os
import signal
import sys
import time
from pathlib import Path

from mutants import Mutant, enumerate_mutants, mutated_code, short  # tests/tools/mutants.py (the script's folder)

REPO = Path(__file__).resolve().parents[2]
EQUIVALENT_FILE = Path(__file__).with_name("equivalent_mutants.txt")
OUT_DIR = REPO / "tests" / "mutation"

#: module key -> (source path, test files). A module's tests live in the test files of its folder under tests/ (the
#: tree mirrors src/wobble/: tests/studies/followup/test_followup_judge.py for wobble.studies.followup.judge), the
#: tests written to kill a mutant among them; a module whose tests span several files (its own, and the files a
#: large test file was split into by topic) lists each. A test file may be narrowed to some of its tests with
#: pytest's ``path::name`` node ids. The groups are the order in which the modules are measured: extractors and
#: classifiers, statistics, the SuperNI metric, the studies' metrics, perturbations and their proposers, prompt
#: builders (the judges' first), claims.
_FT = "tests/studies/first_token/"
_FU = "tests/studies/followup/"
_IB = "tests/studies/icl_bias/"
_IN = "tests/studies/instructions/"
#: the perturbations, word insertion and replacement, the conditions and the proposers
_PERTURB = tuple(_IN + f"test_instructions_{t}.py" for t in ("perturb", "insert_replace", "conditions", "proposers"))
#: the claims modules of a study share their tests
_FT_CLAIMS = (_FT + "test_first_token_claims.py", _FT + "test_first_token_claims_gates.py")
_FU_CLAIMS = tuple(_FU + f"test_followup_claims{t}.py" for t in ("", "_gates", "_paper", "_chance"))
_IB_CLAIMS = (_IB + "test_icl_bias_claims.py", _IB + "test_icl_bias_claims_report.py")
_IN_CLAIMS = tuple(_IN + f"test_instructions_claims{t}.py"
                   for t in ("", "_measure", "_checks", "_findings", "_robust"))
_QUOTES = "tests/project/test_claim_quotes.py"
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    # extractors and classifiers
    "extract_filters": ("src/wobble/extract/filters.py", ("tests/extract/test_extract.py",)),
    "extract_pipeline": ("src/wobble/extract/pipeline.py", ("tests/extract/test_extract.py",)),
    "first_token_classify": ("src/wobble/studies/first_token/classify.py",
                             (_FT + "test_first_token_classify.py", _FT + "test_first_token_judge.py")),
    "first_token_classifiers": ("src/wobble/studies/first_token/classifiers.py",
                                (_FT + "test_first_token_classifiers.py",)),
    "followup_extractors": ("src/wobble/studies/followup/extractors.py", (_FU + "test_followup_extractors.py",)),
    "icl_bias_features": ("src/wobble/studies/icl_bias/features.py", (_IB + "test_icl_bias_features.py",)),
    "icl_bias_answers": ("src/wobble/studies/icl_bias/answers.py",
                         (_IB + "test_icl_bias_scoring.py", _IB + "test_icl_bias_answers.py")),
    # statistics and seeded sampling
    "stats": ("src/wobble/stats.py", ("tests/test_stats.py", "tests/test_library_equivalence.py")),
    "seeding": ("src/wobble/seeding.py", ("tests/test_stats.py",)),
    # the SuperNI metric
    "superni": ("src/wobble/metrics/superni.py", ("tests/metrics/test_metrics_superni.py",)),
    # the studies' metrics
    "first_token_metrics": ("src/wobble/studies/first_token/metrics.py", (_FT + "test_first_token_metrics.py",)),
    "first_token_aggregate": ("src/wobble/studies/first_token/aggregate.py", (_FT + "test_first_token_aggregate.py",)),
    "followup_metrics": ("src/wobble/studies/followup/metrics.py", (_FU + "test_followup_metrics.py",)),
    "icl_bias_metrics": ("src/wobble/studies/icl_bias/metrics.py", (_IB + "test_icl_bias_metrics.py",)),
    "icl_bias_summary": ("src/wobble/studies/icl_bias/summary.py",
                         (_IB + "test_icl_bias_scoring.py", _IB + "test_icl_bias_summary.py")),
    # perturbations and their proposers
    "instructions_perturb": ("src/wobble/studies/instructions/perturb.py", _PERTURB),
    "instructions_insert_replace": ("src/wobble/studies/instructions/insert_replace.py", _PERTURB),
    "instructions_proposers": ("src/wobble/studies/instructions/proposers.py", _PERTURB),
    "instructions_conditions": ("src/wobble/studies/instructions/conditions.py", _PERTURB),
    "followup_mechanism": ("src/wobble/studies/followup/mechanism.py", (_FU + "test_followup_mechanism.py",)),
    "icl_bias_interventions": ("src/wobble/studies/icl_bias/interventions.py", (_IB + "test_icl_bias_prompts.py",)),
    # prompt builders: the judges', then each study's
    "first_token_judge": ("src/wobble/studies/first_token/judge.py",
                          (_FT + "test_first_token_classify.py", _FT + "test_first_token_judge.py",
                           _FT + "test_first_token_prompts.py")),
    "followup_judge": ("src/wobble/studies/followup/judge.py", (_FU + "test_followup_judge.py",)),
    "first_token_prompts": ("src/wobble/studies/first_token/prompts.py", (_FT + "test_first_token_prompts.py",)),
    "followup_prompts": ("src/wobble/studies/followup/prompts.py", (_FU + "test_followup_prompts.py",)),
    "followup_fewshot": ("src/wobble/studies/followup/fewshot.py",
                         (_FU + "test_followup_mechanism.py", _FU + "test_followup_fewshot.py")),
    "icl_bias_prompts": ("src/wobble/studies/icl_bias/prompts.py", (_IB + "test_icl_bias_prompts.py",)),
    "instructions_prompts": ("src/wobble/studies/instructions/prompts.py", (_IN + "test_instructions_prompts.py",)),
    "adapters_mcq": ("src/wobble/adapters/mcq.py", ("tests/adapters/test_adapters_mcq.py",)),
    "adapters_icl": ("src/wobble/adapters/icl.py", ("tests/adapters/test_adapters_icl.py",)),
    # claims: the shared ledger, then each study's
    "claims": ("src/wobble/report/claims.py", ("tests/report/test_claims.py",)),
    "ledger": ("src/wobble/report/ledger.py", ("tests/report/test_claims.py",)),
    "first_token_claims": ("src/wobble/studies/first_token/claims.py", _FT_CLAIMS),
    "first_token_claims_counts": ("src/wobble/studies/first_token/claims_counts.py", _FT_CLAIMS),
    "first_token_claims_measure": ("src/wobble/studies/first_token/claims_measure.py", _FT_CLAIMS),
    "first_token_claims_io": ("src/wobble/studies/first_token/claims_io.py", _FT_CLAIMS),
    "followup_claims": ("src/wobble/studies/followup/claims.py", (*_FU_CLAIMS, _QUOTES)),
    "followup_claims_measure": ("src/wobble/studies/followup/claims_measure.py", _FU_CLAIMS),
    "followup_claims_wording": ("src/wobble/studies/followup/claims_wording.py", _FU_CLAIMS),
    "followup_claims_paper": ("src/wobble/studies/followup/claims_paper.py", _FU_CLAIMS),
    "followup_claims_chance": ("src/wobble/studies/followup/claims_chance.py", _FU_CLAIMS),
    "icl_bias_claims": ("src/wobble/studies/icl_bias/claims.py", _IB_CLAIMS),
    "icl_bias_claims_measure": ("src/wobble/studies/icl_bias/claims_measure.py", _IB_CLAIMS),
    "icl_bias_claims_report": ("src/wobble/studies/icl_bias/claims_report.py", _IB_CLAIMS),
    "icl_bias_claims_checks": ("src/wobble/studies/icl_bias/claims_checks.py", _IB_CLAIMS),
    "icl_bias_claims_changes": ("src/wobble/studies/icl_bias/claims_changes.py", _IB_CLAIMS),
    "icl_bias_calibration": ("src/wobble/studies/icl_bias/calibration.py", _IB_CLAIMS),
    "instructions_claims": ("src/wobble/studies/instructions/claims.py", (*_IN_CLAIMS, _QUOTES)),
    "instructions_claims_measure": ("src/wobble/studies/instructions/claims_measure.py", _IN_CLAIMS),
    "instructions_claims_paper": ("src/wobble/studies/instructions/claims_paper.py", _IN_CLAIMS),
    "instructions_claims_robust": ("src/wobble/studies/instructions/claims_robust.py", _IN_CLAIMS),
}

# ------------------------------------------------------------------------------------- running

class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the mutated code for one module name (first on ``sys.meta_path`` in the child)."""

    def __init__(self, name: str, path: str, code):
        self.name, self.path, self.code = name, path, code

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code, module.__dict__)


def _module_name(relpath: str) -> str:
    parts = Path(relpath).with_suffix("").parts
    return ".".join(parts[1:] if parts[0] == "src" else parts)


def _purge_project_modules() -> None:
    """Forget wobble and the test modules so the child imports them afresh (with the mutant)."""
    tests = str(REPO / "tests")
    for name in list(sys.modules):
        mod = sys.modules[name]
        file = getattr(mod, "__file__", None) or ""
        if name == "wobble" or name.startswith("wobble.") or name == "conftest" or file.startswith(tests):
            del sys.modules[name]


def _pytest_args(tests: list[str]) -> list[str]:
    return [*tests, "-x", "-q", "-p", "no:cacheprovider", "-m", "not e2e", "--no-header", "-W", "ignore"]


def _child(tests: list[str], finder: _MutantFinder | None, log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        import pytest

        torch = sys.modules.get("torch")
        if torch is not None:  # the parent's warm-up ran torch's OpenMP pool; a fork that enters it hangs
            torch.set_num_threads(1)
        _purge_project_modules()
        if finder is not None:
            sys.meta_path.insert(0, finder)
        rc = pytest.main(_pytest_args(tests))
    except BaseException:  # noqa: BLE001 - anything that breaks the tests kills the mutant
        import traceback

        traceback.print_exc()
        rc = 99
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(rc))


def _spawn(tests, finder, log) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            _child(tests, finder, log)
        finally:
            os._exit(98)
    return pid


def _reap(pid: int, deadline: float) -> int | None:
    """Exit status of ``pid`` (None: killed at the deadline)."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return None
        time.sleep(0.02)


def read_equivalent(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """``id -> reason`` from the equivalent-mutants file (``ID  REASON`` lines; ``#`` comments)."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        mid, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{path}:{lineno}: an equivalent mutant needs a reason after its id")
        out[mid] = reason.strip()
    return out


def _warm_up(tests: list[str]) -> None:
    """Import the heavy third-party modules once in the parent by running the tests unmutated."""
    import pytest

    with open(os.devnull, "w") as devnull:
        old_out, old_err = os.dup(1), os.dup(2)
        os.dup2(devnull.fileno(), 1)
        os.dup2(devnull.fileno(), 2)
        try:
            pytest.main(_pytest_args(tests))
        finally:
            os.dup2(old_out, 1)
            os.dup2(old_err, 2)
    _purge_project_modules()


def run_module(key: str, relpath: str, tests: list[str], *, jobs: int, timeout: float | None,
               equivalent: dict[str, str], only: set[str] | None, logdir: Path, keep_logs: bool = False) -> dict:
    source = (REPO / relpath).read_text()
    path = str(REPO / relpath)
    mutants = enumerate_mutants(source, relpath)
    if only:
        mutants = [m for m in mutants if m.id in only]
    name = _module_name(relpath)
    _warm_up(tests)
    t0 = time.monotonic()
    base_log = str(logdir / f"{key}-baseline.log")
    rc = _reap(_spawn(tests, None, base_log), time.monotonic() + 900)
    base_s = time.monotonic() - t0
    if rc != 0:
        raise SystemExit(f"{key}: the unmutated tests do not pass (exit {rc}); see {base_log}")
    limit = timeout or max(20.0, 5 * base_s)
    results: dict[str, str] = {}
    queue = list(mutants)
    running: dict[int, tuple[Mutant, float]] = {}
    try:
        from tqdm import tqdm
        bar = tqdm(total=len(mutants), desc=key, unit="mutant", file=sys.stderr, leave=False)
    except ImportError:  # pragma: no cover
        bar = None
    while queue or running:
        while queue and len(running) < jobs:
            m = queue.pop(0)
            try:
                code = mutated_code(source, path, m)
            except (SyntaxError, ValueError, TypeError):
                results[m.id] = "invalid"
                continue
            pid = _spawn(tests, _MutantFinder(name, path, code), str(logdir / f"{key}-{m.id}.log"))
            running[pid] = (m, time.monotonic() + limit)
        for pid, (m, deadline) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                code = None
            else:
                continue
            del running[pid]
            if code is None:
                results[m.id] = "timeout"
            elif code == 0:
                results[m.id] = "equivalent" if m.id in equivalent else "survived"
            elif code == 5:  # no tests collected
                raise SystemExit(f"{key}: pytest collected no tests ({tests})")
            else:
                results[m.id] = "killed"
            if results[m.id] != "survived" and not keep_logs:
                os.unlink(logdir / f"{key}-{m.id}.log")
            if bar:
                bar.update(1)
        time.sleep(0.01)
    if bar:
        bar.close()
    valid = [m for m in mutants if results.get(m.id) != "invalid"]
    killed = sum(results[m.id] in ("killed", "timeout") for m in valid)
    eq = sum(results[m.id] == "equivalent" for m in valid)
    survivors = [m for m in valid if results[m.id] == "survived"]
    denom = len(valid) - eq
    return {
        "module": relpath, "source_sha256": _sha(source), "tests": tests, "total": len(valid), "killed": killed,
        "equivalent": eq, "by_kind": _by_kind(valid, results),
        "_kinds": {m.id: m.kind for m in mutants},
        "survived": len(survivors), "score": round(100.0 * killed / denom, 1) if denom else 100.0,
        "baseline_s": round(base_s, 2), "wall_s": round(time.monotonic() - t0, 1),
        "survivors": [{"id": m.id, "where": m.where, "kind": m.kind, "before": short(m.before, 200),
                       "after": short(m.after, 200)} for m in survivors],
        "equivalent_ids": [m.id for m in valid if results[m.id] == "equivalent"],
        "_results": results,
    }


def _recheck(prev: dict, fresh: dict) -> dict:
    """``prev`` (a whole-module run of the same source) with the mutants ``fresh`` re-tested (its survivors, and
    equivalents no longer listed) updated: tests are only ever added, so a mutant killed before stays killed."""
    out = {k: v for k, v in prev.items() if k != "survivors"}
    out["by_kind"] = {k: dict(v) for k, v in prev["by_kind"].items()}
    old = {sv["id"]: sv for sv in prev["survivors"]}
    eq_before = set(prev["equivalent_ids"])
    survivors = {sv["id"]: sv for sv in fresh["survivors"]}
    for mid, now in fresh["_results"].items():
        was = "equivalent" if mid in eq_before else "survived"
        now = "killed" if now == "timeout" else now
        if now == "invalid" or now == was:
            continue
        row = out["by_kind"][fresh["_kinds"][mid]]
        row[was] -= 1
        row[now] += 1
        out[was] -= 1
        out[now] += 1
    out["survivors"] = [sv for mid, sv in old.items() if mid not in fresh["_results"]] + list(survivors.values())
    out["equivalent_ids"] = sorted((eq_before - set(fresh["_results"])) | set(fresh["equivalent_ids"]))
    denom = out["total"] - out["equivalent"]
    out["score"] = round(100.0 * out["killed"] / denom, 1) if denom else 100.0
    out["wall_s"] = round(prev["wall_s"] + fresh["wall_s"], 1)
    return out


def _sha(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _by_kind(mutants: list[Mutant], results: dict[str, str]) -> dict[str, dict[str, int]]:
    """``kind -> {"total", "killed", "equivalent", "survived"}`` in the order the kinds first appear."""
    out: dict[str, dict[str, int]] = {}
    for m in mutants:
        row = out.setdefault(m.kind, {"total": 0, "killed": 0, "equivalent": 0, "survived": 0})
        row["total"] += 1
        r = results[m.id]
        row["killed" if r in ("killed", "timeout") else r] += 1
    return out


def _tests_for(key: str, tests: tuple[str, ...]) -> list[str]:
    """The module's test files (and node ids) once each. A listed file that is not there stops the run: then
    :data:`TARGETS` no longer says where the module's tests live."""
    for t in tests:
        if not (REPO / t.partition("::")[0]).exists():
            raise SystemExit(f"{key}: test file {t.partition('::')[0]} not found; update TARGETS in {__file__}")
    return list(dict.fromkeys(tests))


#: The kinds in the order of the by-kind table: the syntactic ones, then the semantic ones.
KINDS = ("binop", "augassign", "compare", "boolop", "unary", "constant", "name", "keyword", "return", "delete",
         "guard", "early_return", "filter", "strmethod", "regex", "slice", "repeat")


def _markdown(summaries: dict[str, dict]) -> str:
    """The scores table (every target, marked where it has not run or its source changed since) and the
    mutants of each module by kind (``killed/non-equivalent``, ``+e`` equivalent)."""
    head = ["# Mutation scores", "",
            "`make mutation` (tests/tools/mutate.py). Score = killed / (mutants - equivalent); each equivalent "
            "mutant's reason is in tests/tools/equivalent_mutants.txt.", "",
            "| module | mutants | killed | equivalent | survived | score |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    kinds = ["", "## Mutants by kind", "",
             "Each cell: killed / non-equivalent mutants of that kind, `+e` the equivalent ones; `-`: none of that "
             "kind in the module.", "",
             "| module | " + " | ".join(KINDS) + " |", "| --- |" + " ---: |" * len(KINDS)]
    for key, (relpath, _) in TARGETS.items():
        s = summaries.get(relpath)
        source = REPO / relpath
        if s is None or "by_kind" not in s:
            head.append(f"| `{relpath}` | not yet run with the current kinds | | | | |")
            continue
        stale = not source.exists() or s.get("source_sha256") != _sha(source.read_text())
        note = " (source changed since)" if stale else ""
        head.append(f"| `{relpath}`{note} | {s['total']} | {s['killed']} | {s['equivalent']} | {s['survived']} | "
                    f"{s['score']:.1f} % |")
        cells = []
        for kind in KINDS:
            k = s["by_kind"].get(kind)
            if not k:
                cells.append("-")
                continue
            cell = f"{k['killed']}/{k['total'] - k['equivalent']}"
            cells.append(cell + (f" +{k['equivalent']}e" if k["equivalent"] else ""))
        kinds.append(f"| `{key}` | " + " | ".join(cells) + " |")
    return "\n".join(head + kinds) + "\n"


def _write_scores(summaries: list[dict]) -> None:
    """Merge this run's modules into scores.json and re-render scores.md. The file is read again here, not at
    the start, so runs of other modules that finished meanwhile are kept; each file is written whole (temp file,
    then rename)."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / "scores.json"
    known = {s["module"]: s for s in json.loads(path.read_text())} if path.exists() else {}
    known.update({s["module"]: s for s in summaries})
    merged = [known[m] for m in (TARGETS[k][0] for k in TARGETS) if m in known]
    for name, text in (("scores.json", json.dumps(merged, indent=1) + "\n"),
                       ("scores.md", _markdown({s["module"]: s for s in merged}))):
        tmp = OUT_DIR / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(text)
        os.replace(tmp, OUT_DIR / name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"keys of TARGETS ({', '.join(TARGETS)}); default: all")
    ap.add_argument("--list", action="store_true", help="list the mutants (id, place, change) and exit")
    ap.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per mutant (default max(20, 5x baseline))")
    ap.add_argument("--only", nargs="*", default=None, help="test only these mutant ids")
    ap.add_argument("--fail-under", type=float, default=90.0, help="minimum score per module (default 90)")
    ap.add_argument("--keep-logs", action="store_true", help="keep every mutant's pytest log (default: survivors')")
    ap.add_argument("--no-write", action="store_true", help="do not write tests/mutation/scores.*")
    ap.add_argument("--render", action="store_true", help="rewrite scores.md from scores.json and exit")
    ap.add_argument("--recheck", action="store_true",
                    help="re-test only the last run's survivors (and equivalents no longer listed) of a module whose "
                         "source is unchanged since, and update its scores; other modules run whole")
    args = ap.parse_args(argv)
    if args.render:
        known = json.loads((OUT_DIR / "scores.json").read_text())
        (OUT_DIR / "scores.md").write_text(_markdown({s["module"]: s for s in known}))
        return 0
    keys = args.modules or list(TARGETS)
    for k in keys:
        if k not in TARGETS:
            ap.error(f"unknown module {k!r}; known: {', '.join(TARGETS)}")
    os.chdir(REPO)
    if args.list:
        for k in keys:
            relpath = TARGETS[k][0]
            for m in enumerate_mutants((REPO / relpath).read_text(), relpath):
                print(f"{k}\t{m.id}\t{m.describe()}")
        return 0
    equivalent = read_equivalent()
    logdir = Path(os.environ.get("TMPDIR", "/tmp")) / "wobble-mutation"
    logdir.mkdir(parents=True, exist_ok=True)
    known = {}
    if (OUT_DIR / "scores.json").exists():
        known = {s["module"]: s for s in json.loads((OUT_DIR / "scores.json").read_text())}
    summaries, ok = [], True
    for k in keys:
        relpath, tests = TARGETS[k]
        if not (REPO / relpath).exists():
            print(f"{k}: {relpath} not present, skipped", file=sys.stderr)
            continue
        only = set(args.only) if args.only else None
        prev = known.get(relpath)
        recheck = (args.recheck and prev is not None and "by_kind" in prev
                   and prev.get("source_sha256") == _sha((REPO / relpath).read_text()))
        if args.recheck and not recheck:
            print(f"{k}: no run of the current source to recheck, running it whole", file=sys.stderr)
        if recheck:
            only = {sv["id"] for sv in prev["survivors"]} | {i for i in prev["equivalent_ids"] if i not in equivalent}
        if recheck and not only:
            s = prev
        else:
            s = run_module(k, relpath, _tests_for(k, tests), jobs=args.jobs, timeout=args.timeout,
                           equivalent=equivalent, only=only, logdir=logdir, keep_logs=args.keep_logs)
            if recheck:
                s = _recheck(prev, s)
            s.pop("_results", None)
            s.pop("_kinds", None)
        summaries.append(s)
        print(f"{k}: {s['killed']}/{s['total']} killed, {s['equivalent']} equivalent, {s['survived']} survived "
              f"-> {s['score']:.1f} % ({s['wall_s']} s)", flush=True)
        for sv in s["survivors"]:
            print(f"  SURVIVED {sv['id']} {sv['where']} [{sv['kind']}] {sv['before']} -> {sv['after']}", flush=True)
        ok = ok and s["score"] >= args.fail_under and not s["survivors"]
    if summaries and not args.no_write and not args.only:
        _write_scores(summaries)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
