"""Graceful shutdown of the real ``a2c-server`` and ``a2c-computer run``.

Each side gets SIGTERM while two tool calls are in flight: a short one, which must finish
within the grace period and reach the Agent, and one far longer than the grace, which
must end in a clear answer (never silence). The process must exit 0 and leave no child
behind.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import (
    Event,
    InternalError,
    cancel_reason_of,
    is_cancelled,
    result_error_code,
    result_text,
)
from a2c_testkit.processes import ManagedProcess, free_port
from a2c_testkit.triangle import (
    computer_process,
    deployment,
    eventually,
    stdio_scene_entry,
    write_config,
    write_scene,
)

# The short call must end inside the grace and the long one outlast it; the 6 s margin
# covers a loaded machine, and every second of GRACE is spent twice by this module.
SHORT = 2.0
GRACE = 8.0


def config(tmp_path: Path) -> Path:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    return write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene)])


def _processes() -> dict[int, int]:
    """pid -> parent pid of every live (non-zombie) process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The fields after the command (which may contain spaces) follow the last ')'.
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            table[int(entry.name)] = int(fields[1])
    return table


def descendants(pid: int) -> set[int]:
    """Children, grandchildren… of ``pid`` (MCP servers may run in sessions of their own)."""
    table = _processes()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in table.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    return pids & set(_processes())


async def exit_status(process: ManagedProcess, timeout: float = 90) -> int:
    await eventually(lambda: not process.running, timeout=timeout, what=f"{process.name} exit")
    code = process.popen.returncode
    assert code is not None
    return code


async def start_two_calls(t: Any, tmp_path: Path) -> tuple[asyncio.Task[Any], asyncio.Task[Any]]:
    markers = [tmp_path / "short.marker", tmp_path / "long.marker"]
    short = asyncio.ensure_future(t.agent.call_tool(
        t.computer_name, "slow", {"seconds": SHORT, "marker": str(markers[0])}, timeout=280,
    ))  # fmt: skip
    long = asyncio.ensure_future(t.agent.call_tool(
        t.computer_name, "slow", {"seconds": 270, "marker": str(markers[1])}, timeout=280,
    ))  # fmt: skip
    await eventually(lambda: all(m.exists() for m in markers), what="both calls running")
    return short, long


async def test_server_sigterm_lets_a_short_call_finish_and_answers_a_long_one(
    procs: Any, tmp_path: Path
) -> None:
    async with deployment(
        procs.log_dir, config(tmp_path), track=procs.track,
        server_args=["--shutdown-grace", str(GRACE)],
    ) as t:  # fmt: skip
        short, long = await start_two_calls(t, tmp_path)
        os.kill(t.server.process.pid, signal.SIGTERM)
        await t.server.process.wait_for_log("draining routed calls", timeout=60)
        # The long call holds the drain open for the whole grace: no new connection now.
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", t.server.port)
        result = await asyncio.wait_for(short, 120)
        assert not result.is_error and result_text(result) == "slept"
        with pytest.raises(InternalError) as caught:
            await asyncio.wait_for(long, 120)
        assert (caught.value.details or {}).get("reason") == "server_shutdown"
        assert await exit_status(t.server.process) == 0
        logs = t.server.process.logs()
        assert "draining routed calls" in logs and "grace period over" in logs


async def test_computer_sigterm_leaves_finishes_cancels_and_leaves_no_child(
    procs: Any, tmp_path: Path
) -> None:
    async with deployment(
        procs.log_dir, config(tmp_path), track=procs.track,
        computer_args=["--shutdown-grace", str(GRACE)],
    ) as t:  # fmt: skip
        computer = t.computer
        mcp_pid = int(result_text(await t.agent.call_tool("box", "pid", {}, timeout=30)))
        children = descendants(computer.pid)
        assert mcp_pid in children
        leaving = t.agent.notifications(Event.NOTIFY_LEAVE_OFFICE)
        short, long = await start_two_calls(t, tmp_path)
        os.kill(computer.pid, signal.SIGTERM)
        result = await asyncio.wait_for(short, 120)
        assert not result.is_error and result_text(result) == "slept"
        cancelled = await asyncio.wait_for(long, 120)
        assert cancelled.is_error and is_cancelled(cancelled)
        assert cancel_reason_of(cancelled) == "computer_shutdown"
        assert result_error_code(cancelled) is None  # 0.2.3: cancellation has no code
        assert await exit_status(computer) == 0
        assert alive(children | {computer.pid}) == set()
        async with asyncio.timeout(30):
            async for note in leaving:
                if getattr(note.payload, "computer", None) == "box":
                    break
        assert (tmp_path / "long.marker").read_text() == "cancelled"


async def test_computer_sigterm_while_it_waits_for_the_server_stops_at_once(
    procs: Any, tmp_path: Path
) -> None:
    """SIGTERM during ``--wait-server`` (a Server not up yet) stops the Computer there.

    It used to be seen only once the start had ended: here after 600 s, so a supervisor's
    stop would have ended in its SIGKILL instead.
    """
    nobody = f"http://127.0.0.1:{free_port()}"
    async with computer_process(
        procs.log_dir, config=config(tmp_path), server_url=nobody, office="o1", name="box",
        track=procs.track, extra_args=["--wait-server", "600"],
    ) as computer:  # fmt: skip
        await computer.wait_for_log("Server not reachable yet", timeout=120)
        children = descendants(computer.pid)
        assert children, "the stdio MCP server runs before the Server is reached"
        os.kill(computer.pid, signal.SIGTERM)
        assert await exit_status(computer, timeout=60) == 0
        assert alive(children) == set()
        logs = computer.logs()
        assert "stopped before the Server was reached" in logs
        assert "Traceback" not in logs
