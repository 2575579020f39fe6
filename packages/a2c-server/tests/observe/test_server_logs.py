"""The real ``a2c-server`` process at DEBUG: no token in any log line; JSON lines on request.

Clients connect over both transports with the configured token and with a wrong one, so
the CONNECT packets (``auth.token``) pass every layer that could log them: uvicorn, its
websocket library, python-socketio, the namespace.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_testkit.processes import ManagedProcess, bin_path, free_port, spawn, wait_until_healthy

TOKEN = "srv-Token-7f3a9c41-very-secret"
WRONG = "wrong-Token-0b1e77d2-also-secret"


@contextlib.asynccontextmanager
async def running_server(tmp_path: Path, *flags: str) -> AsyncIterator[tuple[str, ManagedProcess]]:
    port = free_port()
    argv = [bin_path("a2c-server"), "--host", "127.0.0.1", "--port", str(port), *flags]
    env = {"A2C_SERVER_AUTH_TOKEN": TOKEN}
    async with spawn("server", argv, log_dir=tmp_path, env=env) as process:
        url = f"http://127.0.0.1:{port}"
        await wait_until_healthy(f"{url}/healthz", process)
        yield url, process


async def _connect(url: str, token: str, transports: Sequence[str]) -> bool:
    sio = socketio.AsyncClient(reconnection=False)
    try:
        await sio.connect(
            f"{url}?a2c_version={PROTOCOL_VERSION}",
            namespaces=[NAMESPACE],
            auth={"role": "agent", "token": token},
            transports=list(transports),
            wait_timeout=30,
        )
    except socketio.exceptions.ConnectionError:
        return False
    finally:
        connected = sio.connected
        await sio.disconnect()
    return connected


async def _exercise(url: str, process: ManagedProcess) -> None:
    for transports in (["polling", "websocket"], ["websocket"]):
        assert await _connect(url, TOKEN, transports)
        assert not await _connect(url, WRONG, transports)
    # Both kinds of line are in the log before it is read.
    await process.wait_for_log("disconnected")
    await process.wait_for_log("authentication failed")


@pytest.mark.parametrize("fmt", ["text", "json"])
async def test_server_debug_logs_never_show_a_token(tmp_path: Path, fmt: str) -> None:
    async with running_server(tmp_path, "--log-level", "DEBUG", "--log-format", fmt) as (
        url,
        process,
    ):
        await _exercise(url, process)
        logs = process.logs()
    assert "connected" in logs
    assert TOKEN not in logs and WRONG not in logs
    assert "Token-" not in logs
    if fmt == "json":
        for line in logs.splitlines():
            doc = json.loads(line)
            assert {"time", "level", "logger", "message"} <= doc.keys(), line
        joined = [json.loads(line) for line in logs.splitlines() if '"connected' in line]
        assert any(doc.get("role") == "agent" and "sid" in doc for doc in joined), joined


async def test_server_protocol_trace_is_opt_in_and_still_redacted(tmp_path: Path) -> None:
    async with running_server(tmp_path, "--log-level", "DEBUG") as (url, process):
        await _exercise(url, process)
        quiet = process.logs()
    assert "< TEXT" not in quiet  # the websocket frame dump is not on at DEBUG alone
    async with running_server(tmp_path / "trace", "--log-level", "DEBUG", "--log-protocol") as (
        url,
        process,
    ):
        await _exercise(url, process)
        traced = process.logs()
    assert "< TEXT" in traced and '"token"' in traced
    assert TOKEN not in traced and WRONG not in traced
