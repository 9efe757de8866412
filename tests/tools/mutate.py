"""Mutation testing of wobble's pure modules (issue 14 item 7): do the tests fail when the code is wrong?

Usage (``make mutation`` runs every module)::

    python tests/tools/mutate.py [MODULE ...] [--list] [--jobs N] [--timeout S] [--fail-under PCT]

MODULE is a key of :data:`TARGETS` (e.g. ``superni``) or a path. For each module the script

1. parses the source and enumerates *mutants* in a fixed order (same source -> same mutants, same ids):
   operator swaps (``+``/``-``, ``*``/``/``, ...), comparison changes (``<`` -> ``<=``, ``==`` -> ``!=``,
   ``in`` -> ``not in``, ...), ``and``/``or``, dropping ``not``/unary minus, constants (n -> n+1,
   x -> x+1, True/False, "s" -> "XXsXX"), ``min``/``max`` and ``any``/``all``, dropping one keyword
   argument of a call, ``return x`` -> ``return None`` and removing one statement (a call statement,
   ``+=``, ``raise``, ``break``/``continue``, a re-assignment);
2. runs the module's test files once unmutated (they must pass), then once per mutant with ``-x -q``
   in a forked child whose import system serves the mutated module (third-party imports stay warm in
   the parent, so a mutant costs a test run, not an interpreter start), with a per-mutant timeout;
3. counts a mutant *killed* when the tests fail (or time out), *equivalent* when its id is listed in
   ``tests/tools/equivalent_mutants.txt`` with a reason, and *survived* otherwise;
4. prints the survivors (id, line, what changed) and writes ``benchmarks/mutation/scores.{json,md}``.

Not mutated: docstrings, type annotations (and ``Literal[...]`` types), decorators, ``__all__``, and the
message text of ``raise`` statements (wording is not behaviour; the ``raise`` itself is still removed once).

The score of a module is killed / (total - equivalent); ``--fail-under`` (default 90) makes the exit
status non-zero when a module scores below it or a mutant survives without being recorded.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib.abc
import importlib.util
import json
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EQUIVALENT_FILE = Path(__file__).with_name("equivalent_mutants.txt")
OUT_DIR = REPO / "benchmarks" / "mutation"

#: module key -> (source path, test files). The ``test_mutants_<key>.py`` file is added when it exists.
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "superni": ("src/wobble/metrics/superni.py", ("tests/test_metrics_superni.py",)),
    "stats": ("src/wobble/stats.py", ("tests/test_stats.py",)),
    "seeding": ("src/wobble/seeding.py", ("tests/test_stats.py",)),
    "claims": ("src/wobble/report/claims.py", ("tests/test_claims.py",)),
    "extract_filters": ("src/wobble/extract/filters.py", ("tests/test_extract.py",)),
    "extract_pipeline": ("src/wobble/extract/pipeline.py", ("tests/test_extract.py",)),
    "first_token_metrics": ("src/wobble/studies/first_token/metrics.py", ("tests/test_first_token_metrics.py",)),
    "first_token_classify": ("src/wobble/studies/first_token/classify.py",
                             ("tests/test_first_token_classify.py",)),
    "instructions_perturb": ("src/wobble/studies/instructions/perturb.py", ("tests/test_instructions_perturb.py",)),
    "instructions_insert_replace": ("src/wobble/studies/instructions/insert_replace.py",
                                    ("tests/test_instructions_perturb.py",)),
    "icl_bias_features": ("src/wobble/studies/icl_bias/features.py", ("tests/test_icl_bias_features.py",)),
    "icl_bias_metrics": ("src/wobble/studies/icl_bias/metrics.py", ("tests/test_icl_bias_metrics.py",)),
    "first_token_judge": ("src/wobble/studies/first_token/judge.py",
                          ("tests/test_first_token_classify.py", "tests/test_first_token_prompts.py",
                           "tests/test_mutants_first_token_classify.py")),
    "followup_metrics": ("src/wobble/studies/followup/metrics.py", ("tests/test_followup_metrics.py",)),
    "followup_claims": ("src/wobble/studies/followup/claims.py", ("tests/test_followup_claims.py",
                                                                  "tests/test_claim_quotes.py")),
}

_BINOP_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
               ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.LShift: ast.RShift, ast.RShift: ast.LShift,
               ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitAnd}
_CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_NAME_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any"}


# ---------------------------------------------------------------------------------------- mutants

@dataclass
class Mutant:
    """One change to the module: where (walk index of the node), what (kind, before -> after)."""

    index: int          # position of the mutated node in :func:`_walk` order
    kind: str
    qualname: str
    line: int
    before: str
    after: str
    op: object = field(repr=False, default=None)  # (tree copy, node) -> None, applies the change
    id: str = ""

    @property
    def where(self) -> str:
        return f"L{self.line} {self.qualname}"

    def describe(self) -> str:
        return f"{self.where} [{self.kind}] {_short(self.before)} -> {_short(self.after)}"


def _short(s: str, n: int = 70) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


def _walk(tree: ast.AST) -> list[tuple[ast.AST, ast.AST | None, str | None, int | None, str, frozenset]]:
    """Every node in a fixed depth-first order: ``(node, parent, field, list index, qualname, context)``.

    ``context`` holds ``"skip"`` inside docstrings, annotations, ``Literal[...]``, decorators and ``__all__``, and
    ``"raise"`` inside a ``raise`` statement.
    """
    out = []

    def visit(node, parent, fld, idx, qual, ctx):
        out.append((node, parent, fld, idx, qual, ctx))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qual = f"{qual}.{node.name}" if qual != "<module>" else node.name
        for name, value in ast.iter_fields(node):
            sub = ctx
            if name in ("annotation", "returns", "decorator_list") or (
                    isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                         for t in node.targets)):
                sub = ctx | {"skip"}
            if isinstance(node, ast.Raise):
                sub = sub | {"raise"}
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
                sub = sub | {"skip"}  # a type: Literal["a", "b"]
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        item_ctx = sub
                        if (name == "body" and i == 0 and isinstance(item, ast.Expr)
                                and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)
                                and isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.ClassDef))):
                            item_ctx = sub | {"skip"}  # docstring
                        visit(item, node, name, i, qual, item_ctx)
            elif isinstance(value, ast.AST):
                visit(value, node, name, None, qual, sub)

    visit(tree, None, None, None, "<module>", frozenset())
    return out


def _replace(parent, fld, idx, new):
    if idx is None:
        setattr(parent, fld, new)
    else:
        getattr(parent, fld)[idx] = new


def _bound_before(func: ast.AST | None, name: str, line: int) -> bool:
    """Whether ``name`` is a parameter of ``func`` or assigned in it before ``line`` (a re-assignment)."""
    if func is None:
        return False
    args = func.args
    if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n.lineno < line
               for n in ast.walk(func))


def _enclosing_functions(tree: ast.AST) -> dict[int, ast.AST]:
    owner: dict[int, ast.AST] = {}
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(f):
                owner[id(n)] = f  # inner functions are walked later and overwrite
    return owner


def enumerate_mutants(source: str, relpath: str) -> list[Mutant]:
    """All mutants of ``source`` in a fixed order, each with a stable id (see :func:`_assign_ids`)."""
    tree = ast.parse(source)
    owner = _enclosing_functions(tree)
    muts: list[Mutant] = []

    def add(i, node, kind, qual, before, after, op):
        muts.append(Mutant(i, kind, qual, getattr(node, "lineno", 0), before, after, op))

    for i, (node, parent, fld, idx, qual, ctx) in enumerate(_walk(tree)):
        if "skip" in ctx:
            continue
        src = ast.unparse(node) if not isinstance(node, (ast.operator, ast.cmpop, ast.boolop)) else ""
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
            new = _BINOP_SWAP[type(node.op)]
            m = ast.BinOp(node.left, new(), node.right)
            add(i, node, "binop", qual, src, ast.unparse(m),
                lambda n, p, f, x, new=new: setattr(n, "op", new()))
        elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOP_SWAP:
            new = _BINOP_SWAP[type(node.op)]
            m = ast.AugAssign(node.target, new(), node.value)
            add(i, node, "augassign", qual, src, ast.unparse(m),
                lambda n, p, f, x, new=new: setattr(n, "op", new()))
        elif isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in _CMP_SWAP:
                    new = _CMP_SWAP[type(op)]
                    ops = list(node.ops)
                    ops[k] = new()
                    add(i, node, "compare", qual, src, ast.unparse(ast.Compare(node.left, ops, node.comparators)),
                        lambda n, p, f, x, k=k, new=new: n.ops.__setitem__(k, new()))
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            add(i, node, "boolop", qual, src, ast.unparse(ast.BoolOp(new(), node.values)),
                lambda n, p, f, x, new=new: setattr(n, "op", new()))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            add(i, node, "unary", qual, src, ast.unparse(node.operand),
                lambda n, p, f, x: _replace(p, f, x, n.operand))
        elif isinstance(node, ast.Constant) and not ("raise" in ctx and isinstance(node.value, str)):
            v = node.value
            if isinstance(v, bool):
                new_v = not v
            elif isinstance(v, int):
                new_v = v + 1
            elif isinstance(v, float):
                new_v = v + 1.0
            elif isinstance(v, str):
                new_v = f"XX{v}XX"
            else:
                continue
            add(i, node, "constant", qual, repr(v), repr(new_v), lambda n, p, f, x, new_v=new_v: setattr(n, "value", new_v))
        elif isinstance(node, ast.Name) and node.id in _NAME_SWAP and isinstance(node.ctx, ast.Load):
            new_id = _NAME_SWAP[node.id]
            add(i, node, "name", qual, node.id, new_id, lambda n, p, f, x, new_id=new_id: setattr(n, "id", new_id))
        if isinstance(node, ast.Call):
            for k, kw in enumerate(node.keywords):
                if kw.arg is not None:
                    m = copy.copy(node)
                    m.keywords = [w for j, w in enumerate(node.keywords) if j != k]
                    add(i, node, "keyword", qual, src, ast.unparse(m),
                        lambda n, p, f, x, k=k: n.keywords.__delitem__(k))
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            add(i, node, "return", qual, src, "return None", lambda n, p, f, x: setattr(n, "value", None))
        if isinstance(node, ast.stmt) and idx is not None and _deletable(node, owner.get(id(node))):
            add(i, node, "delete", qual, src, "pass", lambda n, p, f, x: _replace(p, f, x, ast.Pass()))
    _assign_ids(muts, relpath)
    return muts


def _deletable(node: ast.stmt, func: ast.AST | None) -> bool:
    if isinstance(node, ast.Expr):
        return not isinstance(node.value, ast.Constant)
    if isinstance(node, (ast.AugAssign, ast.Raise, ast.Break, ast.Continue)):
        return True
    if isinstance(node, ast.Assign) and func is not None:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        return bool(names) and all(_bound_before(func, n, node.lineno) for n in names)
    return False


def _assign_ids(muts: list[Mutant], relpath: str) -> None:
    """id = hash of (module, function, kind, before, after, n-th such change in that function): stable when
    unrelated code moves or changes."""
    seen: dict[tuple, int] = {}
    for m in muts:
        key = (relpath, m.qualname, m.kind, m.before, m.after)
        n = seen.get(key, 0)
        seen[key] = n + 1
        m.id = hashlib.sha1(repr((*key, n)).encode()).hexdigest()[:10]


def mutated_code(source: str, path: str, mutant: Mutant):
    """The compiled module with ``mutant`` applied (a fresh copy of the tree each time)."""
    tree = ast.parse(source)
    node, parent, fld, idx, _, _ = _walk(tree)[mutant.index]
    mutant.op(node, parent, fld, idx)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


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
        "module": relpath, "tests": tests, "total": len(valid), "killed": killed, "equivalent": eq,
        "survived": len(survivors), "score": round(100.0 * killed / denom, 1) if denom else 100.0,
        "baseline_s": round(base_s, 2), "wall_s": round(time.monotonic() - t0, 1),
        "survivors": [{"id": m.id, "where": m.where, "kind": m.kind, "before": _short(m.before, 200),
                       "after": _short(m.after, 200)} for m in survivors],
        "equivalent_ids": [m.id for m in valid if results[m.id] == "equivalent"],
    }


def _tests_for(key: str, tests: tuple[str, ...]) -> list[str]:
    extra = f"tests/test_mutants_{key}.py"
    found = [t for t in (*tests, extra) if (REPO / t).exists()]
    return found


def _markdown(summaries: list[dict]) -> str:
    lines = ["| module | mutants | killed | equivalent | survived | score |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for s in summaries:
        lines.append(f"| `{s['module']}` | {s['total']} | {s['killed']} | {s['equivalent']} | {s['survived']} | "
                     f"{s['score']:.1f} % |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"keys of TARGETS ({', '.join(TARGETS)}); default: all")
    ap.add_argument("--list", action="store_true", help="list the mutants (id, place, change) and exit")
    ap.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per mutant (default max(20, 5x baseline))")
    ap.add_argument("--only", nargs="*", default=None, help="test only these mutant ids")
    ap.add_argument("--fail-under", type=float, default=90.0, help="minimum score per module (default 90)")
    ap.add_argument("--keep-logs", action="store_true", help="keep every mutant's pytest log (default: survivors')")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/mutation/scores.*")
    args = ap.parse_args(argv)
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
    summaries, ok = [], True
    for k in keys:
        relpath, tests = TARGETS[k]
        if not (REPO / relpath).exists():
            print(f"{k}: {relpath} not present, skipped", file=sys.stderr)
            continue
        s = run_module(k, relpath, _tests_for(k, tests), jobs=args.jobs, timeout=args.timeout,
                       equivalent=equivalent, only=set(args.only) if args.only else None, logdir=logdir,
                       keep_logs=args.keep_logs)
        summaries.append(s)
        print(f"{k}: {s['killed']}/{s['total']} killed, {s['equivalent']} equivalent, {s['survived']} survived "
              f"-> {s['score']:.1f} % ({s['wall_s']} s)", flush=True)
        for sv in s["survivors"]:
            print(f"  SURVIVED {sv['id']} {sv['where']} [{sv['kind']}] {sv['before']} -> {sv['after']}", flush=True)
        ok = ok and s["score"] >= args.fail_under and not s["survivors"]
    if summaries and not args.no_write and not args.only:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        known = {}
        if (OUT_DIR / "scores.json").exists():
            known = {s["module"]: s for s in json.loads((OUT_DIR / "scores.json").read_text())}
        known.update({s["module"]: s for s in summaries})
        order = [TARGETS[k][0] for k in TARGETS]
        merged = [known[m] for m in order if m in known]
        (OUT_DIR / "scores.json").write_text(json.dumps(merged, indent=1) + "\n")
        (OUT_DIR / "scores.md").write_text(_markdown(merged))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
