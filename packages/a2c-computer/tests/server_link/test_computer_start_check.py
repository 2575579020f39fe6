"""The Server is checked while the MCP servers start: a wrong token or URL
fails at once, not after the slowest MCP server (an ``npx`` one can take a minute) came
up; the MCP servers already started are stopped. The real ``a2c-computer run`` against the
real Server, with an MCP server that never finishes starting."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from a2c_computer import Computer
from a2c_server import ServerSettings
from a2c_testkit.server import connect_raw, running_server
from a2c_testkit.triangle import eventually

# Writes its pid, then never answers ``initialize``: a start that never settles (the
# Computer's own start timeout is 30 s: far past when the refusal must have come).
STUCK = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(3600)"


def _stuck_config(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "stuck.pid"
    config = tmp_path / "computer.json"
    server = {"type": "stdio", "name": "stuck",
              "server_parameters": {"command": sys.executable,
                                    "args": ["-c", STUCK, str(marker)]}}  # fmt: skip
    config.write_text(json.dumps({"servers": {"stuck": server}}))
    return config, marker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid)


def _state(pid: int) -> str:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "gone"
    return next((line for line in status.splitlines() if line.startswith("State:")), "")


async def test_a_wrong_token_fails_while_the_mcp_servers_still_start(tmp_path: Path) -> None:
    config, marker = _stuck_config(tmp_path)
    async with running_server(ServerSettings(auth_token="right-token")) as srv:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2c_computer._cli", "run", "--config", str(config),
            "--server", srv.url, "--office", "o", "--name", "box", "--token", "wrong-token",
            "--socketio-path", srv.socketio_path, "--confirm", "deny",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    text = err.decode()
    assert proc.returncode == 1, text
    assert "refused this Computer" in text and "401" in text, text
    # Said at once, before the (slower) stop of the MCP server that was starting.
    said = text.index("; stopping the MCP servers that were starting")
    assert "ERROR a2c_computer.link" in text[:said] and "401" in text[:said], text
    # Refused before the stuck MCP server's start had settled (its state is logged once
    # the start is over), and that start was torn down: its process is gone.
    assert "MCP server stuck:" not in text, text
    assert "Traceback" not in text
    if marker.exists():  # it may have been stopped before it wrote its pid
        pid = int(marker.read_text())
        await eventually(lambda: not _alive(pid), timeout=30, what="stuck MCP server stopped")


async def test_the_check_joins_nothing_and_the_real_join_waits_for_the_mcp_servers(
    tmp_path: Path,
) -> None:
    """The check is one connect closed at once: the office sees the Computer enter only
    when its MCP servers have started, with its tools."""
    config = tmp_path / "computer.json"
    plain = {"type": "stdio", "name": "plain",
             "server_parameters": {"command": sys.executable,
                                   "args": ["-m", "a2c_testkit.mcp_servers.plain"]}}  # fmt: skip
    config.write_text(json.dumps({"servers": {"plain": plain}}))
    async with (
        running_server() as srv,
        connect_raw(srv, "agent") as agent,
    ):
        assert await agent.join("agent", "ag", "o") == (True, None)
        computer = Computer(config, name="box-start-check", server_url=srv.url, office_id="o",
                            socketio_path=srv.socketio_path)  # fmt: skip
        async with computer:
            assert computer.link is not None and computer.link.connections == 1
            assert sorted(t.name for t in computer.tools()) == ["echo", "search"]
            event, note = await agent.next_notification(timeout=30)
            assert event.value == "notify:enter_office" and isinstance(note, dict)
            assert note["computer"] == "box-start-check"
        assert agent.notifications.empty() or (
            (await agent.next_notification(timeout=30))[0].value == "notify:leave_office"
        )
