"""The package layout: no import circle among the Computer's own modules.

A circle (``_computer`` <-> ``_reload`` was one) means neither module can be read, tested or
moved without the other. Imports under ``if TYPE_CHECKING:`` count too. The Agent is checked
here as well because it is cheap; the Server still has one circle (``_auth`` / ``_auth._jwt`` /
``_settings``) and is left to its own layout work.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from a2c_testkit.import_graph import find_cycles, import_graph


@pytest.mark.parametrize("package", ["a2c_computer", "a2c_agent"])
def test_no_import_circle(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    graph = import_graph(package, Path(module.__file__).parent)
    assert f"{package}._version" in graph  # the walk found the package's modules
    assert find_cycles(graph) == []


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
