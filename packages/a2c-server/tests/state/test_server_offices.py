"""Office rules over a real server and real python-socketio clients."""

from __future__ import annotations

from contextlib import AsyncExitStack

from a2c_protocol import Event
from a2c_testkit.server import RawClient, RunningServer, connect_raw


async def member(
    stack: AsyncExitStack, srv: RunningServer, role: str, name: str, office: str | None
) -> RawClient:
    client = await stack.enter_async_context(connect_raw(srv, role))
    if office is not None:
        assert await client.join(role, name, office) == (True, None)
    return client


async def update_tool_list(client: RawClient, name: str) -> None:
    assert await client.call(Event.UPDATE_TOOL_LIST, {"computer": name}) is None


async def test_server_office_join_acks_and_notifies_others(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        c1 = await member(stack, server, "computer", "c1", "o1")
        assert await alice.next_notification() == (
            Event.NOTIFY_ENTER_OFFICE,
            {"office_id": "o1", "computer": "c1"},
        )
        # c1 never got its own enter notice: the first one it sees is about c2.
        await member(stack, server, "computer", "c2", "o1")
        assert (await c1.next_notification())[1] == {"office_id": "o1", "computer": "c2"}


async def test_server_office_second_agent_is_refused(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        await member(stack, server, "agent", "alice", "o1")
        bob = await member(stack, server, "agent", "bob", None)
        assert await bob.join("agent", "bob", "o1") == (False, "Room already has an agent")


async def test_server_office_failed_join_leaves_no_state(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        await member(stack, server, "agent", "alice", "o1")
        bob = await member(stack, server, "agent", "bob", None)
        assert (await bob.join("agent", "bob", "o1"))[0] is False  # type: ignore[index]
        # bob holds no name and no office: the name is free for someone else...
        carol = await member(stack, server, "agent", "carol", None)
        assert await carol.join("agent", "bob", "o2") == (True, None)
        # ...and bob's requests are still refused as "not in an office".
        answer = await bob.call(Event.LIST_ROOM, {"agent": "bob", "req_id": "r", "office_id": "o1"})
        assert isinstance(answer, dict) and answer["code"] == 4103
        assert (await server.app.health())["offices"] == 2


async def test_server_office_computer_switch_leaves_old_office_first(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        bob = await member(stack, server, "agent", "bob", "o2")
        c1 = await member(stack, server, "computer", "c1", "o1")
        assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
        assert await c1.join("computer", "c1", "o2") == (True, None)
        assert await alice.next_notification() == (
            Event.NOTIFY_LEAVE_OFFICE,
            {"office_id": "o1", "computer": "c1"},
        )
        assert await bob.next_notification() == (
            Event.NOTIFY_ENTER_OFFICE,
            {"office_id": "o2", "computer": "c1"},
        )
        # c1 now belongs to o2 only: its updates reach bob, not alice.
        await update_tool_list(c1, "c1")
        assert (await bob.next_notification())[0] is Event.NOTIFY_UPDATE_TOOL_LIST
        sentinel = await member(stack, server, "computer", "c9", "o1")
        await update_tool_list(sentinel, "c9")
        assert (await alice.next_notification())[1] == {"office_id": "o1", "computer": "c9"}
        assert await alice.next_notification() == (
            Event.NOTIFY_UPDATE_TOOL_LIST,
            {"computer": "c9"},
        )


async def test_server_office_rejoin_same_office_is_idempotent(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        c1 = await member(stack, server, "computer", "c1", "o1")
        assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
        assert await c1.join("computer", "c1", "o1") == (True, None)
        assert await alice.join("agent", "alice", "o1") == (True, None)
        await update_tool_list(c1, "c1")
        # No second enter notice came before the update.
        assert await alice.next_notification() == (
            Event.NOTIFY_UPDATE_TOOL_LIST,
            {"computer": "c1"},
        )


async def test_server_office_role_must_match_auth_role(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        c = await member(stack, server, "computer", "c1", None)
        ok, reason = await c.join("agent", "c1", "o1")  # type: ignore[misc]
        assert ok is False and reason.startswith("Role mismatch")


async def test_server_office_names_are_unique_in_their_office(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        await member(stack, server, "computer", "same", "o1")
        other = await member(stack, server, "computer", "x", None)
        ok, reason = await other.join("computer", "same", "o1")  # type: ignore[misc]
        assert ok is False and reason == "Name 'same' is already taken in office 'o1'"
        # The same name in another office is no conflict (names are per office).
        assert await other.join("computer", "same", "o2") == (True, None)


async def test_server_office_agent_must_leave_before_switching(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        assert (await alice.join("agent", "alice", "o2"))[0] is False  # type: ignore[index]
        assert await alice.call(Event.LEAVE_OFFICE, {"office_id": "o1"}) == (True, None)
        assert await alice.join("agent", "alice", "o2") == (True, None)


async def test_server_office_invalid_join_payload_is_refused(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        c = await member(stack, server, "computer", "c1", None)
        ok, reason = await c.call(Event.JOIN_OFFICE, {"role": "computer", "name": 5})  # type: ignore[misc]
        assert ok is False and "name" in reason and "office_id" in reason


async def test_server_office_leave_only_own_office(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        c = await member(stack, server, "computer", "c1", None)
        ok, reason = await c.call(Event.LEAVE_OFFICE, {"office_id": "o1"})  # type: ignore[misc]
        assert ok is False and reason
        await c.join("computer", "c1", "o1")
        assert (await c.call(Event.LEAVE_OFFICE, {"office_id": "o2"}))[0] is False  # type: ignore[index]


async def test_server_office_leave_notifies_then_removes(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        c1 = await member(stack, server, "computer", "c1", "o1")
        assert (await alice.next_notification())[0] is Event.NOTIFY_ENTER_OFFICE
        assert await c1.call(Event.LEAVE_OFFICE, {"office_id": "o1"}) == (True, None)
        assert await alice.next_notification() == (
            Event.NOTIFY_LEAVE_OFFICE,
            {"office_id": "o1", "computer": "c1"},
        )
        answer = await alice.call(
            Event.GET_TOOLS, {"agent": "alice", "req_id": "r", "computer": "c1"}
        )
        assert isinstance(answer, dict) and answer["code"] == 404
        listing = await alice.call(
            Event.LIST_ROOM, {"agent": "alice", "req_id": "r", "office_id": "o1"}
        )
        assert isinstance(listing, dict)
        assert [s["name"] for s in listing["sessions"]] == ["alice"]


async def test_server_office_disconnect_notifies_the_office(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        c1 = await member(stack, server, "computer", "c1", "o1")
        async with connect_raw(server, "agent") as alice:
            await alice.join("agent", "alice", "o1")
        assert await c1.next_notification(Event.NOTIFY_LEAVE_OFFICE) == (
            Event.NOTIFY_LEAVE_OFFICE,
            {"office_id": "o1", "agent": "alice"},
        )
        # The office's agent seat and the name are free again.
        bob = await member(stack, server, "agent", "alice", "o1")
        assert bob.sio.connected


async def test_server_office_list_room_own_office_with_versions(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        c1 = await stack.enter_async_context(connect_raw(server, "computer", a2c_version="0.2.5"))
        await c1.join("computer", "c1", "o1")
        await member(stack, server, "computer", "elsewhere", "o2")
        listing = await alice.call(
            Event.LIST_ROOM, {"agent": "alice", "req_id": "r7", "office_id": "o1"}
        )
        assert isinstance(listing, dict) and listing["req_id"] == "r7"
        by_name = {s["name"]: s for s in listing["sessions"]}
        assert set(by_name) == {"alice", "c1"}
        assert by_name["c1"] == {
            "sid": c1.sio.get_sid("/smcp"),
            "name": "c1",
            "role": "computer",
            "office_id": "o1",
            "a2c_version": "0.2.5",
        }
        assert by_name["alice"]["a2c_version"] == "0.2.3"


async def test_server_office_list_room_other_office_is_4104(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        await member(stack, server, "computer", "c2", "o2")
        answer = await alice.call(
            Event.LIST_ROOM, {"agent": "alice", "req_id": "r", "office_id": "o2"}
        )
        assert isinstance(answer, dict) and answer["code"] == 4104


async def test_server_office_list_room_spoofed_agent_is_403(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice = await member(stack, server, "agent", "alice", "o1")
        answer = await alice.call(
            Event.LIST_ROOM, {"agent": "mallory", "req_id": "r", "office_id": "o1"}
        )
        assert isinstance(answer, dict) and answer["code"] == 403


async def test_server_office_healthz_counts(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        await member(stack, server, "agent", "alice", "o1")
        await member(stack, server, "computer", "c1", "o2")
        await member(stack, server, "computer", "c2", None)
        health = await server.app.health()
    assert (health["connections"], health["offices"]) == (3, 2)
