"""Call routing over ``/smcp``: a ``client:*`` request forwarded to its Computer.

The per-message hot path of the Server: decode, apply the route rule of
:mod:`a2c_server._state._rules`, ask the Computer, and turn every way the wait can end (answer,
timeout, Computer gone, Agent gone, shutdown) into exactly one answer for the Agent. The
opt-in extensions (progress, trace context) take a slower path of their own so the plain
call pays one check for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import attrs
import socketio

from a2c_protocol import (
    EVENTS,
    NAMESPACE,
    ErrorCode,
    Event,
    FieldError,
    InvalidPayloadError,
    ToolCallReq,
    from_wire,
    to_wire,
)
from a2c_server._cluster._remote import RemoteWatch, delivered_details, may_have_run_note
from a2c_server._edge._shutdown import SHUTDOWN_REASON, Drain
from a2c_server._exceptions import StoreUnavailableError
from a2c_server._observe import _otel as otel
from a2c_server._observe._logs import log
from a2c_server._observe._metrics import RouteOutcome, ServerMetrics
from a2c_server._relay._expiry import ExpiryWindow, expiry_refusal
from a2c_server._relay._mixed import mixed, translated
from a2c_server._relay._route_fields import route_reader
from a2c_server._settings import ServerSettings
from a2c_server._state._absent import NewOffices, absent_computer, returning_computer
from a2c_server._state._access import Access
from a2c_server._state._rules import (
    Member,
    Refusal,
    check_route,
    tool_timeout_problem,
    unsupported_event_refusal,
)
from a2c_server._state._store import StateStore
from a2c_server._state._uploads import upload_refusal

from ._inflight import InFlightCall, InFlightCalls
from ._namespace_core import LOG, Effects, Handler, LiveSessions, flat, internal_error
from ._progress import Keepalive, ProgressRoutes
from ._sio import ack_value

__all__ = ["Forwarding"]


@attrs.define(kw_only=True)
class Forwarding:
    """``client:*`` requests of Agents, relayed to Computers and answered exactly once."""

    _sio: socketio.AsyncServer
    _settings: ServerSettings
    _store: StateStore
    _remote: RemoteWatch | None
    _drain: Drain
    _metrics: ServerMetrics
    _access: Access
    _expiry: ExpiryWindow
    _calls: InFlightCalls
    _new_offices: NewOffices
    _progress: ProgressRoutes
    _sessions: LiveSessions
    _effects: Effects
    # Bound lookups of the live sessions: a call reads them as it read a dict before.
    _gone_of: Callable[[str], asyncio.Future[None] | None] = attrs.field(init=False)
    _connected: Callable[[str], bool] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._gone_of = self._sessions.gone_of
        self._connected = self._sessions.connected

    def forwarder(self, event: Event) -> Handler:
        model = EVENTS[event].request
        plain = route_reader(model)
        is_tool_call = event is Event.TOOL_CALL

        async def forward(sid: str, data: Any) -> Any:
            if self._drain.draining:
                self._metrics.route(event.value, RouteOutcome.SHUTDOWN)
                # Refused before it was sent anywhere: it did not run, trying again is safe.
                return flat(ErrorCode.INTERNAL_ERROR, "The Server is shutting down",
                             {"reason": SHUTDOWN_REASON, "delivered": False})  # fmt: skip
            # The plain shape needs no model (see _route_fields); the rest is decoded in full.
            req: Any = None
            fields = plain(data)
            if fields is None:
                try:
                    req = from_wire(model, data)
                except InvalidPayloadError as exc:
                    self._metrics.route(event.value, RouteOutcome.INVALID)
                    return to_wire(exc.to_payload())
                fields = {"agent": req.agent, "req_id": req.req_id, "computer": req.computer,
                          "timeout": getattr(req, "timeout", None)}  # fmt: skip
            agent, req_id, computer = fields["agent"], fields["req_id"], fields["computer"]
            if is_tool_call:
                timeout = fields["timeout"]
                problem = tool_timeout_problem(timeout, self._settings.max_tool_timeout)
                if problem is not None:
                    self._metrics.route(event.value, RouteOutcome.INVALID)
                    error = InvalidPayloadError("ToolCallReq", [FieldError("$.timeout", problem)])
                    return to_wire(error.to_payload())
                wait = timeout + self._settings.tool_call_buffer
            else:
                wait = self._settings.forward_timeout
            sender = await self._store.get(sid)
            target = None
            # Names are per office: only the sender's office is searched, so a Computer of
            # another office is "not connected" like a name nobody holds (rule R3).
            if sender is not None and sender.office_id is not None:
                target = await self._store.member_named(sender.office_id, computer)
                remote = self._remote
                if target is not None and remote is not None and remote.unheard(target.sid):
                    # Its node may have just died: its client is taking the name back elsewhere.
                    target = await remote.follow(sender.office_id, computer, target, wait)
                if target is None and self._remote is not None:
                    await self._remote.confirm_absent()  # a 503 while the registry recovers
            refusal = None
            if self._expiry.sids:  # a token expired with calls in flight (_expiry.py)
                refusal = expiry_refusal(self._expiry.sids, sid, target)
            refusal = refusal or check_route(sender, event.value, agent, computer, target)
            if refusal is not None or target is None:
                if refusal is None:  # pragma: no cover - check_route refuses a missing target
                    return internal_error()
                self._metrics.route(event.value, RouteOutcome.REFUSED)
                if refusal.code == ErrorCode.NOT_FOUND and sender is not None:
                    refusal = await self._absent(sender, computer, refusal)
                self._access.routed(sid, event, sender, computer, refusal.message,
                                    _tool_of(data))  # fmt: skip
                return self._effects.refuse(refusal, sid, event, req_id, sender)
            if event is Event.PUT_BLOB and sender is not None:
                refusal = upload_refusal(sender, target)
                if refusal is not None:
                    self._metrics.route(event.value, RouteOutcome.REFUSED)
                    return self._effects.refuse(refusal, sid, event, req_id, sender)
            if self._settings.audit_calls is not None and is_tool_call:
                self._access.routed(sid, event, sender, computer, None, _tool_of(data))
            if LOG.isEnabledFor(logging.DEBUG):  # not even the fields' dict when off
                log(LOG, logging.DEBUG, "forwarding", sid=sid, event=event.value, req_id=req_id,
                    name=agent, office=target.office_id, computer=computer)  # fmt: skip
            # Extension keys never have the plain shape: only a decoded request can ask.
            extended = isinstance(req, ToolCallReq) and (
                req.a2c_progress is True or (otel.STATE.active and req.a2c_trace is not None)
            )
            if (sender is not None and sender.a2c_version != target.a2c_version
                    and mixed(sender.a2c_version, target.a2c_version)):  # fmt: skip
                if req is None:  # translation reads the request: decode it (valid, see above)
                    req = from_wire(model, data)
                call = self._call_mixed(sid, event, data, req, sender, target, wait, extended)
            elif extended:
                call = self._call_extended(sid, event, data, req, target, wait)
            else:
                call = self._call(sid, event, data, req_id, computer, target.sid, wait)
            observer = self._effects.observer
            if observer is not None:
                if req is None:  # the console shows the request: decode it (valid, see above)
                    req = from_wire(model, data)
                call = observer.watch_call(event.value, req, target.office_id, call)
            # Plain enter/leave instead of context managers: two generator frames a call.
            drain = self._drain
            drain.enter()
            if not is_tool_call:  # only tool calls run something worth stopping
                try:
                    return await call
                finally:
                    drain.leave()
            in_flight = InFlightCall(req_id, agent, computer, target.sid)
            calls = self._calls
            calls.add(sid, in_flight)
            try:
                return await call
            finally:
                calls.remove(sid, in_flight)
                drain.leave()

        return forward

    async def _absent(self, sender: Member, computer: str, refusal: Refusal) -> Refusal:
        """R3's 404 told with what the sender may see: its office's Computers (_absent)."""
        office = sender.office_id
        if office is None:
            return refusal
        if self._remote is not None:
            try:  # kept for its return (A6)? then "wait", not 404
                held = await self._remote.held_for(office, computer)
            except StoreUnavailableError as exc:
                log(LOG, logging.DEBUG, "hold not read for a 404", office=office, reason=exc)
                held = None
            if held is not None:
                return returning_computer(computer, held)
        try:
            members = await self._store.office_members(office)
        except Exception as exc:  # the plain 404 still answers; a 500 would hide it
            log(LOG, logging.DEBUG, "office members not read for a 404", office=office,
                reason=exc)  # fmt: skip
            return refusal
        created = self._new_offices.created(sender.sid, office)
        return absent_computer(computer, office, members, created_by_caller=created)

    async def _call_extended(
        self, sid: str, event: Event, data: Any, req: ToolCallReq, target: Member, wait: float
    ) -> Any:
        """Extensions: progress restarts ``wait`` (up to --max-tool-timeout); trace context
        gets a span (see :mod:`a2c_server._relay._progress` and
        :mod:`a2c_server._observe._otel`)."""
        keepalive = None
        watching: AbstractContextManager[Any] = contextlib.nullcontext()
        if req.a2c_progress is True:
            bound = self._settings.max_tool_timeout + self._settings.tool_call_buffer
            keepalive = Keepalive(wait, bound)
            watching = self._progress.watching(sid, req.req_id, req.computer, keepalive)
        traced: AbstractContextManager[tuple[Any, Any]] = contextlib.nullcontext((data, None))
        if otel.STATE.active and req.a2c_trace is not None and isinstance(data, dict):
            traced = otel.forward_span(data, target.office_id, req.computer, req.tool_name)
        with watching, traced as (payload, span):
            answer = await self._call(sid, event, payload, req.req_id, req.computer,
                                      target.sid, wait, keepalive)  # fmt: skip
            if span is not None:
                span.answered(answer)
            return answer

    async def _call_mixed(
        self, sid: str, event: Event, data: Any, req: Any, sender: Member, target: Member,
        wait: float, extended: bool,
    ) -> Any:  # fmt: skip
        """A 0.2 Agent and a 0.4 Computer or the reverse: see :mod:`a2c_server._relay._mixed`."""

        async def call(payload: Any) -> Any:
            if extended:
                return await self._call_extended(sid, event, payload, req, target, wait)
            return await self._call(sid, event, payload, req.req_id, req.computer,
                                    target.sid, wait)  # fmt: skip

        self._metrics.translated(event.value, sender.a2c_version, target.a2c_version)
        return await translated(
            event.value, data, agent_version=sender.a2c_version,
            computer_version=target.a2c_version, call=call,
        )  # fmt: skip

    async def _call(
        self,
        sid: str,
        event: Event,
        data: Any,
        req_id: str,
        computer: str,
        target_sid: str,
        wait: float,
        keepalive: Keepalive | None = None,
    ) -> Any:
        gone = self._gone_of(target_sid)
        started = time.monotonic()
        remote = None
        if gone is None and self._remote is not None:
            remote = self._remote.watch(target_sid)
        gone = gone or remote
        if gone is None or gone.done():
            return self._computer_gone(sid, event, req_id, computer, started)
        expired = self._drain.expired()
        timed_out = disrupted = False
        stop = (gone, expired) if keepalive is None else (gone, expired, keepalive.idle)
        try:
            args = await self._sio.ask(event.value, data, to=target_sid, namespace=NAMESPACE,
                                       timeout=wait if keepalive is None else keepalive.bound,
                                       stop=stop)  # fmt: skip
        except socketio.exceptions.TimeoutError:
            args, timed_out = None, True
        finally:
            if remote is not None and self._remote is not None:
                disrupted = self._remote.release(remote)
        if args is None and keepalive is not None and keepalive.idle.done():
            timed_out = True
        sent = event is Event.TOOL_CALL  # a tool call that reached here may have run
        if timed_out:
            self._metrics.route(event.value, RouteOutcome.TIMEOUT, time.monotonic() - started)
            log(LOG, logging.INFO, "forward timed out", sid=sid, event=event.value,
                req_id=req_id, computer=computer, wait=wait,
                delivered=True if disrupted else None)  # fmt: skip
            message = f"Computer {computer!r} did not answer within {wait:g} seconds"
            if keepalive is not None:  # progress restarted the wait: say which limit ended it
                message = keepalive.timeout_message(
                    computer, time.monotonic() - started, self._settings.max_tool_timeout
                )
            return flat(ErrorCode.TIMEOUT, message + may_have_run_note(disrupted, sent),
                         {"computer_name": computer,
                          **delivered_details(disrupted, sent)})  # fmt: skip
        if args is None:
            if expired.done() and not gone.done():
                self._metrics.route(event.value, RouteOutcome.SHUTDOWN,
                                    time.monotonic() - started)  # fmt: skip
                log(LOG, logging.INFO, "call abandoned at shutdown", sid=sid, event=event.value,
                    req_id=req_id, computer=computer)  # fmt: skip
                return flat(
                    ErrorCode.INTERNAL_ERROR,
                    f"The Server shut down before Computer {computer!r} answered"
                    + may_have_run_note(disrupted, sent),
                    {"computer_name": computer, "reason": SHUTDOWN_REASON,
                     **delivered_details(disrupted, sent)},
                )  # fmt: skip
            return self._computer_gone(sid, event, req_id, computer, started, disrupted, sent)
        answer = ack_value(args)
        elapsed = time.monotonic() - started
        if not self._connected(sid):
            # The Agent left while its request was in flight: nobody can read an ack.
            self._metrics.route(event.value, RouteOutcome.AGENT_GONE, elapsed)
            log(LOG, logging.DEBUG, "answer dropped, agent gone", sid=sid, req_id=req_id)
            return None
        unsupported = unsupported_event_refusal(event, computer, answer)
        if unsupported is not None:
            self._metrics.route(event.value, RouteOutcome.UNSUPPORTED, elapsed)
            log(LOG, logging.INFO, "computer does not implement the event", sid=target_sid,
                event=event.value, req_id=req_id, computer=computer)  # fmt: skip
            return to_wire(unsupported.to_payload())
        if not isinstance(answer, dict):
            self._metrics.route(event.value, RouteOutcome.BAD_ANSWER, elapsed)
            log(LOG, logging.WARNING, "computer answered a non-object", sid=target_sid,
                event=event.value, req_id=req_id)  # fmt: skip
            return flat(
                ErrorCode.INTERNAL_ERROR,
                f"Computer {computer!r} answered with a non-object acknowledgement",
                {"computer_name": computer},
            )
        self._metrics.route(event.value, RouteOutcome.ANSWERED, elapsed)
        return answer

    def _computer_gone(
        self,
        sid: str,
        event: Event,
        req_id: str,
        computer: str,
        started: float,
        disrupted: bool = False,
        sent: bool = False,
    ) -> dict[str, Any]:
        self._metrics.route(event.value, RouteOutcome.COMPUTER_GONE, time.monotonic() - started)
        log(LOG, logging.INFO, "computer disconnected mid-call", sid=sid, event=event.value,
            req_id=req_id, computer=computer, delivered=True if disrupted else None)  # fmt: skip
        message = f"Computer {computer!r} disconnected before answering"
        return flat(
            ErrorCode.INTERNAL_ERROR,
            message + may_have_run_note(disrupted, sent),
            {"computer_name": computer, "reason": "computer_disconnected",
             **delivered_details(disrupted, sent)},
        )  # fmt: skip


def _tool_of(data: Any) -> str | None:
    """The tool a request names, for the audit record (read only where one is written)."""
    tool = data.get("tool_name") if isinstance(data, dict) else None
    return tool if isinstance(tool, str) else None
