"""``a2c-agent mcp`` end to end: a real Server, two real Computers with different MCP
servers, and the bridge spawned by the official ``mcp`` client (stdio and streamable HTTP).

Computer ``alpha`` runs the scene server (``echo``, ``slow``, desktop windows); Computer
``beta`` runs the annotated server (read-only / destructive hints, structured content,
progress, images), the plain server (``search`` needing confirmation, so the Computer,
started with ``--confirm deny``, answers an A2C error) and the desk server (``add_tool``
changes the Computer's tool list at runtime).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp.client import Client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from a2c_testkit.bridge import bridge_argv, stdio_host, text_of
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.bulk import noise_png
from a2c_testkit.processes import bin_path, free_port, spawn
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    server_process,
    stdio_scene_entry,
    write_config,
    write_scene,
)

WINDOW = "window://org.example.alpha/main"
SCENE = {
    "name": "scene-a",
    "resources": True,
    "subscribe": True,
    "windows": [
        {
            "uri": WINDOW,
            "name": "Main",
            "text": "hello from alpha",
            "annotations": {"priority": 0.5, "audience": ["assistant"]},
        }
    ],
}


def alpha_config(tmp: Path) -> Path:
    scene = write_scene(tmp / "scene-a.json", SCENE)
    return write_config(tmp / "alpha.json", [stdio_scene_entry("scene", scene)])


SECRET = "window://org.example.beta/secret"


def secret_beta_config(tmp: Path) -> Path:
    """beta with a desktop window of its own (for the --computer filter)."""
    scene = {"name": "scene-b", "resources": True, "subscribe": True,
             "windows": [{"uri": SECRET, "name": "Secret", "text": "beta's secret"}]}  # fmt: skip
    path = write_scene(tmp / "scene-b.json", scene)
    return write_config(tmp / "beta-secret.json", [stdio_scene_entry("scene", path)])


def beta_config(tmp: Path) -> Path:
    return write_config(
        tmp / "beta.json",
        [
            stdio_server_config("kit", "annotated", default_tool_meta={"auto_apply": True}),
            stdio_server_config("plain", "plain", default_tool_meta={"auto_apply": False}),
            stdio_server_config(
                "desk",
                "desk",
                "--profile",
                "conformant",
                tool_prefix="desk_",
                default_tool_meta={"auto_apply": True},
            ),
        ],
    )


async def names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}


async def test_stdio_bridge_lists_calls_fails_cleanly_and_follows_the_office(
    procs: Any, tmp_path: Path
) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        ),
        stdio_host(server.url, office, log_dir / "bridge.log") as (session, listener),
    ):  # fmt: skip
        await eventually(
            lambda: _has(session, "alpha__echo"), what="alpha's tools served", timeout=90
        )
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"alpha__echo", "alpha__slow"} <= set(tools)
        assert "alpha" in (tools["alpha__echo"].description or "")
        assert tools["alpha__echo"].input_schema["properties"] == {"text": {"type": "string"}}

        result = await session.call_tool("alpha__echo", {"text": "hi"})
        assert not result.is_error
        assert text_of(result) == "scene-a: hi"

        # beta joins: the host hears list_changed and sees its tools
        before = listener.tool_list_changes
        async with computer_process(
            log_dir, config=beta_config(tmp_path), server_url=server.url, office=office,
            name="beta", track=procs.track,
        ):  # fmt: skip
            await eventually(lambda: listener.tool_list_changes > before, timeout=90,
                             what="tools/list_changed after beta joined")  # fmt: skip
            await eventually(lambda: _has(session, "beta__lookup"), timeout=90, what="beta")
            tools = {t.name: t for t in (await session.list_tools()).tools}
            lookup, wipe = tools["beta__lookup"], tools["beta__wipe"]
            assert lookup.annotations is not None and lookup.annotations.read_only_hint is True
            assert wipe.annotations is not None and wipe.annotations.destructive_hint is True
            assert "beta" in (lookup.description or "") and "kit" in (lookup.description or "")
            assert "alpha__echo" in tools and "beta__echo" in tools  # two echo tools, apart

            structured = await session.call_tool("beta__lookup", {"key": "abc"})
            assert not structured.is_error
            assert structured.structured_content == {"key": "abc", "value": "ABC"}

            # an A2C error (the Computer refuses a tool needing confirmation) is a result
            refused = await session.call_tool("beta__search", {})
            assert refused.is_error
            code = (refused.meta or {}).get("a2c_error_code")
            assert isinstance(code, int) and 4000 <= code < 5000, refused
            assert text_of(refused)
            assert not (await session.call_tool("alpha__echo", {"text": "still"})).is_error

            # progress reports reach the host's progress token
            seen: list[tuple[float, float | None, str | None]] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                seen.append((value, total, message))

            done = await session.call_tool(
                "beta__steps", {"count": 3, "delay": 0.2}, progress_callback=progress
            )
            assert text_of(done) == "3 steps"
            await eventually(lambda: len(seen) >= 1, what="progress")
            assert seen[-1][1] == 3

            # a 1.5 MB image travels by blob handle and arrives inlined, whole
            png = noise_png(1_500_000, seed=7)
            image = await session.call_tool("beta__picture", {"size": 1_500_000, "seed": 7})
            assert not image.is_error, text_of(image)
            (item,) = [c for c in image.content if isinstance(c, types.ImageContent)]
            assert base64.b64decode(item.data) == png

            # a Computer's own tool list changes (notify:update_tool_list): list_changed
            before = listener.tool_list_changes
            assert "beta__desk_extra" not in tools
            assert not (await session.call_tool("beta__desk_add_tool", {})).is_error
            await eventually(lambda: listener.tool_list_changes > before, timeout=90,
                             what="tools/list_changed after notify:update_tool_list")  # fmt: skip
            await eventually(lambda: _has(session, "beta__desk_extra"), timeout=30, what="extra")

            before = listener.tool_list_changes
        # beta left
        await eventually(lambda: listener.tool_list_changes > before, timeout=90,
                         what="tools/list_changed after beta left")  # fmt: skip
        await eventually(lambda: _lacks(session, "beta__lookup"), timeout=90, what="beta gone")

        # the desktop windows, under URIs that keep the Computer's name
        resources = (await session.list_resources()).resources
        uri = f"a2c://alpha/{WINDOW}"
        assert uri in {str(r.uri) for r in resources}
        read = await session.read_resource(uri)  # type: ignore[arg-type]
        (contents,) = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == "hello from alpha"


async def _has(session: ClientSession, name: str) -> bool:
    try:
        return name in await names(session)
    except MCPError:  # the office cannot be used (yet, or for a moment)
        return False


async def _lacks(session: ClientSession, name: str) -> bool:
    return name not in await names(session)


async def test_computer_filter_separator_and_cancellation(procs: Any, tmp_path: Path) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    marker = tmp_path / "slow.marker"
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        ),
        computer_process(
            log_dir, config=secret_beta_config(tmp_path), server_url=server.url,
            office=office, name="beta", track=procs.track,
        ),
        stdio_host(
            server.url, office, log_dir / "bridge.log", "--computer", "alpha", "--separator", "-"
        ) as (session, _),
    ):  # fmt: skip
        await eventually(lambda: _has(session, "alpha-slow"), timeout=90, what="alpha")
        # beta is in the office too (its tools are what the filter leaves out)
        assert all(name.startswith("alpha-") for name in await names(session))
        # ... and its windows, listed or read by URI
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        assert f"a2c://alpha/{WINDOW}" in listed and not any("beta" in u for u in listed)
        with pytest.raises(MCPError, match="not served"):
            await session.read_resource(f"a2c://beta/{SECRET}")  # type: ignore[arg-type]

        # MCP notifications/cancelled -> the A2C call is cancelled -> the MCP server's
        # tool sees the cancellation. mcp 2's client sends the notification itself when
        # the task awaiting the call is cancelled.
        call = asyncio.ensure_future(
            session.call_tool("alpha-slow", {"seconds": 120, "marker": str(marker)})
        )
        await eventually(
            lambda: marker.exists() and marker.read_text() == "started", what="slow started"
        )
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await call
        await eventually(lambda: marker.read_text() == "cancelled", timeout=60,
                         what="the MCP server's tool cancelled")  # fmt: skip
        # the session goes on
        assert text_of(await session.call_tool("alpha-echo", {"text": "after"})) == "scene-a: after"


async def test_unreachable_office_answers_errors_then_reconnects(
    procs: Any, tmp_path: Path
) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    async with stdio_host(url, office, log_dir / "bridge.log") as (session, listener):
        # no Server yet: the session works; listing is an MCP error the host shows, a
        # call an error result, both naming the cause
        with pytest.raises(MCPError, match=f"unreachable: .*127.0.0.1:{port}"):
            await names(session)
        early = await session.call_tool("alpha__echo", {"text": "x"})
        assert early.is_error
        assert "unreachable" in text_of(early) and f"127.0.0.1:{port}" in text_of(early)

        async with (
            server_process(log_dir, port=port, track=procs.track) as server,
            computer_process(
                log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
                name="alpha", track=procs.track,
            ),
        ):  # fmt: skip
            await eventually(lambda: _has(session, "alpha__echo"), timeout=120, what="joined")
            # The bridge announces the change from its own task, so a list call may see the
            # new tool a moment before the notification reaches the host: wait for it.
            await eventually(lambda: listener.tool_list_changes >= 1, timeout=30,
                             what="tools/list_changed")  # fmt: skip
            assert not (await session.call_tool("alpha__echo", {"text": "a"})).is_error
            await server.process.stop()  # the Server goes away
            lost = await eventually(lambda: _call_error(session), timeout=60, what="lost")
            assert "unreachable" in lost and ("reconnecting" in lost or "reach" in lost)

        # the Server comes back on the same port: the bridge re-joins by itself
        async with (
            server_process(log_dir, port=port, track=procs.track, name="server-2") as server,
            computer_process(
                log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
                name="alpha", track=procs.track,
            ),
        ):  # fmt: skip
            await eventually(
                lambda: _echo_ok(session), timeout=120, what="calls work after the restart"
            )


async def _call_error(session: ClientSession) -> str | None:
    result = await session.call_tool("alpha__echo", {"text": "x"})
    return text_of(result) if result.is_error else None


async def _echo_ok(session: ClientSession) -> bool:
    if not await _has(session, "alpha__echo"):
        return False
    return not (await session.call_tool("alpha__echo", {"text": "x"})).is_error


async def test_streamable_http_with_a_bearer_token(procs: Any, tmp_path: Path) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    port = free_port()
    token = "s3cret-token"
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        ),
        spawn(
            "bridge-http",
            bridge_argv(server.url, office, "--http", f"127.0.0.1:{port}"),
            log_dir=log_dir, env={"A2C_MCP_HTTP_TOKEN": token},
        ) as bridge,
    ):  # fmt: skip
        procs.track(bridge)
        await bridge.wait_for_log("serving MCP at", timeout=90)
        endpoint = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient() as client:
            refused = await client.post(
                endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
            )
            assert refused.status_code == 401
            wrong = await client.post(endpoint, json={}, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(endpoint, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await eventually(lambda: _has(session, "alpha__echo"), timeout=90, what="tools")
            result = await session.call_tool("alpha__echo", {"text": "over http"})
            assert text_of(result) == "scene-a: over http"
            # a bad call (a name nobody serves) is an error result, the session goes on
            bad = await session.call_tool("alpha__no_such_tool", {})
            assert bad.is_error and "no tool is served" in text_of(bad)
            # a typo of the host's model gets the closest name
            typo = await session.call_tool("alpha__ecoh", {"text": "x"})
            assert typo.is_error and "did you mean 'alpha__echo'?" in text_of(typo)
            assert not (await session.call_tool("alpha__echo", {"text": "again"})).is_error


def test_a_non_loopback_http_address_needs_a_token() -> None:
    import subprocess

    done = subprocess.run(
        bridge_argv("http://127.0.0.1:9", "o1", "--http", "0.0.0.0:8765"),
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "A2C_MCP_HTTP_TOKEN"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "needs a bearer token" in done.stderr


DOCS = Path(__file__).resolve().parents[1] / "docs" / "agent.md"


def documented_desktop_entry() -> dict[str, Any]:
    """The ``claude_desktop_config.json`` example of docs/agent.md, parsed."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("`claude_desktop_config.json`") :]
    start = section.index("```json\n") + len("```json\n")
    block = section[start : section.index("\n```", start)]
    entry: dict[str, Any] = json.loads(block)["mcpServers"]["a2c-office"]
    return entry


async def test_the_documented_claude_desktop_entry_works_as_written(
    procs: Any, tmp_path: Path
) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    entry = documented_desktop_entry()
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        ),
    ):  # fmt: skip
        args = [
            {"https://a2c.example.com": server.url, "office-1": office}.get(arg, arg)
            for arg in entry["args"]
        ]
        assert args != entry["args"]
        # As a host spawns it: the command looked up on PATH, the entry's env added.
        path = f"{Path(bin_path('a2c-agent')).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        params = StdioServerParameters(
            command=entry["command"], args=args, env={**os.environ, "PATH": path, **entry["env"]}
        )
        log_dir.mkdir(parents=True, exist_ok=True)
        with (log_dir / "bridge.log").open("a", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await eventually(lambda: _has(session, "alpha__echo"), timeout=90, what="tools")
                result = await session.call_tool("alpha__echo", {"text": "desktop"})
                assert text_of(result) == "scene-a: desktop"


async def test_a_2026_host_is_served_2026_07_28_by_the_bridge(procs: Any, tmp_path: Path) -> None:
    """mcp 2's server answers ``server/discover`` and serves 2026-07-28 requests itself: a
    host on ``Client(mode="auto")`` (what 2026 hosts use) lands on the modern era, lists
    and calls the office's tools, and the bridge logs no refused ``server/discover``."""
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        ),
    ):  # fmt: skip
        argv = bridge_argv(server.url, office)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        log = log_dir / "bridge.log"
        with log.open("a", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
                assert client.protocol_version == "2026-07-28"

                async def listed() -> bool:
                    tools = await client.list_tools(cache_mode="bypass")
                    return "alpha__echo" in {t.name for t in tools.tools}

                await eventually(listed, timeout=90, what="the office's tools")
                result = await client.call_tool("alpha__echo", {"text": "modern"})
                assert text_of(result) == "scene-a: modern"
        assert "Failed to validate request" not in log.read_text(encoding="utf-8")


@contextlib.asynccontextmanager
async def alpha_in_office(procs: Any, tmp_path: Path) -> AsyncIterator[tuple[ServerProcess, str]]:
    """A Server and Computer ``alpha``, once alpha is in a fresh office."""
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    async with (
        server_process(log_dir, track=procs.track) as server,
        computer_process(
            log_dir, config=alpha_config(tmp_path), server_url=server.url, office=office,
            name="alpha", track=procs.track,
        ) as alpha,
    ):  # fmt: skip
        await alpha.wait_for_log("joined office", timeout=90)
        yield server, office


async def test_the_first_requests_after_start_see_the_office(procs: Any, tmp_path: Path) -> None:
    """The first ``resources/list`` right after the bridge started waits for the first join,
    as the tool requests do, instead of answering ``[]``."""
    log_dir = tmp_path / "logs"
    async with alpha_in_office(procs, tmp_path) as (server, office):
        async with stdio_host(server.url, office, log_dir / "bridge.log") as (session, _):
            resources = (await session.list_resources()).resources  # the very first request
            assert f"a2c://alpha/{WINDOW}" in {str(r.uri) for r in resources}
        async with stdio_host(server.url, office, log_dir / "bridge-2.log") as (session, _):
            read = await session.read_resource(f"a2c://alpha/{WINDOW}")  # type: ignore[arg-type]
            (contents,) = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "hello from alpha"


async def test_a_taken_agent_seat_is_an_error_the_host_sees(procs: Any, tmp_path: Path) -> None:
    """A bridge that cannot get the office's Agent seat answers ``tools/list`` with an MCP
    error naming the cause, never a silent ``[]``; once the seat is free the bridge joins
    and the host hears ``tools/list_changed``."""
    from a2c_agent import AsyncAgent

    log_dir = tmp_path / "logs"
    async with alpha_in_office(procs, tmp_path) as (server, office):
        holder = AsyncAgent(server.url, name="someone-else")
        await holder.open()
        await holder.join_office(office)
        try:
            async with stdio_host(server.url, office, log_dir / "bridge.log") as (
                session,
                listener,
            ):
                with pytest.raises(MCPError) as refused:
                    await session.list_tools()
                message = refused.value.error.message
                assert f"office '{office}'" in message and "already has an agent" in message
                assert "an office seats one Agent" in message, message
                call = await session.call_tool("alpha__echo", {"text": "x"})
                assert call.is_error and "an office seats one Agent" in text_of(call)
                await holder.close()
                await eventually(lambda: listener.tool_list_changes > 0, timeout=120,
                                 what="tools/list_changed once the seat was free")  # fmt: skip
                assert "alpha__echo" in await names(session)
        finally:
            await holder.close()
