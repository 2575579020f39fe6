"""The office rules, tested without any server: pure decisions and the bookkeeping."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from a2c_protocol import EnterOfficeReq, ErrorCode, Event, Role
from a2c_server import Member, MemoryStateStore, Offices, StateConflictError
from a2c_server._state._rules import (
    MAX_NAME_LENGTH,
    ROOM_HAS_AGENT,
    JoinRefusal,
    check_cancel,
    check_list_room,
    check_route,
    check_update,
    decide_join,
    decide_leave,
    unknown_event_refusal,
    unsupported_event_refusal,
)

TOOL_CALL = Event.TOOL_CALL.value


def agent(sid: str = "a", name: str | None = None, office: str | None = None) -> Member:
    return Member(sid=sid, role=Role.AGENT, a2c_version="0.2.0", name=name, office_id=office)


def computer(sid: str = "c", name: str | None = None, office: str | None = None) -> Member:
    return Member(sid=sid, role=Role.COMPUTER, a2c_version="0.2.0", name=name, office_id=office)


def join_req(role: Role, name: str, office: str) -> EnterOfficeReq:
    return EnterOfficeReq(role=role, name=name, office_id=office)


# ----------------------------------------------------------------------- joining


def test_server_rules_join_role_must_match_connected_role() -> None:
    d = decide_join(agent(), join_req(Role.COMPUTER, "x", "o"), name_owner=None, office_agent=None)
    assert not d.ok and d.refusal is JoinRefusal.ROLE_MISMATCH
    assert d.reason is not None and d.reason.startswith("Role mismatch")


@pytest.mark.parametrize("name", ["", "   ", "n" * (MAX_NAME_LENGTH + 1)])
def test_server_rules_join_rejects_empty_or_huge_names(name: str) -> None:
    d = decide_join(agent(), join_req(Role.AGENT, name, "o"), name_owner=None, office_agent=None)
    assert not d.ok and d.refusal is JoinRefusal.BAD_IDENTIFIER


def test_server_rules_join_second_agent_is_refused() -> None:
    d = decide_join(
        agent("a2"), join_req(Role.AGENT, "bob", "o"), name_owner=None, office_agent="a1"
    )
    assert (d.ok, d.reason, d.refusal) == (False, ROOM_HAS_AGENT, JoinRefusal.SEAT_TAKEN)


def test_server_rules_join_same_office_again_is_idempotent() -> None:
    me = agent("a", "alice", "o")
    d = decide_join(me, join_req(Role.AGENT, "alice", "o"), name_owner="a", office_agent="a")
    assert d.ok and not d.changed and d.refusal is None


def test_server_rules_join_same_office_with_another_name_is_refused() -> None:
    me = computer("c", "c1", "o")
    d = decide_join(me, join_req(Role.COMPUTER, "c2", "o"), name_owner=None, office_agent=None)
    assert not d.ok and d.refusal is JoinRefusal.ALREADY_IN_OFFICE


def test_server_rules_agent_must_leave_before_joining_another_office() -> None:
    me = agent("a", "alice", "o1")
    d = decide_join(me, join_req(Role.AGENT, "alice", "o2"), name_owner="a", office_agent=None)
    assert not d.ok and d.refusal is JoinRefusal.AGENT_IN_OTHER_OFFICE


def test_server_rules_computer_switching_office_leaves_the_old_one_first() -> None:
    me = computer("c", "c1", "o1")
    d = decide_join(me, join_req(Role.COMPUTER, "c1", "o2"), name_owner="c", office_agent="a")
    assert d.ok and d.changed and d.leave_first == "o1"


def test_server_rules_names_are_unique_in_their_office() -> None:
    d = decide_join(
        computer("c2"), join_req(Role.COMPUTER, "c1", "o"), name_owner="c1sid", office_agent=None
    )
    assert not d.ok and d.reason is not None and "taken" in d.reason
    assert d.refusal is JoinRefusal.NAME_TAKEN


def test_server_rules_leave_only_your_own_office() -> None:
    assert decide_leave(computer(), "o") == "Not in any office"
    assert decide_leave(computer("c", "c1", "o1"), "o2") is not None
    assert decide_leave(computer("c", "c1", "o1"), "o1") is None


# ----------------------------------------------------------------------- routing


def test_server_rules_route_requires_an_office() -> None:
    r = check_route(agent(), TOOL_CALL, "alice", "c1", computer("c", "c1", "o"))
    assert r is not None and r.code == ErrorCode.NOT_IN_ROOM


def test_server_rules_route_requires_an_agent_sender() -> None:
    r = check_route(computer("x", "c0", "o"), TOOL_CALL, "c0", "c1", computer("c", "c1", "o"))
    assert r is not None and r.code == ErrorCode.FORBIDDEN


def test_server_rules_route_refuses_a_spoofed_agent_field() -> None:
    r = check_route(agent("a", "alice", "o"), TOOL_CALL, "mallory", "c1", computer("c", "c1", "o"))
    assert r is not None and r.code == ErrorCode.FORBIDDEN and r.security


def test_server_rules_route_unknown_computer_is_404_with_its_name() -> None:
    r = check_route(agent("a", "alice", "o"), TOOL_CALL, "alice", "ghost", None)
    assert r is not None and r.code == ErrorCode.NOT_FOUND
    assert r.details == {"computer_name": "ghost"}


def test_server_rules_route_to_an_agent_name_is_404() -> None:
    r = check_route(agent("a", "alice", "o"), TOOL_CALL, "alice", "bob", agent("b", "bob", "o"))
    assert r is not None and r.code == ErrorCode.NOT_FOUND


def test_server_rules_route_across_offices_is_4104() -> None:
    r = check_route(agent("a", "alice", "o1"), TOOL_CALL, "alice", "c1", computer("c", "c1", "o2"))
    assert r is not None and r.code == ErrorCode.CROSS_ROOM_ACCESS and r.security


def test_server_rules_route_inside_the_office_passes() -> None:
    assert (
        check_route(agent("a", "alice", "o"), TOOL_CALL, "alice", "c1", computer("c", "c1", "o"))
        is None
    )


def test_server_rules_list_room_only_own_office() -> None:
    me = agent("a", "alice", "o1")
    assert check_list_room(me, "list", "alice", "o1") is None
    r = check_list_room(me, "list", "alice", "o2")
    assert r is not None and r.code == ErrorCode.CROSS_ROOM_ACCESS


def test_server_rules_updates_only_from_the_named_computer() -> None:
    assert check_update(computer("c", "c1", "o"), "u", "c1") is None
    spoof = check_update(computer("c", "c1", "o"), "u", "c2")
    assert spoof is not None and spoof.code == ErrorCode.FORBIDDEN
    from_agent = check_update(agent("a", "alice", "o"), "u", "alice")
    assert from_agent is not None and from_agent.code == ErrorCode.FORBIDDEN
    outside = check_update(computer(), "u", "c1")
    assert outside is not None and outside.code == ErrorCode.NOT_IN_ROOM


def test_server_rules_cancel_only_from_the_named_agent() -> None:
    assert check_cancel(agent("a", "alice", "o"), "x", "alice") is None
    assert check_cancel(agent("a", "alice", "o"), "x", "bob") is not None
    assert check_cancel(computer("c", "c1", "o"), "x", "c1") is not None


# ------------------------------------------------------------------- bookkeeping


async def test_server_offices_computer_switch_notifies_the_old_office() -> None:
    offices = Offices(MemoryStateStore())
    await offices.connect("c", Role.COMPUTER, "0.2.0")
    assert (await offices.join("c", join_req(Role.COMPUTER, "c1", "o1"))).ok
    out = await offices.join("c", join_req(Role.COMPUTER, "c1", "o2"))
    assert out.ok and out.left_office == "o1" and out.entered_office == "o2"
    assert [b.event for b in out.before_leave] == [Event.NOTIFY_LEAVE_OFFICE]
    assert out.before_leave[0].payload == {"office_id": "o1", "computer": "c1"}
    assert out.after_enter[0].payload == {"office_id": "o2", "computer": "c1"}


async def test_server_offices_failed_join_leaves_no_partial_state() -> None:
    class FailingStore(MemoryStateStore):
        fail = False

        async def put(self, member: Member) -> None:
            if self.fail and member.office_id == "o2":
                raise StateConflictError("simulated store failure")
            await super().put(member)

    store = FailingStore()
    offices = Offices(store)
    await offices.connect("c", Role.COMPUTER, "0.2.0")
    await offices.join("c", join_req(Role.COMPUTER, "c1", "o1"))
    before = store.snapshot()
    store.fail = True
    with pytest.raises(StateConflictError):
        await offices.join("c", join_req(Role.COMPUTER, "c1", "o2"))
    assert store.snapshot() == before


async def test_server_store_refuses_to_break_invariants() -> None:
    store = MemoryStateStore()
    await store.put(agent("a1", "alice", "o"))
    with pytest.raises(StateConflictError):
        await store.put(agent("a2", "bob", "o"))
    with pytest.raises(StateConflictError):
        await store.put(computer("c", "alice", "o"))
    await store.put(computer("c", "alice", "o2"))  # names are per office
    with pytest.raises(StateConflictError):
        await store.put(computer("c", "c1", None))


# -------------------------------------------------------------- state machine

SIDS = [f"s{i}" for i in range(6)]
NAMES = ["n0", "n1", "n2", "n3"]
OFFICES = ["o0", "o1", "o2"]


class OfficeMachine(RuleBasedStateMachine):
    """Random connect/join/leave/disconnect sequences keep the office invariants."""

    connected = Bundle("connected")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.store = MemoryStateStore()
        self.offices = Offices(self.store)
        self.free = list(SIDS)

    def run(self, coro):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coro)

    @initialize()
    def start(self) -> None:
        pass

    @rule(target=connected, role=st.sampled_from(list(Role)))
    def connect(self, role: Role) -> object:
        sid = self.free.pop() if self.free else None
        if sid is None:
            return "none"
        self.run(self.offices.connect(sid, role, "0.2.0"))
        return sid

    @rule(
        sid=connected,
        role=st.sampled_from(list(Role)),
        name=st.sampled_from(NAMES),
        office=st.sampled_from(OFFICES),
    )
    def join(self, sid: str, role: Role, name: str, office: str) -> None:
        before = self.store.snapshot()
        member = before[0].get(sid)
        out = self.run(self.offices.join(sid, join_req(role, name, office)))
        if member is None:
            assert not out.ok
            return
        if not out.ok:
            assert self.store.snapshot() == before, "a failed join changed state"
        if role is not member.role:
            assert not out.ok
        if out.ok and out.entered_office is not None:
            assert self.store.snapshot()[0][sid].office_id == office
        if role is Role.AGENT and member.role is Role.AGENT and member.office_id != office:
            holder = [
                m for m in before[0].values()
                if m.office_id == office and m.role is Role.AGENT and m.sid != sid
            ]  # fmt: skip
            if holder:
                assert not out.ok

    @rule(sid=connected, office=st.sampled_from(OFFICES))
    def leave(self, sid: str, office: str) -> None:
        member = self.store.snapshot()[0].get(sid)
        out = self.run(self.offices.leave(sid, office))
        assert out.ok == (member is not None and member.office_id == office)
        if out.ok:
            assert self.store.snapshot()[0][sid].office_id is None

    @rule(sid=consumes(connected))
    def disconnect(self, sid: str) -> None:
        member = self.store.snapshot()[0].get(sid)
        out = self.run(self.offices.disconnect(sid))
        assert sid not in self.store.snapshot()[0]
        assert (len(out.before_leave) == 1) == (member is not None and member.office_id is not None)
        if sid in SIDS and member is not None:
            self.free.append(sid)

    @invariant()
    def invariants(self) -> None:
        sessions, names, offices = self.store.snapshot()
        for office, sids in offices.items():
            agents = [s for s in sids if sessions[s].role is Role.AGENT]
            assert len(agents) <= 1, f"office {office} has agents {agents}"
            assert all(sessions[s].office_id == office for s in sids)
        for sid, member in sessions.items():
            in_offices = [o for o, sids in offices.items() if sid in sids]
            assert len(in_offices) == (1 if member.office_id else 0)
            if member.name is not None:
                assert names[(member.office_id or "", member.name)] == sid
            assert (member.name is None) == (member.office_id is None)
        for (office_id, name), sid in names.items():
            assert (sessions[sid].office_id, sessions[sid].name) == (office_id, name)

    def teardown(self) -> None:
        self.loop.close()


def test_server_rules_state_machine_keeps_invariants() -> None:
    run_state_machine_as_test(OfficeMachine)


# ------------------------------------------------------ P1/P2: other PATCH levels


@pytest.mark.parametrize("event", [Event.GET_SKILLS, Event.GET_SKILL, Event.GET_BLOB])
def test_empty_ack_to_a_newer_event_is_404_naming_it(event: Event) -> None:
    refusal = unsupported_event_refusal(event, "c1", None)
    assert refusal is not None and refusal.code == 404
    assert refusal.details == {"event": event.value, "computer_name": "c1"}
    assert event.value in refusal.message
    assert unsupported_event_refusal(event, "c1", {"skills": []}) is None


def test_empty_ack_to_a_0_2_0_event_is_not_excused() -> None:
    for event in (Event.TOOL_CALL, Event.GET_TOOLS, Event.GET_DESKTOP):
        assert unsupported_event_refusal(event, "c1", None) is None


@pytest.mark.parametrize("name", ["client:x", "server:list_everything", "client:"])
def test_unknown_protocol_events_are_400(name: str) -> None:
    refusal = unknown_event_refusal(name)
    assert refusal is not None and refusal.code == 400
    assert refusal.details == {"event": name} and repr(name) in refusal.message


@pytest.mark.parametrize("name", ["notify:update_desktop", "hello", "Client:x", ""])
def test_other_unknown_names_get_no_protocol_answer(name: str) -> None:
    assert unknown_event_refusal(name) is None


def test_unknown_event_names_are_shortened() -> None:
    refusal = unknown_event_refusal("client:" + "x" * 500)
    assert refusal is not None and refusal.details is not None
    assert len(refusal.details["event"]) == 65 and len(refusal.message) < 120
