"""kronika's modules import each other without circles, and only down the floors of
the house (core and ports, stores and providers, engine, memory, workflows, the
composition root, the interfaces).

Every import counts: at the top of a module, inside a function, and under
``TYPE_CHECKING`` (a type is a dependency too). A circle means two modules can only
be understood, tested and moved together; this test names the modules of any circle
so the import that closed it can be found.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((SRC / "kronika").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                targets.add(submodule if submodule in modules else origin)
    edges = set()
    for target in targets:
        while target and target not in modules:  # kronika.x.y.attr -> kronika.x.y
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_whole() -> None:
    edges = graph()
    assert len(edges) > 200
    # imports of every kind are edges: top level, in a function, under TYPE_CHECKING
    assert "kronika.server.routes" in edges["kronika.server.app"]
    assert "kronika.server.app" in edges["kronika.server.run"]  # inside a function
    assert "kronika.memory" in edges["kronika.workflows.jobs"]  # under TYPE_CHECKING


def test_a_circle_is_found_when_there_is_one() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_kronika_is_in_an_import_circle() -> None:
    found = circles(graph())
    assert not found, "import circles (each list imports itself around):\n" + "\n".join(
        " -> ".join(component) for component in found
    )


FLOORS = {
    "core": 0,
    "errors": 0,
    "ports": 1,
    "prompts": 1,
    "settings": 1,
    "stores": 2,
    "providers": 2,
    "importers": 2,
    "engine": 3,
    "memory": 4,
    "wire": 4,
    "workflows": 5,
    "app": 6,
    "testing": 6,
    "client": 7,
    "cli": 7,
    "server": 7,
    "bench": 7,
    "__main__": 7,
}
"""Floors of the house, lowest first: a module imports its own floor and those below."""

UPSTAIRS_FOR_NOW: set[tuple[str, str]] = set()
"""The imports up a floor still there; the list may only shrink (it is empty: keep it so)."""

PUBLIC_FACE = FLOORS["app"]
"""The floor of ``kronika`` itself, the names it offers: the composition root's, as
each name's home is there or below, so the interfaces (``kronika bench`` above all)
take what a user takes."""


def _floor(module: str) -> int:
    parts = module.split(".")
    return FLOORS[parts[1]] if len(parts) > 1 else PUBLIC_FACE


def test_every_module_is_on_a_floor() -> None:
    assert all(len(m.split(".")) == 1 or m.split(".")[1] in FLOORS for m in graph())


def test_no_module_imports_a_floor_above_its_own() -> None:
    upward = {
        (module, target)
        for module, targets in graph().items()
        for target in targets
        if _floor(target) > _floor(module)
    }
    assert upward <= UPSTAIRS_FOR_NOW, "imports up a floor:\n" + "\n".join(
        f"{a} -> {b}" for a, b in sorted(upward - UPSTAIRS_FOR_NOW)
    )
    assert upward >= UPSTAIRS_FOR_NOW, "gone from the code, take them off the list: " + str(
        sorted(UPSTAIRS_FOR_NOW - upward)
    )


def test_an_old_path_of_a_moved_module_has_no_file_and_names_a_module_that_exists() -> None:
    """The paths of :data:`kronika.MOVED` are answered by kronika's finder, not by a file
    at the old place, so no lower floor imports a higher one for them; each names a
    module of the house, on a floor above the old path's."""
    from kronika import MOVED

    modules = _modules()
    assert MOVED, "the table of moved modules is empty: remove the finder with it"
    for old, new in MOVED.items():
        assert old not in modules, f"{old} is a file again: the finder would never answer"
        assert new in modules, f"{old} names {new}, which is not a module of kronika"
        assert _floor(new) >= _floor(old), (old, new)
