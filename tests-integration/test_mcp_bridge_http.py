"""``a2c-agent mcp`` in both MCP eras over both transports, and its HTTP gate.

Real processes: an ``a2c-server``, ``a2c-computer``s running the test MCP servers, the bridge
spawned by ``mcp`` 2's clients over stdio or serving streamable HTTP. Hosts are a
handshake-era ``ClientSession`` (2025-11-25) and ``Client(mode="auto")`` (2026-07-28, what
2026 hosts use).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourcesListChanged, ToolsListChanged

from a2c_agent._bridge._server import INSTRUCTIONS
from a2c_protocol import CallToolResult, Event
from a2c_testkit.bridge import (
    http_bridge,
    modern_http_host,
    modern_stdio_host,
    stdio_host,
    text_of,
)
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.scripted_computer import ScriptedComputer, scripted_tool
from a2c_testkit.triangle import (
    computer_process,
    eventually,
    server_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

DEAD = "http://127.0.0.1:9"  # no Server: what is announced does not depend on the office


def alpha_config(tmp: Path) -> Path:
    scene = {"name": "scene-a", "resources": True,
             "windows": [{"uri": "window://org.example.alpha/main", "name": "Main", "text": "hi"}]}  # fmt: skip
    path = write_scene(tmp / "scene-a.json", scene)
    return write_config(tmp / "alpha.json", [stdio_scene_entry("scene", path)])


def beta_config(tmp: Path) -> Path:
    scene = write_scene(
        tmp / "scene-b.json",
        {"name": "scene-b", "resources": True,
         "windows": [{"uri": "window://org.example.beta/log", "name": "Log", "text": "b"}]},
    )  # fmt: skip
    return write_config(
        tmp / "beta.json",
        [
            stdio_scene_entry("scene", scene),
            stdio_server_config("kit", "annotated", default_tool_meta={"auto_apply": True}),
        ],
    )


@contextlib.asynccontextmanager
async def handshake_http_host(endpoint: str, **headers: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(endpoint, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _announced(caps: types.ServerCapabilities, instructions: str | None) -> tuple[Any, ...]:
    assert caps.tools is not None and caps.resources is not None
    return caps.tools.list_changed, caps.resources.list_changed, instructions


async def test_every_era_and_transport_announces_the_same_capabilities(
    procs: Any, tmp_path: Path
) -> None:
    """Over --http the handshake says ``listChanged: true`` and gives the instructions, as
    over stdio (the HTTP session manager is built with the bridge's options)."""
    office = f"office-{uuid.uuid4()}"
    logs = tmp_path / "logs"
    seen: dict[str, tuple[Any, ...]] = {}
    async with http_bridge(DEAD, office, logs) as (bridge, endpoint):
        procs.track(bridge)
        async with handshake_http_host(endpoint) as session:
            init = await session.initialize()
            seen["http 2025-11-25"] = _announced(init.capabilities, init.instructions)
        async with modern_http_host(endpoint) as client:
            assert client.protocol_version == "2026-07-28"
            seen["http 2026-07-28"] = _announced(
                client.server_capabilities, client.session.instructions
            )
    async with stdio_host(DEAD, office, logs / "stdio.log") as (session, _):
        init = await session.initialize()
        seen["stdio 2025-11-25"] = _announced(init.capabilities, init.instructions)
    async with modern_stdio_host(DEAD, office, logs / "stdio-modern.log") as client:
        assert client.protocol_version == "2026-07-28"
        seen["stdio 2026-07-28"] = _announced(
            client.server_capabilities, client.session.instructions
        )
    assert seen == dict.fromkeys(seen, (True, True, INSTRUCTIONS)), seen


async def test_the_http_gate_with_real_requests(procs: Any, tmp_path: Path) -> None:
    """The Origin of a web page is checked against --http-origin, the
    bearer scheme is case-insensitive, a loopback Host is matched exactly."""
    office = f"office-{uuid.uuid4()}"
    extra = ("--http-origin", "https://app.example.com")
    env = {"A2C_MCP_HTTP_TOKEN": "t0k"}
    async with http_bridge(DEAD, office, tmp_path / "logs", *extra, env=env) as (
        bridge,
        endpoint,
    ):
        procs.track(bridge)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "probe", "version": "1"}}}  # fmt: skip
        base = {"Accept": "application/json, text/event-stream"}

        async def post(**headers: str) -> httpx.Response:
            async with httpx.AsyncClient(timeout=60) as http:
                return await http.post(endpoint, json=init, headers={**base, **headers})

        assert (await post(authorization="bearer t0k")).status_code == 200
        assert (await post(authorization="Bearer t0k")).status_code == 200
        refused = await post(authorization="Bearer nope")
        assert refused.status_code == 401 and "Bearer" in refused.headers["www-authenticate"]
        evil = await post(authorization="Bearer t0k", origin="https://evil.example")
        assert evil.status_code == 403
        assert "--http-origin" in evil.json()["error"]["message"]
        ok = await post(authorization="Bearer t0k", origin="https://app.example.com")
        assert ok.status_code == 200
        local = await post(authorization="Bearer t0k", origin="http://localhost:6274")
        assert local.status_code == 200
        rebound = await post(authorization="Bearer t0k", host="localhost:evil")
        assert rebound.status_code == 421
        await bridge.wait_for_log("HTTP request refused")
        assert "t0k" not in bridge.logs()


async def collect(client: Client, wanted: set[type[Any]], ready: asyncio.Event) -> set[type[Any]]:
    """Listen (2026-07-28 ``subscriptions/listen``) until every kind in ``wanted`` came."""
    got: set[type[Any]] = set()
    async with client.listen(tools_list_changed=True, resources_list_changed=True) as events:
        ready.set()
        async for event in events:
            got.add(type(event))
            if wanted <= got:
                return got
    return got


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_2026_host_lists_calls_and_hears_list_changes(
    procs: Any, tmp_path: Path, transport: str
) -> None:
    """The bridge serves 2026-07-28 over both transports: ``server/discover``, results
    stamped with its serverInfo, progress on the request's own stream, and list changes
    on ``subscriptions/listen`` streams (no session to push to in that era)."""
    office = f"office-{uuid.uuid4()}"
    logs = tmp_path / "logs"
    async with contextlib.AsyncExitStack() as stack:
        server = await stack.enter_async_context(server_process(logs, track=procs.track))
        alpha = computer_process(
            logs, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        )  # fmt: skip
        await stack.enter_async_context(alpha)
        if transport == "http":
            bridge, endpoint = await stack.enter_async_context(
                http_bridge(server.url, office, logs)
            )
            procs.track(bridge)
            client = await stack.enter_async_context(modern_http_host(endpoint))
        else:
            client = await stack.enter_async_context(
                modern_stdio_host(server.url, office, logs / "bridge.log")
            )
        assert client.protocol_version == "2026-07-28"

        async def listed(name: str) -> bool:
            tools = await client.list_tools(cache_mode="bypass")
            return name in {t.name for t in tools.tools}

        await eventually(lambda: listed("alpha__echo"), timeout=90, what="alpha's tools")
        assert client.server_info is not None and client.server_info.name == "a2c-agent-bridge"
        assert text_of(await client.call_tool("alpha__echo", {"text": "m"})) == "scene-a: m"

        ready = asyncio.Event()
        listening = asyncio.ensure_future(
            collect(client, {ToolsListChanged, ResourcesListChanged}, ready)
        )
        await asyncio.wait_for(ready.wait(), timeout=60)
        async with computer_process(
            logs, config=beta_config(tmp_path), server_url=server.url, office=office,
            name="beta", track=procs.track,
        ):  # fmt: skip
            got = await asyncio.wait_for(listening, timeout=90)
            assert {ToolsListChanged, ResourcesListChanged} <= got
            await eventually(lambda: listed("beta__steps"), timeout=60, what="beta's tools")
            seen: list[float] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            done = await client.call_tool(
                "beta__steps", {"count": 3, "delay": 0.2}, progress_callback=progress
            )
            assert text_of(done) == "3 steps"
            assert seen, "no progress reached the 2026-07-28 host"
            resources = await client.list_resources(cache_mode="bypass")
            assert "a2c://beta/window://org.example.beta/log" in {
                str(r.uri) for r in resources.resources
            }


async def _leave_mid_call(call: Any, marker: Path) -> None:
    """Start ``call`` (a tool call of the slow tool), go away once it runs on the Computer."""
    marker.unlink(missing_ok=True)
    task = asyncio.ensure_future(call)
    await eventually(lambda: marker.exists(), timeout=60, what="the slow tool started")
    task.cancel()
    with contextlib.suppress(BaseException):
        await task


async def test_hosts_that_go_away_leave_no_error_in_the_log(procs: Any, tmp_path: Path) -> None:
    """A host leaving is normal, never an ERROR with a traceback (mcp 1.x
    logged one for the event stream a closed session left). Hosts of both eras leave: after
    their session ended (DELETE with the event stream open), in the middle of a call (which
    the bridge then cancels in the office), or while listening; then the office changes
    and the bridge is stopped."""
    office = f"office-{uuid.uuid4()}"
    logs = tmp_path / "logs"
    marker = tmp_path / "slow.marker"
    slow = {"seconds": 120, "marker": str(marker)}
    async with (
        server_process(logs, track=procs.track) as server,
        computer_process(logs, config=alpha_config(tmp_path), server_url=server.url,
                         office=office, name="alpha", track=procs.track),
        http_bridge(server.url, office, logs) as (bridge, endpoint),
    ):  # fmt: skip
        procs.track(bridge)
        async with handshake_http_host(endpoint) as session:
            await eventually(lambda: _lists(session, "alpha__slow"), timeout=90, what="tools")

        async def handshake_call() -> None:
            async with handshake_http_host(endpoint) as session:
                await session.call_tool("alpha__slow", slow)

        # mcp's client posts the cancellation and ends its session at once: a race in mcp's
        # transport, so a few rounds.
        for _ in range(4):
            await _leave_mid_call(handshake_call(), marker)
            await eventually(lambda: marker.read_text() == "cancelled", timeout=60,
                             what="the call cancelled when its host left")  # fmt: skip

        async def modern_call() -> None:
            async with modern_http_host(endpoint) as client:
                await client.call_tool("alpha__slow", slow)

        await _leave_mid_call(modern_call(), marker)
        await eventually(lambda: marker.read_text() == "cancelled", timeout=60,
                         what="the 2026 call cancelled when its host left")  # fmt: skip

        ready = asyncio.Event()
        async with modern_http_host(endpoint) as client:
            listening = asyncio.ensure_future(collect(client, {ToolsListChanged}, ready))
            await asyncio.wait_for(ready.wait(), timeout=60)
        listening.cancel()
        with contextlib.suppress(BaseException):
            await listening
        async with computer_process(
            logs, config=beta_config(tmp_path), server_url=server.url, office=office,
            name="beta", track=procs.track,
        ), handshake_http_host(endpoint) as session:  # fmt: skip
            await eventually(lambda: _lists(session, "beta__steps"), timeout=90, what="beta")
        assert await bridge.stop() == 0
    log = bridge.logs()
    assert "ERROR" not in log and "Traceback" not in log, log


async def _lists(session: ClientSession, name: str) -> bool:
    return name in {t.name for t in (await session.list_tools()).tools}


TRACE = "0af7651916cd43dd8448eb211c80319c"


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_hosts_trace_context_goes_on_with_the_call(
    procs: Any, tmp_path: Path, era: str
) -> None:
    """Per-request metadata: the ``traceparent`` a host puts in a call's ``_meta`` (MCP's
    W3C trace context convention) starts mcp 2's span for the request, and the bridge's
    call to the office carries that trace on (``a2c_trace``), in both eras, with no
    tracer configured in the bridge. (A Computer with tracing on hands it to the MCP
    server: test_tracing.py.)"""
    office = f"office-{uuid.uuid4()}"
    logs = tmp_path / "logs"
    meta = {"traceparent": f"00-{TRACE}-b7ad6b7169203331-01"}
    async with (
        server_process(logs, track=procs.track) as server,
        ScriptedComputer(server.url, name="box", office_id=office) as box,
    ):
        box.tools = [scripted_tool("echo")]
        box.tool_results["echo"] = CallToolResult(content=[{"type": "text", "text": "ok"}])
        if era == "2025-11-25":
            async with stdio_host(server.url, office, logs / "bridge.log") as (session, _):
                await eventually(lambda: _lists(session, "box__echo"), timeout=90, what="tools")
                await session.call_tool("box__echo", {}, meta=meta)  # type: ignore[arg-type]
        else:
            async with modern_stdio_host(server.url, office, logs / "bridge.log") as client:

                async def listed() -> bool:
                    tools = await client.list_tools(cache_mode="bypass")
                    return "box__echo" in {t.name for t in tools.tools}

                await eventually(listed, timeout=90, what="tools")
                await client.call_tool("box__echo", {}, meta=meta)  # type: ignore[arg-type]
        (call,) = box.received(Event.TOOL_CALL)
    carried = (call.get("a2c_trace") or {}).get("traceparent", "")
    assert carried.split("-")[1:2] == [TRACE], call


async def test_the_http_bridge_makes_a_token_unless_told_not_to(procs: Any, tmp_path: Path) -> None:
    """A loopback port is open to every local account: without a token given, the bridge
    makes one, leaves it in a file only its user reads, and refuses requests without it."""
    office = f"office-{uuid.uuid4()}"
    logs = tmp_path / "logs"
    runtime = tmp_path / "run"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}}}  # fmt: skip
    base = {"Accept": "application/json, text/event-stream"}
    async with http_bridge(DEAD, office, logs, runtime_dir=runtime) as (bridge, endpoint):
        procs.track(bridge)
        port = endpoint.rsplit(":", 1)[1].split("/")[0]
        token_file = runtime / "a2c-agent" / f"mcp-http-{port}.token"
        assert f"HTTP bearer token in {token_file}" in bridge.logs()
        assert "'Authorization: Bearer <token>'" in bridge.logs()
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert token_file.parent.stat().st_mode & 0o777 == 0o700
        token = token_file.read_text().strip()
        assert len(token) >= 32 and token not in bridge.logs()
        async with httpx.AsyncClient(timeout=60) as http:
            refused = await http.post(endpoint, json=init, headers=base)
        assert refused.status_code == 401, refused.text
        assert "Authorization: Bearer <token>" in refused.json()["error"]["message"]
        async with handshake_http_host(endpoint, authorization=f"Bearer {token}") as session:
            await session.send_ping()  # initialized and answered, with the token
    assert not token_file.exists()  # the bridge stopped: its token went with it
    async with http_bridge(DEAD, office, logs, "--no-token", name="bridge-open") as (
        bridge,
        endpoint,
    ):
        procs.track(bridge)
        async with handshake_http_host(endpoint) as session:
            await session.send_ping()
        assert "without a bearer token (--no-token)" in bridge.logs()
        assert "every account on this machine" in bridge.logs()
