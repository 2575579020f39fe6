"""The a2c-computer command: check (conformant / non-conformant) and run (clean shutdown)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION, Event
from a2c_testkit import running_server


def write_config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "computer.json"
    path.write_text(json.dumps({"servers": servers}), encoding="utf-8")
    return path


async def cli(*args: str, timeout: float = 120) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2c_computer._cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def join_agent(srv: Any) -> Any:
    """A bare Socket.IO Agent ``ag`` in office ``o1``."""
    import socketio

    agent = socketio.AsyncClient(reconnection=False, handle_sigint=False)
    await agent.connect(
        f"{srv.url}?a2c_version={PROTOCOL_VERSION}",
        namespaces=[NAMESPACE],
        socketio_path=srv.socketio_path,
        auth={"role": "agent"},
    )
    await agent.call(
        Event.JOIN_OFFICE.value,
        {"role": "agent", "name": "ag", "office_id": "o1"},
        namespace=NAMESPACE,
    )
    return agent


async def test_check_on_a_conformant_server_exits_zero(servers: Any, tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "desk": servers.desk("desk", "--profile", "conformant"),
            "plain": servers.plain(tool_prefix="plain_"),  # its echo would clash with desk's
            "off": servers.desk("off", disabled=True),
        },
    )
    code, out, _ = await cli("check", "--config", str(config))
    assert code == 0, out
    assert "MCP server desk: ready" in out and "MCP server off: disabled" in out
    # which MCP era each server speaks (both offered: the handshake, see docs/computer.md)
    assert "MCP server desk: ready (MCP 2025-11-25, handshake era)" in out, out
    assert "MCP server off: disabled\n" in out
    assert "window://org.a2c.test.desk/main" in out and "plain_echo, plain_search" in out
    assert "v0.2 conformant" in out and "clash" not in out


async def test_check_on_a_non_conformant_server_lists_every_problem(
    servers: Any, tmp_path: Path
) -> None:
    config = write_config(
        tmp_path,
        {
            "legacy": servers.desk("legacy", "--profile", "legacy"),
            "full": servers.desk("full"),
            "twin": servers.desk("twin", "--profile", "conformant"),
        },
    )
    code, out, _ = await cli("check", "--config", str(config))
    assert code == 1
    for rule in ("[query]", "[priority]", "[audience]", "[host]", "[host-collision]"):
        assert rule in out, rule
    assert "looks like a v0.1 integer priority" in out
    assert "org.a2c.test.desk" in out.split("[host-collision]")[1]


async def test_check_reports_a_server_that_cannot_start(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "broken": {
                "type": "stdio",
                "name": "broken",
                "server_parameters": {"command": "/nonexistent/x"},
            }
        },
    )
    code, out, _ = await cli("check", "--config", str(config), "--timeout", "20")
    assert code == 1 and "MCP server broken: failed" in out


async def test_check_rejects_an_invalid_config(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"x": {"type": "stdio", "name": "y", "server_parameters": {"command": "c"}}}
    )
    code, _, err = await cli("check", "--config", str(config))
    assert code == 2 and "$.servers['x'].name" in err


async def test_run_joins_the_office_and_stops_cleanly_on_sigterm(
    servers: Any, tmp_path: Path
) -> None:

    config = write_config(tmp_path, {"plain": servers.plain()})
    async with running_server() as srv:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "a2c_computer._cli",
            "run",
            "--config",
            str(config),
            "--server",
            srv.url,
            "--office",
            "o1",
            "--name",
            "cli-box",
            "--socketio-path",
            srv.socketio_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
        agent = await join_agent(srv)
        try:
            tools: Any = None
            for _ in range(300):
                tools = await agent.call(
                    Event.GET_TOOLS.value,
                    {"agent": "ag", "req_id": "1", "computer": "cli-box"},
                    namespace=NAMESPACE,
                    timeout=60,
                )
                if "tools" in tools:
                    break
                await asyncio.sleep(0.2)
            assert {t["name"] for t in tools["tools"]} == {"echo", "search"}
        finally:
            await agent.disconnect()
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert "stopped" in err.decode()


async def test_run_with_a_refused_token_exits_at_once_with_the_servers_reason(
    tmp_path: Path,
) -> None:
    from a2c_server import ServerSettings

    config = write_config(tmp_path, {})
    async with running_server(ServerSettings(auth_token="right")) as srv:
        # Were the refusal retried like an unreachable Server, this would take 600 s and
        # the 120 s communicate() bound would fail the test.
        code, _, err = await cli(
            "run",
            "--config",
            str(config),
            "--server",
            srv.url,
            "--office",
            "o1",
            "--name",
            "box",
            "--token",
            "wrong",
            "--wait-server",
            "600",
            "--socketio-path",
            srv.socketio_path,
        )
    assert code == 1, err
    assert "refused this Computer: [401] Authentication failed: invalid token" in err
    assert "not reachable yet" not in err and "Traceback" not in err


async def test_check_prints_each_clash_once_with_the_fix_and_no_empty_tool_lists(
    servers: Any, tmp_path: Path
) -> None:
    """Copies of one server are reported once with the fix; none loses its tools silently."""
    config = write_config(
        tmp_path,
        {name: servers.desk(name, "--profile", "conformant") for name in ("a", "b", "c")},
    )
    code, out, _ = await cli("check", "--config", str(config))
    assert code == 1, out
    assert "tools (0)" not in out
    assert out.count("hidden by name clashes") == 2  # b and c, whose tools a keeps
    assert out.count("of MCP server b (") == 1 and out.count("of MCP server c (") == 1
    assert 'Fix: add "tool_prefix": "b_" to servers.b' in out
    assert 'Fix: add "tool_prefix": "c_" to servers.c' in out


async def test_check_never_calls_unchecked_servers_conformant(tmp_path: Path) -> None:
    """No 'windows: v0.2 conformant' when every server failed: nothing was checked."""
    broken = {"type": "stdio", "name": "broken", "server_parameters": {"command": "/nonexistent/x"}}
    config = write_config(tmp_path, {"broken": broken})
    code, out, _ = await cli("check", "--config", str(config), "--timeout", "5")
    assert code == 1
    assert "conformant" not in out
    assert "windows: NOT checked for broken" in out


BACKGROUND_LAUNCHER = """
import fcntl, os, sys, termios
master, slave = os.openpty()
os.setsid()
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)  # the pty is this session's terminal
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)  # a job of its own: the terminal's foreground group is the launcher's
    os.dup2(slave, 0)
    os.execv(sys.executable, [sys.executable, "-m", "a2c_computer._cli", *sys.argv[1:]])
print(pid, flush=True)
os.waitpid(pid, 0)
"""


async def test_run_in_the_background_with_confirm_ask_keeps_serving_and_fails_closed(
    servers: Any, tmp_path: Path
) -> None:
    """A Computer in the background never reads the terminal (that would stop it).

    Nobody can confirm, so the call is refused (4005) with the way to
    allow it, never run unconfirmed; the Computer keeps serving.
    """
    import os

    entry = servers.desk("desk", default_tool_meta=None)  # every tool needs confirmation
    config = write_config(tmp_path, {"desk": entry})
    async with running_server() as srv:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            BACKGROUND_LAUNCHER,
            "run",
            "--config",
            str(config),
            "--server",
            srv.url,
            "--office",
            "o1",
            "--name",
            "bg-box",
            "--socketio-path",
            srv.socketio_path,
            "--confirm",
            "ask",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        child = int((await asyncio.wait_for(proc.stdout.readline(), 60)).decode())
        agent = await join_agent(srv)
        try:
            result: Any = None
            for _ in range(300):
                result = await agent.call(
                    Event.TOOL_CALL.value,
                    {
                        "agent": "ag",
                        "req_id": "bg",
                        "computer": "bg-box",
                        "tool_name": "add",
                        "params": {"a": 2, "b": 3},
                        "timeout": 30,
                    },
                    namespace=NAMESPACE,
                    timeout=60,
                )
                if not (isinstance(result, dict) and result.get("code") == 404):
                    break  # 404: the Computer has not joined yet
                await asyncio.sleep(0.1)
            assert isinstance(result, dict) and result.get("isError") is True, result
            assert result["meta"]["error_code"] == 4005, result
            assert "--confirm allow" in result["content"][0]["text"], result
        finally:
            await agent.disconnect()
            os.kill(child, signal.SIGKILL)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert "stdin is not the foreground terminal" in err.decode()


async def test_check_without_a_terminal_names_the_tools_confirm_ask_would_refuse(
    servers: Any, tmp_path: Path
) -> None:
    """The tools ``--confirm ask`` would refuse are named once, with the way to allow them."""
    entry = servers.desk("desk", tool_meta={"add": {"auto_apply": True}}, default_tool_meta=None)
    config = write_config(tmp_path, {"desk": entry})
    _, out, _ = await cli("check", "--config", str(config))  # exit 1: the scene's lint
    (line,) = [x for x in out.splitlines() if "refuses (4005)" in x]
    assert "add_window" in line and " add," not in line and "--confirm allow" in line


async def test_check_names_tools_that_only_run_as_mcp_tasks(servers: Any, tmp_path: Path) -> None:
    entry = servers.plain("plain")
    entry["server_parameters"]["env"] = {"A2C_TEST_TASK_TOOL": "1"}
    config = write_config(tmp_path, {"plain": entry})
    _, out, _ = await cli("check", "--config", str(config))
    assert "tools (3): echo, search; not offered, they can only run as MCP tasks" in out, out
    assert out.rstrip().count("research") == 1, out
