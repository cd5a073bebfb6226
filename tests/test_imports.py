"""The import graph between the runtime's subpackages: no cycles, and no textual.

The graph is built from the source with ``ast`` (nothing is imported), counting imports inside
functions as well as at the top, and ``importlib.import_module("macaron_local....")`` with a
literal name. A node is one top-level part of ``macaron_local`` (``engine``, ``store``,
``turns``, ... and the top-level modules such as ``errors`` or ``facade``); ``from
macaron_local import Name`` counts as an import of the module the facade resolves Name from.

The command-line modules (``cli.py``, ``*_cli.py`` and ``__main__.py`` of every package, and
the top-level ``cli``) are one node, ``cli``: the edge, which may import anything and which
nothing imports (the top-level command group loads them by name, when a command runs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import macaron_local

PACKAGE = Path(macaron_local.__file__).parent
ROOT = "macaron_local"

# Cycles still to break, each written from its smallest node name; the test fails when one is
# broken and still listed, so this set only shrinks.
KNOWN_CYCLES: set[tuple[str, ...]] = set()  # none left: a new one fails the test


@dataclass(frozen=True)
class Edge:
    """One import that makes ``source`` depend on ``target``, with where it is written."""

    source: str
    target: str
    where: str


def _facade_exports() -> dict[str, str]:
    """The ``_EXPORTS`` table of the package's ``__init__``: public name -> module."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets
        ):
            return dict(ast.literal_eval(node.value))
    return {}


def _is_cli(module: str) -> bool:
    last = module.split(".")[-1]
    return last in ("cli", "__main__") or last.endswith("_cli")


def _node_of(module: str) -> str | None:
    """The graph node of a dotted module name, or None when it is outside the package."""
    parts = module.split(".")
    if parts[0] != ROOT or len(parts) == 1:
        return None
    return "cli" if _is_cli(module) else parts[1]


def _module_name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The dotted name an ``ImportFrom`` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Every dotted module name a file imports, anywhere in it, with its line."""
    exports = _facade_exports()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            for alias in node.names:
                if source == ROOT:
                    yield exports.get(alias.name, f"{ROOT}.{alias.name}"), node.lineno
                else:
                    yield f"{source}.{alias.name}", node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno


def runtime_files() -> list[Path]:
    """The runtime's source files: the package minus the TUI (installed apart from it)."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "tui" not in p.relative_to(PACKAGE).parts)


def import_edges() -> list[Edge]:
    """Every import between two different nodes of the runtime."""
    edges = []
    for path in runtime_files():
        module = _module_name(path)
        source = _node_of(module) if module != ROOT else None
        tree = ast.parse(path.read_text(), str(path))
        for name, line in _imported(tree, module, path.name == "__init__.py"):
            target = _node_of(name)
            if source and target and target != source and target != "tui":
                edges.append(Edge(source, target, f"{path.relative_to(PACKAGE.parent)}:{line}"))
    return edges


def _canonical(cycle: list[str]) -> tuple[str, ...]:
    start = cycle.index(min(cycle))
    return tuple(cycle[start:] + cycle[:start])


def simple_cycles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """All elementary cycles of a small directed graph, each from its smallest node."""
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                found.add(_canonical(path))
            elif nxt > start and nxt not in path:
                walk(start, nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def _graph(edges: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
    return graph


def _explain(cycle: tuple[str, ...], edges: list[Edge]) -> str:
    lines = [" -> ".join([*cycle, cycle[0]])]
    for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
        where = sorted(e.where for e in edges if (e.source, e.target) == (a, b))
        lines.append(f"  {a} -> {b}: {', '.join(where)}")
    return "\n".join(lines)


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    edges = import_edges()
    nodes = {e.source for e in edges} | {e.target for e in edges}
    assert {"engine", "store", "hcp", "turns", "errors", "cli"} <= nodes
    tree = ast.parse("def f():\n    from ..engine import Engine\n    import macaron_local.store\n")
    names = [name for name, _ in _imported(tree, "macaron_local.turns.route", False)]
    assert names == ["macaron_local.engine.Engine", "macaron_local.store"]


def test_cycle_finder_finds_every_elementary_cycle() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"a"}, "d": {"a"}}
    assert simple_cycles(graph) == {("a", "b"), ("a", "b", "c")}


def test_no_import_cycle_between_subpackages() -> None:
    edges = import_edges()
    cycles = simple_cycles(_graph(edges))
    new = sorted(cycles - KNOWN_CYCLES)
    assert not new, "import cycles between subpackages:\n" + "\n".join(
        _explain(c, edges) for c in new
    )
    stale = sorted(KNOWN_CYCLES - cycles)
    assert not stale, f"cycles broken since (drop them from KNOWN_CYCLES): {stale}"


def test_nothing_but_the_command_line_imports_the_command_line() -> None:
    # ``from macaron_local.cli import edge`` inside one package's cli.py is fine; a runtime
    # module that reaches for a command would make the edge a dependency of the core
    offenders = []
    for path in runtime_files():
        module = _module_name(path)
        if _is_cli(module):
            continue
        tree = ast.parse(path.read_text(), str(path))
        for name, line in _imported(tree, module, path.name == "__init__.py"):
            if name.startswith(f"{ROOT}.") and any(_is_cli(m) for m in _prefixes(name)):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    assert not offenders, "\n".join(offenders)


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts) + 1)]


def test_runtime_never_imports_textual_or_the_tui() -> None:
    """Static twin of test_facade's import check: it also sees imports inside functions.

    Only the CLI's entry point may start the TUI, and it does so inside the command.
    """
    offenders = []
    for path in runtime_files():
        module = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        for name, line in _imported(tree, module, path.name == "__init__.py"):
            ui = name.split(".")[0] == "textual" or name.startswith(f"{ROOT}.tui")
            if ui and not (module == f"{ROOT}.cli" and name.startswith(f"{ROOT}.tui")):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    assert not offenders, "\n".join(offenders)
