"""``a2c-agent`` with tracing asked for by ``OTEL_*`` but no collector listening: the
command says once where spans go and once that they could not be sent, and none of the
exporter's own per-retry lines reach the user."""

from __future__ import annotations

import asyncio
import os
import socket
import sys

from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.server import running_server


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_collector_costs_one_warning() -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    env.pop("OTEL_SDK_DISABLED", None)
    env.pop("OTEL_TRACES_EXPORTER", None)
    async with (
        running_server() as srv,
        ScriptedComputer(
            srv.url, name="box", office_id="o1", socketio_path=srv.socketio_path
        ) as computer,
    ):
        computer.tool_results["echo"] = {"content": [{"type": "text", "text": "hi"}]}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2c_agent", "--server", srv.url, "--office", "o1",
            "--socketio-path", srv.socketio_path, "--json", "call", "box", "echo", "{}",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        _, err = await asyncio.wait_for(process.communicate(), 120)
    text = err.decode()
    assert process.returncode == 0, text
    assert f"a2c-agent: tracing on: spans go to {endpoint}/v1/traces" in text
    assert text.count("spans could not be sent") == 1, text
    # Nothing else: the exporter's own lines (one per retry and batch) are not shown.
    lines = text.splitlines()
    assert all(line.startswith(("a2c-agent: ", "tracing: ")) for line in lines), text
    assert "Connection refused" in text or "connect" in text.lower(), text  # the cause
    assert "Traceback" not in text
