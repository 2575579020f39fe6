"""The MCP Inspector's CLI (pinned, run by ``npx``) against ``a2c-agent mcp``.

The Inspector is an MCP host other than the Python ``mcp`` client: it spawns the bridge over
stdio (configured through the environment, as a host config does) and lists and calls its
tools, then does the same over streamable HTTP with a bearer token. Skipped when node/npx
is absent; CI installs node (``.ci/run``) and must run it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2c_testkit.processes import bin_path, free_port, spawn
from a2c_testkit.triangle import (
    computer_process,
    server_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

#: Pinned (``npm view @modelcontextprotocol/inspector version`` tells the newest).
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
SCENE = {"name": "scene-a", "resources": True, "subscribe": True, "windows": []}


@pytest.fixture(scope="session")
def npx() -> str:
    found = shutil.which("npx")
    if found is None or shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("node and npx are required in CI (.ci/run installs them)")
        pytest.skip("node/npx not installed")
    return found


async def inspector(npx: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """Run the Inspector CLI once; its JSON answer on stdout, decoded."""
    process = await asyncio.create_subprocess_exec(
        # A loaded CI machine starts a Python process slowly: more than the default 15 s.
        npx, "-y", INSPECTOR, "--cli", "--connect-timeout", "180000", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    # The first run downloads the package: generous.
    out, err = await asyncio.wait_for(process.communicate(), timeout=600)
    assert process.returncode == 0, f"inspector failed ({process.returncode}): {err.decode()}"
    return json.loads(out)


async def wait_for_tool(npx: str, args: list[str], name: str) -> list[dict[str, Any]]:
    """tools/list until ``name`` is served (the bridge joins on every spawn)."""
    for _ in range(30):
        tools: list[dict[str, Any]] = (await inspector(npx, *args, "--method", "tools/list"))[
            "tools"
        ]
        if any(tool["name"] == name for tool in tools):
            return tools
        await asyncio.sleep(1)
    raise AssertionError(f"{name} never listed")


async def test_the_inspector_cli_lists_and_calls_over_stdio_and_http(
    procs: Any, tmp_path: Path, npx: str
) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    scene = write_scene(tmp_path / "scene.json", SCENE)
    config = write_config(tmp_path / "alpha.json", [stdio_scene_entry("scene", scene)])
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=config, server_url=server.url, office=office, name="alpha",
            track=procs.track,
        ),
    ):  # fmt: skip
        # stdio, configured by the environment as in a host's config file
        env = [f"A2C_SERVER_URL={server.url}", f"A2C_OFFICE={office}"]
        stdio = ["-e", env[0], "-e", env[1], bin_path("a2c-agent"), "mcp"]
        tools = await wait_for_tool(npx, stdio, "alpha__echo")
        echo = next(tool for tool in tools if tool["name"] == "alpha__echo")
        assert "alpha" in echo["description"]
        called = await inspector(
            npx, *stdio, "--method", "tools/call", "--tool-name", "alpha__echo",
            "--tool-arg", "text=inspected",
        )  # fmt: skip
        assert called["content"][0]["text"] == "scene-a: inspected"
        assert not called.get("isError")

        # streamable HTTP with a bearer token
        port = free_port()
        argv = [bin_path("a2c-agent"), "--server", server.url, "--office", office,
                "mcp", "--http", f"127.0.0.1:{port}", "--http-token", "tok"]  # fmt: skip
        async with spawn("bridge-http", argv, log_dir=log_dir) as bridge:
            procs.track(bridge)
            await bridge.wait_for_log("serving MCP at", timeout=90)
            http = [f"http://127.0.0.1:{port}/mcp", "--transport", "http",
                    "--header", "Authorization: Bearer tok"]  # fmt: skip
            await wait_for_tool(npx, http, "alpha__echo")
            called = await inspector(
                npx, *http, "--method", "tools/call", "--tool-name", "alpha__echo",
                "--tool-arg", "text=over-http",
            )  # fmt: skip
            assert called["content"][0]["text"] == "scene-a: over-http"
        # the Inspector leaving after each command is normal: no ERROR
        assert "ERROR" not in bridge.logs() and "Traceback" not in bridge.logs(), bridge.logs()
