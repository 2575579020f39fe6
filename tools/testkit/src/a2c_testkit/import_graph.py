"""The import graph of one package's own modules, and its cycles (for layout tests).

Edges come from the source (``ast``), so an import under ``if TYPE_CHECKING:`` counts too:
a circle only the type checker sees is still a circle a reader has to walk.
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["find_cycles", "import_graph", "private_imports"]


def _module_name(package: str, root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _resolve(current: str, is_package: bool, node: ast.ImportFrom, files: set[str]) -> set[str]:
    """The modules ``from ... import ...`` loads: ``stem.name`` when that is a module, else stem.

    (``from . import _x`` depends on ``_x``, not on the package's ``__init__``.)"""
    if node.level:
        base = current.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
    else:
        stem = node.module or ""
    return {
        f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in files else stem for alias in node.names
    }


def import_graph(package: str, root: Path) -> dict[str, set[str]]:
    """``module -> modules of the same package it imports``, for every ``.py`` under ``root``.

    ``root`` is the package directory (the one holding ``__init__.py``).
    """
    files = {_module_name(package, root, p): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                targets = _resolve(name, is_package, node, set(files))
            elif isinstance(node, ast.Import):
                targets = {alias.name for alias in node.names}
            else:
                continue
            for target in targets:
                if target in files and target != name:
                    graph[name].add(target)
    return graph


def private_imports(package: str, root: Path) -> list[str]:
    """``module:line name`` for each private name one module takes from another of the package.

    A private module (``from . import _x``) is how modules reach each other here and counts
    as public between them; a private *name* inside a module (``from ._x import _helper``)
    is that module's own business, and a sibling that needs it should get a public name.
    """
    files = {_module_name(package, root, p): p for p in sorted(root.rglob("*.py"))}
    found: list[str] = []
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if not node.level and not (node.module or "").startswith(package):
                continue
            stems = _resolve(name, is_package, node, set(files))
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and not any(s.endswith(f".{alias.name}") for s in stems):
                    found.append(f"{name}:{node.lineno} {alias.name}")
    return found


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)
