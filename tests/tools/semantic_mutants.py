"""The semantic mutants of tests/tools/mutants.py: the mistakes people write by accident.

Each kind is one mistake a reviewer sees in real changes:

``guard``
    an operand of a condition's ``and``/``or`` dropped (``if x and y`` -> ``if x``) in ``if``, ``while``,
    ``assert``, a conditional expression or a comprehension's ``if``; or a whole guard dropped, an ``if``
    without ``else`` whose body then always runs (``if i == 0: text = head + text`` -> ``text = head + text``:
    a part meant for the first item repeated for every item; an ``if`` that ends in ``return``, ``break``,
    ``continue`` or ``raise`` is left to the kinds below and to ``delete``);
``early_return``
    an ``if`` without ``else`` whose body ends in ``return`` or ``break`` removed (the empty-input exit gone);
``filter``
    a comprehension's ``if`` clause removed, or a loop's ``if ...: continue`` removed;
``strmethod``
    a normalisation dropped from a chain (``s.strip()`` -> ``s``, ``s.lower()`` -> ``s``, ``col.str.strip()`` ->
    ``col``) or added (``.lower()`` after ``strip``/``lstrip``/``rstrip``, ``.strip()`` after
    ``lower``/``upper``/``casefold``);
``regex``
    in a pattern given to ``re`` or to wobble.extract's ``Regex`` filter, one anchor (``^``, ``$``, ``\\A``, ``\\Z``), word boundary (``\\b``, ``\\B``)
    or lookaround group (``(?=...)``, ``(?!...)``, ``(?<=...)``, ``(?<!...)``) removed. A pattern is a string
    in the pattern argument of such a call, or in the value of a name or comprehension variable used there;
    a whole pattern that no longer compiles after the change is not a mutant;
``slice``
    a slice bound (and the start or stop of a ``range(a, b)``) removed, moved by one (``x[a:b]`` ->
    ``x[a+1:b]``, ``x[a-1:b]``; a constant bound is only lowered, the ``constant`` kind raises it), or a
    window's offset dropped (``x[i - k:i + k]`` -> ``x[i:i + k]``, also inside ``max``/``min``);
``repeat``
    a part meant once repeated per item: ``head + sep.join(f(s) for s in shots)`` ->
    ``sep.join(head + f(s) for s in shots)`` (and the part after), or the method-call or ``+=`` statement just
    before or after a ``for`` loop moved into its body.

None of them is made inside a ``raise`` statement or where the syntactic kinds are not (docstrings,
annotations, decorators, ``__all__``). :func:`semantic_mutants` lists them for one node of the walk.
"""

from __future__ import annotations

import ast
import re

_RE_MODULES = {"re", "regex"}
_RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
_PATTERN_CLASSES = {"Regex"}  # wobble.extract's regex filter: Regex(pattern, ...)
_DROP_METHODS = {"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize"}
_ADD_AFTER = {"strip": "lower", "lstrip": "lower", "rstrip": "lower", "lower": "strip", "upper": "strip",
              "casefold": "strip"}
_LOOKAROUNDS = ("(?<=", "(?<!", "(?=", "(?!")


# ------------------------------------------------------------------------------------ pre-pass

class Context:
    """What the semantic kinds need to know about the whole module: which nodes are condition operands,
    regex pattern strings and window offsets (by ``id`` of the node in the tree being enumerated)."""

    def __init__(self, tree: ast.AST):
        self.guards: set[int] = set()
        self.regex: dict[int, bool] = {}   # id of a str constant -> whether it is the whole pattern
        self.windows: set[int] = set()
        self._conditions(tree)
        self._patterns(tree)
        self._window_offsets(tree)

    def _conditions(self, tree):
        def collect(test):
            if isinstance(test, ast.BoolOp):
                self.guards.add(id(test))
                for v in test.values:
                    collect(v)
            elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                collect(test.operand)

        for n in ast.walk(tree):
            if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                collect(n.test)
            elif isinstance(n, ast.comprehension):
                for c in n.ifs:
                    collect(c)

    def _patterns(self, tree):
        def strings(expr, whole):
            if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
                self.regex.setdefault(id(expr), whole)
                return
            if isinstance(expr, ast.Call) and _is_re_call(expr, {"escape"}):
                return  # re.escape's argument is literal text, not a pattern
            if isinstance(expr, ast.Name) and isinstance(expr.ctx, ast.Load):
                names.add(expr.id)
            for child in ast.iter_child_nodes(expr):
                strings(child, False)

        names: set[str] = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and (_is_re_call(n, _RE_FUNCS) or _is_pattern_class(n)):
                arg = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg == "pattern"), None)
                if arg is not None:
                    strings(arg, True)
        done: set[str] = set()
        while names - done:
            name = sorted(names - done)[0]
            done.add(name)
            for n in ast.walk(tree):
                if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
                    strings(n.value, isinstance(n.value, ast.Constant))
                elif isinstance(n, ast.comprehension) and isinstance(n.target, ast.Name) and n.target.id == name:
                    for item in getattr(n.iter, "elts", [n.iter]):
                        strings(item, isinstance(item, ast.Constant))

    def _window_offsets(self, tree):
        def mark(bound):
            if isinstance(bound, ast.BinOp) and isinstance(bound.op, (ast.Add, ast.Sub)):
                self.windows.add(id(bound))
            elif isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name) and bound.func.id in ("min", "max"):
                for a in bound.args:
                    mark(a)

        for n in ast.walk(tree):
            if isinstance(n, ast.Slice):
                for b in (n.lower, n.upper):
                    mark(b)
            elif _is_range(n):
                for b in n.args[:2]:
                    mark(b)


def _is_re_call(node: ast.Call, funcs: set[str]) -> bool:
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr in funcs and isinstance(f.value, ast.Name)
            and f.value.id in _RE_MODULES)


def _is_pattern_class(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Name) and f.id in _PATTERN_CLASSES) or (
        isinstance(f, ast.Attribute) and f.attr in _PATTERN_CLASSES)


def _is_range(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and len(node.args) >= 2 and not node.keywords)


# ------------------------------------------------------------------------------------ regex edits

def regex_edits(pattern: str) -> list[tuple[str, str]]:
    """``(what is removed, the pattern without it)`` for each anchor, boundary and lookaround group of
    ``pattern``, left to right (character classes and escapes are read, never edited inside)."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 < n and pattern[i + 1] in "bBAZ":
                spans.append((i, i + 2))
            i += 2
        elif c == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif c == "(":
            stack.append((i, pattern.startswith(_LOOKAROUNDS, i)))
            i += 1
        elif c == ")":
            if stack:
                start, look = stack.pop()
                if look:
                    spans.append((start, i + 1))
            i += 1
        else:
            if c in "^$":
                spans.append((i, i + 1))
            i += 1
    return [(pattern[a:b], pattern[:a] + pattern[b:]) for a, b in sorted(spans)]


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


# ------------------------------------------------------------------------------------ the kinds

def replace_node(parent, fld, idx, new):
    """Put ``new`` where ``parent.fld`` (``parent.fld[idx]`` in a list field) was."""
    if idx is None:
        setattr(parent, fld, new)
    else:
        getattr(parent, fld)[idx] = new


def _drop_operand(node: ast.BoolOp, k: int) -> ast.expr:
    rest = [v for j, v in enumerate(node.values) if j != k]
    return rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)


def _exits(stmt: ast.stmt, types) -> bool:
    return isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], types)


def _movable(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.AugAssign) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                                               and isinstance(stmt.value.func, ast.Attribute))


def _join_of_comprehension(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)))


def _per_item(join: ast.Call, part: ast.expr, before: bool) -> ast.Call:
    comp = join.args[0]
    elt = ast.BinOp(part, ast.Add(), comp.elt) if before else ast.BinOp(comp.elt, ast.Add(), part)
    return ast.Call(join.func, [type(comp)(elt, comp.generators)], [])


def _shift(bound: ast.expr, step: int) -> ast.expr:
    if isinstance(bound, ast.Constant) and isinstance(bound.value, int) and not isinstance(bound.value, bool):
        return ast.Constant(bound.value + step)
    return ast.BinOp(bound, ast.Add() if step > 0 else ast.Sub(), ast.Constant(1))


def _bound_changes(bound: ast.expr | None) -> list[tuple[str, object]]:
    """``(label, make)`` for a slice or range bound: moved up and down by one (a constant only down)."""
    if bound is None:
        return []
    constant = isinstance(bound, ast.Constant)
    return [(s, lambda b, s=s: _shift(b, s)) for s in ((-1,) if constant else (1, -1))]


def semantic_mutants(node, parent, fld, idx, ctx: Context, add) -> None:
    """Call ``add(kind, before, after, op)`` for each semantic mutant of ``node`` (``op(node, parent, field,
    index)`` applies it to a fresh copy of the tree)."""
    src = ast.unparse(node) if isinstance(node, (ast.expr, ast.stmt)) else ""
    if isinstance(node, ast.BoolOp) and id(node) in ctx.guards:
        for k in range(len(node.values)):
            add("guard", src, ast.unparse(_drop_operand(node, k)),
                lambda n, p, f, x, k=k: replace_node(p, f, x, _drop_operand(n, k)))
    if isinstance(node, ast.If) and idx is not None and not node.orelse and not isinstance(
            node.body[-1], (ast.Return, ast.Break, ast.Continue, ast.Raise)):
        add("guard", src, "\n".join(ast.unparse(b) for b in node.body),
            lambda n, p, f, x: getattr(p, f).__setitem__(slice(x, x + 1), n.body))
    if isinstance(node, ast.stmt) and idx is not None and _exits(node, (ast.Return, ast.Break)):
        add("early_return", src, "pass", lambda n, p, f, x: replace_node(p, f, x, ast.Pass()))
    if isinstance(node, ast.stmt) and idx is not None and _exits(node, ast.Continue):
        add("filter", src, "pass", lambda n, p, f, x: replace_node(p, f, x, ast.Pass()))
    if isinstance(node, ast.comprehension):
        for k, cond in enumerate(node.ifs):
            after = ast.comprehension(node.target, node.iter, [c for j, c in enumerate(node.ifs) if j != k],
                                      node.is_async)
            add("filter", ast.unparse(ast.GeneratorExp(ast.Name("_"), [node])),
                ast.unparse(ast.GeneratorExp(ast.Name("_"), [after])),
                lambda n, p, f, x, k=k: n.ifs.__delitem__(k))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DROP_METHODS:
        recv = node.func.value
        if not (isinstance(recv, ast.Name) and recv.id == "str"):
            accessor = isinstance(recv, ast.Attribute) and recv.attr == "str"
            kept = recv.value if accessor else recv
            add("strmethod", src, ast.unparse(kept),
                lambda n, p, f, x, a=accessor: replace_node(p, f, x, n.func.value.value if a else n.func.value))
            extra = _ADD_AFTER.get(node.func.attr)
            if extra:
                add("strmethod", src, ast.unparse(_chain(node, extra, accessor)),
                    lambda n, p, f, x, e=extra, a=accessor: replace_node(p, f, x, _chain(n, e, a)))
    if isinstance(node, ast.Constant) and id(node) in ctx.regex and isinstance(node.value, str):
        whole = ctx.regex[id(node)]
        checked = not whole and _compiles(node.value)
        for removed, new in regex_edits(node.value):
            if (whole or checked) and not _compiles(new):
                continue
            add("regex", repr(node.value), repr(new), lambda n, p, f, x, new=new: setattr(n, "value", new))
    if isinstance(node, ast.Slice) and isinstance(parent, ast.Subscript):
        for name in ("lower", "upper"):
            bound = getattr(node, name)
            if bound is None or (name == "lower" and isinstance(bound, ast.Constant) and bound.value == 0):
                continue
            whole = ast.unparse(parent)
            add("slice", whole, _slice_src(parent, node, **{name: None}),
                lambda n, p, f, x, name=name: setattr(n, name, None))
            for _, make in _bound_changes(bound):
                add("slice", whole, _slice_src(parent, node, **{name: make(bound)}),
                    lambda n, p, f, x, name=name, make=make: setattr(n, name, make(getattr(n, name))))
    if _is_range(node):
        if len(node.args) == 2:
            add("slice", src, ast.unparse(ast.Call(node.func, node.args[1:], [])),
                lambda n, p, f, x: n.args.__delitem__(0))
        for k in (0, 1):
            for _, make in _bound_changes(node.args[k]):
                args = list(node.args)
                args[k] = make(node.args[k])
                add("slice", src, ast.unparse(ast.Call(node.func, args, [])),
                    lambda n, p, f, x, k=k, make=make: n.args.__setitem__(k, make(n.args[k])))
    if isinstance(node, ast.BinOp) and id(node) in ctx.windows:
        add("slice", src, ast.unparse(node.left), lambda n, p, f, x: replace_node(p, f, x, n.left))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for before, join, part in ((True, node.right, node.left), (False, node.left, node.right)):
            if _join_of_comprehension(join):
                add("repeat", src, ast.unparse(_per_item(join, part, before)),
                    lambda n, p, f, x, b=before: replace_node(p, f, x, _per_item(n.right if b else n.left,
                                                                               n.left if b else n.right, b)))
    if isinstance(node, ast.For) and idx is not None:
        body = getattr(parent, fld)
        head = f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}"
        if idx > 0 and _movable(body[idx - 1]):
            moved = ast.unparse(body[idx - 1])
            add("repeat", f"{moved}; {head}: ...", f"{head}: {moved}; ...",
                lambda n, p, f, x: _move_into(n, getattr(p, f), x - 1, 0))
        if idx + 1 < len(body) and _movable(body[idx + 1]):
            moved = ast.unparse(body[idx + 1])
            add("repeat", f"{head}: ...\n{moved}", f"{head}: ...; {moved}",
                lambda n, p, f, x: _move_into(n, getattr(p, f), x + 1, len(n.body)))


def _chain(node: ast.Call, extra: str, accessor: bool) -> ast.Call:
    recv = ast.Attribute(node, "str", ast.Load()) if accessor else node
    return ast.Call(ast.Attribute(recv, extra, ast.Load()), [], [])


def _slice_src(sub: ast.Subscript, node: ast.Slice, **change) -> str:
    s = ast.Slice(change.get("lower", node.lower), change.get("upper", node.upper), node.step)
    return ast.unparse(ast.Subscript(sub.value, s, ast.Load()))


def _move_into(loop: ast.For, body: list, k: int, at: int) -> None:
    loop.body.insert(at, body[k])
    body[k] = ast.Pass()
