"""0.2.3 semantics end to end: cancel / timeout markers and the directed window fetch.

Real processes: ``a2c-server``, ``a2c-computer run`` with a stdio scene MCP server, and the
SDK Agent in the test.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from a2c_agent import (
    cancel_reason_of,
    is_cancelled,
    is_timed_out,
    result_error_code,
)
from a2c_testkit.triangle import (
    deployment,
    eventually,
    stdio_scene_entry,
    write_config,
    write_scene,
)

STATUS = {
    "uri": "window://org.example.desk/status",
    "name": "Status",
    "text": "all green",
    "annotations": {"priority": 0.9, "audience": ["assistant"]},
    "_meta": {"fullscreen": True},
}
NOTES = {
    "uri": "window://org.example.desk/notes",
    "name": "Notes",
    "text": "buy milk",
    "annotations": {"priority": 0.1, "audience": ["assistant"]},
}


def _config(tmp_path: Path) -> Path:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": [STATUS, NOTES]})
    return write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])


def _marker(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def test_agent_cancel_answers_the_original_call_with_a2c_cancelled(
    procs: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "slow.marker"
    async with deployment(procs.log_dir, _config(tmp_path), track=procs.track) as t:
        call = asyncio.create_task(
            t.agent.call_tool(
                "box",
                "slow",
                {"seconds": 120, "marker": str(marker)},
                timeout=120,
                req_id="job-1",
            )
        )
        await eventually(lambda: _marker(marker) == "started", what="slow tool started")
        # Fire-and-forget: no ack is awaited, nothing is raised.
        assert await t.agent.cancel_tool_call("job-1") is None
        result = await asyncio.wait_for(call, 60)
        assert result.is_error and is_cancelled(result) and not is_timed_out(result)
        assert cancel_reason_of(result) == "agent_requested"
        assert result_error_code(result) is None  # cancellation has no error code
        assert result.meta is not None and result.meta["a2c_cancelled"] is True
        await eventually(lambda: _marker(marker) == "cancelled", what="MCP server saw the cancel")


async def test_timeouts_carry_a2c_timeout_on_both_sides(procs: Any, tmp_path: Path) -> None:
    marker = tmp_path / "slow.marker"
    async with deployment(procs.log_dir, _config(tmp_path), track=procs.track) as t:
        # The Computer's own timeout: its answer carries the marker and 4004.
        result = await t.agent.call_tool(
            "box", "slow", {"seconds": 120, "marker": str(marker)}, timeout=2
        )
        assert result.is_error and is_timed_out(result) and not is_cancelled(result)
        assert result.meta is not None and result.meta["a2c_timeout"] is True
        assert result_error_code(result) == 4004
        await eventually(lambda: _marker(marker) == "cancelled", what="MCP server saw the cancel")


async def test_window_fetch_is_exact_and_filters_before_organizing(
    procs: Any, tmp_path: Path
) -> None:
    async with deployment(procs.log_dir, _config(tmp_path), track=procs.track) as t:
        # Organized view: the fullscreen status window hides the notes.
        assert await t.agent.get_desktop("box") == [f"{STATUS['uri']}\n\nall green"]
        # Directed fetch: filtered first, so the hidden window is returned.
        assert await t.agent.get_desktop("box", window=NOTES["uri"]) == [
            f"{NOTES['uri']}\n\nbuy milk"
        ]
        assert await t.agent.get_desktop("box", window="window://org.example.desk/other") == []
        assert await t.agent.get_desktop("box", window=NOTES["uri"], size=0) == []
