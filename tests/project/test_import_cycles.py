"""No import circles in ``src/wobble``: every ``import``/``from ... import`` of a wobble module is an edge between two
modules, at module level, deferred inside a function or under ``if TYPE_CHECKING:`` (a deferred or type-only import
is how a circle hides); a strongly connected component of more than one module is a circle.

``from wobble.a import b`` is an edge to ``wobble.a.b`` when that is a module, else to ``wobble.a`` (the package's
``__init__``); relative imports are resolved the same way. Circles that still exist are listed in
:data:`KNOWN_CYCLES`, each as the set of its modules; a new one fails, and so does a listed one that is gone
(remove it from the list)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

#: Circles that exist and are being taken apart; this list only shrinks.
KNOWN_CYCLES: tuple[frozenset[str], ...] = (
    frozenset({"wobble.report.claims", "wobble.report.ledger"}),  # Findings.ledger() imports ledger_rows deferred
)


def modules(src: Path = SRC) -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of the wobble package (a package as its ``__init__``)."""
    out = {}
    for path in sorted((src / "wobble").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a known module (``wobble.a.b.func`` -> ``wobble.a.b``)."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """``{module: modules it imports}`` over wobble's modules."""
    graph: dict[str, set[str]] = {m: set() for m in known}
    for mod, path in known.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                names = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = _target(name, known)
                if target is not None and target != mod:
                    graph[mod].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Tarjan's strongly connected components of more than one node (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.add(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _show(cycle: frozenset[str]) -> str:
    return " <-> ".join(sorted(cycle))


def test_the_graph_sees_deferred_relative_and_type_only_imports(tmp_path):
    pkg = tmp_path / "wobble"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .a import f\n")
    (pkg / "sub" / "a.py").write_text("def f():\n    from wobble.sub import b\n    return b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import wobble.c\n"
                                      "from . import a\n")
    (pkg / "c.py").write_text("import wobble.sub.b as b\nimport wobble.missing\n")
    known = modules(tmp_path)
    graph = import_graph(known)
    assert graph["wobble.sub"] == {"wobble.sub.a"}
    assert graph["wobble.sub.a"] == {"wobble.sub.b"}  # deferred, and `from package import module`
    assert graph["wobble.sub.b"] == {"wobble.c", "wobble.sub.a"}  # type-only, and relative
    assert graph["wobble.c"] == {"wobble.sub.b", "wobble"}  # no such module: its package
    assert strongly_connected(graph) == [frozenset({"wobble.sub.a", "wobble.sub.b", "wobble.c"})]


def test_wobble_has_no_import_circle_beyond_the_known_ones():
    cycles = strongly_connected(import_graph(modules()))
    new = [_show(c) for c in cycles if c not in KNOWN_CYCLES]
    assert new == [], "import circle(s) in src/wobble: " + "; ".join(new)


def test_every_known_circle_still_exists():
    cycles = set(strongly_connected(import_graph(modules())))
    gone = [_show(c) for c in KNOWN_CYCLES if c not in cycles]
    assert gone == [], "no longer a circle (remove from KNOWN_CYCLES): " + "; ".join(gone)


def test_the_backends_have_no_circle_at_all():
    cycles = strongly_connected(import_graph(modules()))
    assert [_show(c) for c in cycles if any(m.startswith("wobble.backends") for m in c)] == []
