"""Upstream internals stay in the fences: a static check of the role packages' sources.

The Server is faster than a bare relay because it reaches into python-engineio, python-socketio
and redis-py where they have no public hook (a leaner WebSocket loop, a screened dispatch,
addressed pub/sub channels, pipelined registry reads), and the Computer stamps its raw
requests as ``mcp``'s session would and refines its OAuth flow. None of those names is
promised by their authors: a *minor* release may rename or remove one, and the first to
notice would be a user whose Server silently stopped dropping slow consumers. So each role
package keeps every such touch in ONE place, its fence (``<package>/_upstream.py``, or a
subpackage ``<package>/_upstream/`` when one module would be too big). The fence names the
versions it was checked against, the package's pins stop at those versions, and guard tests
pin each touched name: a new release breaks loudly, in one file, before a user sees it
(``tools/check_latest.sh`` runs the guards and the Server suite against the newest releases
every week; docs/contributing.md says what to do when it fails).

This script says where a touch is outside its fence. It reads the sources of
``a2c_agent``, ``a2c_computer`` and ``a2c_server`` (``packages/*/src``, never the tests)
with :mod:`ast`, imports none of our packages, and imports the upstream libraries only to
learn their names. What counts as a touch:

(a) importing a private name or a private module of those libraries (a path segment that
    starts with ``_``), or a python-engineio / python-socketio submodule that is not their
    documented top-level API (``engineio.async_socket``, ``engineio.packet``,
    ``engineio.payload``, ``socketio.packet``...; only the names in the package's
    ``__all__`` and the ``exceptions`` module are documented) - by an import or by an
    attribute chain such as ``socketio.packet.ACK``;
(b) reading or writing ``x._name`` (or ``getattr``/``hasattr``/``setattr`` with a
    ``"_name"`` literal) where ``_name`` is not a dunder and not a name our own packages
    define (functions, classes, class attributes and fields, ``self._x =`` assignments,
    ``__slots__``, import aliases), plus - whatever our own names are - the upstream
    private names known to be touched (:data:`KNOWN_PRIVATE`, on any object but ``self``)
    and the undocumented *public* attributes known to be internal state
    (:data:`INTERNAL_ATTRIBUTES`, e.g. ``eio.sockets``: python-engineio's session table);
(c) inside a class that subclasses an upstream class (directly, or through a class of
    ours such as one the fence defines): defining, or calling through ``self``/``super()``,
    a private name the upstream base has (found by introspection: the base's attributes
    and the ``self._x =`` assignments in its source).

Output: one line per touch, ``path:line: <what> (move it into <fence>)``; exit status 1
when there is any. ``--list`` prints the touches found inside the fences instead (what the
guard tests must pin). ``--root`` checks another tree with the same layout (the tests use
small fake packages).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[1]

#: The role packages checked (their ``src`` only).
ROLES: Final = ("a2c_agent", "a2c_computer", "a2c_server")

#: Import name → distribution, for the libraries whose internals are fenced.
LIBRARIES: Final = {
    "engineio": "python-engineio",
    "socketio": "python-socketio",
    "redis": "redis",
    "mcp": "mcp",
    "mcp_types": "mcp-types",
    "httpx2": "httpx2",
}

#: Libraries whose API is only what the top-level package exports (its ``__all__``) plus
#: these submodules; their other modules are implementation (documented API reference).
TOP_LEVEL_ONLY: Final = {"engineio": {"exceptions"}, "socketio": {"exceptions"}}

#: Used when a library cannot be imported (its ``__all__`` is unknown then).
_FALLBACK_ALL: Final = {
    "engineio": "Server WSGIApp Middleware Client AsyncServer ASGIApp get_tornado_handler "
    "AsyncClient",
    "socketio": "SimpleClient Client Server Manager PubSubManager KombuManager RedisManager "
    "ZmqManager KafkaManager Namespace ClientNamespace WSGIApp Middleware AsyncSimpleClient "
    "AsyncClient AsyncServer AsyncNamespace AsyncClientNamespace AsyncManager AsyncRedisManager "
    "ASGIApp get_tornado_handler AsyncAioPikaManager",
}

#: Upstream private names known to be touched, flagged on any object but ``self``/``cls``
#: even where our own code happens to use the same name for something of its own.
KNOWN_PRIVATE: Final = {
    "_writer": "redis-py's connection stream writer",
    "_reader": "redis-py's connection stream reader",
    "_stamp": "mcp's ClientSession request stamp (the era's headers and _meta)",
}

#: Undocumented public attributes that are upstream state: ``(receiver, attribute)``,
#: where ``receiver`` is how the object is named in our code (the last name of the
#: expression the attribute is read from, or its last ``_`` part: ``self._sio.eio`` →
#: ``eio``, ``eio_socket`` → ``socket``; ``*`` is any) and the value says what it is.
INTERNAL_ATTRIBUTES: Final = {
    ("eio", "sockets"): "python-engineio's session table",
    ("manager", "rooms"): "python-socketio's room table",
    ("manager", "eio_to_sid"): "python-socketio's sid table",
    ("manager", "callbacks"): "python-socketio's ack callback table",
    ("manager", "pending_connect"): "python-socketio's admission state",
    ("manager", "pending_disconnect"): "python-socketio's teardown state",
    ("socket", "queue"): "python-engineio's socket send queue",
    ("socket", "upgraded"): "python-engineio's socket state",
    ("socket", "upgrading"): "python-engineio's socket state",
    ("socket", "connected"): "python-engineio's socket state",
    ("socket", "closing"): "python-engineio's socket state",
    ("socket", "closed"): "python-engineio's socket state",
    ("socket", "last_ping"): "python-engineio's socket state",
    ("*", "pack_commands"): "redis-py's connection encoder",
    ("*", "send_packed_command"): "redis-py's connection writer",
    ("*", "read_response"): "redis-py's connection reader",
    ("*", "connection_kwargs"): "redis-py's connection pool settings",
    ("*", "connection_class"): "redis-py's connection pool class",
    ("*", "failed_namespaces"): "python-socketio's client: the namespaces a server refused",
}

#: Underscore names that are documented API of the standard library (namedtuple).
STDLIB_API: Final = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})

_SELF_ASSIGN: Final = re.compile(r"\bself\.(_[A-Za-z0-9]\w*)\s*(?::[^=\n]+)?=(?!=)")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True, order=True)
class Touch:
    """One touch of an upstream internal."""

    path: str
    line: int
    what: str
    fence: str
    inside: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        if self.inside:
            return f"{self.path}:{self.line}: {self.what}"
        return f"{self.path}:{self.line}: {self.what} (move it into {self.fence})"


# ------------------------------------------------------------------ upstream names


class Upstream:
    """What the installed upstream libraries export and define (imported lazily)."""

    def __init__(self) -> None:
        self._modules: dict[str, ModuleType | None] = {}
        self._private: dict[str, frozenset[str] | None] = {}

    def module(self, name: str) -> ModuleType | None:
        if name not in self._modules:
            try:
                self._modules[name] = importlib.import_module(name)
            except Exception:  # not installed, or the module is gone in this release
                self._modules[name] = None
        return self._modules[name]

    def exported(self, library: str) -> set[str]:
        module = self.module(library)
        names = getattr(module, "__all__", None) if module is not None else None
        return set(names) if names is not None else set(_FALLBACK_ALL.get(library, "").split())

    def resolve(self, dotted: str) -> Any:
        """The object ``dotted`` names (a module, or an attribute of the longest module)."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            obj: Any = self.module(".".join(parts[:cut]))
            if obj is None:
                continue
            for part in parts[cut:]:
                obj = getattr(obj, part, None)
                if obj is None:
                    return None
            return obj
        return None

    def private_names(self, dotted: str) -> frozenset[str] | None:
        """Private names of the upstream class ``dotted`` and its upstream bases (None: unknown)."""
        if dotted in self._private:
            return self._private[dotted]
        cls = self.resolve(dotted)
        names: set[str] | None = None
        if isinstance(cls, type):
            names = set()
            for klass in cls.__mro__:
                if klass.__module__.split(".")[0] not in LIBRARIES:
                    continue
                names.update(n for n in vars(klass) if _is_private(n))
                try:
                    names.update(_SELF_ASSIGN.findall(inspect.getsource(klass)))
                except (OSError, TypeError):
                    pass
            names -= {"_abc_impl"}
        self._private[dotted] = frozenset(names) if names is not None else None
        return self._private[dotted]


# --------------------------------------------------------------------- our names


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name → the dotted name it was imported as (absolute imports only)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _upstream_base(cls: ast.ClassDef, aliases: dict[str, str], ours: dict[str, str]) -> str | None:
    """The dotted name of the upstream class ``cls`` derives from, if any.

    ``ours`` maps our own classes that derive from an upstream class to it, so a subclass
    of a fence class is held to the same rules as the fence class.
    """
    for base in cls.bases:
        dotted = _dotted(base)
        if dotted is None:
            continue
        head, _, rest = dotted.partition(".")
        full = aliases.get(head, head) + (f".{rest}" if rest else "")
        if full.split(".")[0] in LIBRARIES:
            return full
        if (name := dotted.rsplit(".", 1)[-1]) in ours:
            return ours[name]
    return None


@dataclass
class Source:
    """One parsed module of ours."""

    path: Path
    tree: ast.Module
    aliases: dict[str, str]

    @classmethod
    def read(cls, path: Path) -> Source:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        return cls(path, tree, _imports(tree))


def upstream_classes(sources: Iterable[Source]) -> dict[str, str]:
    """Our classes (by name) that derive from an upstream class, directly or not."""
    classes = [
        (node, source.aliases)
        for source in sources
        for node in ast.walk(source.tree)
        if isinstance(node, ast.ClassDef)
    ]
    ours: dict[str, str] = {}
    while True:
        found = {
            node.name: base
            for node, aliases in classes
            if node.name not in ours and (base := _upstream_base(node, aliases, ours))
        }
        if not found:
            return ours
        ours.update(found)


def _targets(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Assign):
        yield from node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        yield node.target


def _flatten(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _flatten(element)
    else:
        yield target


class _OwnNames(ast.NodeVisitor):
    """The private names one module of ours defines; overrides of upstream names are not."""

    def __init__(self, source: Source, ours: dict[str, str], upstream: Upstream) -> None:
        self.source = source
        self.ours = ours
        self.upstream = upstream
        self.names: set[str] = set()
        self._inherited: list[frozenset[str]] = []  # private names of enclosing upstream bases

    def _add(self, name: str) -> None:
        if not (self._inherited and name in self._inherited[-1]):
            self.names.add(name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._add(node.name)
        base = _upstream_base(node, self.source.aliases, self.ours)
        names = self.upstream.private_names(base) if base else None
        self._inherited.append(names or frozenset())
        self.generic_visit(node)
        self._inherited.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self._add(alias.asname or alias.name.split(".")[0])

    visit_ImportFrom = visit_Import

    def _assigned(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        for target in _targets(node):
            for leaf in _flatten(target):
                if isinstance(leaf, ast.Name):
                    self._add(leaf.id)
                    if leaf.id == "__slots__" and node.value is not None:
                        for const in ast.walk(node.value):
                            if isinstance(const, ast.Constant) and isinstance(const.value, str):
                                self._add(const.value)
                elif isinstance(leaf, ast.Attribute) and (
                    _is_self(leaf.value) or leaf.attr not in KNOWN_PRIVATE
                ):
                    self._add(leaf.attr)
        self.generic_visit(node)

    visit_Assign = visit_AnnAssign = visit_AugAssign = _assigned


def own_names(sources: Iterable[Source], ours: dict[str, str], upstream: Upstream) -> set[str]:
    """Every private name our own sources define (what ``x._name`` may legitimately read)."""
    names: set[str] = set()
    for source in sources:
        visitor = _OwnNames(source, ours, upstream)
        visitor.visit(source.tree)
        names |= visitor.names
    return {name for name in names if _is_private(name)}


# --------------------------------------------------------------------- the check


def _receiver(node: ast.expr) -> str:
    """How the object is named in our code: the last name of the expression."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _receiver(node.func)
    return ""


def _is_self(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


class _FileCheck(ast.NodeVisitor):
    def __init__(
        self, upstream: Upstream, own: set[str], aliases: dict[str, str], ours: dict[str, str]
    ) -> None:
        self.upstream = upstream
        self.own = own
        self.aliases = aliases
        self.ours = ours
        self.found: list[tuple[int, str]] = []
        self._bases: list[tuple[str, frozenset[str] | None]] = []  # enclosing upstream subclasses

    def _touch(self, node: ast.AST, what: str) -> None:
        self.found.append((getattr(node, "lineno", 0), what))

    # (a) ---------------------------------------------------------------- modules

    def _module_problem(self, dotted: str) -> str | None:
        parts = dotted.split(".")
        library = parts[0]
        if library not in LIBRARIES:
            return None
        dist = LIBRARIES[library]
        private = [p for p in parts[1:] if _is_private(p)]
        if private:
            return f"private {dist} name {dotted}"
        if library in TOP_LEVEL_ONLY and len(parts) > 1:
            first = f"{library}.{parts[1]}"
            if parts[1] not in TOP_LEVEL_ONLY[library] | self.upstream.exported(library):
                kind = "module" if isinstance(self.upstream.resolve(first), ModuleType) else "name"
                return f"{dist} internal {kind} {first}"
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if problem := self._module_problem(alias.name):
                self._touch(node, f"import of {problem}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0:
            for alias in node.names:
                if problem := self._module_problem(f"{node.module}.{alias.name}"):
                    self._touch(node, f"import of {problem}")

    # (b) and (c) ------------------------------------------------------ attributes

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        base = _upstream_base(node, self.aliases, self.ours)
        if base is None:
            self._bases.append(("", frozenset()))
        else:
            names = self.upstream.private_names(base)
            self._bases.append((base, names))
            for item in node.body:
                overrides = isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    _is_private(item.name) and (names is None or item.name in names)
                )
                if overrides:
                    self._touch(item, f"override of {base}.{getattr(item, 'name', '?')}")
        self.generic_visit(node)
        self._bases.pop()

    def _attribute(self, node: ast.AST, receiver: ast.expr, name: str) -> None:
        if not _is_private(name):
            key = _receiver(receiver).lower()
            for (hint, attr), what in INTERNAL_ATTRIBUTES.items():
                if attr == name and hint in ("*", key, key.rpartition("_")[2]):
                    self._touch(node, f"undocumented {name} ({what})")
                    return
            return
        if _is_self(receiver) and self._bases and self._bases[-1][0]:
            base, names = self._bases[-1]
            if names is None or name in names:
                self._touch(node, f"use of {base}.{name}")
                return
        if name in KNOWN_PRIVATE and not _is_self(receiver):
            self._touch(node, f"private {name} ({KNOWN_PRIVATE[name]})")
        elif name not in self.own and name not in STDLIB_API:
            self._touch(node, f"private attribute {name} (not one of ours)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node)
        head = dotted.split(".")[0] if dotted else ""
        if dotted is not None and head in self.aliases:
            imported = self.aliases[head]
            if imported.split(".")[0] in LIBRARIES:
                # A path through an upstream module: its parts are not attributes of our
                # objects. An internal module imported as such is reported at its import.
                problem = self._module_problem(imported + dotted[len(head) :])
                if problem and not self._module_problem(imported):
                    self._touch(node, problem)
                return
        self._attribute(node, node.value, node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            self._attribute(node, node.args[0], node.args[1].value)
        self.generic_visit(node)


def fence_of(package: Path) -> Path:
    """The fence module of a package (a subpackage ``_upstream/`` when it exists)."""
    sub = package / "_upstream"
    return sub if sub.is_dir() else package / "_upstream.py"


def _in_fence(path: Path, package: Path) -> bool:
    relative = path.relative_to(package).parts
    return relative[0] in ("_upstream.py", "_upstream")


def role_packages(root: Path) -> list[Path]:
    """``packages/*/src/<role>`` for each role package present under ``root``."""
    return sorted(
        package
        for package in root.glob("packages/*/src/*")
        if package.is_dir() and package.name in ROLES
    )


def check(root: Path, upstream: Upstream | None = None) -> list[Touch]:
    """Every touch of an upstream internal in the role packages under ``root``."""
    upstream = upstream or Upstream()
    sources = {
        path: Source.read(path)
        for path in sorted(root.glob("packages/*/src/*/**/*.py"))
        if "__pycache__" not in path.parts
    }
    ours = upstream_classes(sources.values())
    own = own_names(sources.values(), ours, upstream)
    touches: set[Touch] = set()
    for package in role_packages(root):
        fence = fence_of(package).relative_to(root).as_posix()
        for path in sorted(package.rglob("*.py")):
            source = sources.get(path) or Source.read(path)
            visitor = _FileCheck(upstream, own, source.aliases, ours)
            visitor.visit(source.tree)
            inside = _in_fence(path, package)
            relative = path.relative_to(root).as_posix()
            touches.update(
                Touch(relative, line, what, fence, inside) for line, what in visitor.found
            )
    return sorted(touches)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--list", action="store_true", help="print the allowed touches inside the fences"
    )
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    touches = check(root)
    if args.list:
        for touch in touches:
            if touch.inside:
                print(touch)
        return 0
    outside = [touch for touch in touches if not touch.inside]
    for touch in outside:
        print(touch)
    if outside:
        print(
            f"{len(outside)} touch(es) of upstream internals outside the fences: move each into "
            "its package's fence and pin it in the guard test (docs/contributing.md).",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
