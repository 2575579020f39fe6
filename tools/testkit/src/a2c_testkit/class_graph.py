"""Who owns state in a package: its classes and their project bases (for layout tests).

Read from the source (``ast``), so nothing is imported. The rules it reports on:

- no class named ``*Mixin``: behaviour shared by inheriting over one bag of attributes is a
  mixin whatever it is called, but the name is the usual tell;
- no method stub under ``if TYPE_CHECKING:`` in a class body: a stub declared so that one
  part of a class can call another part that lives in a sibling class;
- no class on two project base classes (a diamond of the package's own classes);
- project inheritance chains of at most ``max_chain`` classes, the class itself included,
  outside exception trees (a chain that reaches a class named ``*Error`` / ``*Exception`` /
  ``*Warning``, or a base not defined in the package that is so named).

A base counts as a project class when a class of that name is defined anywhere in the
package (by its simple name; a name defined twice counts as both, which can only make the
check stricter). Generic subscripts (``Base[T]``) and dotted names (``mod.Base``) are read by
their last name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import attrs

__all__ = ["ClassInfo", "classes_of", "ownership_problems"]

_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning")


@attrs.frozen
class ClassInfo:
    """One class: where it is, its bases by name, and whether it declares stubs for type checks."""

    name: str
    where: str
    bases: tuple[str, ...]
    type_checking_methods: tuple[str, ...]


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):
        return _base_name(node.value)
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _stubs(body: list[ast.stmt]) -> Iterator[str]:
    for stmt in body:
        if isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield inner.name


def classes_of(src: Path) -> list[ClassInfo]:
    """Every class defined in a ``.py`` under ``src`` (nested ones too)."""
    found: list[ClassInfo] = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = tuple(b for b in map(_base_name, node.bases) if b is not None)
                found.append(
                    ClassInfo(
                        name=node.name,
                        where=f"{path.relative_to(src)}:{node.lineno}",
                        bases=bases,
                        type_checking_methods=tuple(_stubs(node.body)),
                    )
                )
    return found


def ownership_problems(src: Path, *, max_chain: int = 3) -> list[str]:
    """One sentence per class of ``src`` that breaks a rule of the module docstring."""
    classes = classes_of(src)
    by_name: dict[str, list[ClassInfo]] = {}
    for info in classes:
        by_name.setdefault(info.name, []).append(info)

    def project_bases(info: ClassInfo) -> list[str]:
        return [b for b in info.bases if b in by_name and b != info.name]

    def in_exception_tree(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name.endswith(_EXCEPTION_SUFFIXES):
            return True
        if name in seen or name not in by_name:
            return False
        return any(
            in_exception_tree(base, seen | {name}) for info in by_name[name] for base in info.bases
        )

    def chain(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name in seen or name not in by_name:
            return 0
        longest = max(
            (chain(base, seen | {name}) for info in by_name[name] for base in project_bases(info)),
            default=0,
        )
        return 1 + longest

    problems: list[str] = []
    for info in classes:
        if info.name.endswith("Mixin"):
            problems.append(f"{info.where}: class {info.name} is a mixin")
        if info.type_checking_methods:
            stubs = ", ".join(info.type_checking_methods)
            said = f"{info.name} declares stubs under TYPE_CHECKING: {stubs}"
            problems.append(f"{info.where}: {said}")
        bases = project_bases(info)
        if len(bases) > 1:
            problems.append(f"{info.where}: {info.name} stands on project classes {bases}")
        if not in_exception_tree(info.name):
            depth = chain(info.name)
            if depth > max_chain:
                problems.append(
                    f"{info.where}: {info.name} heads a project inheritance chain of {depth}"
                )
    return problems
