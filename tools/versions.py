"""Versions of the four published distributions: show, check, bump, matrix.

``tools/versions.toml`` is the one table of the published distributions (their version and
the protocol version each implements). This script is the only thing that edits versions:

* ``show``: print the table, next to what the version files and pins say.
* ``check``: exit non-zero, naming every problem, when anything drifts:

  - a version file (``src/<module>/_version.py``) differs from the table;
  - a ``pyproject.toml`` does not read its version from that file (hatchling), or names
    another distribution;
  - the table's core protocol differs from the core's ``PROTOCOL_VERSION``, or a
    distribution implements another protocol MAJOR.MINOR, or a distribution's version does
    not follow its protocol's MAJOR.MINOR;
  - a role does not depend on the core, its core range does not admit the current core
    version, or it admits the next protocol MINOR (0.x) / MAJOR; a role depends on a role;
  - the generated compatibility matrix in ``README.md`` or ``docs/compatibility.md`` is
    stale (or its markers are missing).

* ``bump <dist> patch|minor|major``: bump one distribution: its version file, the table,
  every pin on it in the other distributions' ``pyproject.toml`` files (``>=X.Y.Z,<X.(Y+1)``
  for 0.x, ``>=X.Y.Z,<(X+1)`` from 1.0) and the matrix, together.
* ``matrix [--write]``: print the compatibility matrix, or rewrite it between the markers
  ``<!-- compat-matrix:start -->`` and ``<!-- compat-matrix:end -->``.
* ``release-tag <tag>``: for the release workflow: accept only ``<dist>-v<version>`` where
  ``<dist>`` is a published distribution and ``<version>`` equals both its version file and
  the table, then print ``distribution=...``, ``version=...`` and ``path=...`` lines.

Only the standard library is used, so it runs before anything is installed: TOML is read
with :mod:`tomllib`, and every edit is a targeted text replacement that leaves the rest of
each file untouched. The core's ``PROTOCOL_VERSION`` is read from the text of
``_versioning.py``, never imported.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "CORE",
    "MATRIX_END",
    "MATRIX_FILES",
    "MATRIX_START",
    "Distribution",
    "bump",
    "check",
    "core_range",
    "load_table",
    "main",
    "release_tag",
    "render_matrix",
    "specifier_admits",
]

#: The distribution every role depends on; it owns ``PROTOCOL_VERSION``.
CORE: Final = "a2c-protocol-core"
#: The table, relative to the repository root.
TABLE: Final = Path("tools/versions.toml")
#: Files holding the generated compatibility matrix between the two markers.
MATRIX_FILES: Final = (Path("README.md"), Path("docs/compatibility.md"))
MATRIX_START: Final = "<!-- compat-matrix:start -->"
MATRIX_END: Final = "<!-- compat-matrix:end -->"

_DEFAULT_ROOT: Final = Path(__file__).resolve().parent.parent
_VERSION_RE: Final = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)", re.ASCII)
_VERSION_FILE_RE: Final = re.compile(
    r"""^(__version__\s*(?::\s*[\w.\[\]]+\s*)?=\s*)(["'])([^"']*)\2""", re.MULTILINE
)
_PROTOCOL_RE: Final = re.compile(
    r"""^PROTOCOL_VERSION\s*(?::\s*[\w.\[\]]+\s*)?=\s*(["'])([^"']*)\1""", re.MULTILINE
)
_REQUIREMENT_RE: Final = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?"
    r"\s*(?P<spec>[^;@]*?)\s*(?P<marker>;.*)?$"
)
_CLAUSE_RE: Final = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9.]*)(\.\*)?\s*$")


class VersionsError(Exception):
    """A problem that stops a command (a malformed table, an unknown distribution...)."""


@dataclass(frozen=True)
class Distribution:
    """One row of the table."""

    name: str
    path: str
    module: str
    version: str
    protocol: str
    #: further protocol versions it speaks (the Server translates, the roles negotiate)
    serves: tuple[str, ...] = ()

    def version_file(self, root: Path) -> Path:
        """The version file hatchling reads: ``<path>/src/<module>/_version.py``."""
        return root / self.path / "src" / self.module / "_version.py"

    def pyproject(self, root: Path) -> Path:
        """The distribution's ``pyproject.toml``."""
        return root / self.path / "pyproject.toml"


# --- versions and specifiers -------------------------------------------------------------


def parse_version(text: str) -> tuple[int, int, int]:
    """Parse a strict ``MAJOR.MINOR.PATCH`` version, raising :class:`VersionsError`."""
    match = _VERSION_RE.fullmatch(text)
    if match is None:
        raise VersionsError(f"{text!r} is not MAJOR.MINOR.PATCH")
    major, minor, patch = (int(part) for part in match.groups())
    return (major, minor, patch)


def format_version(version: tuple[int, int, int]) -> str:
    """``(0, 2, 1)`` -> ``"0.2.1"``."""
    return ".".join(str(part) for part in version)


def bumped(version: str, part: str) -> str:
    """The version after a ``patch``, ``minor`` or ``major`` bump."""
    major, minor, patch = parse_version(version)
    if part == "patch":
        return format_version((major, minor, patch + 1))
    if part == "minor":
        return format_version((major, minor + 1, 0))
    if part == "major":
        return format_version((major + 1, 0, 0))
    raise VersionsError(f"unknown bump {part!r}: expected patch, minor or major")


def core_range(version: str) -> str:
    """The pin on ``version`` that admits its patches and nothing of the next protocol.

    0.x: ``>=0.Y.Z,<0.(Y+1)`` (a 0.x MINOR is a new, incompatible protocol);
    from 1.0: ``>=X.Y.Z,<(X+1)``.
    """
    major, minor, _ = parse_version(version)
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={version},<{upper}"


def _next_incompatible(version: str) -> str:
    """The first version a range pinned to ``version``'s protocol must exclude."""
    major, minor, _ = parse_version(version)
    return format_version((0, minor + 1, 0) if major == 0 else (major + 1, 0, 0))


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part)


def _cmp(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    width = max(len(left), len(right))
    a = left + (0,) * (width - len(left))
    b = right + (0,) * (width - len(right))
    return (a > b) - (a < b)


def _clause_admits(op: str, bound: str, wildcard: bool, version: tuple[int, ...]) -> bool:
    target = _release(bound)
    if wildcard:  # ==X.Y.* / !=X.Y.*: compare the leading parts only
        same = version[: len(target)] == target
        return same if op == "==" else not same
    order = _cmp(version, target)
    if op in ("==", "==="):
        return order == 0
    if op == "!=":
        return order != 0
    if op == ">=":
        return order >= 0
    if op == "<=":
        return order <= 0
    if op == ">":
        return order > 0
    if op == "<":
        return order < 0
    # ~=X.Y.Z means >=X.Y.Z,==X.Y.*
    return order >= 0 and version[: len(target) - 1] == target[:-1]


def specifier_admits(specifier: str, version: str) -> bool:
    """Whether a PEP 440 specifier of plain release versions admits ``version``.

    Covers the forms this repository uses (``>=``, ``<``, ``==``, ``!=``, ``~=``,
    wildcards); pre-releases and local versions are out of scope and raise
    :class:`VersionsError`, as does any clause this function cannot read.
    """
    release = _release(format_version(parse_version(version)))
    spec = specifier.strip().removeprefix("(").removesuffix(")")
    if not spec:
        return True
    for clause in spec.split(","):
        match = _CLAUSE_RE.fullmatch(clause)
        if match is None:
            raise VersionsError(f"cannot read the version clause {clause.strip()!r}")
        op, bound, star = match.groups()
        if not _clause_admits(op, bound.rstrip("."), star is not None, release):
            return False
    return True


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --- reading the repository ---------------------------------------------------------------


def load_table(root: Path) -> list[Distribution]:
    """Read ``tools/versions.toml`` under ``root``, in file order."""
    path = root / TABLE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise VersionsError(f"{TABLE} not found under {root}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise VersionsError(f"{TABLE} is not valid TOML: {exc}") from exc
    rows = data.get("distributions")
    if not isinstance(rows, dict) or not rows:
        raise VersionsError(f"{TABLE} has no [distributions.<name>] tables")
    table: list[Distribution] = []
    for name, row in rows.items():
        fields = {}
        for key in ("path", "module", "version", "protocol"):
            value = row.get(key) if isinstance(row, dict) else None
            if not isinstance(value, str):
                raise VersionsError(f"{TABLE}: [distributions.{name}] needs a string {key!r}")
            fields[key] = value
        serves = row.get("serves", [])
        if not isinstance(serves, list) or not all(isinstance(v, str) for v in serves):
            raise VersionsError(f"{TABLE}: [distributions.{name}] 'serves' must list versions")
        for served in serves:
            parse_version(served)
        table.append(Distribution(name=name, serves=tuple(serves), **fields))
    if CORE not in {dist.name for dist in table}:
        raise VersionsError(f"{TABLE} has no row for {CORE}")
    return table


def _find(table: Sequence[Distribution], name: str) -> Distribution:
    for dist in table:
        if _normalize(dist.name) == _normalize(name):
            return dist
    known = ", ".join(dist.name for dist in table)
    raise VersionsError(f"unknown distribution {name!r} (known: {known})")


def read_version_file(path: Path) -> str:
    """The ``__version__`` string assigned in a version file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise VersionsError(f"version file {path} not found") from exc
    match = _VERSION_FILE_RE.search(text)
    if match is None:
        raise VersionsError(f"{path} assigns no __version__ = '...'")
    return match.group(3)


def read_protocol_version(root: Path, table: Sequence[Distribution]) -> str:
    """The core's ``PROTOCOL_VERSION``, parsed from the text of ``_versioning.py``."""
    core = _find(table, CORE)
    path = root / core.path / "src" / core.module / "_versioning.py"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise VersionsError(f"{path} not found (it defines PROTOCOL_VERSION)") from exc
    match = _PROTOCOL_RE.search(text)
    if match is None:
        raise VersionsError(f"{path} assigns no PROTOCOL_VERSION = '...'")
    return match.group(2)


@dataclass(frozen=True)
class Requirement:
    """One dependency string of a ``pyproject.toml`` and where it sits."""

    text: str
    name: str
    specifier: str
    where: str


def _requirements(pyproject: dict[str, object]) -> list[Requirement]:
    project = pyproject.get("project")
    if not isinstance(project, dict):
        return []
    groups: list[tuple[str, object]] = [("dependencies", project.get("dependencies", []))]
    optional = project.get("optional-dependencies", {})
    if isinstance(optional, dict):
        groups += [(f"optional-dependencies.{key}", deps) for key, deps in optional.items()]
    found: list[Requirement] = []
    for where, deps in groups:
        if not isinstance(deps, list):
            continue
        for text in deps:
            match = _REQUIREMENT_RE.match(text) if isinstance(text, str) else None
            if match is None:
                continue
            found.append(
                Requirement(
                    text=text,
                    name=_normalize(match.group("name")),
                    specifier=match.group("spec"),
                    where=where,
                )
            )
    return found


def _load_pyproject(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise VersionsError(f"{path} not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise VersionsError(f"{path} is not valid TOML: {exc}") from exc


def core_pin(root: Path, dist: Distribution) -> str | None:
    """The specifier of ``dist``'s dependency on the core, or ``None`` without one."""
    for req in _requirements(_load_pyproject(dist.pyproject(root))):
        if req.name == CORE and req.where == "dependencies":
            return req.specifier
    return None


# --- the compatibility matrix ---------------------------------------------------------------


def _peer_range(protocol: str) -> str:
    major, minor, _ = parse_version(protocol)
    low = f"{major}.{minor}.0" if major == 0 else f"{major}.0.0"
    return f"{low} – {major}.{minor}.999"


def render_matrix(root: Path, table: Sequence[Distribution]) -> str:
    """The Markdown compatibility matrix (what goes between the markers)."""
    lines = [
        "| distribution | version | implements protocol | interoperates with `a2c_version` "
        f"| requires `{CORE}` |",
        "|---|---|---|---|---|",
    ]
    for dist in table:
        pin = "—" if dist.name == CORE else core_pin(root, dist)
        pin_cell = "—" if pin in ("—", None) else f"`{pin}`"
        protocols = " and ".join((dist.protocol, *dist.serves))
        ranges = ", ".join(_peer_range(v) for v in (dist.protocol, *dist.serves))
        lines.append(f"| `{dist.name}` | {dist.version} | {protocols} | {ranges} | {pin_cell} |")
    lines += [
        "",
        "_Generated from `tools/versions.toml` by "
        "`uv run python tools/versions.py matrix --write`; do not edit between the markers._",
    ]
    return "\n".join(lines)


def _region(text: str, path: Path) -> tuple[int, int]:
    """Start and end offsets of the text between the matrix markers in ``text``."""
    start = text.find(MATRIX_START)
    end = text.find(MATRIX_END)
    if start < 0 or end < 0:
        missing = " and ".join(m for m in (MATRIX_START, MATRIX_END) if m not in text)
        raise VersionsError(
            f"{path} lacks the marker(s) {missing}: add "
            f"'{MATRIX_START}' and '{MATRIX_END}' on their own lines where the "
            "compatibility matrix belongs, then run `tools/versions.py matrix --write`"
        )
    if end < start:
        raise VersionsError(f"{path}: {MATRIX_END} comes before {MATRIX_START}")
    return start + len(MATRIX_START), end


def _matrix_problem(root: Path, relative: Path, matrix: str) -> str | None:
    path = root / relative
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"{relative} not found (it should hold the compatibility matrix)"
    try:
        start, end = _region(text, relative)
    except VersionsError as exc:
        return str(exc)
    if text[start:end].strip() != matrix.strip():
        return (
            f"{relative}: the compatibility matrix is stale; "
            "run `uv run python tools/versions.py matrix --write`"
        )
    return None


def write_matrix(root: Path, table: Sequence[Distribution]) -> tuple[list[Path], list[str]]:
    """Rewrite the matrix in every matrix file; return (files changed, errors)."""
    matrix = render_matrix(root, table)
    changed: list[Path] = []
    errors: list[str] = []
    for relative in MATRIX_FILES:
        path = root / relative
        try:
            text = path.read_text(encoding="utf-8")
            start, end = _region(text, relative)
        except FileNotFoundError:
            errors.append(f"{relative} not found: cannot write the compatibility matrix")
            continue
        except VersionsError as exc:
            errors.append(str(exc))
            continue
        new = f"{text[:start]}\n{matrix}\n{text[end:]}"
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(relative)
    return changed, errors


# --- check ----------------------------------------------------------------------------------


def _check_row(root: Path, dist: Distribution, protocol: tuple[int, int, int]) -> list[str]:
    problems: list[str] = []
    try:
        version = parse_version(dist.version)
        dist_protocol = parse_version(dist.protocol)
    except VersionsError as exc:
        return [f"{TABLE}: {dist.name}: {exc}"]
    try:
        on_disk = read_version_file(dist.version_file(root))
    except VersionsError as exc:
        problems.append(str(exc))
    else:
        if on_disk != dist.version:
            rel = dist.version_file(root).relative_to(root)
            problems.append(
                f"{dist.name}: {rel} says {on_disk} but {TABLE} says {dist.version} "
                "(change versions only with `tools/versions.py bump`)"
            )
    if dist_protocol[:2] != protocol[:2]:
        problems.append(
            f"{dist.name}: implements protocol {dist.protocol} but the core's "
            f"PROTOCOL_VERSION is {format_version(protocol)} (MAJOR.MINOR must match)"
        )
    if version[:2] != dist_protocol[:2]:
        problems.append(
            f"{dist.name}: version {dist.version} does not follow its protocol "
            f"{dist.protocol} (MAJOR.MINOR of a distribution follow the protocol it "
            f"implements; update PROTOCOL_VERSION and the protocol column of {TABLE})"
        )
    problems += _check_pyproject(root, dist)
    return problems


def _check_pyproject(root: Path, dist: Distribution) -> list[str]:
    rel = dist.pyproject(root).relative_to(root)
    try:
        data = _load_pyproject(dist.pyproject(root))
    except VersionsError as exc:
        return [str(exc)]
    problems: list[str] = []
    project = data.get("project")
    project = project if isinstance(project, dict) else {}
    if _normalize(str(project.get("name", ""))) != _normalize(dist.name):
        problems.append(f"{rel}: project.name is {project.get('name')!r}, not {dist.name!r}")
    if "version" in project:
        problems.append(f"{rel}: a static project.version; the version file must be the source")
    dynamic = project.get("dynamic", [])
    if not isinstance(dynamic, list) or "version" not in dynamic:
        problems.append(f"{rel}: project.dynamic must contain 'version'")
    tool = data.get("tool")
    hatch = tool.get("hatch", {}) if isinstance(tool, dict) else {}
    hatch_version = hatch.get("version", {}) if isinstance(hatch, dict) else {}
    expected = f"src/{dist.module}/_version.py"
    path = hatch_version.get("path") if isinstance(hatch_version, dict) else None
    if path != expected:
        problems.append(f"{rel}: [tool.hatch.version] path is {path!r}, expected {expected!r}")
    return problems


def _check_pins(root: Path, table: Sequence[Distribution]) -> list[str]:
    core = _find(table, CORE)
    public = {_normalize(dist.name) for dist in table}
    problems: list[str] = []
    for dist in table:
        if dist.name == CORE:
            continue
        rel = dist.pyproject(root).relative_to(root)
        try:
            requirements = _requirements(_load_pyproject(dist.pyproject(root)))
        except VersionsError as exc:
            problems.append(str(exc))
            continue
        for req in requirements:
            if req.name in public and req.name != CORE:
                problems.append(f"{rel}: depends on {req.name}; a role never depends on a role")
        pins = [req for req in requirements if req.name == CORE and req.where == "dependencies"]
        if not pins:
            problems.append(f"{rel}: no dependency on {CORE}")
            continue
        for req in pins:
            try:
                admits_current = specifier_admits(req.specifier, core.version)
                admits_next = specifier_admits(req.specifier, _next_incompatible(core.version))
            except VersionsError as exc:
                problems.append(f"{rel}: {req.text!r}: {exc}")
                continue
            if not req.specifier:
                problems.append(
                    f"{rel}: {req.text!r} has no version range; "
                    f"expected {core_range(core.version)!r}"
                )
            elif not admits_current:
                problems.append(
                    f"{rel}: {req.text!r} does not admit the current {CORE} {core.version} "
                    f"(expected {core_range(core.version)!r})"
                )
            elif admits_next:
                problems.append(
                    f"{rel}: {req.text!r} admits {CORE} {_next_incompatible(core.version)}, "
                    f"which implements another protocol (expected {core_range(core.version)!r})"
                )
    return problems


def check(root: Path) -> list[str]:
    """Every drift problem found under ``root`` (an empty list means consistent)."""
    try:
        table = load_table(root)
        protocol_text = read_protocol_version(root, table)
        protocol = parse_version(protocol_text)
    except VersionsError as exc:
        return [str(exc)]
    problems: list[str] = []
    core = _find(table, CORE)
    if core.protocol != protocol_text:
        problems.append(
            f"{TABLE}: {CORE} protocol is {core.protocol} but its PROTOCOL_VERSION is "
            f"{protocol_text}"
        )
    for dist in table:
        problems += _check_row(root, dist, protocol)
    problems += _check_pins(root, table)
    if not problems:  # a matrix rendered from a broken table would only add noise
        matrix = render_matrix(root, table)
        for relative in MATRIX_FILES:
            problem = _matrix_problem(root, relative, matrix)
            if problem is not None:
                problems.append(problem)
    return problems


# --- bump -----------------------------------------------------------------------------------


def _replace_table_version(text: str, name: str, old: str, new: str) -> str:
    header = re.compile(
        rf'^\[distributions\.(?:"{re.escape(name)}"|{re.escape(name)})\]\s*$', re.MULTILINE
    )
    match = header.search(text)
    if match is None:
        raise VersionsError(f"{TABLE}: no [distributions.{name}] header to edit")
    next_header = re.compile(r"^\[", re.MULTILINE).search(text, match.end())
    stop = next_header.start() if next_header else len(text)
    section = text[match.end() : stop]
    line = re.compile(rf'^(version\s*=\s*)"{re.escape(old)}"', re.MULTILINE)
    section, count = line.subn(rf'\g<1>"{new}"', section, count=1)
    if count != 1:
        raise VersionsError(f"{TABLE}: no version = {old!r} line under [distributions.{name}]")
    return text[: match.end()] + section + text[stop:]


def _replace_version_file(text: str, path: Path, new: str) -> str:
    result, count = _VERSION_FILE_RE.subn(rf"\g<1>\g<2>{new}\g<2>", text, count=1)
    if count != 1:
        raise VersionsError(f"{path} assigns no __version__ = '...'")
    return result


def _requoted(new_text: str) -> Callable[[re.Match[str]], str]:
    """A substitution that puts ``new_text`` inside the quotes the match used."""

    def substitute(match: re.Match[str]) -> str:
        return f"{match.group(1)}{new_text}{match.group(1)}"

    return substitute


def _rewrite_pins(text: str, path: Path, name: str, pin: str) -> tuple[str, list[str]]:
    """Replace every requirement string on ``name`` in a pyproject text with ``pin``."""
    changes: list[str] = []
    for req in _requirements(tomllib.loads(text)):
        if req.name != _normalize(name):
            continue
        match = _REQUIREMENT_RE.match(req.text)
        assert match is not None  # _requirements only returns matching strings
        new_text = f"{match.group('name')}{match.group('extras') or ''}{pin}"
        if match.group("marker"):
            new_text += f" {match.group('marker').strip()}"
        if new_text == req.text:
            continue
        pattern = re.compile(rf"""(["']){re.escape(req.text)}\1""")
        text, count = pattern.subn(_requoted(new_text), text)
        if count == 0:
            raise VersionsError(f"{path}: cannot find {req.text!r} in the text to rewrite it")
        changes.append(f"{req.text!r} -> {new_text!r}")
    return text, changes


def bump(root: Path, name: str, part: str) -> list[str]:
    """Bump ``name`` by ``part`` everywhere under ``root``; return what changed, in words.

    The table, the version file and every pin on the distribution in the other
    distributions' ``pyproject.toml`` files are computed first and written together, so a
    failure leaves nothing half-edited. The matrix files are rewritten when they have
    their markers; a missing marker is reported, not fatal.
    """
    table = load_table(root)
    dist = _find(table, name)
    new = bumped(dist.version, part)
    writes: dict[Path, str] = {}
    report: list[str] = [f"{dist.name}: {dist.version} -> {new}"]

    table_path = root / TABLE
    writes[table_path] = _replace_table_version(
        table_path.read_text(encoding="utf-8"), dist.name, dist.version, new
    )
    version_path = dist.version_file(root)
    writes[version_path] = _replace_version_file(
        version_path.read_text(encoding="utf-8"), version_path, new
    )
    report.append(f"  {version_path.relative_to(root)}")
    report.append(f"  {TABLE}")
    pin = core_range(new)
    for other in table:
        if other.name == dist.name:
            continue
        path = other.pyproject(root)
        text, changes = _rewrite_pins(path.read_text(encoding="utf-8"), path, dist.name, pin)
        if changes:
            writes[path] = text
            report += [f"  {path.relative_to(root)}: {change}" for change in changes]
    for path, text in writes.items():
        path.write_text(text, encoding="utf-8")

    changed, errors = write_matrix(root, load_table(root))
    report += [f"  {relative} (compatibility matrix)" for relative in changed]
    report += [f"  warning: {error}" for error in errors]
    if part != "patch":
        report.append(
            f"  note: MAJOR.MINOR follow the protocol; {dist.name} {new} needs protocol "
            f"{'.'.join(new.split('.')[:2])}.x (PROTOCOL_VERSION and the protocol column of "
            f"{TABLE}), or `check` will fail"
        )
    return report


# --- release tags ---------------------------------------------------------------------------


def release_tag(root: Path, tag: str) -> Distribution:
    """The distribution a release tag ``<dist>-v<MAJOR.MINOR.PATCH>`` selects.

    Raises :class:`VersionsError` unless the tag names a published distribution and its
    version equals both the table and the distribution's version file.
    """
    table = load_table(root)
    match = re.fullmatch(r"(?P<name>[a-z0-9][a-z0-9-]*?)-v(?P<version>[0-9]+\.[0-9]+\.[0-9]+)", tag)
    if match is None:
        raise VersionsError(
            f"tag {tag!r} is not <distribution>-v<MAJOR.MINOR.PATCH> (for example a2c-agent-v0.2.1)"
        )
    names = {dist.name for dist in table}
    if match.group("name") not in names:
        raise VersionsError(
            f"tag {tag!r} names {match.group('name')!r}, not a published distribution "
            f"({', '.join(sorted(names))})"
        )
    dist = _find(table, match.group("name"))
    version = match.group("version")
    on_disk = read_version_file(dist.version_file(root))
    if version != on_disk or version != dist.version:
        raise VersionsError(
            f"tag {tag!r} says {version} but {dist.version_file(root).relative_to(root)} says "
            f"{on_disk} and {TABLE} says {dist.version}: bump first, then tag that commit"
        )
    return dist


# --- show and the command line --------------------------------------------------------------


def show(root: Path) -> str:
    """The table as aligned text, with what each version file and core pin says."""
    table = load_table(root)
    try:
        protocol = read_protocol_version(root, table)
    except VersionsError as exc:
        protocol = f"? ({exc})"
    rows = [("distribution", "version", "protocol", "version file", f"{CORE} pin")]
    for dist in table:
        try:
            on_disk = read_version_file(dist.version_file(root))
        except VersionsError:
            on_disk = "missing"
        try:
            pin = "-" if dist.name == CORE else (core_pin(root, dist) or "none")
        except VersionsError:
            pin = "unreadable"
        rows.append((dist.name, dist.version, dist.protocol, on_disk, pin))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines = [line.rstrip() for line in lines]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(f"core PROTOCOL_VERSION: {protocol}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tools/versions.py",
        description="Show, check and bump the versions of the published distributions.",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=_DEFAULT_ROOT,
        help="repository root (default: the folder above tools/)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("show", help="print the version table")
    commands.add_parser("check", help="fail on any version, pin, protocol or matrix drift")
    bump_cmd = commands.add_parser("bump", help="bump one distribution and every pin on it")
    bump_cmd.add_argument("distribution")
    bump_cmd.add_argument("part", choices=["patch", "minor", "major"])
    tag_cmd = commands.add_parser(
        "release-tag", help="validate a release tag <dist>-v<version> and print what it selects"
    )
    tag_cmd.add_argument("tag")
    matrix_cmd = commands.add_parser("matrix", help="print or rewrite the compatibility matrix")
    matrix_cmd.add_argument(
        "--write",
        action="store_true",
        help=f"rewrite it in {' and '.join(str(p) for p in MATRIX_FILES)}",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    root: Path = args.root.resolve()
    try:
        if args.command == "show":
            print(show(root))
            return 0
        if args.command == "check":
            problems = check(root)
            if problems:
                print(f"versions check FAILED ({len(problems)} problem(s)):", file=sys.stderr)
                for problem in problems:
                    print(f"  - {problem}", file=sys.stderr)
                return 1
            print("versions check passed: table, version files, pins, protocol and matrix agree")
            return 0
        if args.command == "bump":
            for line in bump(root, args.distribution, args.part):
                print(line)
            return 0
        if args.command == "release-tag":
            dist = release_tag(root, args.tag)
            print(f"distribution={dist.name}\nversion={dist.version}\npath={dist.path}")
            return 0
        table = load_table(root)
        if not args.write:
            print(render_matrix(root, table))
            return 0
        changed, errors = write_matrix(root, table)
        for relative in changed:
            print(f"rewrote the compatibility matrix in {relative}")
        if not changed and not errors:
            print("the compatibility matrix is up to date")
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        return 1 if errors else 0
    except VersionsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
