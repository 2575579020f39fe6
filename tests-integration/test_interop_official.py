"""Interop with the REAL official SDK (``a2c-smcp`` 0.2.2 and 0.4.2) on our Server.

The official packages run in throwaway venvs (:mod:`a2c_testkit.official`, cached under
``~/.cache/a2c-interop``), started as child processes with their default auth providers,
exactly as their README shows: no ``auth.role`` at connect. The scripts they run are in
``tests-integration/interop/``; the SDKs' code is used, never copied.

Covered: each official line alone (join, list tools, a call answered, a missing tool, a
missing MCP server's 4014 in that line's own spelling), and mixed offices: an official
0.4.2 Agent with our ``a2c-computer`` (0.2), our ``a2c-agent`` (0.2) with an official 0.4.2
Computer. Both mixes only work because the Server translates (docs/compatibility.md).
The remaining cells of the who-works-with-whom table are covered too: an official 0.2.2
Agent with our Computer and with an official 0.4.2 Computer, an official 0.4.2 Agent with an
official 0.2.2 Computer, and our Agent with an official Computer of either line, where
``server:list_room`` and ``/metrics`` must name each session's line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, decline_input, result_text
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.metrics import metric_sample, scrape_metrics
from a2c_testkit.official import OfficialProcess, official_venv, run_official, start_official
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

pytestmark = pytest.mark.slow

SCRIPTS = Path(__file__).parent / "interop"


@asynccontextmanager
async def official_computer(
    version: str, url: str, office: str, name: str, log_dir: Path
) -> AsyncIterator[OfficialProcess]:
    python = await asyncio.to_thread(official_venv, version)
    process = start_official(
        python, SCRIPTS / "official_computer.py", url, office, name, sys.executable,
        log_path=log_dir / f"official-computer-{name}.log",
    )  # fmt: skip
    try:
        await eventually(
            lambda: "JOINED" in process.output() or process.popen.poll() is not None,
            timeout=120, what="official computer joined",
        )  # fmt: skip
        assert "JOINED" in process.output(), process.output()[-4000:]
        yield process
    finally:
        await asyncio.to_thread(process.stop)


async def official_agent(version: str, url: str, office: str, computer: str) -> dict[str, Any]:
    python = await asyncio.to_thread(official_venv, version)
    run = await asyncio.to_thread(
        run_official, python, SCRIPTS / "official_agent.py", url, office, "official-agent",
        computer, timeout=240,
    )  # fmt: skip
    out: dict[str, Any] = json.loads(run.check().strip().splitlines()[-1])
    return out


def office() -> str:
    return f"interop-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize(
    ("version", "echo", "server_key"),
    [("0.2.2", "echo", "mcp_server_name"), ("0.4.2", "plain__echo", "mcp_server")],
)
async def test_an_official_line_alone_on_our_server(
    procs: Any, version: str, echo: str, server_key: str
) -> None:
    room = office()
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        official_computer(version, server.url, room, "their-box", procs.log_dir),
    ):
        out = await official_agent(version, server.url, room, "their-box")
    assert echo in [tool["name"] for tool in out["tools"]]
    assert out["call"]["isError"] is False
    assert out["call"]["content"][0]["text"] == "plain:echo:hello"
    assert out["missing_tool"]["isError"] is True
    assert out["missing_server"]["code"] == 4014
    assert out["missing_server"]["payload"][server_key] == "no_such_server"


async def test_an_official_0_4_agent_uses_our_computer(procs: Any, tmp_path: Path) -> None:
    room = office()
    config = write_config(tmp_path / "computer.json", [stdio_server_config("plain", "plain")])
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config, server_url=server.url, office=room,
                         name="our-box", confirm="allow", track=procs.track),
    ):  # fmt: skip
        out = await official_agent("0.4.2", server.url, room, "our-box")
    # Our 0.2 tools, shown to 0.4 in one synthetic bundle; the call is renamed back.
    assert [(t["name"], t["bundle_id"]) for t in out["tools"]] == [
        ("a2c-0-2__echo", "a2c-0-2"), ("a2c-0-2__search", "a2c-0-2")]  # fmt: skip
    assert out["call"]["isError"] is False
    assert out["call"]["content"][0]["text"] == "plain:echo:hello"
    assert out["missing_tool"]["isError"] is True
    assert out["config"]["servers"]["plain"]["bundle_id"] == "plain"
    assert out["missing_server"]["code"] == 4014
    assert out["missing_server"]["payload"]["mcp_server"] == "no_such_server"
    assert "mcp_server_name" not in out["missing_server"]["payload"]


async def test_our_agent_uses_an_official_0_4_computer(procs: Any) -> None:
    room = office()
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        AsyncAgent(server.url, name="our-agent") as agent,
    ):
        await agent.join_office(room)
        async with official_computer("0.4.2", server.url, room, "their-box", procs.log_dir):
            await eventually(lambda: agent.tools.get("their-box"), timeout=120,
                             what="tools of the official computer")  # fmt: skip
            names = sorted(tool.name for tool in agent.tools["their-box"])
            assert names == ["plain__echo", "plain__search"]
            result = await agent.call_tool("their-box", "plain__echo", {"text": "hi"}, timeout=60)
            assert result_text(result) == "plain:echo:hi"
            missing = await agent.call_tool("their-box", "no_such_tool", {}, timeout=60)
            assert missing.is_error
            config = await agent.get_config("their-box")
            assert list(config.servers) == ["plain"]


@asynccontextmanager
async def some_computer(
    kind: str, procs: Any, url: str, room: str, config: Path
) -> AsyncIterator[object]:
    """``kind`` is ``ours`` (``a2c-computer run``, 0.2) or an official version."""
    if kind == "ours":
        async with computer_process(procs.log_dir, config=config, server_url=url, office=room,
                                    name="box", confirm="allow", track=procs.track) as ours:  # fmt: skip
            yield ours
    else:
        async with official_computer(kind, url, room, "box", procs.log_dir) as theirs:
            yield theirs


@pytest.mark.parametrize(
    ("agent", "computer", "echo", "server_key"),
    [
        ("0.2.2", "ours", "echo", "mcp_server_name"),  # a pure 0.2 office
        ("0.2.2", "0.4.2", "plain__echo", "mcp_server_name"),  # translated for the 0.2 Agent
        ("0.4.2", "0.2.2", "a2c-0-2__echo", "mcp_server"),  # translated for the 0.4 Agent
    ],
)
async def test_an_official_agent_with_a_computer_of_another_kind(
    procs: Any, tmp_path: Path, agent: str, computer: str, echo: str, server_key: str
) -> None:
    room = office()
    config = write_config(tmp_path / "computer.json", [stdio_server_config("plain", "plain")])
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        some_computer(computer, procs, server.url, room, config),
    ):
        out = await official_agent(agent, server.url, room, "box")
    assert echo in [tool["name"] for tool in out["tools"]]
    assert all(("bundle_id" in tool) is (agent == "0.4.2") for tool in out["tools"])
    assert out["call"]["isError"] is False
    assert out["call"]["content"][0]["text"] == "plain:echo:hello"
    assert out["missing_tool"]["isError"] is True
    # Config servers keep their key (the server name is the bundle id); 0.2 has no bundle_id.
    assert ("bundle_id" in out["config"]["servers"]["plain"]) is (agent == "0.4.2")
    assert out["missing_server"]["code"] == 4014
    assert out["missing_server"]["payload"][server_key] == "no_such_server"
    other_key = {"mcp_server": "mcp_server_name", "mcp_server_name": "mcp_server"}[server_key]
    assert other_key not in out["missing_server"]["payload"]


@pytest.mark.parametrize(
    ("version", "tools"),
    [("0.2.2", ["echo", "search"]), ("0.4.2", ["plain__echo", "plain__search"])],
)
async def test_our_agent_with_an_official_computer_sees_each_sessions_line(
    procs: Any, version: str, tools: list[str]
) -> None:
    room = office()
    line = version.rpartition(".")[0]
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        AsyncAgent(server.url, name="our-agent") as agent,
    ):
        await agent.join_office(room)
        async with official_computer(version, server.url, room, "their-box", procs.log_dir):
            await eventually(lambda: agent.tools.get("their-box"), timeout=120,
                             what="tools of the official computer")  # fmt: skip
            assert sorted(tool.name for tool in agent.tools["their-box"]) == tools
            result = await agent.call_tool("their-box", tools[0], {"text": "hi"}, timeout=60)
            assert result_text(result) == "plain:echo:hi"
            versions = {s.name: s.a2c_version for s in await agent.list_room()}
            assert versions["our-agent"].startswith("0.2.")
            assert versions["their-box"].startswith(line + ".")
            text = await scrape_metrics(f"{server.url}/metrics")
    by_line = "a2c_server_connected_clients_by_protocol"
    assert metric_sample(text, by_line, protocol=line) == (2 if line == "0.2" else 1)
    assert (metric_sample(text, by_line, protocol="0.4") or 0) == (0 if line == "0.2" else 1)
    # A mixed office's requests are translated (and counted); a pure office's never are.
    translated = metric_sample(text, "a2c_server_translated_requests_total",
                               event="client:tool_call", agent_protocol="0.2",
                               computer_protocol="0.4")  # fmt: skip
    assert (translated or 0) == (1 if line == "0.4" else 0)


@pytest.mark.parametrize(("version", "echo"), [("0.2.2", "echo"), ("0.4.2", "plain__echo")])
async def test_our_agent_taking_input_calls_an_official_computer_as_before(
    procs: Any, version: str, echo: str
) -> None:
    # The call declares a2c_input (docs/compatibility.md): an official Computer ignores the
    # key and answers the call as it always does.
    room = office()
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        AsyncAgent(server.url, name="our-agent", input_handler=decline_input) as agent,
    ):
        await agent.join_office(room)
        async with official_computer(version, server.url, room, "their-box", procs.log_dir):
            await eventually(lambda: agent.tools.get("their-box"), timeout=120,
                             what="tools of the official computer")  # fmt: skip
            result = await agent.call_tool("their-box", echo, {"text": "hi"}, timeout=60)
    assert result_text(result) == "plain:echo:hi"
