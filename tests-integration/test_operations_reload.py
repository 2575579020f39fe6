"""Live config reload of the real ``a2c-computer run``.

One reload adds a server, changes one, removes one and renames a tool of a fourth in place
while a call on that fourth is in flight; then a broken file is picked up by the watch.
The Agent must see exactly one ``notify:update_config`` and one ``notify:update_tool_list``
for the reload and none for the broken file; the call in flight must complete; only the
changed server restarts.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from a2c_agent import Event, result_text
from a2c_testkit.triangle import (
    deployment,
    eventually,
    stdio_scene_entry,
    write_config,
    write_scene,
)


def entry(tmp_path: Path, name: str, aliases: dict[str, str], **fields: Any) -> dict[str, Any]:
    scene = write_scene(tmp_path / f"{name}.json", {"name": name, "windows": []})
    meta = {tool: {"alias": alias, "auto_apply": True} for tool, alias in aliases.items()}
    return stdio_scene_entry(name, scene, tool_meta=meta, **fields)


def exposed(t: Any) -> set[str]:
    return {tool.name for tool in t.agent.tools.get(t.computer_name, [])}


async def test_reload_adds_changes_removes_and_rejects_a_broken_file(
    procs: Any, tmp_path: Path
) -> None:
    path = tmp_path / "computer.json"
    beta_aliases = {"echo": "beta_echo", "pid": "beta_pid"}
    write_config(path, [
        entry(tmp_path, "alpha", {}),
        entry(tmp_path, "beta", beta_aliases),
        entry(tmp_path, "gamma", {"echo": "gamma_echo"}),
    ])  # fmt: skip
    async with deployment(
        procs.log_dir, path, track=procs.track, computer_args=["--watch-config"]
    ) as t:
        assert {"echo", "slow", "pid", "beta_echo", "gamma_echo"} <= exposed(t)
        alpha_pid = result_text(await t.agent.call_tool("box", "pid", {}, timeout=30))
        beta_pid = result_text(await t.agent.call_tool("box", "beta_pid", {}, timeout=30))

        seen: list[Event] = []
        stream = t.agent.notifications(Event.NOTIFY_UPDATE_CONFIG, Event.NOTIFY_UPDATE_TOOL_LIST)

        async def record() -> None:
            async for note in stream:
                seen.append(note.event)

        recorder = asyncio.ensure_future(record())
        marker = tmp_path / "slow.marker"
        slow = asyncio.ensure_future(t.agent.call_tool(
            "box", "slow", {"seconds": 6, "marker": str(marker)}, timeout=120,
        ))  # fmt: skip
        await eventually(marker.exists, what="the slow call running")

        write_config(path, [
            entry(tmp_path, "alpha", {"echo": "alpha_echo"}),  # in place: a new alias
            entry(tmp_path, "beta", beta_aliases,  # its connection changes: restart
                  server_parameters={**entry(tmp_path, "beta", {})["server_parameters"],
                                     "env": {"RELOADED": "1"}}),
            entry(tmp_path, "delta", {"echo": "delta_echo"}),  # added; gamma removed
        ])  # fmt: skip
        os.kill(t.computer.pid, signal.SIGHUP)

        await eventually(lambda: Event.NOTIFY_UPDATE_TOOL_LIST in seen, what="tool list notice")
        tools = await eventually(
            lambda: {"alpha_echo", "beta_echo", "delta_echo"} <= exposed(t) and exposed(t),
            what="the reloaded tool list in the Agent's cache",
        )
        assert "gamma_echo" not in tools and "echo" not in tools
        done = await asyncio.wait_for(slow, 120)
        assert not done.is_error and result_text(done) == "slept"
        assert result_text(await t.agent.call_tool("box", "pid", {}, timeout=30)) == alpha_pid
        assert result_text(await t.agent.call_tool("box", "beta_pid", {}, timeout=30)) != beta_pid
        echoed = await t.agent.call_tool("box", "alpha_echo", {"text": "hi"}, timeout=30)
        assert result_text(echoed) == "alpha: hi"
        echoed = await t.agent.call_tool("box", "delta_echo", {"text": "hi"}, timeout=30)
        assert result_text(echoed) == "delta: hi"

        # A broken file, noticed by --watch-config: nothing changes, the log says why.
        path.write_text('{"servers": {"alpha": {"type": "stdio"', encoding="utf-8")
        await t.computer.wait_for_log("config reload rejected", timeout=60)
        echoed = await t.agent.call_tool("box", "delta_echo", {"text": "still"}, timeout=30)
        assert result_text(echoed) == "delta: still"
        assert (await t.agent.get_tools("box")) and exposed(t) == tools

        recorder.cancel()
        stream.close()
        assert seen.count(Event.NOTIFY_UPDATE_CONFIG) == 1
        assert seen.count(Event.NOTIFY_UPDATE_TOOL_LIST) == 1
        logs = t.computer.logs()
        assert "restarted=beta" in logs and "started=delta" in logs
        assert "stopped=gamma" in logs and "updated=alpha" in logs
