"""Handshake: version query, polling first, version refusals (4008, missing, close 4900), auth.

Refusal tests count the Engine.IO handshake requests the Server saw with a counting ASGI
middleware around the real app, to prove the agent sends exactly one extra plain GET and
never loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import pytest
import uvicorn

from a2c_agent import (
    AgentConnectionError,
    AgentState,
    AsyncAgent,
    BadRequestError,
    ProtocolVersionError,
    UnauthorizedError,
)
from a2c_protocol import PROTOCOL_VERSION, ErrorCode
from a2c_server import ServerSettings, create_app
from a2c_testkit.server import running_server

App = Any


class Counting:
    """ASGI middleware recording every Engine.IO request without a ``sid`` (a handshake)."""

    def __init__(self, app: App, *, strip_version: bool = False) -> None:
        self.app = app
        self.strip_version = strip_version
        self.handshakes: list[tuple[str, dict[str, list[str]]]] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            query = parse_qs(scope["query_string"].decode())
            if "sid" not in query and scope["path"].startswith("/socket.io"):
                self.handshakes.append((scope["type"], query))
            if self.strip_version:
                raw = "&".join(
                    p
                    for p in scope["query_string"].decode().split("&")
                    if not p.startswith("a2c_version=")
                )
                scope = {**scope, "query_string": raw.encode()}
        await self.app(scope, receive, send)


@contextlib.asynccontextmanager
async def serve(app: App) -> AsyncIterator[str]:
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
        )
    )
    task = asyncio.ensure_future(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


def _no_reconnect_agent(url: str, **kw: Any) -> AsyncAgent:
    # A tiny reconnect delay makes any (forbidden) retry loop show up at once.
    return AsyncAgent(url, name="agent-1", reconnect_delay=0.01, reconnect_max_delay=0.02, **kw)


async def test_compatible_version_connects_polling_first():
    counting = Counting(create_app(ServerSettings()))
    async with serve(counting) as url, _no_reconnect_agent(url) as agent:
        assert agent.state is AgentState.CONNECTED
        assert agent.url.endswith(f"a2c_version={PROTOCOL_VERSION}")
    kind, query = counting.handshakes[0]
    assert kind == "http" and query["transport"] == ["polling"]
    assert query["a2c_version"] == [PROTOCOL_VERSION]


def test_user_cannot_pass_a2c_version():
    with pytest.raises(ValueError, match="a2c_version"):
        AsyncAgent("http://127.0.0.1:1/?a2c_version=0.2.0", name="a")
    with pytest.raises(ValueError, match="role"):
        AsyncAgent("http://127.0.0.1:1", name="a", auth={"role": "computer"})


async def test_incompatible_version_raises_once_and_never_retries():
    counting = Counting(create_app(ServerSettings(protocol_version="0.3.0")))
    async with serve(counting) as url:
        agent = _no_reconnect_agent(url)
        with pytest.raises(ProtocolVersionError) as info:
            await agent.open()
        error = info.value
        assert error.code == ErrorCode.PROTOCOL_VERSION_MISMATCH
        assert error.client_version == PROTOCOL_VERSION
        assert error.server_version == "0.3.0"
        assert isinstance(error.min_supported, str) and error.min_supported
        assert isinstance(error.max_supported, str) and error.max_supported
        assert PROTOCOL_VERSION in str(error) and "0.3.0" in str(error)
        assert agent.state is AgentState.CLOSED
        # One handshake by python-socketio, one plain GET for the authoritative body.
        assert len(counting.handshakes) == 2
        # Give any retry loop ample time to show itself: nothing more arrives.
        await asyncio.sleep(1.0)
        assert len(counting.handshakes) == 2
        assert all(kind == "http" for kind, _ in counting.handshakes)  # no WS upgrade (C8)
        assert agent._channel.sio is not None and not agent._channel.sio.connected
        assert agent._channel.sio.eio.state == "disconnected"
        await agent.close()


async def test_missing_version_gets_the_400_body():
    counting = Counting(create_app(ServerSettings()), strip_version=True)
    async with serve(counting) as url:
        agent = _no_reconnect_agent(url)
        with pytest.raises(BadRequestError) as info:
            await agent.open()
        assert info.value.code == 400
        assert "a2c_version" in info.value.message
        assert len(counting.handshakes) == 2
        await asyncio.sleep(1.0)
        assert len(counting.handshakes) == 2


async def test_websocket_only_compatible_connects():
    async with (
        running_server() as srv,
        AsyncAgent(srv.url, name="agent-1", transports=["websocket"]) as agent,
    ):
        assert agent.state is AgentState.CONNECTED
        await agent.join_office("office-1")


async def test_the_connect_line_names_the_default_protocol(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="a2c_agent")
    async with running_server() as srv, AsyncAgent(srv.url, name="agent-1"):
        pass
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("a2c_agent")]
    assert f"agent agent-1 connected to {srv.url} (protocol {PROTOCOL_VERSION})" in lines, lines


async def test_websocket_only_incompatible_gets_the_4008_fields():
    counting = Counting(create_app(ServerSettings(protocol_version="0.3.0")))
    async with serve(counting) as url:
        agent = _no_reconnect_agent(url, transports=["websocket"])
        with pytest.raises(ProtocolVersionError) as info:
            await agent.open()
        assert info.value.server_version == "0.3.0"
        kinds = [kind for kind, _ in counting.handshakes]
        assert kinds == ["websocket", "http"]


class Close4900:
    """A stand-in Server without WebSocket denial support: closes WS with 4900 (R3)."""

    def __init__(self, body: dict | None) -> None:
        self.body = body
        self.seen: list[str] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        self.seen.append(scope["type"])
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": 4900, "reason": "a2c version rejected"})
            return
        if self.body is None:
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"x-a2c-error-code", b"4008")],
            }
        )
        await send({"type": "http.response.body", "body": json.dumps(self.body).encode()})


async def test_close_4900_polls_once_for_the_body():
    body = {
        "code": 4008,
        "message": "Protocol version mismatch",
        "server_version": "0.3.0",
        "client_version": "0.2.0",
        "min_supported": "0.3.0",
        "max_supported": "0.3.999",
    }
    app = Close4900(body)
    async with serve(app) as url:
        agent = _no_reconnect_agent(url, transports=["websocket"])
        with pytest.raises(ProtocolVersionError) as info:
            await agent.open()
        assert (info.value.code, info.value.server_version, info.value.max_supported) == (
            4008,
            "0.3.0",
            "0.3.999",
        )
        await asyncio.sleep(0.5)
        assert app.seen == ["websocket", "http"]


async def test_close_4900_without_a_body_still_raises_version_error():
    app = Close4900(None)
    async with serve(app) as url:
        agent = _no_reconnect_agent(url, transports=["websocket"])
        with pytest.raises(ProtocolVersionError) as info:
            await agent.open()
        assert info.value.code == 4900
        assert info.value.server_version == ""
        await asyncio.sleep(0.5)
        assert app.seen == ["websocket", "http"]


async def test_business_auth_fields_are_sent():
    async with running_server(ServerSettings(auth_token="s3cret")) as srv:
        async with AsyncAgent(srv.url, name="agent-1", auth={"token": "s3cret"}) as agent:
            await agent.join_office("office-1")
        calls = []

        def token() -> dict[str, str]:
            calls.append(1)
            return {"token": "s3cret"}

        async with AsyncAgent(srv.url, name="agent-2", auth=token) as agent:
            assert agent.state is AgentState.CONNECTED
        assert calls == [1]
        agent = AsyncAgent(srv.url, name="agent-3", auth={"token": "wrong"})
        with pytest.raises(UnauthorizedError) as info:
            await agent.open()
        assert agent.state is AgentState.CLOSED
        assert info.value.code == 401
        assert "Authentication failed" in str(info.value)
        assert "s3cret" not in str(info.value)


async def test_unreachable_server_is_a_connection_error():
    async with running_server() as srv:
        url = srv.url
    agent = AsyncAgent(url, name="agent-1", connect_timeout=5)
    with pytest.raises(AgentConnectionError):
        await agent.open()
    assert agent.state is AgentState.CLOSED
