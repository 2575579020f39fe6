"""Role-less connects: the official SDKs never send ``auth.role``; the first join settles it.

Until then the session is in no office, so every role-bound request is refused (4103); once
settled, the role holds like a connect-time one (one Agent per office, role mismatch).
"""

from __future__ import annotations

from contextlib import AsyncExitStack

from a2c_protocol import ErrorCode, Event, Role
from a2c_server import AuthRequest, Grant, Identity, Member
from a2c_server._state._rules import check_cancel, check_list_room, check_route, check_update
from a2c_testkit.server import RunningServer, connect_raw, running_server

TOOL_CALL = {"agent": "a1", "computer": "c1", "req_id": "r1", "tool_name": "t",
             "params": {}, "timeout": 5}  # fmt: skip


async def test_a_roleless_connect_is_admitted_and_its_first_join_settles_the_role(
    server: RunningServer,
) -> None:
    async with AsyncExitStack() as stack:
        agent = await stack.enter_async_context(connect_raw(server, None))
        computer = await stack.enter_async_context(connect_raw(server, None, auth={}))
        # Not joined: nothing role-bound goes through.
        early = await agent.call(Event.TOOL_CALL, TOOL_CALL)
        assert isinstance(early, dict) and early["code"] == 4103
        listed = await agent.call(Event.LIST_ROOM, {"agent": "a1", "req_id": "l", "office_id": "o"})
        assert isinstance(listed, dict) and listed["code"] == 4103
        assert await computer.join("computer", "c1", "o1") == (True, None)
        assert await agent.join("agent", "a1", "o1") == (True, None)
        rooms = await agent.call(Event.LIST_ROOM, {"agent": "a1", "req_id": "l", "office_id": "o1"})
        assert isinstance(rooms, dict)
        assert sorted((s["name"], s["role"]) for s in rooms["sessions"]) == [
            ("a1", "agent"), ("c1", "computer")]  # fmt: skip
        # Settled for good: leaving and coming back as the other role is a mismatch.
        assert await computer.call(Event.LEAVE_OFFICE, {"office_id": "o1"}) == (True, None)
        ok, reason = await computer.join("agent", "c1", "o2")  # type: ignore[misc]
        assert ok is False and reason.startswith("Role mismatch")


async def test_one_agent_per_office_holds_for_roleless_agents(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(connect_raw(server, None))
        second = await stack.enter_async_context(connect_raw(server, None))
        assert await first.join("agent", "a1", "o1") == (True, None)
        ok, reason = await second.join("agent", "a2", "o1")  # type: ignore[misc]
        assert ok is False and reason == "Room already has an agent"
        # A refused join settles nothing: the session may still join as a Computer.
        assert await second.join("computer", "c2", "o1") == (True, None)


async def test_the_grant_role_wins_over_a_roleless_connect() -> None:
    class Granting:
        async def authenticate(self, request: AuthRequest) -> Identity:
            assert request.role is None
            return Identity(subject="robot", grant=Grant(offices=("*",), role=Role.COMPUTER))

    async with running_server(auth=Granting()) as srv, connect_raw(srv, None) as client:
        # The session is a Computer from its connect on, before any join.
        assert srv.app.metrics.role_of(client.sio.get_sid("/smcp")) == "computer"
        ok, reason = await client.join("agent", "a1", "o1")  # type: ignore[misc]
        assert ok is False and "as agent" in reason
        assert await client.join("computer", "c1", "o1") == (True, None)


async def test_metrics_count_a_pending_session_until_it_joins() -> None:
    async with running_server() as srv, connect_raw(srv, None) as client:
        metrics = srv.app.metrics
        sid = client.sio.get_sid("/smcp")
        assert metrics.role_of(sid) == "pending"
        assert await client.join("agent", "a1", "o1") == (True, None)
        assert metrics.role_of(sid) == "agent"
        assert metrics.clients.labels("pending")._value.get() == 0
        assert metrics.clients.labels("agent")._value.get() == 1


def test_a_pending_session_may_send_nothing_role_bound() -> None:
    # The rules themselves, for every role-bound kind of request: not in an office yet.
    pending = Member(sid="p", role=None, a2c_version="0.4.2")
    target = Member(sid="c", role=Role.COMPUTER, a2c_version="0.4.2", name="c1", office_id="o1")
    for refusal in (
        check_route(pending, Event.TOOL_CALL.value, "a1", "c1", target),
        check_route(pending, Event.PUT_BLOB.value, "a1", "c1", target),
        check_list_room(pending, Event.LIST_ROOM.value, "a1", "o1"),
        check_update(pending, Event.UPDATE_TOOL_LIST.value, "c1"),
        check_cancel(pending, Event.TOOL_CALL_CANCEL.value, "a1"),
    ):
        assert refusal is not None and refusal.code == ErrorCode.NOT_IN_ROOM
