"""Security suite (issue 10): what a hostile client must not be able to do to the Server.

Every reproduction runs over both transports (polling only, websocket only) against a real
server with real python-socketio clients.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2c_protocol import NAMESPACE, Event, Role, is_error_payload
from a2c_server import AuthenticationError, AuthRequest, Identity, ServerSettings
from a2c_server._sio import RESERVED_EVENTS
from a2c_testkit.server import (
    RawClient,
    RunningServer,
    assert_registry_matches_rooms,
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
