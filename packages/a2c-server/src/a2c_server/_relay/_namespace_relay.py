"""Notifications over ``/smcp``: a ``server:*`` event relayed as its ``notify:*``.

``server:update_*`` from a Computer and ``server:tool_call_cancel`` from an Agent become
the matching ``notify:*`` to the rest of the sender's office once the sender rule in
:mod:`a2c_server._state._rules` allows it. Separate from forwarding: nothing here waits for an
answer, and a bad payload is dropped (logged), never acknowledged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import attrs
import socketio

from a2c_protocol import (
    EVENTS,
    NAMESPACE,
    UPDATE_EVENTS,
    Event,
    InvalidPayloadError,
    from_wire,
    to_wire,
)
from a2c_server._observe._logs import log
from a2c_server._state._rules import Member, Refusal, check_cancel, check_update
from a2c_server._state._store import StateStore

from ._inflight import InFlightCalls
from ._namespace_core import LOG, Effects, Handler
from ._notices import CoalescedNotices

__all__ = ["Relay"]


@attrs.define
class Relay:
    """The ``server:*`` events that an office hears as ``notify:*``."""

    _sio: socketio.AsyncServer
    _store: StateStore
    _notices: CoalescedNotices
    _calls: InFlightCalls
    _effects: Effects

    def relay(
        self,
        event: Event,
        check: Callable[[Member | None, str, Any], Refusal | None],
        payload: Callable[[Any, Member, type[Any]], Any],
    ) -> Handler:
        """A ``server:*`` event that becomes its ``notify:*`` to the sender's office.

        ``check`` applies the sender rule to the decoded request; ``payload`` builds what
        the office receives (given the request, the sender and the notification model).
        Bad payloads and refusals are logged and never broadcast.
        """
        spec = EVENTS[event]
        notify = spec.notifies
        if notify is None:  # the registry pairs every relayed event with its notification
            raise RuntimeError(f"{event.value} has no notification in the registry")
        notify_model = EVENTS[notify].request

        async def on_event(sid: str, data: Any) -> None:
            try:
                req = from_wire(spec.request, data)
            except InvalidPayloadError as exc:
                log(LOG, logging.INFO, "invalid payload dropped", sid=sid, event=event.value,
                    reason=exc)  # fmt: skip
                self._effects.penalize(sid)
                return
            sender = await self._store.get(sid)
            refusal = check(sender, event.value, req)
            if refusal is not None or sender is None or sender.office_id is None:
                if refusal is not None:
                    self._effects.refuse(refusal, sid, event, getattr(req, "req_id", None), sender)
                return
            notice = payload(req, sender, notify_model)
            if event in UPDATE_EVENTS:
                await self._notices.send(sid, notify, notice, sender.office_id)
                return
            await self._sio.emit(
                notify.value, notice, room=sender.office_id, skip_sid=sid, namespace=NAMESPACE
            )
            observer = self._effects.observer
            if observer is not None:
                observer.office_event(sender.office_id, notify.value, notice)

        return on_event

    def updater(self, event: Event) -> Handler:
        return self.relay(
            event,
            lambda sender, name, req: check_update(sender, name, req.computer),
            # Broadcast on behalf of the registered name, never a claimed one.
            lambda req, sender, model: to_wire(model(computer=sender.name)),
        )

    def canceller(self) -> Handler:
        relay = self.relay(
            Event.TOOL_CALL_CANCEL,
            lambda sender, name, req: check_cancel(sender, name, req.agent),
            lambda req, sender, model: to_wire(req),
        )

        async def on_cancel(sid: str, data: Any) -> None:
            await relay(sid, data)
            req_id = data.get("req_id") if isinstance(data, dict) else None
            if isinstance(req_id, str):  # cancelled by its Agent: nothing left to do for it
                self._calls.settle(sid, req_id)

        return on_cancel
