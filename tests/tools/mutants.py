"""The mutants of a module for tests/tools/mutate.py: a pure function of its source.

:func:`enumerate_mutants` walks the parsed source in a fixed depth-first order and lists every change the
mutation run tries (operators, comparisons, boolean operators, constants, min/max and any/all, a keyword
argument dropped, a return value replaced by ``None``, one statement removed, and the semantic kinds of
tests/tools/semantic_mutants.py), each with an id that stays the same when unrelated code moves;
:func:`mutated_code` compiles the module with one of them applied.
What is never mutated (docstrings, annotations, decorators, ``__all__``, ``raise`` message text) is listed
in mutate.py's docstring.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from dataclasses import dataclass, field

from semantic_mutants import Context, replace_node as _replace, semantic_mutants  # tests/tools/semantic_mutants.py

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
        return f"{self.where} [{self.kind}] {short(self.before)} -> {short(self.after)}"


def short(s: str, n: int = 70) -> str:
    """``s`` on one line, cut to ``n`` characters."""
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
    semantic = Context(tree)
    muts: list[Mutant] = []

    def add(i, node, kind, qual, before, after, op):
        line = getattr(node, "lineno", None) or getattr(getattr(node, "target", None), "lineno", 0)
        muts.append(Mutant(i, kind, qual, line, before, after, op))

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
        if "raise" not in ctx:
            semantic_mutants(node, parent, fld, idx, semantic,
                             lambda kind, before, after, op, i=i, node=node, qual=qual:
                             add(i, node, kind, qual, before, after, op))
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
