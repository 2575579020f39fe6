"""A lone surrogate in an Agent's tool arguments, through the real triangle.

The Agent sends ``{"text": "\\udcff"}`` (valid JSON) while ten unrelated calls to the same
stdio MCP server are in flight: only the bad call fails, naming the field.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from a2c_agent import result_error_code, result_text
from a2c_testkit.triangle import (
    deployment,
    eventually,
    stdio_scene_entry,
    write_config,
    write_scene,
)


async def test_a_lone_surrogate_fails_only_its_own_call(procs: Any, tmp_path: Path) -> None:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    config = write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])
    async with deployment(procs.log_dir, config, track=procs.track) as running:
        agent = running.agent
        pid = result_text(await agent.call_tool("box", "pid", {}, timeout=30))
        markers = [tmp_path / f"slow-{i}" for i in range(10)]
        calls = [
            asyncio.create_task(
                agent.call_tool("box", "slow", {"seconds": 2, "marker": str(m)}, timeout=60)
            )
            for m in markers
        ]
        await eventually(lambda: all(m.exists() for m in markers), what="slow calls started")
        bad = await agent.call_tool("box", "echo", {"text": "\udcff"}, timeout=30)
        assert bad.is_error and result_error_code(bad) == 4003
        assert "argument text" in result_text(bad)
        results = await asyncio.gather(*calls)
        assert [r.is_error for r in results] == [False] * 10, results
        # the same MCP server process served everything: no restart
        assert result_text(await agent.call_tool("box", "pid", {}, timeout=30)) == pid
