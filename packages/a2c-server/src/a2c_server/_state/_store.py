"""Server state behind a small async protocol, with the in-memory implementation.

The store keeps sessions (:class:`~a2c_server.Member`), each office's name → sid map and
office membership, and keeps them consistent with each other. It enforces the two
invariants a buggy caller could break (a name is unique in its office, one Agent per
office) by raising :class:`StateConflictError`; every other rule lives in
:mod:`a2c_server._state._rules`. Names are per office, never namespace-wide: a name is a
routing key inside its office, and a namespace-wide map would let a member of one office
learn (and squat) the names of another (docs/server.md, "Names are per office"). Every
lookup by name is therefore a lookup by (office, name). The methods are async so a
Redis-backed store can implement the same protocol for several server processes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

import attrs

from a2c_protocol import Role
from a2c_server._exceptions import StateConflictError

from ._rules import Member

__all__ = ["MemoryStateStore", "StateStore", "StoreStats", "check_member_shape"]


@attrs.frozen
class StoreStats:
    """Counts for ``/healthz``."""

    connections: int
    offices: int


def check_member_shape(member: Member) -> None:
    """Raise :class:`StateConflictError` unless the member has a name and an office, or neither."""
    if (member.name is None) != (member.office_id is None):
        raise StateConflictError("a member has both a name and an office, or neither")


class StateStore(Protocol):
    """Where sessions, names and offices live."""

    async def get(self, sid: str) -> Member | None:
        """The session ``sid``, or None when it is not connected."""
        ...

    async def put(self, member: Member) -> None:
        """Insert or replace a session, updating the name map and office membership."""
        ...

    async def remove(self, sid: str) -> Member | None:
        """Forget a session; return what it was (None when it is unknown, or when a
        reconnect of its client took its place and its office has heard it leave)."""
        ...

    async def take_over(self, member: Member, displaces: Collection[str]) -> list[Member]:
        """:meth:`put`, in one atomic step with the removal of the sessions among
        ``displaces`` (the holders :func:`~a2c_server._state._reclaim.may_reclaim` let
        ``member`` take over, K3) that still hold ``member``'s name or seat; returns them.
        Any other holder makes it raise :class:`StateConflictError`, changing nothing."""
        ...

    async def sid_of(self, office_id: str, name: str) -> str | None:
        """The sid registered under ``name`` in ``office_id``."""
        ...

    async def member_named(self, office_id: str, name: str) -> Member | None:
        """The session registered under ``name`` in ``office_id`` (one lookup: the routing
        hot path)."""
        ...

    async def office_agent(self, office_id: str) -> str | None:
        """The sid of the Agent in ``office_id``, if any."""
        ...

    async def office_members(self, office_id: str) -> list[Member]:
        """Every session in ``office_id``."""
        ...

    async def stats(self) -> StoreStats:
        """Connection and office counts."""
        ...


class MemoryStateStore:
    """A :class:`StateStore` for one server process."""

    def __init__(self) -> None:
        self._sessions: dict[str, Member] = {}
        self._names: dict[tuple[str, str], str] = {}  # (office, name) → sid
        self._offices: dict[str, set[str]] = {}
        self._agents: dict[str, str] = {}

    async def get(self, sid: str) -> Member | None:
        return self._sessions.get(sid)

    async def put(self, member: Member) -> None:
        old = self._sessions.get(member.sid)
        self._check(member)
        if old is not None:
            self._unindex(old)
        self._sessions[member.sid] = member
        self._index(member)

    async def remove(self, sid: str) -> Member | None:
        old = self._sessions.pop(sid, None)
        if old is not None:
            self._unindex(old)
        return old

    async def take_over(self, member: Member, displaces: Collection[str]) -> list[Member]:
        holders: list[str] = []
        if member.name is not None and member.office_id is not None:
            holders.append(self._names.get((member.office_id, member.name), member.sid))
            if member.role is Role.AGENT:
                holders.append(self._agents.get(member.office_id, member.sid))
        victims = {s: self._sessions[s] for s in holders if s != member.sid and s in self._sessions}
        if not victims.keys() <= set(displaces):
            self._check(member)  # raises for the holder that stays
        for sid, victim in victims.items():
            del self._sessions[sid]
            self._unindex(victim)
        await self.put(member)
        return list(victims.values())

    async def sid_of(self, office_id: str, name: str) -> str | None:
        return self._names.get((office_id, name))

    async def member_named(self, office_id: str, name: str) -> Member | None:
        sid = self._names.get((office_id, name))
        return self._sessions.get(sid) if sid is not None else None

    async def office_agent(self, office_id: str) -> str | None:
        return self._agents.get(office_id)

    async def office_members(self, office_id: str) -> list[Member]:
        return [self._sessions[sid] for sid in sorted(self._offices.get(office_id, ()))]

    async def stats(self) -> StoreStats:
        return StoreStats(connections=len(self._sessions), offices=len(self._offices))

    # -- consistency ---------------------------------------------------------------

    def _check(self, member: Member) -> None:
        check_member_shape(member)
        if member.name is not None and member.office_id is not None:
            owner = self._names.get((member.office_id, member.name))
            if owner is not None and owner != member.sid:
                raise StateConflictError(f"name {member.name!r} is taken in its office")
        if member.office_id is not None and member.role is Role.AGENT:
            agent = self._agents.get(member.office_id)
            if agent is not None and agent != member.sid:
                raise StateConflictError(f"office {member.office_id!r} already has an agent")

    def _index(self, member: Member) -> None:
        if member.name is not None and member.office_id is not None:
            self._names[(member.office_id, member.name)] = member.sid
            self._offices.setdefault(member.office_id, set()).add(member.sid)
            if member.role is Role.AGENT:
                self._agents[member.office_id] = member.sid

    def _unindex(self, member: Member) -> None:
        if member.office_id is not None:
            if member.name is not None:
                key = (member.office_id, member.name)
                if self._names.get(key) == member.sid:
                    del self._names[key]
            members = self._offices.get(member.office_id)
            if members is not None:
                members.discard(member.sid)
                if not members:
                    del self._offices[member.office_id]
            if self._agents.get(member.office_id) == member.sid:
                del self._agents[member.office_id]

    # -- introspection for tests and diagnostics -----------------------------------

    def snapshot(
        self,
    ) -> tuple[dict[str, Member], dict[tuple[str, str], str], dict[str, frozenset[str]]]:
        """Copies of (sessions, (office, name) → sid, office → sids), for invariant checks."""
        return (
            dict(self._sessions),
            dict(self._names),
            {office: frozenset(sids) for office, sids in self._offices.items()},
        )
