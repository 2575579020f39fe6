"""Faults of the triangle: crashing MCP servers, a dying Computer, a restarting Server,
and upstream authorization failures (4006/4007) reaching the Agent.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, RemoteError, result_error_code, result_text, tool_authorization
from a2c_protocol import A2CError
from a2c_testkit.triangle import (
    computer_process,
    deployment,
    eventually,
    scene_http_process,
    server_process,
    stdio_scene_entry,
    streamable_entry,
    write_config,
    write_scene,
)

WINDOW = {"uri": "window://org.example.f/main", "name": "Main", "text": "hi",
          "annotations": {"priority": 0.5, "audience": ["assistant"]}}  # fmt: skip


async def _echo_works(agent: AsyncAgent) -> bool:
    try:
        result = await agent.call_tool("box", "echo", {"text": "ping"}, timeout=10)
    except A2CError:  # not reconnected / not re-joined yet
        return False
    return not result.is_error and result_text(result) == "desk: ping"


async def test_killed_mcp_server_mid_call_gives_4003_then_restarts(
    procs: Any, tmp_path: Path
) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": [WINDOW]})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    marker = tmp_path / "slow.marker"
    async with deployment(procs.log_dir, config, track=procs.track) as running:
        agent = running.agent
        pid = int(result_text(await agent.call_tool("box", "pid", {}, timeout=30)))
        call = asyncio.create_task(
            agent.call_tool("box", "slow", {"seconds": 120, "marker": str(marker)}, timeout=120)
        )
        await eventually(lambda: marker.exists(), what="slow tool started")
        os.kill(pid, signal.SIGKILL)
        result = await asyncio.wait_for(call, 60)
        assert result.is_error
        assert result_error_code(result) == 4003
        # The Computer restarts the MCP server with backoff; calls work again.
        await eventually(lambda: _echo_works(agent), timeout=90, what="calls work after restart")
        new_pid = int(result_text(await agent.call_tool("box", "pid", {}, timeout=30)))
        assert new_pid != pid


async def test_killed_computer_mid_call_fails_promptly(procs: Any, tmp_path: Path) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": [WINDOW]})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    marker = tmp_path / "slow.marker"
    async with deployment(procs.log_dir, config, track=procs.track) as running:
        agent, computer = running.agent, running.computer
        call = asyncio.create_task(
            agent.call_tool("box", "slow", {"seconds": 300, "marker": str(marker)}, timeout=300)
        )
        await eventually(lambda: marker.exists(), what="slow tool started")
        started = time.monotonic()
        computer.kill()  # SIGKILL the whole group: no goodbye from the Computer
        with pytest.raises(RemoteError) as info:
            await asyncio.wait_for(call, 120)
        # Settled when the Server notices the socket is gone, not at the 300 s timeout.
        assert time.monotonic() - started < 120
        assert info.value.code == 500
        assert info.value.details == {
            "computer_name": "box", "reason": "computer_disconnected", "delivered": True,
        }  # fmt: skip
        await eventually(
            lambda: "box" not in agent.tools, what="tools of the dead computer dropped"
        )


async def test_server_restart_clients_reconnect_and_rejoin(procs: Any, tmp_path: Path) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": [WINDOW]})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    office = f"office-{uuid.uuid4()}"
    async with server_process(procs.log_dir, track=procs.track, name="server-1") as first:
        port, url = first.port, first.url
        agent = AsyncAgent(url, name="planner")
        await agent.open()
        await agent.join_office(office)
        computer_cm = computer_process(
            procs.log_dir,
            config=config,
            server_url=url,
            office=office,
            name="box",
            track=procs.track,
        )
        await computer_cm.__aenter__()
        await eventually(lambda: agent.tools.get("box"), what="computer joined")
    try:
        # The first server is gone; bring a new one up on the same port.
        async with server_process(procs.log_dir, port=port, track=procs.track, name="server-2"):
            await eventually(
                lambda: _echo_works(agent), timeout=120, what="calls work after restart"
            )
            room = await agent.list_room()
            assert {s.name for s in room} == {"planner", "box"}
            assert agent.office_id == office
    finally:
        await computer_cm.__aexit__(None, None, None)
        await agent.close()


async def test_upstream_401_and_403_become_4006_and_4007_with_a_safe_hint(
    procs: Any, tmp_path: Path
) -> None:
    scene = write_scene(tmp_path / "web.json", {"name": "web", "windows": []})
    async with scene_http_process(procs.log_dir, scene, track=procs.track) as mcp_url:
        entries = [
            streamable_entry("anon", mcp_url, tool_meta={"secure": {"alias": "anon_secure"}}),
            streamable_entry(
                "limited", mcp_url, headers={"Authorization": "Bearer limited"},
                tool_meta={"secure": {"alias": "limited_secure"}},
            ),
            streamable_entry(
                "good", mcp_url, headers={"Authorization": "Bearer good"},
                tool_meta={"secure": {"alias": "good_secure"}},
            ),
        ]  # fmt: skip
        config = write_config(tmp_path / "computer.json", entries)
        async with deployment(procs.log_dir, config, track=procs.track) as running:
            agent = running.agent
            await eventually(
                lambda: (
                    {t.name for t in agent.tools.get("box", ())} >= {"anon_secure", "good_secure"}
                ),
                what="all three servers' tools listed",
            )
            ok = await agent.call_tool("box", "good_secure", {}, timeout=30)
            assert result_text(ok) == "web: secret data"

            required = await agent.call_tool("box", "anon_secure", {}, timeout=30)
            failed = await agent.call_tool("box", "limited_secure", {}, timeout=30)
    for result, code, server_name in ((required, 4006, "anon"), (failed, 4007, "limited")):
        assert result.is_error
        assert result_error_code(result) == code
        info = tool_authorization(result)
        assert info is not None
        assert info.code == code
        assert info.mcp_server == server_name
        assert info.message
        raw = json.dumps(result.meta)
        assert "Bearer" not in raw
