"""The recipe of docs/compatibility.md for the official ``a2c-smcp`` SDK on our Server,
run for real: its Agent and its Computer, 0.2.2 and 0.4.2, each in its
throwaway venv (:mod:`a2c_testkit.official`), against ``a2c-server`` with a client token.
Also the page's claims: the README-style Agent that never joins fails with a pydantic error
around 4103, and both packages install an ``a2c-computer`` command."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2c_testkit.official import official_venv, run_official, start_official
from a2c_testkit.processes import bin_path
from a2c_testkit.triangle import eventually, server_process

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[1] / "docs" / "compatibility.md"
RECIPE = re.compile(
    r"<!-- official-recipe: (?P<role>\w+) -->\s*\n<!-- no-run -->\s*\n```python\n(?P<code>.*?)```",
    re.S,
)
TOKEN = "recipe-client-token-4d2a"
EXPECTED = {"0.2.2": "note_add -> 1 note(s)", "0.4.2": "desk__note_add -> 1 note(s)"}

# What the SDK's README does, in our words: connect, then call a tool with no join first.
NO_JOIN = """
import asyncio, os
from a2c_smcp.agent import AsyncSMCPAgentClient, DefaultAgentAuthProvider

async def main():
    auth = DefaultAgentAuthProvider(agent_id="readme-agent", office_id=os.environ["A2C_OFFICE"],
                                    api_key=os.environ["A2C_TOKEN"])
    client = AsyncSMCPAgentClient(auth_provider=auth)
    await client.connect_to_server(os.environ["A2C_SERVER_URL"])
    result = await client.emit_tool_call("their-box", "note_add", {"text": "x"}, 30)
    print("RESULT", result.isError, result.content[0].text)
    await client.disconnect()

asyncio.run(main())
"""


def _recipes(tmp_path: Path) -> dict[str, Path]:
    found = {m["role"]: m["code"] for m in RECIPE.finditer(PAGE.read_text(encoding="utf-8"))}
    assert set(found) == {"agent", "computer"}, found
    paths = {}
    for role, code in found.items():
        paths[role] = tmp_path / f"recipe_{role}.py"
        paths[role].write_text(code, encoding="utf-8")
    return paths


@pytest.mark.parametrize("version", ["0.2.2", "0.4.2"])
async def test_the_documented_recipe_runs_with_the_official_sdk(
    procs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    python = await asyncio.to_thread(official_venv, version)
    scripts = _recipes(tmp_path)
    async with server_process(procs.log_dir, track=procs.track,
                              extra_args=["--auth-token", TOKEN]) as server:  # fmt: skip
        office = f"recipe-{uuid.uuid4().hex[:8]}"
        # The official scripts run in child processes that read these (run_official's env).
        for name, value in {"A2C_SERVER_URL": server.url, "A2C_OFFICE": office,
                            "A2C_TOKEN": TOKEN, "DESK_PYTHON": sys.executable}.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        computer = start_official(python, scripts["computer"],
                                  log_path=procs.log_dir / f"recipe-computer-{version}.log")  # fmt: skip
        try:
            await eventually(
                lambda: f"joined {office}" in computer.output() or computer.popen.poll() is not None,
                timeout=120, what="the recipe's Computer joined",
            )  # fmt: skip
            assert f"joined {office}" in computer.output(), computer.output()[-4000:]
            run = await asyncio.to_thread(run_official, python, scripts["agent"], timeout=240)
            assert EXPECTED[version] in run.check(), run.stderr[-4000:]

            # The page's account of the README's Agent: no join, a pydantic error around 4103.
            readme = await asyncio.to_thread(run_official, python, NO_JOIN, timeout=240)
            said = readme.check()
            assert "RESULT True" in said and "4103" in said, said
            assert "validation error for CallToolResult" in said, said
        finally:
            await asyncio.to_thread(computer.stop)


async def test_both_packages_install_an_a2c_computer_command() -> None:
    """Why the page says the official SDK needs a venv of its own."""
    ours = Path(bin_path("a2c-computer"))
    for version in ("0.2.2", "0.4.2"):
        python = await asyncio.to_thread(official_venv, version)
        scripts = run_official(python, "import importlib.metadata as m; print(sorted(e.name for e "
                               "in m.distribution('a2c-smcp').entry_points))")  # fmt: skip
        assert "'a2c-computer'" in scripts.check()
        assert (python.parent / "a2c-computer").exists() and ours.name == "a2c-computer"
