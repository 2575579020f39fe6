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

from a2c_protocol import (
    CLIENT_EVENTS,
    EVENTS,
    NAMESPACE,
    PUT_BLOB_EXTENSION,
    UPDATE_EVENTS,
    Event,
    remote_error_of,
)
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
    Event.PUT_BLOB: {"chunk_offset": 0, "eof": True, "blob": "aGk=", "total_size": 2,
                     "sha256": "0" * 64, "name_hint": "../x"},
}  # fmt: skip


UPLOADS: dict[str, object] = {"a2c_extensions": [PUT_BLOB_EXTENSION]}


def request(
    event: Event, agent: str = "alice", computer: str = "c1", **extra: Any
) -> dict[str, Any]:
    return {"agent": agent, "req_id": "r1", "computer": computer, **REQUESTS[event], **extra}


async def member(
    stack: AsyncExitStack, srv: RunningServer, role: str, name: str, office: str | None
) -> RawClient:
    # Both announce uploads, so client:put_blob is relayed like every client:* request here.
    client = await stack.enter_async_context(connect_raw(srv, role, auth=UPLOADS))
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


async def test_server_routing_computer_in_another_office_is_not_connected(
    server: RunningServer,
) -> None:
    # Names are per office: the answer is the one for a name nobody holds, so it never
    # tells whether the name is online in another office.
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        far = await member(stack, server, "computer", "far", "o2")
        reached: list[Any] = []

        async def spy(data: Any) -> Any:
            reached.append(data)
            return {}

        answer_with(far, Event.TOOL_CALL, spy)
        answer = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, computer="far"))
        ghost = await alice.call(Event.TOOL_CALL, request(Event.TOOL_CALL, computer="ghost"))
    assert isinstance(answer, dict) and answer["code"] == 404
    assert isinstance(ghost, dict)
    assert answer == {**ghost, "message": ghost["message"].replace("ghost", "far"),
                      "details": {"computer_name": "far"}}  # fmt: skip
    assert reached == []


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
    # Sent and unanswered: it may have run (the timeout contract, docs/server.md).
    assert answer["details"] == {"computer_name": "c1", "delivered": True}
    assert "may have run" in answer["message"]
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
    pending = 0

    async def hang(data: Any) -> Any:
        nonlocal pending
        pending += 1
        if pending == 2:  # both calls are in flight at the Computer, not just the first
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
        async def member_named(self, office_id: str, name: str) -> Member | None:
            if name == "boom":
                raise RuntimeError("simulated bug")
            return await super().member_named(office_id, name)

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


UPDATES = [(event, EVENTS[event].notifies) for event in UPDATE_EVENTS]


def test_server_update_skills_is_one_of_the_relayed_updates() -> None:
    assert (Event.UPDATE_SKILLS, Event.NOTIFY_UPDATE_SKILLS) in UPDATES
    assert len(UPDATES) == 4


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
        for event in UPDATE_EVENTS:
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


# ------------------------------------------- 0.2.1 events and other PATCH levels
#
# A 0.2.0 Computer built on python-socketio acks an event it has no handler for with no
# arguments; a Server without a handler for an event sends no ack at all. Neither may
# leave an Agent with a bare null or a hang.

# The 0.2 PATCH additions (client:put_blob of 0.4 is only sent to Computers that announce
# it, see test_server_uploads.py).
NEW_CLIENT_EVENTS = [
    e for e in CLIENT_EVENTS if EVENTS[e].since != "0.2.0" and e is not Event.PUT_BLOB
]


def test_the_new_client_events() -> None:
    assert [e.value for e in NEW_CLIENT_EVENTS] == [
        "client:get_skills",
        "client:get_skill",
        "client:get_blob",
    ]


async def old_computer(stack: AsyncExitStack, srv: RunningServer) -> Any:
    """alice and c1 in o1, where c1 is a 0.2.0 Computer: no handler for the new events."""
    alice = await member(stack, srv, "agent", "alice", "o1")
    c1 = await member(stack, srv, "computer", "c1", "o1")
    for event in CLIENT_EVENTS:
        if event not in NEW_CLIENT_EVENTS:

            async def answer(data: Any) -> Any:
                return {"ok": True}

            answer_with(c1, event, answer)
    return alice


@pytest.mark.parametrize("event", NEW_CLIENT_EVENTS)
async def test_server_old_computer_empty_ack_is_404_naming_the_event(
    server: RunningServer, event: Event, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    async with AsyncExitStack() as stack:
        alice = await old_computer(stack, server)
        answer = await alice.call(event, request(event), timeout=30)
    assert answer == {
        "code": 404,
        "message": f"Computer 'c1' does not implement {event.value}",
        "details": {"event": event.value, "computer_name": "c1"},
    }
    assert remote_error_of(answer) is not None
    assert any("does not implement" in r.getMessage() for r in caplog.records)


async def test_server_empty_ack_to_a_0_2_0_event_stays_a_500(server: RunningServer) -> None:
    async def nothing(data: Any) -> None:
        return None

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, nothing)
        answer = await alice.call(Event.GET_TOOLS, request(Event.GET_TOOLS))
    assert isinstance(answer, dict) and answer["code"] == 500


@pytest.mark.parametrize(
    "answer",
    [
        {"skills": [], "req_id": "r1"},
        {"code": 4016, "message": "Invalid skill name", "details": {"name": "Bad!"}},
        {"code": 4014, "message": "Skill not found", "details": {"name": "kit:x"}},
        {"code": 4017, "message": "m", "details": {"reason": "some_future_reason"}},
        {"code": 4018, "message": "m", "details": {"reason": "gone"}, "extra": [1]},
    ],
)
async def test_server_relays_skill_answers_and_errors_unchanged(
    server: RunningServer, answer: dict[str, Any]
) -> None:
    async def reply(data: Any) -> Any:
        return answer

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, reply)
        for event in NEW_CLIENT_EVENTS:
            assert await alice.call(event, request(event)) == answer


@pytest.mark.parametrize(
    ("event", "change", "path"),
    [
        (Event.GET_SKILL, {"name": None}, "$.name"),
        (Event.GET_SKILL, {"rel_path": 7}, "$.rel_path"),
        (Event.GET_BLOB, {"blob_handle": None}, "$.blob_handle"),
        (Event.GET_BLOB, {"chunk_offset": "0"}, "$.chunk_offset"),
        (Event.GET_BLOB, {"max_chunk_bytes": 1.5}, "$.max_chunk_bytes"),
        (Event.GET_SKILLS, {"req_id": 1}, "$.req_id"),
    ],
)
async def test_server_malformed_new_requests_are_400_and_not_forwarded(
    server: RunningServer, event: Event, change: dict[str, Any], path: str
) -> None:
    reached: list[Any] = []

    async def spy(data: Any) -> Any:
        reached.append(data)
        return {}

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, spy)
        bad = request(event)
        for key, value in change.items():
            if value is None:
                del bad[key]
            else:
                bad[key] = value
        answer = await alice.call(event, bad)
    assert isinstance(answer, dict) and answer["code"] == 400
    assert path in [e["path"] for e in answer["details"]["errors"]]
    assert reached == []


@pytest.mark.parametrize("event", NEW_CLIENT_EVENTS)
async def test_server_new_events_refuse_spoofing_and_other_offices(
    server: RunningServer, event: Event
) -> None:
    reached: list[Any] = []

    async def spy(data: Any) -> Any:
        reached.append(data)
        return {}

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        far = await member(stack, server, "computer", "far", "o2")
        answer_with(far, event, spy)
        cross = await alice.call(event, request(event, computer="far"))
        spoofed = await alice.call(event, request(event, agent="bob"))
        ghost = await alice.call(event, request(event, computer="ghost"))
    assert isinstance(cross, dict) and cross["code"] == 404  # names are per office
    assert cross["details"] == {"computer_name": "far"}
    assert isinstance(spoofed, dict) and spoofed["code"] == 403
    assert isinstance(ghost, dict) and ghost["code"] == 404
    assert ghost["details"] == {"computer_name": "ghost"}
    assert reached == []


async def test_server_blob_chunks_in_flight_together_are_correlated(
    server: RunningServer,
) -> None:
    release = asyncio.Event()
    arrived: list[str] = []

    async def chunk(data: Any) -> Any:
        arrived.append(data["req_id"])
        if len(arrived) == 5:
            release.set()
        await release.wait()  # every request is in flight before any is answered
        return {"chunk_offset": data["chunk_offset"], "req_id": data["req_id"]}

    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        answer_with(c1, Event.GET_BLOB, chunk)
        calls = [
            asyncio.ensure_future(
                alice.call(
                    Event.GET_BLOB, request(Event.GET_BLOB, req_id=f"r{i}", chunk_offset=i * 10)
                )
            )
            for i in range(5)
        ]
        answers = await asyncio.gather(*calls)
    assert answers == [{"chunk_offset": i * 10, "req_id": f"r{i}"} for i in range(5)]


async def test_server_large_blob_chunk_ack_passes(server: RunningServer) -> None:
    blob = "A" * 900_000  # below the default Engine.IO limit of 1 000 000 bytes

    async def chunk(data: Any) -> Any:
        return {"blob": blob, "req_id": data["req_id"]}

    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server, chunk)
        answer = await alice.call(Event.GET_BLOB, request(Event.GET_BLOB))
    assert isinstance(answer, dict) and answer["blob"] == blob


async def test_server_update_skills_from_computer_outside_an_office_goes_nowhere(
    server: RunningServer,
) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        loose = await member(stack, server, "computer", "loose", None)
        assert await loose.call(Event.UPDATE_SKILLS, {"computer": "loose"}) is None
        await alice.call(Event.UPDATE_SKILLS, {"computer": "alice"})  # from an Agent: ignored
        await c1.call(Event.UPDATE_SKILLS, {"computer": "c1"})  # sentinel
        assert await alice.next_notification(Event.NOTIFY_UPDATE_SKILLS) == (
            Event.NOTIFY_UPDATE_SKILLS,
            {"computer": "c1"},
        )
        assert alice.notifications.empty()


@pytest.mark.parametrize("name", ["client:get_future_thing", "server:renegotiate"])
async def test_server_unknown_protocol_event_is_400_naming_it(
    server: RunningServer, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="a2c_server")
    async with AsyncExitStack() as stack:
        alice, _ = await office(stack, server)
        first = await alice.call(name, {"agent": "alice", "req_id": "r"})
        second = await alice.call(name, {})
    expected = {
        "code": 400,
        "message": f"Unknown event {name!r}: this Server does not handle it",
        "details": {"event": name},
    }
    assert first == second == expected
    answered = [r for r in caplog.records if "unknown event answered" in r.getMessage()]
    assert [r.levelno for r in answered] == [logging.INFO, logging.DEBUG]  # once at INFO


async def test_server_unknown_event_before_joining_is_answered_too(
    server: RunningServer,
) -> None:
    async with AsyncExitStack() as stack:
        loner = await member(stack, server, "agent", "loner", None)
        answer = await loner.call("client:get_future_thing", None)
    assert isinstance(answer, dict) and answer["code"] == 400


async def test_server_cancel_is_fire_and_forget(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await office(stack, server)
        # Emitted without an ack, as Agents do: still broadcast.
        await alice.emit(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "x1"})
        assert await c1.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "x1"},
        )
        # With an ack the answer is empty: never an error payload.
        assert await alice.call(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "x2"}) is None
