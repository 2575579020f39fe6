"""Every line of the Server's and the Computer's ``--log-format json`` streams is one JSON
object.

The Computer hosts a stdio MCP server that writes to stderr (FastMCP logs each request there)
and an SSE MCP server that is killed mid-run. MCP stderr lines used to appear raw, a dead
SSE server an ``ERROR mcp.client.sse`` with an httpx traceback, and the Server's lines
carried uvicorn's ``color_message`` with ANSI escapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from a2c_agent import AsyncAgent
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config


@contextlib.asynccontextmanager
async def killable_http_server() -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """The testkit's HTTP MCP server; the test kills it with SIGKILL (no graceful close)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_testkit.mcp_servers.http_server", "--port", "0",
        "--announce", stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line.startswith(b"PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}", proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


def json_lines(text: str, who: str) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            raise AssertionError(f"{who} line {number} is not JSON: {line!r}") from None
        assert isinstance(record, dict), f"{who} line {number}: {line!r}"
        assert "\x1b" not in line, f"{who} line {number} has an ANSI escape: {line!r}"
        records.append(record)
    return records


async def test_every_line_of_both_json_streams_is_one_json_object(
    procs: Any, tmp_path: Path
) -> None:
    auto = {"auto_apply": True}
    office = f"office-{uuid.uuid4()}"
    async with killable_http_server() as (base, http):
        servers = [
            {
                "type": "sse",
                "name": "legacy",
                "default_tool_meta": auto,
                "server_parameters": {"url": f"{base}/sse", "timeout": 20},
            },
            stdio_server_config("fastimg", "fastmcp_image", default_tool_meta=auto),
        ]
        config = write_config(tmp_path / "computer.json", servers)
        async with (
            server_process(
                procs.log_dir, track=procs.track, extra_args=["--log-format", "json"]
            ) as server,
            AsyncAgent(server.url, name="planner") as agent,
        ):
            await agent.join_office(office)
            async with computer_process(
                procs.log_dir, config=config, server_url=server.url, office=office,
                name="box", track=procs.track, global_args=["--log-format", "json"],
            ) as computer:  # fmt: skip
                await eventually(
                    lambda: {t.name for t in agent.tools.get("box", [])} >= {"search", "image"},
                    what="tools of both MCP servers",
                )
                result = await agent.call_tool("box", "image", {"size": 100}, timeout=30)
                assert not result.is_error
                http.kill()  # the SSE server dies, its stream cut mid-body
                await http.wait()
                await computer.wait_for_log("MCP server legacy went away", timeout=60)
                await eventually(
                    lambda: "search" not in {t.name for t in agent.tools.get("box", [])},
                    what="the dead server's tools to go",
                )
            computer_log = computer.logs()
        server_log = server.process.logs()

    records = json_lines(computer_log, "computer")
    stderr = [r for r in records if r["logger"] == "a2c_computer.mcp_stderr.fastimg"]
    assert any("image of 100 bytes" in r["message"] for r in stderr), stderr
    assert all(r["mcp_server"] == "fastimg" and r["level"] in ("INFO", "WARNING") for r in stderr)
    dying = [r for r in records if r["level"] in ("WARNING", "ERROR", "CRITICAL")]
    assert not [r for r in dying if r["level"] != "WARNING"], dying
    # The library's traceback of the lost stream is DEBUG detail (the run has -v).
    noisy = [r for r in records if r["logger"].startswith("mcp.") and r["level"] != "DEBUG"]
    assert not noisy, noisy
    went_away = [r for r in dying if "legacy went away" in r["message"]]
    assert len(went_away) == 1 and "exception" not in went_away[0]

    server_records = json_lines(server_log, "server")
    assert server_records
    assert not [r for r in server_records if "color_message" in r]
