"""tools/build_wheels.py builds only the published wheels unless asked, and a role with its
core (README: installing a role from a clone)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_script() -> ModuleType:
    path = REPO / "tools" / "build_wheels.py"
    spec = importlib.util.spec_from_file_location("a2c_tools_build_wheels", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


build_wheels = _load_script()
PUBLIC = build_wheels.published(REPO)


def test_default_is_the_published_distributions_only():
    assert PUBLIC == ["a2c-protocol-core", "a2c-server", "a2c-computer", "a2c-agent"]
    chosen = build_wheels.plan([], include_private=False, public=PUBLIC)
    assert chosen == PUBLIC
    assert not set(chosen) & set(build_wheels.PRIVATE)
    everything = build_wheels.plan([], include_private=True, public=PUBLIC)
    assert everything == [*PUBLIC, "a2c-demo", "a2c-testkit"]


def test_a_role_comes_with_its_core():
    assert build_wheels.plan(["a2c-agent"], include_private=False, public=PUBLIC) == [
        "a2c-protocol-core",
        "a2c-agent",
    ]
    core = "a2c-protocol-core"
    assert build_wheels.plan([core], include_private=False, public=PUBLIC) == [core]
    with pytest.raises(ValueError, match="unknown distribution 'a2c-agnet'"):
        build_wheels.plan(["a2c-agnet"], include_private=False, public=PUBLIC)


def test_building_a_role_gives_exactly_its_wheel_and_the_core(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "build_wheels.py"), "a2c-agent",
         "--out-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    wheels = sorted(p.name.split("-")[0] for p in tmp_path.glob("*.whl"))
    assert wheels == ["a2c_agent", "a2c_protocol_core"]


def test_readme_installs_roles_from_a_clone():
    """The wheels are on no package index: the README must not send users there."""
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"pip install (a2c-|'a2c-)", readme)
    assert "tools/build_wheels.py a2c-agent" in readme
    assert "not on a package index" in readme
    for page in ("getting-started.md", "agent.md", "server.md"):
        text = (REPO / "docs" / page).read_text(encoding="utf-8")
        assert not re.search(r"pip install (a2c-|'a2c-)", text), page
