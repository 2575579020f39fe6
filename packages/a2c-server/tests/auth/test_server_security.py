"""Security suite: what a hostile client must not be able to do to the Server.

Every reproduction runs over both transports (polling only, websocket only) against a real
server with real python-socketio clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import socketio
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from a2c_protocol import NAMESPACE, Event, Role, is_error_payload
from a2c_server import AuthenticationError, AuthRequest, Identity, ServerSettings
from a2c_server._relay._sio import RESERVED_EVENTS
from a2c_testkit.server import (
    RawClient,
    RunningServer,
    assert_registry_matches_rooms,
    close_client,
    connect_raw,
    running_server,
)

TRANSPORTS = pytest.mark.parametrize(
    "transports", [["polling"], ["websocket"]], ids=["polling", "websocket"]
)


class PeerTrustingAuth:
    """A provider that admits Computers only from 10.0.0.0/8: trusts the peer address."""

    async def authenticate(self, request: AuthRequest) -> Identity:
        if request.role is Role.COMPUTER and not (request.peer or "").startswith("10."):
            raise AuthenticationError("computers only from the private network")
        return Identity(subject=f"{request.role.value}@{request.peer}")


@pytest.fixture
async def guarded() -> AsyncIterator[RunningServer]:
    async with running_server(ServerSettings(tool_call_buffer=0.5), auth=PeerTrustingAuth()) as srv:
        yield srv


def forged_environ() -> dict[str, Any]:
    return {
        "asgi.scope": {"client": ["10.1.2.3", 4444], "query_string": list(b"a2c_version=0.2.0")},
        "REMOTE_ADDR": "10.1.2.3",
    }


def sid_of(client: RawClient) -> str:
    sid = client.sio.get_sid(NAMESPACE)
    assert sid is not None
    return str(sid)


# ----------------------------------------------------------- 1. in-band lifecycle


@TRANSPORTS
async def test_security_inband_connect_cannot_readmit(
    guarded: RunningServer, transports: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "a2c_server")
    async with connect_raw(guarded, "agent", transports=transports) as agent:
        sid = sid_of(agent)
        answer = await agent.call("connect", (forged_environ(), {"role": "computer"}))
        assert is_error_payload(answer) and answer["code"] == 400
        assert "reserved" in answer["message"]
        member = await guarded.app.store.get(sid)
        assert member is not None and member.role is Role.AGENT
        # Still an Agent: it cannot take a Computer's seat in an office.
        joined = await agent.join("computer", "evil", "o1")
        assert isinstance(joined, list | tuple) and joined[0] is False
        assert await agent.join("agent", "a1", "o1") in ([True, None], (True, None))
        await assert_registry_matches_rooms(guarded)
    forged = [r for r in caplog.records if "10.1.2.3" in r.getMessage()]
    assert forged == []  # the forged address never reaches the log
    refused = [r for r in caplog.records if "event refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert refused[0].exc_info is None


@TRANSPORTS
async def test_security_inband_disconnect_leaves_no_ghost(
    server: RunningServer, transports: list[str]
) -> None:
    async with (
        connect_raw(server, "computer", transports=transports) as computer,
        connect_raw(server, "agent", transports=transports) as agent,
    ):
        assert (await computer.join("computer", "c1", "o1"))[0] is True  # type: ignore[index]
        assert (await agent.join("agent", "a1", "o1"))[0] is True  # type: ignore[index]
        await agent.emit("disconnect", {})
        answer = await agent.call("disconnect", {})
        assert is_error_payload(answer) and answer["code"] == 400
        await assert_registry_matches_rooms(server)
        member = await server.app.store.get(sid_of(agent))
        assert member is not None and member.office_id == "o1"
        # The seat stays taken: a second Agent cannot enter while the first is connected.
        async with connect_raw(server, "agent", transports=transports) as second:
            refused = await second.join("agent", "a2", "o1")
            assert refused[0] is False  # type: ignore[index]
        # The first Agent still works through its real session.
        listed = await agent.call(
            Event.LIST_ROOM, {"agent": "a1", "req_id": "r1", "office_id": "o1"}
        )
        assert isinstance(listed, dict)
        assert sorted(s["name"] for s in listed["sessions"]) == ["a1", "c1"]
    await assert_registry_matches_rooms(server)


@TRANSPORTS
async def test_security_reserved_and_unknown_names_keep_registry_equal_rooms(
    server: RunningServer, transports: list[str]
) -> None:
    rng = random.Random(10)
    names = [
        "connect", "disconnect", "connect_error", "disconnecting", "newListener",
        "removeListener", "message", "notify:enter_office", "client:nope", "server:x" * 40, "",
    ]  # fmt: skip
    payloads: list[Any] = [
        None, {}, [], 0, "", {"role": "computer"}, (forged_environ(), {"role": "agent"}),
        ({"sid": "x"}, "y", 3), {"office_id": "o1"}, "transport close",
    ]  # fmt: skip
    async with (
        connect_raw(server, "computer", transports=transports) as computer,
        connect_raw(server, "agent", transports=transports) as agent,
        connect_raw(server, "agent", transports=transports) as loner,
    ):
        await computer.join("computer", "c1", "o1")
        await agent.join("agent", "a1", "o1")
        for _ in range(60):
            client = rng.choice([computer, agent, loner])
            name = rng.choice(names)
            payload = rng.choice(payloads)
            if name in RESERVED_EVENTS or name.startswith(("client:", "server:")):
                answer = await client.call(name, payload)
                assert is_error_payload(answer), (name, payload, answer)
                assert answer["code"] == 400
            await client.emit(name, payload)
        await assert_registry_matches_rooms(server)
        stats = await server.app.store.stats()
        assert stats.connections == 3 and stats.offices == 1


# ------------------------------------------------------------ raw Engine.IO helpers


class Eio:
    """A hand-driven Engine.IO polling session (what a hostile client can do)."""

    def __init__(self, http: httpx.AsyncClient, srv: RunningServer) -> None:
        self.http = http
        self.base = f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling"
        self.sid = ""

    async def open(self) -> httpx.Response:
        opened = await self.http.get(f"{self.base}&a2c_version=0.2.0")
        if opened.status_code == 200:
            self.sid = json.loads(opened.text[1:])["sid"]
        return opened

    async def post(self, body: str) -> httpx.Response:
        return await self.http.post(f"{self.base}&sid={self.sid}", content=body.encode())

    async def get(self) -> httpx.Response:
        return await self.http.get(f"{self.base}&sid={self.sid}")

    async def wait_closed(self, srv: RunningServer, timeout: float = 30) -> None:
        """Until the Server no longer knows this Engine.IO session."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.sid in srv.app.sio.eio.sockets:
            assert loop.time() < deadline, "the Engine.IO session was kept"
            await asyncio.sleep(0.05)


def no_errors(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert bad == [], [r.getMessage() for r in bad]


@pytest.fixture
async def single(settings: ServerSettings) -> AsyncIterator[RunningServer]:
    async with running_server(settings) as srv:
        yield srv


# ------------------------------------------------------ 4. memory a client can pin


@TRANSPORTS
async def test_security_identifier_strings_are_bounded(
    server: RunningServer, transports: list[str]
) -> None:
    huge = "r" * 500_000
    async with (
        connect_raw(server, "computer", transports=transports) as computer,
        connect_raw(server, "agent", transports=transports) as agent,
    ):
        await computer.join("computer", "c1", "o1")
        await agent.join("agent", "a1", "o1")
        answer = await agent.call(
            Event.TOOL_CALL,
            {"agent": "a1", "req_id": huge, "computer": "c1", "tool_name": "t", "params": {},
             "timeout": 5},
        )  # fmt: skip
        assert is_error_payload(answer) and answer["code"] == 400
        assert "$.req_id" in answer["message"] and "256" in answer["message"]
        refused = await agent.call(Event.JOIN_OFFICE, {"role": "agent", "name": "n" * 257,
                                                       "office_id": "o1"})  # fmt: skip
        assert refused[0] is False and "$.name" in refused[1]  # type: ignore[index]
        # A relayed cancel with a huge req_id is never fanned out; a normal one is.
        await agent.emit(Event.TOOL_CALL_CANCEL, {"agent": "a1", "req_id": huge})
        await agent.emit(Event.TOOL_CALL_CANCEL, {"agent": "a1", "req_id": "small"})
        _, note = await computer.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL)
        assert note["req_id"] == "small"  # type: ignore[index]


@pytest.mark.parametrize("settings", [ServerSettings(max_outgoing_bytes=20_000)])
async def test_security_client_that_stops_reading_is_dropped(
    single: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with (
        httpx.AsyncClient(timeout=30) as http,
        connect_raw(single, "agent", transports=["websocket"]) as agent,
    ):
        await agent.join("agent", "a1", "o1")
        slow = Eio(http, single)
        await slow.open()
        await slow.post('40/smcp,{"role":"computer"}')
        assert "40/smcp" in (await slow.get()).text  # admitted; from now on it never reads
        await slow.post('42/smcp,0["server:join_office",{"role":"computer","name":"c1",'
                        '"office_id":"o1"}]')  # fmt: skip
        for i in range(2_000):  # ~600 KB of notifications for a reader allowed 20 KB
            await agent.emit(Event.TOOL_CALL_CANCEL, {"agent": "a1", "req_id": f"{i:0>250}"})
            if slow.sid not in single.app.sio.eio.sockets:
                break
        await slow.wait_closed(single)
        await assert_registry_matches_rooms(single)
        assert (await single.app.store.stats()).connections == 1
    assert any("outgoing queue over its limit" in r.getMessage() for r in caplog.records)
    no_errors(caplog)


async def test_security_only_smcp_is_served_and_refusals_close_the_transport(
    single: RunningServer,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        root = Eio(http, single)
        await root.open()
        await root.post("40")  # the default namespace "/"
        assert (await root.get()).text.startswith("44")  # CONNECT_ERROR
        await root.wait_closed(single)
        bad_role = Eio(http, single)
        await bad_role.open()
        await bad_role.post('40/smcp,{"role":"admin"}')
        assert "44/smcp" in (await bad_role.get()).text
        await bad_role.wait_closed(single)


@pytest.mark.parametrize("settings", [ServerSettings(admission_timeout=0.5)])
async def test_security_sessions_never_admitted_are_closed(
    single: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with httpx.AsyncClient(timeout=30) as http:
        idle = Eio(http, single)
        await idle.open()
        await idle.wait_closed(single)
    assert any("not admitted in time" in r.getMessage() for r in caplog.records)
    # Admitted sessions are not affected by the deadline.
    async with connect_raw(single, "agent") as agent:
        await asyncio.sleep(1.0)  # longer than the admission deadline (not a timing assert)
        assert agent.sio.connected


@pytest.mark.parametrize("settings", [ServerSettings(max_unadmitted_per_address=3)])
async def test_security_unadmitted_sessions_per_address_are_limited(
    single: RunningServer,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        held = [Eio(http, single) for _ in range(3)]
        for eio in held:
            assert (await eio.open()).status_code == 200
        # A fourth is let in (a neighbour behind the same NAT); the oldest goes instead.
        newest = Eio(http, single)
        assert (await newest.open()).status_code == 200
        await held[0].wait_closed(single)
        assert all(e.sid in single.app.sio.eio.sockets for e in (*held[1:], newest))
        await newest.post('40/smcp,{"role":"agent"}')  # a prompt client is admitted
        assert "40/smcp" in (await newest.get()).text


async def test_security_timed_out_forward_releases_its_ack_callback(
    single: RunningServer,
) -> None:
    async with (
        connect_raw(single, "computer") as computer,
        connect_raw(single, "agent") as agent,
    ):
        never = asyncio.Event()

        async def never_answer(data: Any) -> None:
            await never.wait()

        computer.sio.on(Event.TOOL_CALL.value, never_answer, namespace=NAMESPACE)
        await computer.join("computer", "c1", "o1")
        await agent.join("agent", "a1", "o1")
        for i in range(3):
            answer = await agent.call(
                Event.TOOL_CALL,
                {"agent": "a1", "req_id": f"r{i}", "computer": "c1", "tool_name": "t",
                 "params": {}, "timeout": 1},
            )  # fmt: skip
            assert is_error_payload(answer) and answer["code"] == 408
        pending = single.app.sio.manager.callbacks.get(sid_of(computer), {})
        assert [k for k in pending if k != 0] == []  # key 0 is the id counter


# ------------------------------------------------------- 5. noise a client can cause


@TRANSPORTS
async def test_security_deep_payloads_get_a_400_not_a_traceback(
    server: RunningServer, transports: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    deep: Any = "x"
    for _ in range(200):  # the client's own encoder recurses; 200 is far past the limit
        deep = [deep]
    async with (
        connect_raw(server, "computer", transports=transports) as computer,
        connect_raw(server, "agent", transports=transports) as agent,
    ):
        await computer.join("computer", "c1", "o1")
        await agent.join("agent", "a1", "o1")
        answer = await agent.call(
            Event.TOOL_CALL,
            {"agent": "a1", "req_id": "r", "computer": "c1", "tool_name": "t",
             "params": {"deep": deep}, "timeout": 5},
        )  # fmt: skip
        assert is_error_payload(answer) and answer["code"] == 400
        assert "nesting" in answer["message"]
    no_errors(caplog)


async def test_security_undecodable_packets_and_closed_sessions_log_no_traceback(
    single: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with httpx.AsyncClient(timeout=30) as http:
        eio = Eio(http, single)
        await eio.open()
        await eio.post('40/smcp,{"role":"agent"}')
        await eio.get()
        for body in (
            "42/smcp," + "[" * 1200 + "]" * 1200,  # deeper than the JSON decoder goes
            '42/smcp,["server:list_room",' + "9" * 5000 + "]",  # an integer too long
            "42/smcp," + "9" * 120 + '["server:list_room",{}]',  # an ack id too long
            "9zz",  # not a packet type
        ):
            assert (await eio.post(body)).status_code in (200, 400)
        await eio.post("1")  # CLOSE
        late = await eio.post('42/smcp,["server:list_room",{}]')
        assert late.status_code == 400
    assert any("cannot decode" in r.getMessage() for r in caplog.records)
    no_errors(caplog)


async def test_security_empty_websocket_frame_logs_no_traceback(
    single: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    url = single.url.replace("http://", "ws://")
    async with ws_connect(
        f"{url}/{single.socketio_path}/?EIO=4&transport=websocket&a2c_version=0.2.0"
    ) as ws:
        await ws.recv()  # OPEN
        await ws.send("")
        with contextlib.suppress(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 30)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while single.app.sio.eio.sockets:
        assert loop.time() < deadline, "the Engine.IO session was kept"
        await asyncio.sleep(0.05)
    assert any("undecodable WebSocket frame" in r.getMessage() for r in caplog.records)
    no_errors(caplog)


async def test_security_token_with_a_lone_surrogate_is_a_401() -> None:
    async with running_server(ServerSettings(auth_token="s3cret")) as srv:
        sio = socketio.AsyncClient(reconnection=False)
        errors: list[Any] = []
        sio.on("connect_error", errors.append, namespace=NAMESPACE)
        try:
            with pytest.raises(socketio.exceptions.ConnectionError):
                await sio.connect(
                    f"{srv.url}?a2c_version=0.2.0", namespaces=[NAMESPACE],
                    socketio_path=srv.socketio_path, auth={"role": "agent", "token": "\udcff"},
                    transports=["websocket"], wait_timeout=30,
                )  # fmt: skip
        finally:
            await close_client(sio)
        assert errors and errors[0]["data"]["code"] == 401
