"""Taking a name back after a reconnect: the pure rules (K1-K4, J8) and the memory store."""

from __future__ import annotations

import pytest

from a2c_protocol import EnterOfficeReq, Role
from a2c_server import Member, MemoryStateStore, Offices
from a2c_server._exceptions import StateConflictError
from a2c_server._state._reclaim import may_reclaim, reclaim_key, reclaim_secret_problem
from a2c_server._state._rules import JoinRefusal, decide_join

SECRET = "s3cret-of-one-client-instance_0123456789"
OTHER = "another-client-instance-secret_987654321"


def member(sid: str, role: Role | None = Role.COMPUTER, *, key: str | None = None,
           name: str | None = None, office: str | None = None) -> Member:  # fmt: skip
    return Member(sid=sid, role=role, a2c_version="0.2.3", name=name, office_id=office,
                  reclaim=key)  # fmt: skip


def key(secret: str = SECRET, subject: str = "anonymous") -> str:
    value = reclaim_key({"a2c_reclaim": secret}, subject)
    assert value is not None
    return value


@pytest.mark.parametrize("auth", [{}, {"a2c_reclaim": SECRET}, None, "not a dict"])
def test_reclaim_secret_absent_or_well_formed_is_accepted(auth: object) -> None:
    assert reclaim_secret_problem(auth) is None


@pytest.mark.parametrize("secret", ["short", "x" * 257, 42, "spaces are not allowed here!" * 2])
def test_reclaim_secret_malformed_is_refused_with_the_rule(secret: object) -> None:
    problem = reclaim_secret_problem({"a2c_reclaim": secret})
    assert problem is not None and "32 to 256" in problem


def test_reclaim_key_binds_the_identity_and_never_is_the_secret() -> None:
    assert key() == key()
    assert key() != key(OTHER)
    assert key(subject="alice") != key(subject="bob")  # a leaked secret alone is not enough
    assert SECRET not in key()
    assert reclaim_key({}, "anonymous") is None
    assert reclaim_key({"a2c_reclaim": "short"}, "anonymous") is None


def test_may_reclaim_only_the_same_key_and_role() -> None:
    claimant = member("new", key=key())
    assert may_reclaim(claimant, member("old", key=key(), name="box", office="o"))
    assert not may_reclaim(claimant, member("old", key=key(OTHER), name="box", office="o"))
    assert not may_reclaim(claimant, member("old", key=None, name="box", office="o"))
    assert not may_reclaim(claimant, member("old", Role.AGENT, key=key(), name="box", office="o"))
    assert not may_reclaim(member("new", key=None), member("old", key=None))
    assert not may_reclaim(claimant, claimant)


def test_decide_join_j8_takes_over_only_reclaimable_holders() -> None:
    req = EnterOfficeReq(role=Role.AGENT, name="bot", office_id="o")
    joining = member("new", Role.AGENT, key=key())
    refused = decide_join(joining, req, name_owner="old", office_agent="old")
    assert (refused.ok, refused.refusal) == (False, JoinRefusal.NAME_TAKEN)
    taken = decide_join(joining, req, name_owner="old", office_agent="old",
                        reclaimable=frozenset({"old"}))  # fmt: skip
    assert (taken.ok, taken.displaces) == (True, ("old",))
    # The seat held by someone else stays a refusal even when the name is reclaimable.
    seat = decide_join(joining, req, name_owner="old", office_agent="stranger",
                       reclaimable=frozenset({"old"}))  # fmt: skip
    assert (seat.ok, seat.refusal) == (False, JoinRefusal.SEAT_TAKEN)


async def test_memory_store_take_over_is_all_or_nothing() -> None:
    store = MemoryStateStore()
    old = member("old", Role.AGENT, key=key(), name="bot", office="o")
    await store.put(old)
    stranger = member("stranger", Role.AGENT, key=key(OTHER), name="bot", office="o")
    # The store takes over only the holders the decision (may_reclaim) named.
    with pytest.raises(StateConflictError):
        await store.take_over(stranger, ())
    with pytest.raises(StateConflictError):
        await store.take_over(stranger, ("someone-else",))
    assert await store.get("old") == old and await store.get("stranger") is None
    new = member("new", Role.AGENT, key=key(), name="bot", office="o")
    assert await store.take_over(new, ("old",)) == [old]
    assert await store.get("old") is None
    assert await store.sid_of("o", "bot") == "new"
    assert await store.office_agent("o") == "new"
    assert await store.remove("old") is None  # its disconnect later announces nothing


async def test_offices_join_with_the_same_key_displaces_the_old_session() -> None:
    offices = Offices(MemoryStateStore())
    await offices.connect("old", Role.COMPUTER, "0.2.3", reclaim=key())
    req = EnterOfficeReq(role=Role.COMPUTER, name="box", office_id="o")
    assert (await offices.join("old", req)).ok
    await offices.connect("thief", Role.COMPUTER, "0.2.3", reclaim=key(OTHER))
    refused = await offices.join("thief", req)
    assert (refused.ok, refused.refusal) == (False, JoinRefusal.NAME_TAKEN)
    await offices.connect("new", None, "0.2.3", reclaim=key())  # role-less: the join settles it
    outcome = await offices.join("new", req)
    assert outcome.ok and [m.sid for m in outcome.displaced] == ["old"]
    # The office hears the old session leave, then the new one enter.
    assert [b.event.value for b in outcome.before_leave] == ["notify:leave_office"]
    assert [b.event.value for b in outcome.after_enter] == ["notify:enter_office"]
    gone = await offices.disconnect("old")
    assert gone.before_leave == ()  # no second leave when its transport finally closes
