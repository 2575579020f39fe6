"""One trace from the Agent to the MCP server, with real processes.

The ``a2c-agent`` CLI on node A, two ``--redis`` Server nodes, a Computer on node B and
the FastMCP ``progress`` server: every process exports its spans over OTLP/HTTP to a tiny
receiver on loopback in this test, configured only by the standard ``OTEL_*`` variables.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from a2c_testkit.processes import bin_path, free_port
from a2c_testkit.redis_server import redis_server
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

OFFICE = "o-trace"


class Receiver:
    """Spans received: (service, span name, trace id, attributes)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str, str, dict[str, Any]]] = []

    async def handle(self, request: web.Request) -> web.Response:
        message = trace_service_pb2.ExportTraceServiceRequest()
        message.ParseFromString(await request.read())
        for resource_spans in message.resource_spans:
            service = next(
                (a.value.string_value for a in resource_spans.resource.attributes
                 if a.key == "service.name"), "?",
            )  # fmt: skip
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    attributes = {a.key: _value(a.value) for a in span.attributes}
                    self.spans.append((service, span.name, span.trace_id.hex(), attributes))
        body = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=body, content_type="application/x-protobuf")


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[Receiver, str]]:
    got = Receiver()
    app = web.Application()
    app.router.add_post("/v1/traces", got.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield got, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_one_trace_covers_agent_server_nodes_computer_and_mcp(
    procs: Any, tmp_path: Path, receiver: tuple[Receiver, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    got, endpoint = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    entry = {
        "type": "stdio", "name": "progress", "default_tool_meta": {"auto_apply": True},
        "server_parameters": {"command": sys.executable,
                              "args": ["-m", "a2c_testkit.mcp_servers.progress"]},
    }  # fmt: skip
    config = write_config(tmp_path / "computer.json", [entry])
    with redis_server() as redis:
        nodes = []
        for name in ("A", "B"):
            monkeypatch.setenv("OTEL_SERVICE_NAME", f"node-{name}")
            args = ["--redis", redis.url, "--node-id", name, "--redis-prefix", "tr"]
            nodes.append(await _enter(server_process(
                procs.log_dir, name=f"node-{name}", extra_args=args, track=procs.track
            )))  # fmt: skip
        a, b = (n[0] for n in nodes)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "computer")
        computer, computer_cm = await _enter(computer_process(
            procs.log_dir, config=config, server_url=b.url, office=OFFICE, name="box",
            track=procs.track,
        ))  # fmt: skip
        try:
            await computer.wait_for_log("joined office", timeout=60)
            monkeypatch.setenv("OTEL_SERVICE_NAME", "agent")
            argv = [bin_path("a2c-agent"), "--server", a.url, "--office", OFFICE, "--json",
                    "call", "box", "steps", json.dumps({"count": 1, "delay": 0}),
                    "--timeout", "60"]  # fmt: skip
            cli = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            out, err = await asyncio.wait_for(cli.communicate(), 120)
            assert cli.returncode == 0, err.decode()

            def agent_trace() -> str | None:
                ids = {t for s, n, t, _ in got.spans if s == "agent" and n == "a2c.tool_call"}
                return next(iter(ids), None)

            trace_id = await eventually(agent_trace, what="the agent's span")

            def covered() -> set[tuple[str, str]]:
                return {(s, n) for s, n, t, _ in got.spans if t == trace_id}

            want = {
                ("agent", "a2c.tool_call"),
                ("node-A", "a2c.server.forward"),
                ("node-A", "a2c.server.call_computer"),
                ("node-B", "a2c.server.relay"),
                ("computer", "a2c.computer.tool_call"),
                ("computer", "mcp.tools/call"),
            }
            await eventually(lambda: want <= covered(), what=f"spans of trace {trace_id}")
            # The MCP server got the same trace in params._meta.traceparent.
            answer = json.loads(json.loads(out.decode())["content"][0]["text"])
            assert answer["traceparent"].split("-")[1] == trace_id
            # The Computer's one-line call log names the trace.
            await computer.wait_for_log(f"trace_id={trace_id}", timeout=30)
            # Attributes name office, tool, Computer, MCP server and outcome; never arguments.
            spans = {(s, n): attrs for s, n, t, attrs in got.spans if t == trace_id}
            inner = spans[("computer", "mcp.tools/call")]
            assert inner["a2c.mcp_server"] == "progress" and inner["a2c.tool"] == "steps"
            assert inner["a2c.office"] == OFFICE and inner["a2c.outcome"] == "ok"
            assert spans[("node-A", "a2c.server.forward")]["a2c.office"] == OFFICE
            hop = spans[("node-A", "a2c.server.call_computer")]
            assert hop["a2c.computer"] == "box" and hop["a2c.outcome"] == "ok"
            assert spans[("agent", "a2c.tool_call")]["a2c.computer"] == "box"
            flat = json.dumps([attrs for *_, attrs in got.spans])
            assert "delay" not in flat and "progress_token" not in flat

            # A call the Computer answers itself (unknown tool: 4001) sends no MCP request,
            # so its trace has no MCP client span; the error code is an int attribute.
            argv[argv.index("steps")] = "nope"
            cli = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            await asyncio.wait_for(cli.communicate(), 120)
            assert cli.returncode == 3

            def refused_trace() -> str | None:
                ids = {t for s, n, t, a in got.spans
                       if s == "computer" and n == "a2c.computer.tool_call"
                       and a.get("a2c.tool") == "nope"}  # fmt: skip
                return next(iter(ids), None)

            refused = await eventually(refused_trace, what="the refused call's span")
            await eventually(
                lambda: ("agent", "a2c.tool_call") in {(s, n) for s, n, t, _ in got.spans
                                                       if t == refused},
                what="the refused call's agent span",
            )  # fmt: skip
            names = {(s, n) for s, n, t, _ in got.spans if t == refused}
            assert ("computer", "mcp.tools/call") not in names, names
            mine = next(a for s, n, t, a in got.spans
                        if t == refused and n == "a2c.computer.tool_call")  # fmt: skip
            assert mine["a2c.error_code"] == 4001 and mine["a2c.outcome"] == "error"
        finally:
            await computer_cm.__aexit__(None, None, None)
            for _, cm in reversed(nodes):
                await cm.__aexit__(None, None, None)


async def _enter(cm: Any) -> tuple[Any, Any]:
    return await cm.__aenter__(), cm
