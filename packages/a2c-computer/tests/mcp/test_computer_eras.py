"""The MCP era per server (``mcp_era``), against real mcp 2 servers (``MCPServer``).

The server of :mod:`a2c_testkit.mcp_servers.eras` serves both eras, as every mcp 2 server
does, or (``--modern-only``) 2026-07-28 only. Its ``ask_push`` tool asks the user with
``ctx.elicit`` (a server-initiated request), ``ask_resolved`` through the era-agnostic
resolver. The tests that show which tools work in which era answer through
:class:`~a2c_computer._mcp.InputCallbacks`, the seam the office's input relay plugs into
(tests-integration/test_input_requests.py goes through the office itself).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from mcp import types
from mcp.client.session import ClientRequestContext

from a2c_computer import Computer, ConfigError, load_config
from a2c_computer._mcp import InputCallbacks, McpCallFailure, McpServer, ServerStatus
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.http_server import serve_module_http

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"


def stdio(*args: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("default_tool_meta", {"auto_apply": True})
    return stdio_server_config("eras", "eras", *args, **fields)


def streamable(url: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("default_tool_meta", {"auto_apply": True})
    return {
        "type": "streamable",
        "name": "eras",
        "server_parameters": {"url": f"{url}/mcp", "timeout": "PT10S"},
        **fields,
    }


@contextlib.asynccontextmanager
async def http_eras(*args: str) -> AsyncIterator[str]:
    async with serve_module_http("eras", "--http", "0", *args) as url:
        yield url


async def _accept(
    ctx: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"answer": "yes"})


@contextlib.asynccontextmanager
async def mcp_server(entry: dict[str, Any], **kwargs: Any) -> AsyncIterator[McpServer]:
    """One McpServer of ``entry`` (through the config loader), started and ready."""
    config = load_config({"servers": {"eras": entry}}).servers["eras"]

    async def params() -> dict[str, Any]:
        return dict(entry["server_parameters"])

    async def nothing(_: McpServer) -> None:
        return None

    server = McpServer(
        config,
        params=params,
        on_ready=nothing,
        on_down=nothing,
        on_notification=lambda *_: None,
        restart=False,
        **kwargs,
    )
    server.start()
    try:
        await server.wait_settled(60)
        yield server
    finally:
        await server.stop()


async def _text(server: McpServer, tool: str, **arguments: Any) -> str:
    result = await server.call_tool(tool, arguments, timeout=30)
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])


# ------------------------------------------------------------------ which era is chosen


@pytest.mark.parametrize("transport", ["stdio", "streamable"])
@pytest.mark.parametrize(
    ("flags", "era", "expected"),
    [
        ((), None, HANDSHAKE),  # both eras offered: the handshake, where ctx.elicit works
        ((), "modern", MODERN),  # pinned
        ((), "handshake", HANDSHAKE),
        (("--modern-only",), None, MODERN),  # all it speaks
        (("--modern-only",), "modern", MODERN),
    ],
)
async def test_the_era_per_server(
    transport: str, flags: tuple[str, ...], era: str | None, expected: str
) -> None:
    fields = {} if era is None else {"mcp_era": era}
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            entry = stdio(*flags, **fields)
        else:
            entry = streamable(await stack.enter_async_context(http_eras(*flags)), **fields)
        config = {"servers": {"eras": entry}}
        computer = await stack.enter_async_context(Computer(config, name="box"))
        state = computer.server_states()["eras"]
        assert state.status == "ready", state
        assert state.protocol == expected
        assert {t.name for t in computer.tools()} >= {"echo", "ask_push", "ask_resolved"}
        result = await computer.call_tool("echo", {"text": "hi"})
        assert not result.is_error and result.content[0]["text"] == f"{expected}:hi", result


@pytest.mark.parametrize("transport", ["stdio", "streamable"])
async def test_a_modern_only_server_pinned_to_the_handshake_fails_clearly(
    transport: str,
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            entry = stdio("--modern-only", mcp_era="handshake")
        else:
            url = await stack.enter_async_context(http_eras("--modern-only"))
            entry = streamable(url, mcp_era="handshake")
        computer = await stack.enter_async_context(
            Computer({"servers": {"eras": entry}}, name="box")
        )
        state = computer.server_states()["eras"]
        assert state.status == "failed" and state.protocol is None, state
        assert state.last_error is not None and "2026-07-28 only" in state.last_error


async def test_sse_cannot_be_pinned_to_the_modern_era() -> None:
    entry = {
        "type": "sse",
        "name": "eras",
        "server_parameters": {"url": "http://127.0.0.1:9/sse"},
        "mcp_era": "modern",
    }
    with pytest.raises(ConfigError, match="SSE speaks the handshake era only"):
        load_config({"servers": {"eras": entry}})


# -------------------------------------------- which tools work in which era (the seam)


@contextlib.asynccontextmanager
async def asking_server(transport: str, **fields: Any) -> AsyncIterator[McpServer]:
    """The eras server over ``transport``, whose elicitations are accepted with "yes"."""
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            entry = stdio(**fields)
        else:
            entry = streamable(await stack.enter_async_context(http_eras()), **fields)
        inputs = InputCallbacks(elicitation=_accept)
        yield await stack.enter_async_context(mcp_server(entry, inputs=inputs))


@pytest.mark.parametrize("transport", ["stdio", "streamable"])
@pytest.mark.parametrize("era", [None, "handshake"])
async def test_handshake_era_push_and_resolver_tools_get_their_answer(
    transport: str, era: str | None
) -> None:
    fields = {} if era is None else {"mcp_era": era}
    async with asking_server(transport, **fields) as server:
        assert server.status is ServerStatus.READY and server.era == "handshake"
        assert await _text(server, "ask_push", question="ok?") == "push:yes"
        assert await _text(server, "ask_resolved", question="ok?") == "resolved:yes"


@pytest.mark.parametrize("transport", ["stdio", "streamable"])
async def test_modern_era_push_tools_fail_and_resolver_tools_ask_in_their_result(
    transport: str,
) -> None:
    async with asking_server(transport, mcp_era="modern") as server:
        assert server.era == "modern"
        with pytest.raises(McpCallFailure, match="no back-channel"):
            await server.call_tool("ask_push", {"question": "ok?"}, timeout=30)
        # The resolver's question comes back as the call's result; answered and called
        # again with the responses and the state, the tool finishes.
        asked = await server.call_tool(
            "ask_resolved", {"question": "ok?"}, timeout=30, allow_input_required=True
        )
        assert asked["resultType"] == "input_required", asked
        ((key, request),) = asked["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        done = await server.call_tool(
            "ask_resolved",
            {"question": "ok?"},
            timeout=30,
            input_responses={key: {"action": "accept", "content": {"answer": "yes"}}},
            request_state=asked.get("requestState"),
        )
        assert done["content"][0]["text"] == "resolved:yes", done
        # Without a taker for such results the call fails saying what was asked.
        with pytest.raises(McpCallFailure, match=r"asked for input \(elicitation\)"):
            await server.call_tool("ask_resolved", {"question": "ok?"}, timeout=30)


async def test_without_callbacks_nothing_is_declared_and_the_ask_is_refused() -> None:
    async with mcp_server(stdio()) as server:
        assert server.era == "handshake"
        with pytest.raises(McpCallFailure):
            await server.call_tool("ask_push", {"question": "ok?"}, timeout=30)


# ---------------------------------------------------- change notifications, both eras


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_a_new_tool_is_seen_in_either_era(era: str, wait: Callable[..., Any]) -> None:
    config = {"servers": {"eras": stdio(mcp_era=era)}}
    async with Computer(config, name="box") as computer:
        assert computer.server_states()["eras"].protocol == (
            HANDSHAKE if era == "handshake" else MODERN
        )
        assert "grown" not in {t.name for t in computer.tools()}
        if era == "modern":
            # the subscriptions/listen stream is open before the change is published
            server = computer.server("eras")
            assert server is not None
            await wait(lambda: server.listening, what="the change stream")
        result = await computer.call_tool("grow", {})
        assert not result.is_error, result
        await wait(lambda: "grown" in {t.name for t in computer.tools()}, what="the new tool")
