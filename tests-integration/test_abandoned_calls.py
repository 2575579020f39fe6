"""Nothing runs that the user abandoned, with real processes.

``a2c-server``, ``a2c-computer run`` with the stdio scene MCP server, and an Agent that is
either the ``a2c-agent`` CLI as a child process or the SDK in the test. The scene's
``slow`` tool writes "started" to its marker file and "cancelled" when the MCP server
itself sees the cancellation, so every verdict is read on the MCP side, never inferred
from timing; the Computer's log names the cancel reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import termios
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2c_agent import AsyncAgent, InternalError, result_error_code, result_text
from a2c_testkit.processes import ManagedProcess, bin_path, spawn
from a2c_testkit.redis_server import redis_server
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    deployment,
    eventually,
    redis_node_process,
    server_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)


def _config(tmp_path: Path, **fields: Any) -> Path:
    scene = write_scene(tmp_path / "desk.json", {"name": "desk", "windows": []})
    return write_config(tmp_path / "computer.json", [stdio_scene_entry("desk", scene, **fields)])


def _marker(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _slow(marker: Path, seconds: float = 240) -> dict[str, Any]:
    return {"seconds": seconds, "marker": str(marker)}


async def _cancelled_with(computer: ManagedProcess, marker: Path, reason: str) -> None:
    """The MCP server saw the cancel and the Computer logged it with ``reason``."""
    await eventually(lambda: _marker(marker) == "cancelled", what="MCP server saw the cancel")
    await computer.wait_for_log(f"cancelled (reason {reason})", timeout=60)


@attrs.frozen
class Office:
    server: ServerProcess
    computer: ManagedProcess
    office: str


@contextlib.asynccontextmanager
async def _office(procs: Any, tmp_path: Path) -> AsyncIterator[Office]:
    """Server + Computer "box" in an office whose Agent seat is free again (for the CLI)."""
    async with deployment(procs.log_dir, _config(tmp_path), track=procs.track) as t:
        await t.agent.leave_office()
        yield Office(t.server, t.computer, t.office)


def _cli_call(office: Office, marker: Path) -> list[str]:
    params = json.dumps(_slow(marker))
    return [
        bin_path("a2c-agent"), "--server", office.server.url, "--office", office.office,
        "--json", "call", "box", "slow", params, "--timeout", "280",
    ]  # fmt: skip


async def test_ctrl_c_in_the_cli_cancels_the_tool_on_the_computer(
    procs: Any, tmp_path: Path
) -> None:
    """An Agent that leaves cancels its calls: SIGINT exits 130 and the Agent's own cancel reaches the Computer."""
    marker = tmp_path / "slow.marker"
    async with (
        _office(procs, tmp_path) as office,
        spawn("agent-cli", _cli_call(office, marker), log_dir=procs.log_dir) as cli,
    ):
        procs.track(cli)
        await eventually(lambda: _marker(marker) == "started", what="slow tool started")
        os.kill(cli.pid, signal.SIGINT)
        await eventually(lambda: not cli.running, what="CLI exit")
        assert cli.popen.returncode == 130, cli.logs()
        assert "interrupted: cancel sent to box for 'slow'" in cli.logs()
        # Sent by the Agent before it left (agent_requested), not by the Server for it.
        await _cancelled_with(office.computer, marker, "agent_requested")
        assert "4103" not in cli.logs()


async def test_async_with_unwound_by_cancellation_cancels_calls_of_other_tasks(
    procs: Any, tmp_path: Path
) -> None:
    """An Agent that leaves cancels its calls: ``async with AsyncAgent`` cancelled while a call runs in another task."""
    marker = tmp_path / "slow.marker"
    async with _office(procs, tmp_path) as office:
        entered = asyncio.Event()
        calls: list[asyncio.Future[Any]] = []

        async def script() -> None:
            async with AsyncAgent(office.server.url, name="script", reconnect=False) as agent:
                await agent.join_office(office.office)
                calls.append(asyncio.ensure_future(
                    agent.call_tool("box", "slow", _slow(marker), timeout=280)
                ))  # fmt: skip
                entered.set()
                await asyncio.Event().wait()  # until the script is cancelled (Ctrl-C)

        task = asyncio.ensure_future(script())
        await asyncio.wait_for(entered.wait(), 60)
        await eventually(lambda: _marker(marker) == "started", what="slow tool started")
        task.cancel()  # the call's own task is not cancelled: leaving must cancel it
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.gather(*calls, return_exceptions=True)
        await _cancelled_with(office.computer, marker, "agent_requested")


async def test_a_killed_agent_process_leaves_no_tool_running(procs: Any, tmp_path: Path) -> None:
    """An Agent that leaves cancels its calls: SIGKILL mid-call; the Server cancels the call for it (agent_gone)."""
    marker = tmp_path / "slow.marker"
    async with (
        _office(procs, tmp_path) as office,
        spawn("agent-cli", _cli_call(office, marker), log_dir=procs.log_dir) as cli,
    ):
        procs.track(cli)
        await eventually(lambda: _marker(marker) == "started", what="slow tool started")
        cli.kill()
        await _cancelled_with(office.computer, marker, "agent_gone")
        await office.server.process.wait_for_log("tool call cancelled: its agent left")


async def test_confirm_ask_without_a_terminal_refuses_with_the_way_to_allow(
    procs: Any, tmp_path: Path
) -> None:
    """Nobody can confirm: stdin is /dev/null (systemd, nohup, docker): fail closed with 4005."""
    marker = tmp_path / "slow.marker"
    config = _config(tmp_path, default_tool_meta=None)  # every tool needs a confirmation
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        AsyncAgent(server.url, name="planner") as agent,
    ):
        await agent.join_office("o-ask")
        async with computer_process(
            procs.log_dir, config=config, server_url=server.url, office="o-ask", name="box",
            confirm="ask", track=procs.track,
        ) as computer:  # fmt: skip
            await eventually(lambda: agent.tools.get("box"), what="computer joined")
            for _ in range(2):
                result = await agent.call_tool("box", "slow", _slow(marker, 1), timeout=60)
                assert result.is_error and result_error_code(result) == 4005, result
                text = result_text(result)
                assert "--confirm allow" in text and "auto_apply: true" in text, text
            assert not marker.exists()  # never ran
            assert computer.logs().count("tools without auto_apply: true are refused") == 1


async def test_a_server_stopped_mid_call_gets_the_call_cancelled_on_the_computer(
    procs: Any, tmp_path: Path
) -> None:
    """A stopping Server: the Agent got its error from the stopping Server; nothing runs on."""
    marker = tmp_path / "slow.marker"
    async with deployment(
        procs.log_dir, _config(tmp_path), track=procs.track,
        server_args=["--shutdown-grace", "1"],
    ) as t:  # fmt: skip
        call = asyncio.ensure_future(t.agent.call_tool("box", "slow", _slow(marker), timeout=280))
        await eventually(lambda: _marker(marker) == "started", what="slow tool started")
        os.kill(t.server.process.pid, signal.SIGTERM)
        with pytest.raises(InternalError) as caught:
            await asyncio.wait_for(call, 120)
        assert (caught.value.details or {}).get("reason") == "server_shutdown"
        await _cancelled_with(t.computer, marker, "server_gone")
        assert t.computer.running  # it waits for its Server to come back


@contextlib.contextmanager
def _terminal_computer(
    procs: Any, config: Path, server_url: str, office: str
) -> Iterator[tuple[ManagedProcess, int]]:
    """``a2c-computer run --confirm ask`` whose stdin is a pty it holds in the foreground."""
    master, slave = os.openpty()
    log_path = procs.log_dir / "computer-tty.log"
    procs.log_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        bin_path("a2c-computer"), "-v", "run", "--config", str(config), "--server", server_url,
        "--office", office, "--name", "box", "--confirm", "ask",
    ]  # fmt: skip
    with log_path.open("ab") as log:
        popen = subprocess.Popen(
            argv, stdin=slave, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True,
            # The new session's leader takes the pty as its controlling terminal, so its
            # group is the terminal's foreground group: --confirm ask may ask.
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )  # fmt: skip
    os.close(slave)
    process = procs.track(ManagedProcess("computer-tty", argv, log_path, popen))
    try:
        yield process, master
    finally:
        process.kill()
        os.close(master)


async def test_a_killed_agent_withdraws_the_open_question_and_a_late_yes_runs_nothing(
    procs: Any, tmp_path: Path
) -> None:
    """An Agent that leaves, with ``--confirm ask``: the Server's cancel withdraws the question."""
    marker = tmp_path / "slow.marker"
    config = _config(tmp_path, default_tool_meta=None)
    async with server_process(procs.log_dir, track=procs.track) as server:
        with _terminal_computer(procs, config, server.url, "o-tty") as (computer, master):
            async with AsyncAgent(server.url, name="planner") as agent:
                await agent.join_office("o-tty")
                await eventually(lambda: agent.tools.get("box"), what="computer joined")
            office = Office(server, computer, "o-tty")
            async with spawn("agent-cli", _cli_call(office, marker), log_dir=procs.log_dir) as cli:
                procs.track(cli)
                await computer.wait_for_log("Run tool slow", timeout=60)
                cli.kill()
                await computer.wait_for_log("question withdrawn", timeout=60)
                await computer.wait_for_log("cancelled (reason agent_gone)", timeout=60)
            os.write(master, b"y\n")
            await computer.wait_for_log("answer 'y' ignored", timeout=60)
            assert not marker.exists()  # the tool never started


async def test_a_killed_agent_on_one_node_leaves_no_tool_running_on_another(
    procs: Any, tmp_path: Path
) -> None:
    """An Agent that leaves, with ``--redis``: the Agent's node cancels the call of a Computer on node B."""
    marker = tmp_path / "slow.marker"
    with redis_server() as redis:
        nodes = []
        async with contextlib.AsyncExitStack() as stack:
            for name in ("A", "B"):
                nodes.append(await stack.enter_async_context(redis_node_process(
                    procs.log_dir, redis.url, name, prefix="ab", track=procs.track
                )))  # fmt: skip
            a, b = nodes
            computer = await stack.enter_async_context(computer_process(
                procs.log_dir, config=_config(tmp_path), server_url=b.url, office="o-ab",
                name="box", track=procs.track,
            ))  # fmt: skip
            async with AsyncAgent(a.url, name="planner") as agent:
                await agent.join_office("o-ab")
                await eventually(lambda: agent.tools.get("box"), what="computer joined")
            office = Office(a, computer, "o-ab")
            cli = await stack.enter_async_context(
                spawn("agent-cli", _cli_call(office, marker), log_dir=procs.log_dir)
            )
            procs.track(cli)
            await eventually(lambda: _marker(marker) == "started", what="slow tool started")
            cli.kill()
            await _cancelled_with(computer, marker, "agent_gone")
            await a.process.wait_for_log("tool call cancelled: its agent left")
