"""Office membership over ``/smcp``: join, leave and list an office.

The rules (who may sit where, which names are taken) are :mod:`a2c_server._state._offices` and
:mod:`a2c_server._state._access`; this part decodes the requests, asks them, and performs the
effects (Socket.IO rooms, the ``notify:*`` broadcasts). It changes when what a join or a
leave does on the wire changes, not when routing or notifications do.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import socketio

from a2c_protocol import (
    NAMESPACE,
    EnterOfficeReq,
    Event,
    InvalidPayloadError,
    LeaveOfficeReq,
    ListRoomReq,
    ListRoomRet,
    Role,
    SessionInfo,
    from_wire,
    to_wire,
)
from a2c_server._floods._join_deadline import JoinDeadlines
from a2c_server._observe._logs import log
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._state._absent import NewOffices
from a2c_server._state._access import FORBIDDEN_JOIN, Access
from a2c_server._state._offices import MembershipOutcome, Offices
from a2c_server._state._rules import JoinRefusal, check_list_room

from ._namespace_core import JOIN_FAILED, LOG, Effects

__all__ = ["Membership"]


@attrs.define
class Membership:
    """``server:join_office``, ``server:leave_office`` and ``server:list_room``."""

    _sio: socketio.AsyncServer
    _offices: Offices
    _access: Access
    _metrics: ServerMetrics
    _join_deadlines: JoinDeadlines
    _new_offices: NewOffices
    _effects: Effects

    async def on_join(self, sid: str, data: Any) -> tuple[bool, str | None]:
        try:
            req = from_wire(EnterOfficeReq, data)
        except InvalidPayloadError as exc:
            self._metrics.join(self._metrics.role_of(sid), JoinRefusal.INVALID_PAYLOAD)
            return (False, str(exc))
        forbidden = await self._access.authorize_join(sid, req)
        if forbidden is not None:
            self._metrics.join(req.role, FORBIDDEN_JOIN)
            log(LOG, logging.WARNING, "join refused", sid=sid, name=req.name,
                office=req.office_id, refusal=FORBIDDEN_JOIN, reason=forbidden)  # fmt: skip
            return (False, forbidden)
        outcome = await self._offices.join(sid, req)
        self._access.joined(sid, req, outcome.ok, outcome.reason)
        self._metrics.join(req.role, outcome.refusal)  # None exactly when it was accepted
        if outcome.ok:
            self._metrics.settled(sid, req.role)  # a role-less connect has its role now
            self._join_deadlines.joined(sid)
        if not outcome.ok:
            log(LOG, logging.INFO, "join refused", sid=sid, name=req.name,
                office=req.office_id, refusal=outcome.refusal, reason=outcome.reason)  # fmt: skip
            return outcome.ack
        try:
            await self._apply(sid, outcome)
        except Exception:
            LOG.exception("join effects failed sid=%s office=%s", sid, req.office_id)
            await self._offices.rollback(sid, outcome)
            await self._sio.leave_room(sid, req.office_id, namespace=NAMESPACE)
            self._join_deadlines.left(sid)  # in no office after all
            return JOIN_FAILED
        log(LOG, logging.INFO, "joined", sid=sid, name=req.name, office=req.office_id,
            role=req.role.value)  # fmt: skip
        if req.role is Role.AGENT and outcome.entered_office is not None:
            await self._note_new_office(sid, req.office_id)
        return outcome.ack

    async def _note_new_office(self, sid: str, office_id: str) -> None:
        """Whether this Agent's join created its office, for a later 404 (``_absent``)."""
        try:
            members = await self._offices.store.office_members(office_id)
        except Exception as exc:  # only a message's detail rides on it: the join stands
            log(LOG, logging.DEBUG, "office members not read after join", sid=sid, reason=exc)
            return
        self._new_offices.joined(sid, office_id, alone=all(m.sid == sid for m in members))

    async def _disconnect_displaced(self, sid: str, outcome: MembershipOutcome) -> None:
        """End the sessions a reconnect of their client took the place of (``_reclaim``
        K3): on this node at once, on another through Redis; a dead node's are gone."""
        for old in outcome.displaced:
            log(LOG, logging.INFO, "reconnect took its name back", sid=sid,
                replaced=old.sid, name=old.name, office=old.office_id)  # fmt: skip
            try:
                await self._sio.disconnect(old.sid, namespace=NAMESPACE)
            except Exception as exc:  # its node is gone or unreachable: nothing to end
                log(LOG, logging.INFO, "replaced session not disconnected", sid=old.sid,
                    reason=exc)  # fmt: skip

    async def _apply(self, sid: str, outcome: MembershipOutcome) -> None:
        await self._effects.broadcast(outcome.before_leave)
        if outcome.displaced:
            await self._disconnect_displaced(sid, outcome)
        if outcome.left_office is not None:
            await self._sio.leave_room(sid, outcome.left_office, namespace=NAMESPACE)
        if outcome.entered_office is not None:
            await self._sio.enter_room(sid, outcome.entered_office, namespace=NAMESPACE)
        await self._effects.broadcast(outcome.after_enter)

    async def on_leave(self, sid: str, data: Any) -> tuple[bool, str | None]:
        try:
            req = from_wire(LeaveOfficeReq, data)
        except InvalidPayloadError as exc:
            return (False, str(exc))
        outcome = await self._offices.leave(sid, req.office_id)
        if outcome.ok:
            self._new_offices.forget(sid)
            self._join_deadlines.left(sid)
            await self._effects.cancel_abandoned(sid)
            await self._apply(sid, outcome)
            log(LOG, logging.INFO, "left", sid=sid, office=req.office_id)
        return outcome.ack

    async def on_list_room(self, sid: str, data: Any) -> dict[str, Any]:
        try:
            req = from_wire(ListRoomReq, data)
        except InvalidPayloadError as exc:
            return to_wire(exc.to_payload())  # type: ignore[no-any-return]
        sender = await self._offices.store.get(sid)
        refusal = check_list_room(sender, Event.LIST_ROOM.value, req.agent, req.office_id)
        if refusal is not None:
            return self._effects.refuse(refusal, sid, Event.LIST_ROOM, req.req_id, sender)
        sessions = [
            SessionInfo(
                sid=m.sid,
                name=m.name,
                role=m.role,
                office_id=m.office_id,
                a2c_version=m.a2c_version,
            )
            for m in await self._offices.store.office_members(req.office_id)
            if m.name is not None and m.office_id is not None and m.role is not None
        ]
        return to_wire(ListRoomRet(sessions=sessions, req_id=req.req_id))  # type: ignore[no-any-return]
