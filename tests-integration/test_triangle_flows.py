"""Dynamic flows of the whole triangle, each party its own process.

The Server is the real ``a2c-server`` command, the Computer the real ``a2c-computer run``
with scene MCP servers over stdio and Streamable HTTP; the Agent is the library in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from a2c_agent import result_error_code, result_text
from a2c_protocol import PROTOCOL_VERSION, Event
from a2c_testkit.triangle import (
    Deployment,
    deployment,
    eventually,
    scene_http_process,
    stdio_scene_entry,
    streamable_entry,
    write_config,
    write_scene,
)

EDITOR = {
    "uri": "window://org.example.editor/main",
    "name": "Editor",
    "text": "print('hello')",
    "annotations": {"priority": 0.9, "audience": ["assistant"]},
}
TERMINAL = {
    "uri": "window://org.example.term/session/1",
    "name": "Terminal",
    "text": "$ make test\n12 passed",
    "annotations": {"priority": 0.4, "audience": ["assistant"]},
    "_meta": {"fullscreen": False},
}


@contextlib.asynccontextmanager
async def triangle(
    procs: Any, tmp_path: Path, servers: Sequence[dict[str, Any]], *, computer_name: str = "box-1"
) -> AsyncIterator[Deployment]:
    config = write_config(tmp_path / "computer.json", servers)
    async with deployment(
        procs.log_dir, config, computer_name=computer_name, track=procs.track
    ) as running:
        yield running


def _scene(tmp_path: Path, name: str, windows: list[dict[str, Any]], **extra: Any) -> Path:
    return write_scene(tmp_path / f"{name}.json", {"name": name, "windows": windows, **extra})


async def test_computer_joining_fills_the_tool_cache_and_calls_work(
    procs: Any, tmp_path: Path
) -> None:
    scene = _scene(tmp_path, "desk", [EDITOR])
    async with triangle(procs, tmp_path, [stdio_scene_entry("desk", scene)]) as t:
        names = {tool.name for tool in t.agent.tools[t.computer_name]}
        assert {"echo", "slow", "set_text"} <= names
        room = await t.agent.list_room()
        assert {(s.name, s.role.value, s.a2c_version) for s in room} == {
            ("planner", "agent", PROTOCOL_VERSION),
            ("box-1", "computer", PROTOCOL_VERSION),
        }
        result = await t.agent.call_tool("box-1", "echo", {"text": "hi"}, timeout=30)
        assert not result.is_error
        assert result_text(result) == "desk: hi"


async def test_window_update_reaches_the_agent_and_the_refreshed_desktop(
    procs: Any, tmp_path: Path
) -> None:
    scene = _scene(tmp_path, "desk", [EDITOR, TERMINAL])
    async with triangle(procs, tmp_path, [stdio_scene_entry("desk", scene)]) as t:
        desktop = await t.agent.get_desktop("box-1")
        assert desktop[0] == "window://org.example.editor/main\n\nprint('hello')"
        async with t.agent.notifications(Event.NOTIFY_UPDATE_DESKTOP) as stream:
            await t.agent.call_tool(
                "box-1", "set_text", {"uri": EDITOR["uri"], "text": "print('bye')"}, timeout=30
            )
            note = await eventually(lambda: stream_next(stream), what="notify:update_desktop")
        assert note.computer == "box-1"
        refreshed = await t.agent.get_desktop("box-1")
        assert refreshed[0] == "window://org.example.editor/main\n\nprint('bye')"


async def stream_next(stream: Any) -> Any:
    try:
        return await asyncio.wait_for(stream.__anext__(), 1.0)
    except TimeoutError:
        return None


async def test_computer_leaving_removes_its_tools(procs: Any, tmp_path: Path) -> None:
    scene = _scene(tmp_path, "desk", [EDITOR])
    async with triangle(procs, tmp_path, [stdio_scene_entry("desk", scene)]) as t:
        assert t.agent.tools.get("box-1")
        await t.computer.stop()
        await eventually(lambda: "box-1" not in t.agent.tools, what="tools dropped")
        assert [s.name for s in await t.agent.list_room()] == ["planner"]


async def test_tool_timeout_is_4004_and_the_mcp_server_sees_the_cancel(
    procs: Any, tmp_path: Path
) -> None:
    scene = _scene(tmp_path, "desk", [EDITOR])
    marker = tmp_path / "slow.marker"
    async with triangle(procs, tmp_path, [stdio_scene_entry("desk", scene)]) as t:
        result = await t.agent.call_tool(
            "box-1", "slow", {"seconds": 120, "marker": str(marker)}, timeout=2
        )
        assert result.is_error
        assert result_error_code(result) == 4004
        await eventually(lambda: _marker(marker) == "cancelled", what="MCP server saw the cancel")
        after = await t.agent.call_tool("box-1", "echo", {"text": "still here"}, timeout=30)
        assert result_text(after) == "desk: still here"


async def test_agent_cancel_reaches_the_mcp_server(procs: Any, tmp_path: Path) -> None:
    scene = _scene(tmp_path, "desk", [EDITOR])
    marker = tmp_path / "slow.marker"
    async with triangle(procs, tmp_path, [stdio_scene_entry("desk", scene)]) as t:
        call = asyncio.create_task(
            t.agent.call_tool("box-1", "slow", {"seconds": 120, "marker": str(marker)}, timeout=120)
        )
        await eventually(lambda: _marker(marker) == "started", what="slow tool started")
        call.cancel()  # the agent answers a cancelled call with server:tool_call_cancel
        with contextlib.suppress(asyncio.CancelledError):
            await call
        await eventually(lambda: _marker(marker) == "cancelled", what="MCP server saw the cancel")


def _marker(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def test_streamable_http_mcp_server_tools_and_windows(procs: Any, tmp_path: Path) -> None:
    http_scene = _scene(tmp_path, "web", [TERMINAL])
    async with scene_http_process(procs.log_dir, http_scene, track=procs.track) as url:
        servers = [streamable_entry("web", url)]
        async with triangle(procs, tmp_path, servers) as t:
            result = await t.agent.call_tool("box-1", "echo", {"text": "over http"}, timeout=30)
            assert result_text(result) == "web: over http"
            desktop = await t.agent.get_desktop("box-1")
            assert desktop == ["window://org.example.term/session/1\n\n$ make test\n12 passed"]
            assert result_error_code(result) is None
