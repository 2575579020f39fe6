"""The ``/smcp`` namespace: translates Socket.IO events to the office rules and back.

Everything protocol-specific is decided in :mod:`a2c_server._rules` and
:mod:`a2c_server._offices`; this module decodes payloads, asks, and performs the effects
(rooms, broadcasts, forwarding). Every handler is wrapped: whatever a payload does, a
request with an ack gets exactly one answer (a flat 500 for a bug, logged), never silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Final

import socketio

from a2c_protocol import (
    EVENTS,
    NAMESPACE,
    UPDATE_EVENTS,
    VERSION_QUERY_PARAM,
    EnterOfficeReq,
    ErrorCode,
    ErrorPayload,
    Event,
    FieldError,
    InvalidPayloadError,
    LeaveOfficeReq,
    ListRoomReq,
    ListRoomRet,
    ProtocolVersion,
    Role,
    SessionInfo,
    ToolCallReq,
    from_wire,
    to_wire,
)

from . import _otel as otel
from ._access import FORBIDDEN_JOIN, Access
from ._audit import Audit
from ._auth import AuthProvider, AuthRequest
from ._console._observer import CallObserver
from ._exceptions import AuthenticationError, StoreUnavailableError
from ._gate import check_version_query, first_query_value
from ._inflight import InFlightCall, InFlightCalls, cancel_notice
from ._logs import log
from ._metrics import RouteOutcome, ServerMetrics
from ._offices import Broadcast, MembershipOutcome, Offices
from ._progress import Keepalive, ProgressRoutes
from ._ratelimit import RequestLimiter
from ._remote import MAY_HAVE_RUN, RemoteWatch, delivered_details
from ._rules import (
    JoinRefusal,
    Member,
    Refusal,
    check_cancel,
    check_list_room,
    check_route,
    check_update,
    tool_timeout_problem,
    unsupported_event_refusal,
)
from ._settings import ServerSettings
from ._shutdown import SHUTDOWN_REASON, Drain
from ._sio import ack_value, is_connecting, is_disconnecting
from ._unknown import UnknownEvents
from ._upstream import not_handled, transport_alive

__all__ = ["SmcpNamespace"]

_log = logging.getLogger("a2c_server.namespace")

Handler = Callable[[str, Any], Awaitable[Any]]

_JOIN_FAILED: Final = (False, "Internal server error")
_ROLES: Final = {role.value: role for role in Role}


def _flat(code: int, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    wire: dict[str, Any] = to_wire(ErrorPayload(code=code, message=message, details=details))
    return wire


def _internal_error() -> dict[str, Any]:
    return _flat(ErrorCode.INTERNAL_ERROR, "Internal server error")


class SmcpNamespace:
    """Registers the handlers of namespace ``/smcp`` on ``sio``."""

    def __init__(
        self,
        sio: socketio.AsyncServer,
        *,
        settings: ServerSettings,
        offices: Offices,
        auth: AuthProvider,
        metrics: ServerMetrics | None = None,
        drain: Drain | None = None,
        remote: RemoteWatch | None = None,
        audit: Audit | None = None,
    ) -> None:
        self._sio = sio
        self._metrics = metrics if metrics is not None else ServerMetrics()
        self._drain = drain if drain is not None else Drain()
        self._settings = settings
        self._offices = offices
        self._store = offices.store
        self._auth = auth
        audit = audit if audit is not None else Audit(self._metrics.registry)
        self._access = Access(
            auth, audit, self._expire, max_per_subject=settings.max_connections_per_subject
        )
        self._limiter = RequestLimiter(
            settings.max_requests_per_second, settings.request_burst, self._metrics.registry
        )
        # One future per connected sid, resolved when it disconnects: forwarded calls race
        # against it because AsyncServer.call() would otherwise wait out its timeout.
        self._gone: dict[str, asyncio.Future[None]] = {}
        # Multi-node: the same kind of future for a sid hosted by another node. A registry
        # outage never ends such a call (it was sent), it only marks it disrupted.
        self._remote = remote
        # The tool calls relayed for Agents connected here, cancelled when their Agent goes.
        self._calls = InFlightCalls()
        self._progress = ProgressRoutes(sio, self._store)
        #: Set by the console while someone watches it; None costs one attribute check.
        self.observer: CallObserver | None = None

    def register(self) -> None:
        sio = self._sio
        sio.on("connect", self._on_connect, namespace=NAMESPACE)
        sio.on("disconnect", self._on_disconnect, namespace=NAMESPACE)
        for event in EVENTS:
            if event.value.startswith("client:"):
                handler = self._guard(event, self._forwarder(event), _internal_error)
            elif event is Event.LIST_ROOM:
                handler = self._guard(event, self._on_list_room, _internal_error)
            elif event in (Event.JOIN_OFFICE, Event.LEAVE_OFFICE):
                on = self._on_join if event is Event.JOIN_OFFICE else self._on_leave
                handler = self._guard(event, on, lambda: _JOIN_FAILED)
            elif event in UPDATE_EVENTS:
                handler = self._guard(event, self._updater(event), lambda: None)
            elif event is Event.TOOL_CALL_CANCEL:
                handler = self._guard(event, self._canceller(), lambda: None)
            else:
                continue  # notify:* are only ever sent by the Server
            sio.on(event.value, handler, namespace=NAMESPACE)
        self._progress.register()
        sio.on("*", UnknownEvents(not_handled(sio)).handle, namespace=NAMESPACE)

    def _guard(self, event: Event, handler: Handler, on_error: Callable[[], Any]) -> Any:
        async def guarded(sid: str, *args: Any) -> Any:
            # Exactly one argument is a payload; anything else fails validation as a list.
            data = args[0] if len(args) == 1 else list(args) if args else None
            if not self._limiter.allow(sid, event):
                return self._limiter.answer(event)
            try:
                return await handler(sid, data)
            except StoreUnavailableError as exc:
                log(_log, logging.WARNING, "request failed: registry unavailable", sid=sid,
                    event=event.value, reason=exc)  # fmt: skip
                return _unavailable_answer(event, exc)
            except Exception:
                _log.exception("handler failed event=%s sid=%s", event.value, sid)
                return on_error()

        guarded.__name__ = f"on_{event.name.lower()}"
        return guarded

    # ------------------------------------------------------------------ lifecycle

    async def _on_connect(self, sid: str, environ: Mapping[str, Any], auth: Any = None) -> None:
        if not is_connecting(self._sio, sid, NAMESPACE):
            # Not python-socketio's own CONNECT: never re-run admission for a live session.
            log(_log, logging.WARNING, "lifecycle refused: connect outside a handshake", sid=sid)
            raise _refusal(ErrorCode.BAD_REQUEST, "Already connected")
        try:
            await self._admit(sid, environ, auth)
        except socketio.exceptions.ConnectionRefusedError as exc:
            self._metrics.connection_refused(_refusal_code(exc))
            raise
        except StoreUnavailableError as exc:
            log(_log, logging.WARNING, "connection refused: registry unavailable", sid=sid)
            self._metrics.connection_refused(exc.code)
            raise _refusal(exc.code, _UNAVAILABLE) from exc
        except Exception as exc:
            _log.exception("connect handler failed sid=%s", sid)
            self._metrics.connection_refused(ErrorCode.INTERNAL_ERROR)
            raise _refusal(ErrorCode.INTERNAL_ERROR, "Internal server error") from exc

    async def _admit(self, sid: str, environ: Mapping[str, Any], auth: Any) -> None:
        scope = environ.get("asgi.scope") or {}
        peer_addr = scope.get("client")
        peer = f"{peer_addr[0]}:{peer_addr[1]}" if peer_addr else None
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        # The gate already ran; checking again costs nothing and guards a misconfiguration.
        if check_version_query(query, self._settings.protocol_version) is not None:
            log(_log, logging.WARNING, "connection refused: version", sid=sid, peer=peer)
            raise _refusal(ErrorCode.PROTOCOL_VERSION_MISMATCH, "A2C version handshake rejected")
        version = str(ProtocolVersion.parse(first_query_value(query, VERSION_QUERY_PARAM) or ""))
        claimed = auth.get("role") if isinstance(auth, dict) else None
        role = _ROLES.get(claimed) if isinstance(claimed, str) else None
        if role is None:
            log(_log, logging.WARNING, "connection refused: bad auth.role", sid=sid, peer=peer)
            raise _refusal(
                ErrorCode.BAD_REQUEST, 'auth.role is required and must be "agent" or "computer"'
            )
        headers = {
            bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", ())
        }
        request = AuthRequest(role=role, auth=dict(auth), headers=headers, peer=peer)
        try:
            identity = await self._auth.authenticate(request)
        except AuthenticationError as exc:
            log(_log, logging.WARNING, "authentication failed", sid=sid, peer=peer, reason=exc)
            self._access.refused(sid, role, str(exc), peer)
            raise _refusal(ErrorCode.UNAUTHORIZED, str(exc) or "Authentication failed") from exc
        except Exception as exc:
            _log.exception("auth provider failed sid=%s", sid)
            raise _refusal(ErrorCode.INTERNAL_ERROR, "Authentication failed") from exc
        refused = self._access.check_connect(sid, role, identity, peer)
        if refused is not None:
            raise _refusal(refused.code, refused.message)
        if not self._transport_alive(sid):
            # The client left while the provider was deciding; python-socketio will not
            # report a disconnect for a connection it never finished, so stop here.
            log(_log, logging.INFO, "client left during authentication", sid=sid, peer=peer)
            raise _refusal(ErrorCode.BAD_REQUEST, "Client went away")
        await self._sio.save_session(
            sid,
            {"a2c_version": version, "role": role.value, "identity": identity.subject},
            namespace=NAMESPACE,
        )
        await self._offices.connect(sid, role, version)
        self._gone[sid] = asyncio.get_running_loop().create_future()
        self._access.admitted(sid, identity)
        self._metrics.connected(sid, role)
        log(
            _log,
            logging.INFO,
            "connected",
            sid=sid,
            role=role.value,
            identity=identity.subject,
            a2c_version=version,
            peer=peer,
        )

    def _transport_alive(self, sid: str) -> bool:
        return transport_alive(self._sio, sid, NAMESPACE)

    async def _on_disconnect(self, sid: str, reason: Any = None) -> None:
        if not is_disconnecting(self._sio, sid, NAMESPACE):
            # Removal only while python-socketio drops the sid: otherwise the transport and
            # its rooms would outlive the registry entry (a ghost).
            log(_log, logging.WARNING, "lifecycle refused: disconnect of a live session", sid=sid)
            return
        try:
            self._access.forget(sid)
            self._limiter.forget(sid)
            gone = self._gone.pop(sid, None)
            if gone is not None and not gone.done():
                gone.set_result(None)
            self._metrics.disconnected(sid)
            await self._cancel_abandoned(sid)
            outcome = await self._offices.disconnect(sid)
            await self._broadcast(outcome.before_leave)
            log(_log, logging.INFO, "disconnected", sid=sid, office=outcome.left_office)
        except Exception:
            _log.exception("disconnect handler failed sid=%s", sid)

    async def _expire(self, sid: str) -> None:
        """The session's token expired: disconnect it (its office is told it left)."""
        log(_log, logging.INFO, "token expired, disconnecting", sid=sid)
        await self._sio.disconnect(sid, namespace=NAMESPACE)

    # ------------------------------------------------------------------- offices

    async def broadcast(self, broadcasts: tuple[Broadcast, ...]) -> None:
        """Send ``notify:*`` events to office rooms (on every node)."""
        await self._broadcast(broadcasts)

    async def leave_room(self, sid: str, office_id: str) -> None:
        """Take a session hosted here out of an office's room."""
        await self._sio.leave_room(sid, office_id, namespace=NAMESPACE)

    async def _broadcast(self, broadcasts: tuple[Broadcast, ...]) -> None:
        for b in broadcasts:
            await self._sio.emit(
                b.event.value, b.payload, room=b.office_id, skip_sid=b.skip_sid, namespace=NAMESPACE
            )
            if self.observer is not None:
                self.observer.office_event(b.office_id, b.event.value, b.payload)

    async def _on_join(self, sid: str, data: Any) -> tuple[bool, str | None]:
        try:
            req = from_wire(EnterOfficeReq, data)
        except InvalidPayloadError as exc:
            self._metrics.join(self._metrics.role_of(sid), JoinRefusal.INVALID_PAYLOAD)
            return (False, str(exc))
        forbidden = await self._access.authorize_join(sid, req)
        if forbidden is not None:
            self._metrics.join(req.role, FORBIDDEN_JOIN)
            log(_log, logging.WARNING, "join refused", sid=sid, name=req.name,
                office=req.office_id, refusal=FORBIDDEN_JOIN, reason=forbidden)  # fmt: skip
            return (False, forbidden)
        outcome = await self._offices.join(sid, req)
        self._access.joined(sid, req, outcome.ok, outcome.reason)
        self._metrics.join(req.role, outcome.refusal)  # None exactly when it was accepted
        if not outcome.ok:
            log(_log, logging.INFO, "join refused", sid=sid, name=req.name,
                office=req.office_id, refusal=outcome.refusal, reason=outcome.reason)  # fmt: skip
            return outcome.ack
        try:
            await self._apply(sid, outcome)
        except Exception:
            _log.exception("join effects failed sid=%s office=%s", sid, req.office_id)
            await self._offices.rollback(sid, outcome)
            await self._sio.leave_room(sid, req.office_id, namespace=NAMESPACE)
            return _JOIN_FAILED
        log(_log, logging.INFO, "joined", sid=sid, name=req.name, office=req.office_id,
            role=req.role.value)  # fmt: skip
        return outcome.ack

    async def _apply(self, sid: str, outcome: MembershipOutcome) -> None:
        await self._broadcast(outcome.before_leave)
        if outcome.left_office is not None:
            await self._sio.leave_room(sid, outcome.left_office, namespace=NAMESPACE)
        if outcome.entered_office is not None:
            await self._sio.enter_room(sid, outcome.entered_office, namespace=NAMESPACE)
        await self._broadcast(outcome.after_enter)

    async def _on_leave(self, sid: str, data: Any) -> tuple[bool, str | None]:
        try:
            req = from_wire(LeaveOfficeReq, data)
        except InvalidPayloadError as exc:
            return (False, str(exc))
        outcome = await self._offices.leave(sid, req.office_id)
        if outcome.ok:
            await self._cancel_abandoned(sid)
            await self._apply(sid, outcome)
            log(_log, logging.INFO, "left", sid=sid, office=req.office_id)
        return outcome.ack

    async def _on_list_room(self, sid: str, data: Any) -> dict[str, Any]:
        try:
            req = from_wire(ListRoomReq, data)
        except InvalidPayloadError as exc:
            return to_wire(exc.to_payload())  # type: ignore[no-any-return]
        sender = await self._store.get(sid)
        refusal = check_list_room(sender, Event.LIST_ROOM.value, req.agent, req.office_id)
        if refusal is not None:
            return self._refuse(refusal, sid, Event.LIST_ROOM, req.req_id, sender)
        sessions = [
            SessionInfo(
                sid=m.sid,
                name=m.name,
                role=m.role,
                office_id=m.office_id,
                a2c_version=m.a2c_version,
            )
            for m in await self._store.office_members(req.office_id)
            if m.name is not None and m.office_id is not None
        ]
        return to_wire(ListRoomRet(sessions=sessions, req_id=req.req_id))  # type: ignore[no-any-return]

    def _refuse(
        self,
        refusal: Refusal,
        sid: str,
        event: Event,
        req_id: str | None,
        sender: Member | None = None,
    ) -> dict[str, Any]:
        level = logging.WARNING if refusal.security else logging.INFO
        log(_log, level, "request refused", sid=sid, event=event.value, req_id=req_id,
            name=sender.name if sender else None, office=sender.office_id if sender else None,
            code=refusal.code, reason=refusal.message)  # fmt: skip
        return to_wire(refusal.to_payload())  # type: ignore[no-any-return]

    # -------------------------------------------------------------- notifications

    def _relay(
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
                log(_log, logging.INFO, "invalid payload dropped", sid=sid, event=event.value,
                    reason=exc)  # fmt: skip
                return
            sender = await self._store.get(sid)
            refusal = check(sender, event.value, req)
            if refusal is not None or sender is None or sender.office_id is None:
                if refusal is not None:
                    self._refuse(refusal, sid, event, getattr(req, "req_id", None), sender)
                return
            notice = payload(req, sender, notify_model)
            await self._sio.emit(
                notify.value, notice, room=sender.office_id, skip_sid=sid, namespace=NAMESPACE
            )
            if self.observer is not None:
                self.observer.office_event(sender.office_id, notify.value, notice)

        return on_event

    def _updater(self, event: Event) -> Handler:
        return self._relay(
            event,
            lambda sender, name, req: check_update(sender, name, req.computer),
            # Broadcast on behalf of the registered name, never a claimed one.
            lambda req, sender, model: to_wire(model(computer=sender.name)),
        )

    def _canceller(self) -> Handler:
        relay = self._relay(
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

    # ----------------------------------------------------------------- forwarding

    def _forwarder(self, event: Event) -> Handler:
        model = EVENTS[event].request

        async def forward(sid: str, data: Any) -> Any:
            if self._drain.draining:
                self._metrics.route(event.value, RouteOutcome.SHUTDOWN)
                return _flat(ErrorCode.INTERNAL_ERROR, "The Server is shutting down",
                             {"reason": SHUTDOWN_REASON})  # fmt: skip
            try:
                req = from_wire(model, data)
            except InvalidPayloadError as exc:
                self._metrics.route(event.value, RouteOutcome.INVALID)
                return to_wire(exc.to_payload())
            if isinstance(req, ToolCallReq):
                problem = tool_timeout_problem(req.timeout, self._settings.max_tool_timeout)
                if problem is not None:
                    self._metrics.route(event.value, RouteOutcome.INVALID)
                    error = InvalidPayloadError("ToolCallReq", [FieldError("$.timeout", problem)])
                    return to_wire(error.to_payload())
                wait = req.timeout + self._settings.tool_call_buffer
            else:
                wait = self._settings.forward_timeout
            sender = await self._store.get(sid)
            target = await self._store.member_named(req.computer)
            refusal = check_route(sender, event.value, req.agent, req.computer, target)
            if refusal is not None or target is None:
                if refusal is None:  # pragma: no cover - check_route refuses a missing target
                    return _internal_error()
                self._metrics.route(event.value, RouteOutcome.REFUSED)
                self._access.routed(sid, event, sender, req.computer, refusal.message)
                return self._refuse(refusal, sid, event, req.req_id, sender)
            if event is Event.TOOL_CALL:
                self._access.routed(sid, event, sender, req.computer, None)
            log(_log, logging.DEBUG, "forwarding", sid=sid, event=event.value, req_id=req.req_id,
                name=req.agent, office=target.office_id, computer=req.computer)  # fmt: skip
            extended = isinstance(req, ToolCallReq) and (
                req.a2c_progress is True or (otel.STATE.active and req.a2c_trace is not None)
            )
            if extended:
                call = self._call_extended(sid, event, data, req, target, wait)
            else:
                call = self._call(sid, event, data, req.req_id, req.computer, target.sid, wait)
            if self.observer is not None:
                call = self.observer.watch_call(event.value, req, target.office_id, call)
            with self._drain.tracking(), self._track(sid, req, target.sid):
                return await call

        return forward

    async def _call_extended(
        self, sid: str, event: Event, data: Any, req: ToolCallReq, target: Member, wait: float
    ) -> Any:
        """Extensions: progress restarts ``wait`` (up to --max-tool-timeout); trace context
        gets a span (see :mod:`a2c_server._progress` and :mod:`a2c_server._otel`)."""
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

    def _track(self, sid: str, req: Any, target_sid: str) -> AbstractContextManager[None]:
        if not isinstance(req, ToolCallReq):  # only tool calls run something worth stopping
            return contextlib.nullcontext()
        call = InFlightCall(
            req_id=req.req_id, agent=req.agent, computer=req.computer, computer_sid=target_sid
        )
        return self._calls.tracking(sid, call)

    async def _cancel_abandoned(self, sid: str) -> None:
        """A1: cancel, on their Computers, the tool calls of an Agent that is going away."""
        for call in self._calls.abandon(sid):
            self._metrics.cancelled_for_agent()
            log(_log, logging.INFO, "tool call cancelled: its agent left", sid=sid,
                req_id=call.req_id, name=call.agent, computer=call.computer)  # fmt: skip
            try:
                await self._sio.emit(Event.NOTIFY_TOOL_CALL_CANCEL.value, cancel_notice(call),
                                     to=call.computer_sid, namespace=NAMESPACE)  # fmt: skip
            except Exception as exc:  # the Computer may be gone too; its call ends with it
                log(_log, logging.WARNING, "could not cancel an abandoned tool call",
                    req_id=call.req_id, computer=call.computer, reason=exc)  # fmt: skip

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
        gone = self._gone.get(target_sid)
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
        if timed_out:
            self._metrics.route(event.value, RouteOutcome.TIMEOUT, time.monotonic() - started)
            log(_log, logging.INFO, "forward timed out", sid=sid, event=event.value,
                req_id=req_id, computer=computer, wait=wait,
                delivered=True if disrupted else None)  # fmt: skip
            message = f"Computer {computer!r} did not answer within {wait:g} seconds"
            if disrupted:
                message += MAY_HAVE_RUN
            return _flat(ErrorCode.TIMEOUT, message,
                         {"computer_name": computer, **delivered_details(disrupted)})  # fmt: skip
        if args is None:
            if expired.done() and not gone.done():
                self._metrics.route(event.value, RouteOutcome.SHUTDOWN,
                                    time.monotonic() - started)  # fmt: skip
                log(_log, logging.INFO, "call abandoned at shutdown", sid=sid, event=event.value,
                    req_id=req_id, computer=computer)  # fmt: skip
                return _flat(
                    ErrorCode.INTERNAL_ERROR,
                    f"The Server shut down before Computer {computer!r} answered",
                    {"computer_name": computer, "reason": SHUTDOWN_REASON},
                )
            return self._computer_gone(sid, event, req_id, computer, started, disrupted)
        answer = ack_value(args)
        elapsed = time.monotonic() - started
        if sid not in self._gone:
            # The Agent left while its request was in flight: nobody can read an ack.
            self._metrics.route(event.value, RouteOutcome.AGENT_GONE, elapsed)
            log(_log, logging.DEBUG, "answer dropped, agent gone", sid=sid, req_id=req_id)
            return None
        unsupported = unsupported_event_refusal(event, computer, answer)
        if unsupported is not None:
            self._metrics.route(event.value, RouteOutcome.UNSUPPORTED, elapsed)
            log(_log, logging.INFO, "computer does not implement the event", sid=target_sid,
                event=event.value, req_id=req_id, computer=computer)  # fmt: skip
            return to_wire(unsupported.to_payload())
        if not isinstance(answer, dict):
            self._metrics.route(event.value, RouteOutcome.BAD_ANSWER, elapsed)
            log(_log, logging.WARNING, "computer answered a non-object", sid=target_sid,
                event=event.value, req_id=req_id)  # fmt: skip
            return _flat(
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
    ) -> dict[str, Any]:
        self._metrics.route(event.value, RouteOutcome.COMPUTER_GONE, time.monotonic() - started)
        log(_log, logging.INFO, "computer disconnected mid-call", sid=sid, event=event.value,
            req_id=req_id, computer=computer, delivered=True if disrupted else None)  # fmt: skip
        message = f"Computer {computer!r} disconnected before answering"
        return _flat(
            ErrorCode.INTERNAL_ERROR,
            message + MAY_HAVE_RUN if disrupted else message,
            {"computer_name": computer, "reason": "computer_disconnected",
             **delivered_details(disrupted)},
        )  # fmt: skip


def _refusal_code(exc: socketio.exceptions.ConnectionRefusedError) -> int:
    data = exc.error_args.get("data") if isinstance(exc.error_args, dict) else None
    code = data.get("code") if isinstance(data, dict) else None
    return code if isinstance(code, int) else ErrorCode.INTERNAL_ERROR


_UNAVAILABLE: Final = "Registry unavailable, try again later"


def _unavailable_answer(event: Event, exc: StoreUnavailableError) -> Any:
    """What a request gets while the shared registry is down: a flat 503 or a refused ack."""
    if event in (Event.JOIN_OFFICE, Event.LEAVE_OFFICE):
        return (False, _UNAVAILABLE)
    if event is Event.LIST_ROOM or event.value.startswith("client:"):
        return _flat(exc.code, _UNAVAILABLE, {"reason": "registry_unavailable"})
    return None


def _refusal(code: int, message: str) -> socketio.exceptions.ConnectionRefusedError:
    """A connect refusal whose ``connect_error`` data is a flat ErrorPayload.

    python-socketio delivers it to the client as ``{"message": ..., "data": {code, message}}``,
    so SDKs can map a refused token to 401 instead of parsing free text.
    """
    return socketio.exceptions.ConnectionRefusedError(
        message, to_wire(ErrorPayload(code=code, message=message))
    )
