"""Per-call audit records are opt-in: the real ``a2c-server`` at its default log level.

A forwarded ``client:tool_call`` writes nothing at INFO by default (the relay's log would
otherwise grow by a line per call); ``--audit-calls`` adds one record per call to the log,
``--audit-calls FILE`` to that file only. Admissions and joins are audited either way.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_server._cli import settings_from_args
from a2c_server._observe._audit_calls import CALLS_LOGGER, configure_call_audit
from a2c_testkit.processes import ManagedProcess, bin_path, free_port, spawn, wait_until_healthy
from a2c_testkit.triangle import eventually

ANSWER = {"content": [{"type": "text", "text": "ok"}], "isError": False}
PER_CALL = "event=route outcome=ok"


@contextlib.asynccontextmanager
async def running_server(tmp_path: Path, *flags: str) -> AsyncIterator[tuple[str, ManagedProcess]]:
    port = free_port()
    argv = [bin_path("a2c-server"), "--host", "127.0.0.1", "--port", str(port), *flags]
    async with spawn("server", argv, log_dir=tmp_path) as process:
        url = f"http://127.0.0.1:{port}"
        await wait_until_healthy(f"{url}/healthz", process)
        yield url, process


async def _joined(url: str, role: str, name: str) -> socketio.AsyncClient:
    sio = socketio.AsyncClient(reconnection=False)
    if role == "computer":
        sio.on("client:tool_call", lambda data: ANSWER, namespace=NAMESPACE)
    await sio.connect(f"{url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                      auth={"role": role, "name": name}, wait_timeout=30)  # fmt: skip
    joined = await sio.call("server:join_office", {"role": role, "name": name,
                            "office_id": "o1"}, namespace=NAMESPACE, timeout=30)  # fmt: skip
    assert joined in (True, [True, None], (True, None)), joined
    return sio


async def _two_calls(url: str) -> None:
    computer = await _joined(url, "computer", "pc")
    agent = await _joined(url, "agent", "bot")
    try:
        for req_id in ("r1", "r2"):
            call: dict[str, Any] = {"agent": "bot", "computer": "pc", "req_id": req_id, "tool_name": "t",
                    "params": {}, "timeout": 10}  # fmt: skip
            # The record is written before the call is forwarded: once answered, it is in.
            assert await agent.call("client:tool_call", call, namespace=NAMESPACE,
                                    timeout=30) == ANSWER  # fmt: skip
    finally:
        await agent.disconnect()
        await computer.disconnect()


async def test_server_default_log_has_no_line_per_call(tmp_path: Path) -> None:
    async with running_server(tmp_path) as (url, process):
        await _two_calls(url)
        await process.wait_for_log("event=join outcome=ok")
        logs = process.logs()
    assert "event=admission outcome=ok" in logs
    assert PER_CALL not in logs and "client:tool_call" not in logs


async def test_server_audit_calls_to_the_log(tmp_path: Path) -> None:
    async with running_server(tmp_path, "--audit-calls", "--log-level", "WARNING") as (
        url,
        process,
    ):
        await _two_calls(url)
        await process.wait_for_log(PER_CALL)
        logs = process.logs()
    # Asked for explicitly: written even though the log level hides the rest of INFO.
    calls = [line for line in logs.splitlines() if PER_CALL in line]
    assert len(calls) == 2 and all(
        CALLS_LOGGER in line and "computer=pc" in line and "tool=t" in line for line in calls
    )
    assert "event=join" not in logs


async def test_server_audit_calls_to_a_file_only(tmp_path: Path) -> None:
    sink = tmp_path / "calls.log"
    async with running_server(tmp_path, "--audit-calls", str(sink), "--log-format", "json") as (
        url,
        process,
    ):
        await _two_calls(url)
        await process.wait_for_log("event=join outcome=ok")
        await eventually(lambda: sink.exists() and sink.read_text().count("\n") >= 2)
        logs = process.logs()
    lines = sink.read_text().splitlines()
    assert len(lines) == 2 and all('"outcome": "ok"' in line or "outcome=ok" in line
                                   for line in lines)  # fmt: skip
    assert all(line.startswith("{") for line in lines)  # the log's format
    assert PER_CALL not in logs  # the console stays readable


def test_server_audit_calls_settings() -> None:
    assert settings_from_args([], {}).audit_calls is None
    assert settings_from_args(["--audit-calls"], {}).audit_calls == "-"
    assert settings_from_args(["--audit-calls", "/x/calls.log"], {}).audit_calls == "/x/calls.log"
    env: dict[str, Any] = {"A2C_SERVER_AUDIT_CALLS": "true"}
    assert settings_from_args([], env).audit_calls == "-"
    assert settings_from_args([], {"A2C_SERVER_AUDIT_CALLS": "off"}).audit_calls is None
    assert settings_from_args([], {"A2C_SERVER_AUDIT_CALLS": "/a.log"}).audit_calls == "/a.log"


def test_server_audit_calls_reconfigured_off_removes_the_sink(tmp_path: Path) -> None:
    formatter, redacting = logging.Formatter("%(message)s"), logging.Filter()
    configure_call_audit(str(tmp_path / "c.log"), formatter, redacting)
    logger = logging.getLogger(CALLS_LOGGER)
    try:
        assert (logger.propagate, len(logger.handlers)) == (False, 1)
        configure_call_audit(None, formatter, redacting)
        assert (logger.propagate, len(logger.handlers), logger.level) == (True, 0, logging.NOTSET)
    finally:
        configure_call_audit(None, formatter, redacting)


@pytest.mark.parametrize("value", ["", "  "])
def test_server_audit_calls_rejects_an_empty_path(value: str) -> None:
    from a2c_server import ServerSettings, SettingsError

    with pytest.raises(SettingsError):
        ServerSettings(audit_calls=value)
