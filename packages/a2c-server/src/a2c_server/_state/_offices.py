"""Office bookkeeping: applies the pure rules to a :class:`StateStore`.

Each operation returns an outcome saying what the Socket.IO layer must do (which room to
leave or enter, which ``notify:*`` to broadcast, in order); this module itself never
touches Socket.IO. Mutations run under one lock so concurrent joins in this process cannot
interleave between decision and write; across processes the store's atomic put is the
referee and a join that lost a race decides again. A failed join restores the previous
state.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

import attrs

from a2c_protocol import (
    EnterOfficeNotification,
    EnterOfficeReq,
    Event,
    JsonObject,
    LeaveOfficeNotification,
    Role,
    to_wire,
)
from a2c_server._exceptions import StateConflictError

from ._reclaim import may_reclaim
from ._rules import JoinRefusal, Member, decide_join, decide_leave
from ._store import StateStore

__all__ = ["Broadcast", "MembershipOutcome", "Offices", "enter_notice", "leave_notice"]

#: Rounds of read-decide-write before a join that keeps losing races gives up.
_JOIN_ATTEMPTS: Final = 5


@attrs.frozen(kw_only=True)
class Broadcast:
    """A ``notify:*`` event to send to ``office_id``'s room, skipping ``skip_sid``."""

    office_id: str
    event: Event
    payload: JsonObject
    skip_sid: str | None


@attrs.frozen(kw_only=True)
class MembershipOutcome:
    """What a join/leave/disconnect changed, in the order the effects must happen.

    ``before_leave`` broadcasts go out while the member is still in ``left_office``'s room
    (the leave notice precedes the removal); ``after_enter`` ones after it entered
    ``entered_office``.
    """

    ok: bool
    reason: str | None = None
    refusal: JoinRefusal | None = None  # why a join was refused (bounded, for metrics)
    before_leave: tuple[Broadcast, ...] = ()
    left_office: str | None = None
    entered_office: str | None = None
    after_enter: tuple[Broadcast, ...] = ()
    previous: Member | None = None
    #: Sessions whose name or seat this join took over (a reconnect of their client):
    #: they are out of the registry and must be disconnected wherever they still are.
    displaced: tuple[Member, ...] = ()

    @property
    def ack(self) -> tuple[bool, str | None]:
        """The two-argument ack of join/leave."""
        return (self.ok, self.reason)


def leave_notice(member: Member, office_id: str, name: str) -> Broadcast:
    note = LeaveOfficeNotification(
        office_id=office_id,
        computer=name if member.role is Role.COMPUTER else None,
        agent=name if member.role is Role.AGENT else None,
    )
    return Broadcast(
        office_id=office_id,
        event=Event.NOTIFY_LEAVE_OFFICE,
        payload=to_wire(note),
        skip_sid=member.sid,
    )


def enter_notice(member: Member, office_id: str, name: str) -> Broadcast:
    note = EnterOfficeNotification(
        office_id=office_id,
        computer=name if member.role is Role.COMPUTER else None,
        agent=name if member.role is Role.AGENT else None,
    )
    return Broadcast(
        office_id=office_id,
        event=Event.NOTIFY_ENTER_OFFICE,
        payload=to_wire(note),
        skip_sid=member.sid,
    )


class Offices:
    """Join, leave, connect and disconnect against a state store."""

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self._lock = asyncio.Lock()

    async def connect(
        self,
        sid: str,
        role: Role | None,
        a2c_version: str,
        extensions: frozenset[str] = frozenset(),
        reclaim: str | None = None,
    ) -> Member:
        member = Member(sid=sid, role=role, a2c_version=a2c_version, extensions=extensions,
                        reclaim=reclaim)  # fmt: skip
        async with self._lock:
            await self.store.put(member)
        return member

    async def join(self, sid: str, req: EnterOfficeReq) -> MembershipOutcome:
        async with self._lock:
            for _ in range(_JOIN_ATTEMPTS):
                outcome = await self._try_join(sid, req)
                if outcome is not None:
                    return outcome
            # Someone else won every round, which re-deciding should have turned into a
            # refusal; a store that keeps conflicting is a bug worth a 500.
            raise StateConflictError(f"join of {req.name!r} kept conflicting")

    async def _try_join(self, sid: str, req: EnterOfficeReq) -> MembershipOutcome | None:
        """One read-decide-write round; None when another node won the race meanwhile.

        The store re-checks the name and the seat atomically with the write (the lock
        only covers this process), so a lost race surfaces as StateConflictError and the
        next round decides again on the fresh state.
        """
        member = await self.store.get(sid)
        if member is None:
            return MembershipOutcome(
                ok=False, reason="Unknown session", refusal=JoinRefusal.UNKNOWN_SESSION
            )
        # A role-less session's first join settles its role (decide_join checks the rest).
        joined = attrs.evolve(member, role=req.role, name=req.name, office_id=req.office_id)
        holder = await self.store.member_named(req.office_id, req.name)
        office_agent = await self.store.office_agent(req.office_id)
        decision = decide_join(
            member,
            req,
            name_owner=holder.sid if holder is not None else None,
            office_agent=office_agent,
            reclaimable=await self._reclaimable(joined, holder, office_agent),
        )
        if not decision.ok:
            return MembershipOutcome(ok=False, reason=decision.reason, refusal=decision.refusal)
        if not decision.changed:
            return MembershipOutcome(ok=True)
        # One put moves the member out of its old office and into the new one at once; a
        # take-over also removes the sessions it displaces, in the same atomic step.
        displaced: list[Member] = []
        try:
            if decision.displaces:
                displaced = await self.store.take_over(joined, decision.displaces)
            else:
                await self.store.put(joined)
        except StateConflictError:
            return None
        except BaseException:
            with contextlib.suppress(Exception):
                await self.store.put(member)  # a failed join leaves no partial state
            raise
        before = tuple(
            leave_notice(old, old.office_id, old.name)
            for old in displaced
            if old.office_id is not None and old.name is not None
        )
        if decision.leave_first is not None and member.name is not None:
            before += (leave_notice(member, decision.leave_first, member.name),)
        return MembershipOutcome(
            ok=True,
            before_leave=before,
            left_office=decision.leave_first,
            entered_office=req.office_id,
            after_enter=(enter_notice(joined, req.office_id, req.name),),
            previous=member,
            displaced=tuple(displaced),
        )

    async def _reclaimable(
        self, joining: Member, holder: Member | None, office_agent: str | None
    ) -> frozenset[str]:
        """The holders of the name and seat ``joining`` asks for that it may take over."""
        if joining.reclaim is None:
            return frozenset()
        holders = [holder] if holder is not None else []
        seat_sid = office_agent if joining.role is Role.AGENT else None
        if seat_sid not in (None, joining.sid) and (holder is None or seat_sid != holder.sid):
            seat = await self.store.get(str(seat_sid))
            holders += [seat] if seat is not None else []
        return frozenset(h.sid for h in holders if may_reclaim(joining, h))

    async def rollback(self, sid: str, outcome: MembershipOutcome) -> None:
        """Undo a join whose Socket.IO effects failed: the session is as it was before,
        or out of every office if its old place was taken meanwhile."""
        previous = outcome.previous
        if previous is None or previous.sid != sid:
            return
        async with self._lock:
            if await self.store.get(sid) is None:
                return  # disconnected meanwhile
            try:
                await self.store.put(previous)
            except StateConflictError:
                await self.store.put(attrs.evolve(previous, name=None, office_id=None))

    async def leave(self, sid: str, office_id: str) -> MembershipOutcome:
        async with self._lock:
            member = await self.store.get(sid)
            if member is None:
                return MembershipOutcome(ok=False, reason="Unknown session")
            reason = decide_leave(member, office_id)
            if reason is not None or member.name is None:
                return MembershipOutcome(ok=False, reason=reason or "Not in any office")
            await self.store.put(attrs.evolve(member, name=None, office_id=None))
            return MembershipOutcome(
                ok=True,
                before_leave=(leave_notice(member, office_id, member.name),),
                left_office=office_id,
            )

    async def disconnect(self, sid: str) -> MembershipOutcome:
        async with self._lock:
            member = await self.store.remove(sid)
            if member is None or member.office_id is None or member.name is None:
                return MembershipOutcome(ok=True)
            return MembershipOutcome(
                ok=True,
                before_leave=(leave_notice(member, member.office_id, member.name),),
                left_office=member.office_id,
            )
