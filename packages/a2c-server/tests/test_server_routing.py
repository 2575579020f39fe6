"""Routing of the eight client:* events and the server:update_* / cancel rules.

Each routing error has its own test. The Computer side is a plain python-socketio client
whose handlers the tests script.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from a2c_protocol import CLIENT_EVENTS, NAMESPACE, Event
from a2c_server import Member, MemoryStateStore, ServerSettings
from a2c_testkit.server import RawClient, RunningServer, connect_raw, running_server

Answer = Callable[[Any], Awaitable[Any]]

REQUESTS: dict[Event, dict[str, Any]] = {
    Event.TOOL_CALL: {"tool_name": "echo", "params": {"text": "hi"}, "timeout": 10},
    Event.GET_CONFIG: {},
    Event.GET_TOOLS: {},
    Event.GET_DESKTOP: {"desktop_size": 3, "window": "window://x/y"},
    Event.GET_RESOURCES: {"mcp_server": "desk", "cursor": None},
    Event.GET_SKILLS: {},
    # Names and handles the Server must not judge (that is the Computer's job).
    Event.GET_SKILL: {"name": "Not A Valid Name!", "rel_path": "../../etc/hosts"},
    Event.GET_BLOB: {"blob_handle": "%%opaque%%", "chunk_offset": 0, "max_chunk_bytes": 1024},
}


def request(
    event: Event, agent: str = "alice", computer: str = "c1", **extra: Any
) -> dict[str, Any]:
    return {"agent": agent, "req_id": "r1", "computer": computer, **REQUESTS[event], **extra}


async def member(
    stack: AsyncExitStack, srv: RunningServer, role: str, name: str, office: str | None
) -> RawClient:
    client = await stack.enter_async_context(connect_raw(srv, role))
    if office is not None:
        assert await client.join(role, name, office) == (True, None)
    return client


def answer_with(client: RawClient, event: Event, handler: Answer) -> None:
    client.sio.on(event.value, handler, namespace=NAMESPACE)


async def office(
    stack: AsyncExitStack, srv: RunningServer, handler: Answer | None = None
) -> tuple[RawClient, RawClient]:
    """alice (agent) and c1 (computer) in office o1; c1 answers every client:* event."""
    alice = await member(stack, srv, "agent", "alice", "o1")
    c1 = await member(stack, srv, "computer", "c1", "o1")
    for event in CLIENT_EVENTS:

        async def default(data: Any, event: Event = event) -> Any:
            return {"echo": data, "event": event.value}

        answer_with(c1, event, handler or default)
    assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
    return alice, c1


# ------------------------------------------------------------------ happy paths


@pytest.mark.parametrize("event", CLIENT_EVENTS)
async def test_server_routing_forwards_and_relays_unchanged(
    server: RunningServer, event: Event
) -> None:
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        sent = request(event, future_field={"nested": [1, 2]})
        answer = await alice.call(event, sent)
    assert answer == {"echo": sent, "event": event.value}


async def test_server_routing_relays_computer_error_payload_unchanged(
    server: RunningServer,
) -> None:
    async def refuse(data: Any) -> Any:
        return {"code": 4014, "message": "no such server", "mcp_server_name": "desk", "x": 1}

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, refuse)
        answer = await alice.call(Event.GET_RESOURCES, request(Event.GET_RESOURCES))
    assert answer == {"code": 4014, "message": "no such server", "mcp_server_name": "desk", "x": 1}


# ------------------------------------------------------------------- refusals


@pytest.mark.parametrize("event", CLIENT_EVENTS)
async def test_server_routing_bad_payload_is_400_naming_the_field(
    server: RunningServer, event: Event
) -> None:
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        bad = request(event)
        del bad["computer"]
        answer = await alice.call(event, bad)
    assert isinstance(answer, dict) and answer["code"] == 400
    assert "computer" in answer["message"]
    assert {"path": "$.computer", "problem": "required field is missing"} in answer["details"][
        "errors"
    ]


async def test_server_routing_sender_not_in_office_is_4103(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        await office(stack, server)
        loner = await member(stack, server, "agent", "loner", None)
        answer = await loner.call(Event.TOOL_CALL, request(Event.TOOL_CALL, agent="loner"))
    assert isinstance(answer, dict) and answer["code"] == 4103


async def test_server_routing_computer_sender_is_403(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        _, c1 = await office(stack, server)
        answer = await c1.call(Event.GET_TOOLS, request(Event.GET_TOOLS, agent="c1"))
    assert isinstance(answer, dict) and answer["code"] == 403


async def test_server_routing_spoofed_agent_field_is_403(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        alice_sid = alice.sio.get_sid(NAMESPACE)
        answer = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, agent="bob"))
    assert isinstance(answer, dict) and answer["code"] == 403
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "refused" in record.getMessage()
    context = record.a2c
    assert context["event"] == Event.TOOL_CALL.value and context["req_id"] == "r1"
    assert (context["name"], context["office"], context["code"]) == ("alice", "o1", 403)
    assert context["sid"] == alice_sid


async def test_server_routing_unknown_computer_is_404(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        answer = await alice.call(Event.GET_CONFIG, request(Event.GET_CONFIG, computer="ghost"))
    assert isinstance(answer, dict) and answer["code"] == 404
    assert answer["details"]["computer_name"] == "ghost"


async def test_server_routing_computer_in_another_office_is_4104(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        far = await member(stack, server, "computer", "far", "o2")
        reached: list[Any] = []

        async def spy(data: Any) -> Any:
            reached.append(data)
            return {}

        answer_with(far, Event.TOOL_CALL, spy)
        answer = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, computer="far"))
    assert isinstance(answer, dict) and answer["code"] == 4104
    assert reached == []
    assert any(r.levelno == logging.WARNING and "4104" in r.getMessage() for r in caplog.records)


async def test_server_routing_target_that_is_an_agent_is_404(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        await member(stack, server, "agent", "bob", "o2")
        answer = await alice.call(Event.GET_TOOLS, request(Event.GET_TOOLS, computer="bob"))
    assert isinstance(answer, dict) and answer["code"] == 404


@pytest.mark.parametrize("timeout", [0, -1, 301, True, 1.5])
async def test_server_routing_tool_call_timeout_bounds_are_400(
    server: RunningServer, timeout: Any
) -> None:
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        answer = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, timeout=timeout))
    assert isinstance(answer, dict) and answer["code"] == 400
    assert "timeout" in answer["message"]


async def test_server_routing_tool_call_timeout_at_the_limit_passes(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        answer = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, timeout=300))
    assert isinstance(answer, dict) and answer["event"] == Event.TOOL_CALL.value


async def test_server_routing_non_object_answer_is_500(server: RunningServer) -> None:
    async def weird(data: Any) -> Any:
        return "not an object"

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, weird)
        answer = await alice.call(Event.GET_TOOLS, request(Event.GET_TOOLS))
    assert isinstance(answer, dict) and answer["code"] == 500


# ------------------------------------------------------------ timing and loss


async def test_server_routing_silent_computer_gives_408_after_timeout_plus_buffer(
    server: RunningServer,
) -> None:
    started = asyncio.Event()

    async def never(data: Any) -> Any:
        started.set()
        await asyncio.Event().wait()

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, never)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        answer = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, timeout=1), timeout=60)
        waited = loop.time() - t0
    assert started.is_set()
    assert isinstance(answer, dict) and answer["code"] == 408
    assert answer["details"] == {"computer_name": "c1"}
    # The server waited the request's timeout plus its buffer (0.5 s in these tests).
    assert waited >= 1.5 - 0.05


async def test_server_routing_silent_computer_other_events_use_forward_timeout() -> None:
    async def never(data: Any) -> Any:
        await asyncio.Event().wait()

    async with (
        running_server(ServerSettings(forward_timeout=0.5)) as srv,
        AsyncExitStack() as stack,
    ):
        alice, _ = await office(stack, srv, never)
        answer = await alice.call(Event.GET_DESKTOP, request(Event.GET_DESKTOP), timeout=60)
    assert isinstance(answer, dict) and answer["code"] == 408


async def test_server_routing_computer_disconnect_settles_pending_calls_at_once(
    server: RunningServer,
) -> None:
    arrived = asyncio.Event()

    async def hang(data: Any) -> Any:
        arrived.set()
        await asyncio.Event().wait()

    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server, hang)
        calls = [
            asyncio.ensure_future(
                alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, timeout=300), timeout=60)
            ),
            asyncio.ensure_future(
                alice.call(Event.GET_TOOLS, request(Event.GET_TOOLS), timeout=60)
            ),
        ]
        await asyncio.wait_for(arrived.wait(), 30)
        await c1.sio.disconnect()
        # Far below the 300 s tool timeout and the 30 s forward timeout.
        answers = await asyncio.wait_for(asyncio.gather(*calls), 20)
        for answer in answers:
            assert isinstance(answer, dict) and answer["code"] == 500
            assert answer["details"]["reason"] == "computer_disconnected"
        assert await alice.next_notification(Event.NOTIFY_LEAVE_OFFICE) == (
            Event.NOTIFY_LEAVE_OFFICE,
            {"office_id": "o1", "computer": "c1"},
        )


async def test_server_routing_agent_disconnect_mid_call_is_dropped_quietly(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="a2c_server")
    arrived = asyncio.Event()
    release = asyncio.Event()
    answered = asyncio.Event()

    async def slow(data: Any) -> Any:
        if data["req_id"] == "slow":
            arrived.set()
            await release.wait()
            answered.set()
        return {"done": data["req_id"]}

    async with AsyncExitStack() as stack:
        c1 = await member(stack, server, "computer", "c1", "o1")
        for event in CLIENT_EVENTS:
            answer_with(c1, event, slow)
        async with connect_raw(server, "agent") as alice:
            await alice.join("agent", "alice", "o1")
            await alice.emit(Event.TOOL_CALL, {**request(Event.TOOL_CALL), "req_id": "slow"})
            await asyncio.wait_for(arrived.wait(), 30)
        assert await c1.next_notification(Event.NOTIFY_LEAVE_OFFICE)
        release.set()
        await asyncio.wait_for(answered.wait(), 30)
        # The server keeps serving: a new agent takes the seat and gets answers.
        bob = await member(stack, server, "agent", "bob", "o1")
        answer = await bob.call(Event.GET_TOOLS, {**request(Event.GET_TOOLS, agent="bob")})
        assert answer == {"done": "r1"}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_server_routing_handler_bug_is_a_flat_500(caplog: pytest.LogCaptureFixture) -> None:
    class BuggyStore(MemoryStateStore):
        async def sid_of(self, name: str) -> str | None:
            if name == "boom":
                raise RuntimeError("simulated bug")
            return await super().sid_of(name)

        async def office_members(self, office_id: str) -> list[Member]:
            raise RuntimeError("simulated bug")

    caplog.set_level(logging.ERROR, logger="a2c_server")
    async with running_server(store=BuggyStore()) as srv, AsyncExitStack() as stack:
        alice, _ = await office(stack, srv)
        bug = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, computer="boom"))
        assert bug == {"code": 500, "message": "Internal server error"}
        listing = await alice.call(
            Event.LIST_ROOM, {"agent": "alice", "req_id": "r", "office_id": "o1"}
        )
        assert listing == {"code": 500, "message": "Internal server error"}
        ok = await alice.call(Event.GET_TOOLS, request(Event.GET_TOOLS))
        assert isinstance(ok, dict) and ok["event"] == Event.GET_TOOLS.value
    assert [r for r in caplog.records if r.levelno == logging.ERROR]


async def test_server_routing_oversized_message_drops_only_that_client() -> None:
    settings = ServerSettings(max_message_bytes=20_000)
    async with running_server(settings) as srv, AsyncExitStack() as stack:
        alice, _ = await office(stack, srv)
        big = await member(stack, srv, "agent", "big", None)
        gone = asyncio.Event()
        big.sio.on("disconnect", lambda *a: gone.set(), namespace=NAMESPACE)
        await big.emit(Event.GET_TOOLS, {"agent": "big", "pad": "x" * 50_000})
        await asyncio.wait_for(gone.wait(), 30)
        answer = await alice.call(Event.GET_TOOLS, request(Event.GET_TOOLS))
        assert isinstance(answer, dict) and answer["event"] == Event.GET_TOOLS.value


# ------------------------------------------------------------ notifications


UPDATES = [
    (Event.UPDATE_CONFIG, Event.NOTIFY_UPDATE_CONFIG),
    (Event.UPDATE_TOOL_LIST, Event.NOTIFY_UPDATE_TOOL_LIST),
    (Event.UPDATE_DESKTOP, Event.NOTIFY_UPDATE_DESKTOP),
]


@pytest.mark.parametrize(("event", "notify"), UPDATES)
async def test_server_update_broadcasts_to_own_office_only(
    server: RunningServer, event: Event, notify: Event
) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        c2 = await member(stack, server, "computer", "c2", "o1")
        bob = await member(stack, server, "agent", "bob", "o2")
        await c1.call(event, {"computer": "c1"})
        assert await alice.next_notification(notify) == (notify, {"computer": "c1"})
        assert await c2.next_notification(notify) == (notify, {"computer": "c1"})
        # Neither bob (other office) nor c1 (the sender) got it: their next notice is a
        # later sentinel.
        c3 = await member(stack, server, "computer", "c3", "o2")
        assert (await bob.next_notification())[1] == {"office_id": "o2", "computer": "c3"}
        await member(stack, server, "computer", "c4", "o1")
        assert (await c1.next_notification())[1] == {"office_id": "o1", "computer": "c2"}
        assert (await c1.next_notification())[1] == {"office_id": "o1", "computer": "c4"}
        del c3


@pytest.mark.parametrize(("event", "notify"), UPDATES)
async def test_server_update_spoofing_another_computer_is_ignored(
    server: RunningServer, event: Event, notify: Event, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        c2 = await member(stack, server, "computer", "c2", "o1")
        assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
        await c2.call(event, {"computer": "c1"})
        await c1.call(Event.UPDATE_TOOL_LIST, {"computer": "c1"})  # sentinel
        assert await alice.next_notification() == (
            Event.NOTIFY_UPDATE_TOOL_LIST,
            {"computer": "c1"},
        )
    assert any(r.levelno == logging.WARNING and "403" in r.getMessage() for r in caplog.records)


async def test_server_update_from_an_agent_is_ignored(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        await alice.call(Event.UPDATE_CONFIG, {"computer": "alice"})
        await alice.call(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "sentinel"})
        assert await c1.next_notification() == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "sentinel"},
        )


async def test_server_events_without_office_broadcast_nowhere(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        loose_c = await member(stack, server, "computer", "loose", None)
        loose_a = await member(stack, server, "agent", "free", None)
        for event in (Event.UPDATE_CONFIG, Event.UPDATE_TOOL_LIST, Event.UPDATE_DESKTOP):
            assert await loose_c.call(event, {"computer": "loose"}) is None
        assert await loose_a.call(Event.TOOL_CALL_CANCEL, {"agent": "free", "req_id": "x"}) is None
        listing = await loose_a.call(
            Event.LIST_ROOM, {"agent": "free", "req_id": "r", "office_id": "o1"}
        )
        assert isinstance(listing, dict) and listing["code"] == 4103
        await c1.call(Event.UPDATE_DESKTOP, {"computer": "c1"})  # sentinel
        assert await alice.next_notification() == (
            Event.NOTIFY_UPDATE_DESKTOP,
            {"computer": "c1"},
        )
        await alice.call(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "s"})  # sentinel
        assert await c1.next_notification() == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "s"},
        )


async def test_server_cancel_reaches_the_office_computers(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        c2 = await member(stack, server, "computer", "c2", "o1")
        await alice.call(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "r42"})
        for computer in (c1, c2):
            assert await computer.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
                Event.NOTIFY_TOOL_CALL_CANCEL,
                {"agent": "alice", "req_id": "r42"},
            )


async def test_server_cancel_with_spoofed_agent_is_ignored(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        await alice.call(Event.TOOL_CALL_CANCEL, {"agent": "mallory", "req_id": "evil"})
        await alice.call(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "real"})
        assert await c1.next_notification() == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "real"},
        )
