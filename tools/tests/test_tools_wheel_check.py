"""Tests of the pure parts of tools/wheel_check.py.

The script itself builds wheels and installs from the package index, so it runs in
.ci/run, not here; these tests cover what decides pass or fail, on synthetic inputs.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from a2c_testkit.scripts import load_script

REPO = Path(__file__).resolve().parents[2]


wheel_check = load_script(REPO / "tools" / "wheel_check.py", "a2c_tools_wheel_check")


def _wheel(tmp_path: Path, files: dict[str, str]) -> Path:
    path = tmp_path / "a2c_agent-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


AGENT = wheel_check.Dist(
    name="a2c-agent", path="packages/a2c-agent", module="a2c_agent", version="0.2.0"
)
GOOD = {
    "a2c_agent/__init__.py": "",
    "a2c_agent/py.typed": "",
    "a2c_agent-0.2.0.dist-info/METADATA": "Metadata-Version: 2.4\nName: a2c-agent\nVersion: 0.2.0\n",
}


def test_tools_wheel_check_reads_the_published_distributions() -> None:
    dists = wheel_check.load_distributions(REPO)
    assert [dist.name for dist in dists] == [
        "a2c-protocol-core",
        "a2c-server",
        "a2c-computer",
        "a2c-agent",
    ]
    assert set(wheel_check.FORBIDDEN) == {dist.name for dist in dists[1:]}


def test_tools_wheel_check_closure_follows_requirements_transitively() -> None:
    graph = {
        "attrs": [],
        "cattrs": ["attrs", "typing-extensions", "exceptiongroup"],
        "typing-extensions": [],
        "a2c-protocol-core": ["attrs", "cattrs"],
        "mcp": ["httpx"],
    }
    allowed = wheel_check.requirement_closure(graph, frozenset({"attrs", "cattrs"}))
    assert allowed == {"attrs", "cattrs", "typing-extensions", "exceptiongroup"}


def test_tools_wheel_check_accepts_a_clean_wheel(tmp_path: Path) -> None:
    assert wheel_check.inspect_wheel(_wheel(tmp_path, GOOD), AGENT) == []


def test_tools_wheel_check_flags_version_typing_marker_and_stray_files(tmp_path: Path) -> None:
    files = dict(GOOD)
    del files["a2c_agent/py.typed"]
    files["a2c_agent-0.2.0.dist-info/METADATA"] = "Name: a2c-agent\nVersion: 0.2.1\n"
    files["tests/test_agent_x.py"] = ""
    problems = wheel_check.inspect_wheel(_wheel(tmp_path, files), AGENT)
    assert problems == [
        "METADATA Version is 0.2.1, the table says 0.2.0",
        "a2c_agent/py.typed is missing from the wheel",
        "unexpected top-level entries in the wheel: ['tests']",
        "test files shipped in the wheel: ['tests/test_agent_x.py']",
    ]
