"""The layout of the four packages: no import circle, no folder too long.

A circle (``_computer`` <-> ``_reload`` was one, ``_auth`` / ``_auth._jwt`` / ``_settings`` in
the Server another) means neither module can be read, tested or moved without the other.
Imports under ``if TYPE_CHECKING:`` count too. A folder of more than 15 modules is a
corridor a reader has to walk name by name: a new capability goes into a room (a subpackage
whose ``__init__`` says what it is for).

Every piece of state has one owner: a role is composed of collaborators that own their
state and expose small methods, not a tower of mixins over one bag of attributes
(``a2c_testkit.class_graph`` states the rules it checks).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from a2c_testkit.class_graph import ownership_problems
from a2c_testkit.import_graph import find_cycles, import_graph, private_imports

ROLE_PACKAGES = ("a2c_agent", "a2c_computer", "a2c_server")
# The packages whose state has one owner per piece (no mixins, no stubs under TYPE_CHECKING,
# no class on two project bases, chains of at most three): every package once it is composed.
COMPOSED_PACKAGES = ("a2c_agent", "a2c_computer", "a2c_protocol", "a2c_server")
MAX_MODULES_PER_FOLDER = 15
NOT_COUNTED = frozenset({"__init__.py", "__main__.py", "_version.py"})
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", [*ROLE_PACKAGES, "a2c_protocol"])
def test_no_import_circle(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    graph = import_graph(package, Path(module.__file__).parent)
    assert f"{package}._version" in graph  # the walk found the package's modules
    assert find_cycles(graph) == []


def sources(package: str) -> Path:
    dist = "a2c-protocol-core" if package == "a2c_protocol" else package.replace("_", "-")
    src = ROOT / "packages" / dist / "src" / package
    assert (src / "_version.py").is_file()  # the path names the package's sources
    return src


def crowded(src: Path) -> dict[str, int]:
    """``folder -> module count`` of every folder under ``src`` (itself included) over the bound."""
    counts = {
        str(folder.relative_to(src)): sum(
            1 for p in folder.glob("*.py") if p.name not in NOT_COUNTED
        )
        for folder in sorted({src, *(p.parent for p in src.rglob("*.py"))})
    }
    return {name: n for name, n in counts.items() if n > MAX_MODULES_PER_FOLDER}


@pytest.mark.parametrize("package", [*ROLE_PACKAGES, "a2c_protocol"])
def test_no_folder_over_15_modules(package: str) -> None:
    assert crowded(sources(package)) == {}


def test_the_graph_sees_a_circle(tmp_path: Path) -> None:
    # The check itself can fail: a circle through a TYPE_CHECKING import and a relative one.
    pkg = tmp_path / "pkg"
    (pkg / "_sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from ._a import A\n")
    (pkg / "_a.py").write_text("from ._sub._b import B\nA = 1\n")
    (pkg / "_sub" / "__init__.py").write_text("")
    (pkg / "_sub" / "_b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import _a\nB = 2\n"
    )
    (pkg / "_c.py").write_text("from . import _a\n")
    graph = import_graph("pkg", pkg)
    assert graph["pkg._c"] == {"pkg._a"}
    assert find_cycles(graph) == [["pkg._a", "pkg._sub._b"]]


def test_the_folder_check_sees_a_crowded_room(tmp_path: Path) -> None:
    # The check itself can fail: a room with one module too many; __init__/_version not counted.
    (tmp_path / "_room").mkdir()
    for name in ("__init__", "__main__", "_version", *(f"_m{i}" for i in range(15))):
        (tmp_path / f"{name}.py").write_text("")
        (tmp_path / "_room" / f"{name}.py").write_text("")
    (tmp_path / "_room" / "_one_more.py").write_text("")
    assert crowded(tmp_path) == {"_room": MAX_MODULES_PER_FOLDER + 1}


@pytest.mark.parametrize("package", COMPOSED_PACKAGES)
def test_every_piece_of_state_has_one_owner(package: str) -> None:
    assert ownership_problems(sources(package)) == []


@pytest.mark.parametrize("package", ["a2c_agent", "a2c_computer", "a2c_server"])
def test_no_private_name_taken_from_a_sibling_module(package: str) -> None:
    assert private_imports(package, sources(package)) == []


def test_the_private_import_check_sees_a_private_name(tmp_path: Path) -> None:
    # The check itself can fail: a private name is reported, a private module is not.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_a.py").write_text("_helper = 1\nshared = 2\n")
    (pkg / "_b.py").write_text("from . import _a\nfrom ._a import _helper, shared\n")
    assert private_imports("pkg", pkg) == ["pkg._b:2 _helper"]


def test_the_ownership_check_sees_mixins_stubs_diamonds_and_towers(tmp_path: Path) -> None:
    # The check itself can fail: each rule is broken once, and an exception tree is exempt.
    (tmp_path / "_a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "class Base: pass\n"
        "class PartMixin(Base): pass\n"
        "class Other: pass\n"
        "class Both(Base, Other): pass\n"
        "class Stubbed:\n"
        "    if TYPE_CHECKING:\n"
        "        def sibling(self) -> None: ...\n"
        "class Two(Base): pass\n"
        "class Three(Two): pass\n"
        "class Four(Three): pass\n"
        "class RootError(Exception): pass\n"
        "class AError(RootError): pass\n"
        "class BError(AError): pass\n"
        "class CError(BError): pass\n"
    )
    problems = [p.split(": ", 1)[1] for p in ownership_problems(tmp_path)]
    assert problems == [
        "class PartMixin is a mixin",
        "Both stands on project classes ['Base', 'Other']",
        "Stubbed declares stubs under TYPE_CHECKING: sibling",
        "Four heads a project inheritance chain of 4",
    ]
