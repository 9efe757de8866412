"""No import circles in ``src/wobble``, and no import that runs up the house: every ``import``/``from ... import``
of a wobble module is an edge between two modules, at module level, deferred inside a function or under
``if TYPE_CHECKING:`` (a deferred or type-only import is how a circle or an upward edge hides); a strongly connected
component of more than one module is a circle.

``from wobble.a import b`` is an edge to ``wobble.a.b`` when that is a module, else to ``wobble.a`` (the package's
``__init__``); relative imports are resolved the same way. Circles that still exist are listed in
:data:`KNOWN_CYCLES`, each as the set of its modules; a new one fails, and so does a listed one that is gone
(remove it from the list).

Why layers: a module-level circle is only the tightest knot. Two packages that import each other through different
modules (models importing backends while backends imports models) form no module circle, yet neither can be read,
tested or changed without the other. :data:`LAYERS` says, once, which part of wobble (a subpackage or a top-level
module) stands on which: a part imports only parts of lower layers, never a higher one and never a peer of its own
layer, so the parts form a house whose floors can be read from the ground up."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

#: wobble's parts, lowest layer first. A part is a subpackage or a top-level module of wobble (``wobble``: the
#: package's own ``__init__``); it imports only parts of the layers below its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("wobble", "errors", "paths", "seeding", "stats", "threads"),  # basics that import no other part
    ("io",),  # files: JSON(L), hashes, atomic writes
    ("adapters", "data", "extract", "metrics", "provenance", "report", "resume"),  # the pieces studies are built of
    ("models",),  # model specs: materialize, load, size, fit, pin, a server: block's rules
    ("backends", "training"),  # what runs a model: inference backends, finetuning
    ("probe", "runner"),  # inference over a backend
    ("studies",),  # the studies and their registry
    ("resolve",),  # a config file -> the whole run it describes (knows the registered studies)
    ("config",),  # validation: the schema and the cross-checks over studies, models, data and servers
    ("cost", "landing", "preflight", "snake"),  # what the Snakefile, the report and check-config call
    ("cli",),  # the wobble command
)

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


def part(module: str) -> str:
    """The part of wobble a module belongs to: ``wobble.models.load`` -> ``models``, ``wobble`` -> ``wobble``."""
    return module.split(".")[1] if "." in module else module


def layer_breaches(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """``"a -> b (part layer i -> part layer j)"`` for every import from a part to one of its own layer or above."""
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    out = []
    for mod in sorted(graph):
        for target in sorted(graph[mod]):
            here, there = part(mod), part(target)
            if here != there and rank[here] <= rank[there]:
                out.append(f"{mod} -> {target} ({here} layer {rank[here]} -> {there} layer {rank[there]})")
    return out


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


def _package(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    """The import graph of a made-up ``wobble`` package under ``root``: ``files`` maps a path inside it to its text."""
    for name, text in {"__init__.py": "", **files}.items():
        path = root / "wobble" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_graph(modules(root))


def test_the_graph_sees_deferred_relative_and_type_only_imports(tmp_path):
    graph = _package(tmp_path, {
        "sub/__init__.py": "from .a import f\n",
        "sub/a.py": "def f():\n    from wobble.sub import b\n    return b\n",
        "sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import wobble.c\nfrom . import a\n",
        "c.py": "import wobble.sub.b as b\nimport wobble.missing\n",
    })
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


def test_the_layer_check_sees_upward_peer_deferred_and_type_only_imports(tmp_path):
    graph = _package(tmp_path, {
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from wobble import high\n    return high\n",
        "low/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import wobble.peer\n",
        "peer.py": "",
        "high.py": "from wobble.low import a\n",
    })
    layers = (("wobble",), ("low", "peer"), ("high",))
    assert layer_breaches(graph, layers) == [
        "wobble.low.a -> wobble.high (low layer 1 -> high layer 2)",  # deferred, and upward
        "wobble.low.b -> wobble.peer (low layer 1 -> peer layer 1)",  # type-only, and across a layer
    ]


def test_every_part_of_wobble_is_in_one_layer():
    parts = sorted({part(m) for m in modules()})
    declared = [name for layer in LAYERS for name in layer]
    assert sorted(set(declared)) == sorted(declared), "a part is declared in two layers"
    assert sorted(declared) == parts, ("place each new part of wobble in LAYERS (and drop one that is gone): "
                                       f"missing {sorted(set(parts) - set(declared))}, "
                                       f"gone {sorted(set(declared) - set(parts))}")


def test_no_import_runs_up_the_layers():
    breaches = layer_breaches(import_graph(modules()))
    assert breaches == [], "imports from a part to its own layer or above (LAYERS): " + "; ".join(breaches)
