"""The version gate and authentication, over real HTTP, real WebSockets and real clients.

Covers the matrix of handshake-and-versioning.md §7.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest
import socketio
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from a2c_protocol import NAMESPACE, WS_CLOSE_VERSION_REJECTED
from a2c_server import (
    AuthenticationError,
    AuthRequest,
    Identity,
    ServerSettings,
    SharedTokenAuth,
    VersionGate,
    create_app,
)
from a2c_testkit.server import RunningServer, close_client, connect_raw, running_server

MISSING = {"code": 400, "message": "Missing a2c_version query parameter"}


def polling_url(srv: RunningServer, query: str) -> str:
    return f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling{query}"


def ws_url(srv: RunningServer, query: str) -> str:
    base = srv.url.replace("http://", "ws://")
    return f"{base}/{srv.socketio_path}/?EIO=4&transport=websocket{query}"


async def polling(srv: RunningServer, query: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.get(polling_url(srv, query))


def assert_4008(response: httpx.Response, client_version: str) -> dict[str, Any]:
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-a2c-error-code"] == "4008"
    body = response.json()
    assert body["code"] == 4008
    assert body["client_version"] == client_version
    for field in ("message", "server_version", "min_supported", "max_supported"):
        assert isinstance(body[field], str) and body[field]
    return body  # type: ignore[no-any-return]


# ------------------------------------------------------------------ polling path


@pytest.mark.parametrize(
    ("client", "server_version", "accepted"),
    [
        ("0.2.0", "0.2.0", True),
        ("0.2.1", "0.2.0", True),
        ("0.2.0", "0.3.0", False),
        ("0.3.0", "0.2.0", False),
        ("1.0.0", "0.2.0", False),
        ("1.0.0", "1.2.0", True),
        ("1.2.0", "1.0.0", False),
    ],
)
async def test_server_handshake_version_matrix_over_http(
    client: str, server_version: str, accepted: bool
) -> None:
    async with running_server(ServerSettings(protocol_version=server_version)) as srv:
        response = await polling(srv, f"&a2c_version={client}")
    if accepted:
        assert response.status_code == 200
        assert response.text.startswith("0{")  # the Engine.IO open packet
    else:
        body = assert_4008(response, client)
        assert body["server_version"] == server_version


@pytest.mark.parametrize(
    ("client", "accepted"),
    [("0.2.0", True), ("0.2.3", True), ("0.2.99", True), ("0.3.0", False), ("0.1.9", False)],
)
async def test_the_default_server_takes_every_0_2_patch_level(
    server: RunningServer, client: str, accepted: bool
) -> None:
    # Every 0.2.x passes every 0.2.x gate: a newer PATCH than the Server's own too.
    response = await polling(server, f"&a2c_version={client}")
    if accepted:
        assert response.status_code == 200 and response.text.startswith("0{")
    else:
        assert_4008(response, client)


@pytest.mark.parametrize("query", ["", "&a2c_version=", "&other=1"])
async def test_server_handshake_missing_version_is_400(server: RunningServer, query: str) -> None:
    response = await polling(server, query)
    assert response.status_code == 400
    assert response.json() == MISSING
    assert "x-a2c-error-code" not in response.headers


@pytest.mark.parametrize("bad", ["abc", "0.2", "0.2.0-rc1", "+0.2.0", " 0.2.0", "0.2.0.1", "٠.٢.٠"])
async def test_server_handshake_malformed_version_is_400(server: RunningServer, bad: str) -> None:
    response = await polling(server, "&" + httpx.QueryParams({"a2c_version": bad}).__str__())
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 400
    assert body["message"].startswith("Invalid a2c_version: ")
    assert "x-a2c-error-code" not in response.headers


async def test_server_handshake_first_repeated_parameter_wins(server: RunningServer) -> None:
    ok = await polling(server, "&a2c_version=0.2.0&a2c_version=9.9.9")
    assert ok.status_code == 200
    refused = await polling(server, "&a2c_version=9.9.9&a2c_version=0.2.0")
    assert_4008(refused, "9.9.9")


@pytest.mark.parametrize(
    "version", ["00.02.00", "0.02.0", "0.2.00", "0.2." + "9" * 400, "0.2.1234567"]
)
async def test_server_handshake_accepts_only_canonical_versions(
    server: RunningServer, version: str
) -> None:
    refused = await polling(server, f"&a2c_version={version}")
    assert refused.status_code == 400
    assert refused.json()["message"].startswith("Invalid a2c_version: ")
    assert "x-a2c-error-code" not in refused.headers


async def test_server_handshake_requests_of_an_accepted_session_pass(server: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        opened = await http.get(polling_url(server, "&a2c_version=0.2.0"))
        sid = json.loads(opened.text[1:])["sid"]
        # A later round trip of the same Engine.IO session, without a2c_version.
        follow = await http.post(
            f"{server.url}/{server.socketio_path}/?EIO=4&transport=polling&sid={sid}",
            content=b'40/smcp,{"role":"agent"}',
        )
        answer = await http.get(
            f"{server.url}/{server.socketio_path}/?EIO=4&transport=polling&sid={sid}"
        )
    assert follow.status_code == 200
    assert follow.text == "OK"
    # The namespace connect succeeded: the handler found the version of the first request.
    assert answer.status_code == 200
    assert answer.text.startswith("40/smcp,")


async def test_server_handshake_other_paths_are_not_gated(server: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        health = await http.get(f"{server.url}/healthz")
        missing = await http.get(f"{server.url}/nothing-here")
    assert health.status_code == 200
    multinode = {"registry": "redis", "redis": "ok"} if server.nodes else {"registry": "memory"}
    assert health.json() == {
        "status": "ok",
        "protocol_version": "0.2.3",
        "protocols": ["0.2.3", "0.4.2"],
        "namespace": NAMESPACE,
        "node_id": server.app.node_id,
        "connections": 0,
        "offices": 0,
        **multinode,
    }
    assert missing.status_code == 404


async def test_server_handshake_custom_engineio_path_is_gated() -> None:
    async with running_server(ServerSettings(socketio_path="/hub/io/")) as srv:
        assert srv.socketio_path == "hub/io"
        refused = await polling(srv, "&a2c_version=0.9.0")
        assert_4008(refused, "0.9.0")
        async with connect_raw(srv, "agent") as client:
            assert client.sio.connected


# ---------------------------------------------------------------- real clients


async def connect_client(
    srv: RunningServer, version: str, transports: list[str], auth: object = None
) -> tuple[socketio.AsyncClient, asyncio.Future[Any]]:
    sio = socketio.AsyncClient(reconnection=False)
    error: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def on_connect_error(data: Any = None) -> None:
        if not error.done():
            error.set_result(data)

    sio.on("connect_error", on_connect_error, namespace=NAMESPACE)
    try:
        await sio.connect(
            f"{srv.url}?a2c_version={version}",
            namespaces=[NAMESPACE],
            socketio_path=srv.socketio_path,
            auth=auth if auth is not None else {"role": "agent"},
            transports=transports,
            wait_timeout=30,
        )
    except socketio.exceptions.ConnectionError:
        pass
    return sio, error


@pytest.mark.parametrize("transports", [["polling", "websocket"], ["websocket"]])
async def test_server_handshake_real_client_compatible_connects(
    server: RunningServer, transports: list[str]
) -> None:
    sio, _ = await connect_client(server, "0.2.3", transports)
    try:
        assert sio.connected
        assert sio.transport() == "websocket"
    finally:
        await close_client(sio)


async def test_server_handshake_real_polling_client_sees_the_4008_body(
    server: RunningServer,
) -> None:
    sio, error = await connect_client(server, "0.3.0", ["polling", "websocket"])
    try:
        assert not sio.connected
        body = await asyncio.wait_for(error, 30)
        assert body["code"] == 4008 and body["client_version"] == "0.3.0"
    finally:
        await close_client(sio)


async def test_server_handshake_real_websocket_only_client_is_refused(
    server: RunningServer,
) -> None:
    sio, _ = await connect_client(server, "0.3.0", ["websocket"])
    try:
        assert not sio.connected
        health = await server.app.health()
        assert {k: health[k] for k in ("status", "connections", "offices")} == {
            "status": "ok",
            "connections": 0,
            "offices": 0,
        }
    finally:
        await close_client(sio)


@pytest.mark.parametrize("transports", [["polling", "websocket"], ["websocket"]])
@pytest.mark.parametrize(
    ("client", "server_version", "accepted"),
    [
        ("0.2.1", "0.2.0", True),
        ("0.2.0", "0.3.0", False),
        ("1.0.0", "0.2.0", False),
        ("1.0.0", "1.2.0", True),
        ("1.2.0", "1.0.0", False),
        ("", "0.2.0", False),
        ("abc", "0.2.0", False),
    ],
)
async def test_server_handshake_version_matrix_with_real_clients(
    client: str, server_version: str, accepted: bool, transports: list[str]
) -> None:
    async with running_server(ServerSettings(protocol_version=server_version)) as srv:
        sio, error = await connect_client(srv, client, transports)
        try:
            assert sio.connected is accepted
            connections = (await srv.app.health())["connections"]
            assert connections == (1 if accepted else 0)
            if not accepted and transports[0] == "polling":
                body = await asyncio.wait_for(error, 30)
                assert body["code"] == (4008 if client not in ("", "abc") else 400)
        finally:
            await close_client(sio)


# -------------------------------------------------------------- WebSocket-only


@pytest.mark.parametrize("ws_impl", ["auto", "websockets-sansio", "wsproto"])
@pytest.mark.parametrize(
    ("query", "code"),
    [("&a2c_version=0.3.0", 4008), ("", 400), ("&a2c_version=zero", 400)],
)
async def test_server_handshake_websocket_only_gets_the_identical_denial(
    ws_impl: str, query: str, code: int
) -> None:
    async with running_server(ws=ws_impl) as srv:
        expected = await polling(srv, query)
        with pytest.raises(InvalidStatus) as info:
            async with ws_connect(ws_url(srv, query), open_timeout=30):
                pass
    response = info.value.response
    assert response.status_code == 400
    assert response.body == expected.content  # byte-identical to the polling body
    assert json.loads(response.body)["code"] == code
    assert response.headers["Content-Type"] == "application/json"
    if code == 4008:
        assert response.headers["X-A2C-Error-Code"] == "4008"
    else:
        assert "X-A2C-Error-Code" not in response.headers


async def test_server_handshake_websocket_only_compatible_opens(server: RunningServer) -> None:
    async with ws_connect(ws_url(server, "&a2c_version=0.2.0"), open_timeout=30) as ws:
        opening = await asyncio.wait_for(ws.recv(), 30)
    assert isinstance(opening, str) and opening.startswith("0{")


async def test_server_handshake_without_denial_extension_closes_4900() -> None:
    reached: list[object] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope)

    gate = VersionGate(inner, server_version="0.2.0", mount="socket.io")
    sent: list[dict[str, Any]] = []
    inbox = [{"type": "websocket.connect"}]

    async def receive() -> dict[str, Any]:
        return inbox.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "websocket",
        "path": "/socket.io/",
        "query_string": b"EIO=4&transport=websocket&a2c_version=0.3.0",
        "headers": [],
        "extensions": {},
    }
    await gate(scope, receive, send)
    assert reached == []
    assert sent[0] == {"type": "websocket.accept"}
    assert sent[1]["type"] == "websocket.close"
    assert sent[1]["code"] == WS_CLOSE_VERSION_REJECTED == 4900


# ------------------------------------------------------- business code cannot bypass


async def test_server_handshake_gate_holds_when_the_connect_handler_raises(
    server: RunningServer,
) -> None:
    calls: list[str] = []

    async def broken_connect(sid: str, environ: Any, auth: Any = None) -> None:
        calls.append(sid)
        raise RuntimeError("a bug in business code")

    server.app.sio.on("connect", broken_connect, namespace=NAMESPACE)
    assert_4008(await polling(server, "&a2c_version=0.3.0"), "0.3.0")
    with pytest.raises(InvalidStatus) as info:
        async with ws_connect(ws_url(server, "&a2c_version=0.3.0"), open_timeout=30):
            pass
    assert json.loads(info.value.response.body)["code"] == 4008
    sio, error = await connect_client(server, "0.3.0", ["polling", "websocket"])
    try:
        assert (await asyncio.wait_for(error, 30))["code"] == 4008
    finally:
        await close_client(sio)
    assert calls == []  # refused before any connect handler ran


# --------------------------------------------------------------- authentication


@pytest.mark.parametrize(
    "auth", [{"role": "admin"}, {"role": 1}, {"role": ["agent"]}, {"role": ""}, ["agent"]]
)
async def test_server_auth_role_must_be_agent_or_computer(
    server: RunningServer, auth: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server")
    sio, error = await connect_client(server, "0.2.0", ["polling", "websocket"], auth=auth)
    try:
        assert not sio.connected
        refusal = await asyncio.wait_for(error, 30)
        assert "auth.role" in refusal["message"]
    finally:
        await close_client(sio)
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


async def test_server_auth_shared_token(caplog: pytest.LogCaptureFixture) -> None:
    secret = "s3cr3t-token-value"
    caplog.set_level(logging.DEBUG, logger="a2c_server")
    async with running_server(ServerSettings(auth_token=secret)) as srv:
        async with connect_raw(srv, "agent", auth={"token": secret}) as ok:
            assert ok.sio.connected
        for auth in ({}, {"token": "wrong"}, {"token": 123}):
            sio, error = await connect_client(
                srv, "0.2.0", ["polling", "websocket"], auth={"role": "computer", **auth}
            )
            try:
                assert not sio.connected
                assert "Authentication failed" in (await asyncio.wait_for(error, 30))["message"]
            finally:
                await close_client(sio)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("authentication failed" in r.getMessage() for r in warnings)
    assert all(
        secret not in r.getMessage() and "wrong" not in r.getMessage() for r in caplog.records
    )
    assert secret not in repr(ServerSettings(auth_token=secret))
    assert secret not in repr(SharedTokenAuth(secret))


async def test_server_auth_custom_provider_sees_auth_headers_and_peer() -> None:
    seen: list[AuthRequest] = []

    class Provider:
        async def authenticate(self, request: AuthRequest) -> Identity:
            seen.append(request)
            if request.auth.get("tenant") != "acme":
                raise AuthenticationError("unknown tenant")
            return Identity(subject="acme-user")

    async with running_server(auth=Provider()) as srv:
        async with connect_raw(srv, "computer", auth={"tenant": "acme"}) as client:
            assert client.sio.connected
        sio, error = await connect_client(
            srv, "0.2.0", ["polling", "websocket"], auth={"role": "agent", "tenant": "evil"}
        )
        try:
            assert (await asyncio.wait_for(error, 30))["message"] == "unknown tenant"
        finally:
            await close_client(sio)
    request = seen[0]
    assert request.role.value == "computer"
    assert request.auth["tenant"] == "acme"
    assert request.peer is not None and request.peer.startswith("127.0.0.1:")
    assert "host" in request.headers


async def test_server_auth_provider_crash_refuses_the_connection() -> None:
    class Crashing:
        async def authenticate(self, request: AuthRequest) -> Identity:
            raise KeyError("bug")

    async with running_server(auth=Crashing()) as srv:
        sio, error = await connect_client(srv, "0.2.0", ["polling", "websocket"])
        try:
            assert (await asyncio.wait_for(error, 30))["message"] == "Authentication failed"
        finally:
            await close_client(sio)


def test_server_auth_allow_all_warns_off_loopback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server")
    create_app(ServerSettings(host="127.0.0.1"))
    create_app(ServerSettings(host="::1"))
    assert not caplog.records
    create_app(ServerSettings(host="0.0.0.0"))
    assert any("allow-all" in r.getMessage() for r in caplog.records)
    caplog.clear()
    create_app(ServerSettings(host="0.0.0.0", auth_token="x"))
    assert not caplog.records


async def test_server_session_keeps_the_accepted_version(server: RunningServer) -> None:
    async with connect_raw(server, "agent", a2c_version="0.2.7") as client:
        sid = client.sio.get_sid(NAMESPACE)
        session = await server.app.sio.get_session(sid, namespace=NAMESPACE)
    assert session["a2c_version"] == "0.2.7"
    assert session["role"] == "agent"


async def test_server_auth_client_leaving_during_authentication_leaves_no_session() -> None:
    called = asyncio.Event()
    release = asyncio.Event()
    refused = asyncio.Event()

    class Slow:
        async def authenticate(self, request: AuthRequest) -> Identity:
            called.set()
            await release.wait()
            return Identity(subject="late")

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "left during authentication" in record.getMessage():
                refused.set()

    watch = Watch()
    logging.getLogger("a2c_server").addHandler(watch)
    logging.getLogger("a2c_server").setLevel(logging.INFO)
    sio = socketio.AsyncClient(reconnection=False)
    try:
        async with running_server(auth=Slow()) as srv:
            attempt = asyncio.ensure_future(
                sio.connect(
                    f"{srv.url}?a2c_version=0.2.0",
                    namespaces=[NAMESPACE],
                    socketio_path=srv.socketio_path,
                    auth={"role": "agent"},
                    transports=["polling", "websocket"],
                    wait_timeout=30,
                )
            )
            await asyncio.wait_for(called.wait(), 30)
            # The transport dies while the provider is still deciding.
            eio = srv.app.sio.eio
            (eio_sid,) = list(eio.sockets)
            await eio.disconnect(eio_sid)
            release.set()
            await asyncio.wait_for(refused.wait(), 30)
            assert (await srv.app.health())["connections"] == 0
            attempt.cancel()
            await asyncio.gather(attempt, return_exceptions=True)
    finally:
        release.set()
        logging.getLogger("a2c_server").removeHandler(watch)
        logging.getLogger("a2c_server").setLevel(logging.NOTSET)
        await close_client(sio)
