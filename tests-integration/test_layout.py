"""The layout of the three role packages: no import circle, no module too big to read.

A circle (``_computer`` <-> ``_reload`` was one, ``_auth`` / ``_auth._jwt`` / ``_settings`` in
the Server another) means neither module can be read, tested or moved without the other.
Imports under ``if TYPE_CHECKING:`` count too. A module over 450 lines holds more than one
reason to change (issue 25 split the ones that did).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from a2c_testkit.import_graph import find_cycles, import_graph

ROLE_PACKAGES = ("a2c_agent", "a2c_computer", "a2c_server")
MAX_MODULE_LINES = 450
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("package", [*ROLE_PACKAGES, "a2c_protocol"])
def test_no_import_circle(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    graph = import_graph(package, Path(module.__file__).parent)
    assert f"{package}._version" in graph  # the walk found the package's modules
    assert find_cycles(graph) == []


def oversized(src: Path) -> dict[str, int]:
    """``module path -> line count`` of every ``.py`` under ``src`` over the bound."""
    sizes = {
        str(path.relative_to(src)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(src.rglob("*.py"))
    }
    return {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}


@pytest.mark.parametrize("package", ROLE_PACKAGES)
def test_no_module_over_450_lines(package: str) -> None:
    src = ROOT / "packages" / package.replace("_", "-") / "src" / package
    assert (src / "_version.py").is_file()  # the path names the package's sources
    assert oversized(src) == {}


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


def test_the_size_check_sees_a_big_module(tmp_path: Path) -> None:
    # The check itself can fail: one line over the bound, in a subpackage, is reported.
    (tmp_path / "_sub").mkdir()
    (tmp_path / "_fits.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "_sub" / "_big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert oversized(tmp_path) == {"_sub/_big.py": MAX_MODULE_LINES + 1}
