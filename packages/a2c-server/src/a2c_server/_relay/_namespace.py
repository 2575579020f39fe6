"""The ``/smcp`` namespace: translates Socket.IO events to the office rules and back.

Everything protocol-specific is decided in :mod:`a2c_server._state._rules` and
:mod:`a2c_server._state._offices`; the namespace decodes payloads, asks, and performs the effects
(rooms, broadcasts, forwarding). Every handler is wrapped: whatever a payload does, a
request with an ack gets exactly one answer (a flat 500 for a bug, logged), never silence.

:class:`SmcpNamespace` holds one handler object per concern, each built with only what it
reads, and registers their bound methods with python-socketio: office membership
(:mod:`~a2c_server._relay._namespace_offices`), forwarding ``client:*`` calls
(:mod:`~a2c_server._relay._namespace_forward`), the ``server:*`` to ``notify:*`` relay
(:mod:`~a2c_server._relay._namespace_relay`) and the early CONNECT refusals
(:mod:`~a2c_server._relay._early`); what they share is in
:mod:`~a2c_server._relay._namespace_core`. Here live the handler table, the guard around
every handler, and a session's lifecycle (admission at connect, clean-up at disconnect).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

import socketio

from a2c_protocol import (
    EVENTS,
    NAMESPACE,
    UPDATE_EVENTS,
    VERSION_QUERY_PARAM,
    ErrorCode,
    Event,
    ProtocolVersion,
    Role,
)
from a2c_server._auth import AuthProvider, AuthRequest, Identity
from a2c_server._cluster._remote import RemoteWatch
from a2c_server._console._observer import CallObserver
from a2c_server._edge._gate import check_version_query, first_query_value
from a2c_server._edge._shutdown import Drain
from a2c_server._exceptions import AuthenticationError, StoreUnavailableError
from a2c_server._floods._inbound import COALESCED_COST
from a2c_server._floods._join_deadline import JoinDeadlines
from a2c_server._observe._audit import Audit
from a2c_server._observe._logs import log
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._settings import ServerSettings
from a2c_server._state._absent import NewOffices, return_hold
from a2c_server._state._access import Access
from a2c_server._state._offices import Broadcast, Offices
from a2c_server._state._ratelimit import RequestLimiter
from a2c_server._state._reclaim import reclaim_key, reclaim_secret_problem
from a2c_server._state._subjects import SubjectCounts
from a2c_server._state._uploads import announced_extensions
from a2c_server._upstream import not_handled, transport_alive

from ._early import ROLES, EarlyRefusals, peer_of, refusal, refusal_code
from ._expiry import A2C_SESSION_EXPIRED, ExpiryWindow, expired_notice, shutdown_notice
from ._inflight import InFlightCalls
from ._namespace_core import (
    JOIN_FAILED,
    LOG,
    UNAVAILABLE,
    Effects,
    Handler,
    LiveSessions,
    internal_error,
    unavailable_answer,
)
from ._namespace_forward import Forwarding
from ._namespace_offices import Membership
from ._namespace_relay import Relay
from ._notices import CoalescedNotices
from ._progress import ProgressRoutes
from ._sio import is_connecting, is_disconnecting
from ._unknown import UnknownEvents

__all__ = ["SmcpNamespace"]

_NOT_AN_OBJECT: Final = object()  # an auth that is not a JSON object: a bad role too


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
        subjects: SubjectCounts | None = None,
    ) -> None:
        self._sio = sio
        self._metrics = metrics if metrics is not None else ServerMetrics()
        self._drain = drain if drain is not None else Drain()
        self._drain.announce = self._announce_shutdown
        self._settings = settings
        self._offices = offices
        self._store = offices.store
        self._auth = auth
        audit = audit if audit is not None else Audit(self._metrics.registry)
        #: The audit trail, shared with the console (its logins are security decisions too).
        self.audit = audit
        self._access = Access(auth, audit, self._expire, subjects=subjects,
                              max_per_subject=settings.max_connections_per_subject)  # fmt: skip
        # A session in no office joins one within join_timeout or is closed.
        self._join_deadlines = JoinDeadlines(settings.join_timeout, sio.refusals,
                                             self._close_unjoined)  # fmt: skip
        self._limiter = RequestLimiter(
            settings.max_requests_per_second, settings.request_burst, self._metrics.registry
        )
        self._sessions = LiveSessions()
        # Multi-node: a sid hosted by another node has a future of its own there. A registry
        # outage never ends such a call (it was sent), it only marks it disrupted.
        self._remote = remote
        # The tool calls relayed for Agents connected here, cancelled when their Agent goes.
        calls = InFlightCalls()
        # Token expiry waits for the session's calls in flight (bounded like any call).
        self._expiry = ExpiryWindow(
            calls.busy, settings.max_tool_timeout + settings.tool_call_buffer
        )
        self._progress = ProgressRoutes(sio, self._store)
        self._effects = effects = Effects(sio, self._metrics, calls)
        # server:update_* relayed at most once per interval per sender.
        self._notices = CoalescedNotices(
            settings.notice_interval, effects.notice,
            lambda s: effects.penalize(s, COALESCED_COST),
        )  # fmt: skip
        # Which Agent sessions created their office by joining it (a 404 says so, see _absent).
        self._new_offices = NewOffices()
        self._early = EarlyRefusals(sio, auth, self._access, self._metrics)
        self._membership = Membership(sio, offices, self._access, self._metrics,
                                      self._join_deadlines, self._new_offices, effects)  # fmt: skip
        self._relay = Relay(sio, self._store, self._notices, calls, effects)
        self._forwarding = Forwarding(
            sio=sio, settings=settings, store=self._store, remote=remote, drain=self._drain,
            metrics=self._metrics, access=self._access, expiry=self._expiry, calls=calls,
            new_offices=self._new_offices, progress=self._progress, sessions=self._sessions,
            effects=effects,
        )  # fmt: skip

    @property
    def observer(self) -> CallObserver | None:
        """Set by the console while someone watches it; None costs one attribute check."""
        return self._effects.observer

    @observer.setter
    def observer(self, observer: CallObserver | None) -> None:
        self._effects.observer = observer

    def register(self) -> None:
        sio = self._sio
        sio.on("connect", self._on_connect, namespace=NAMESPACE)
        sio.connect_screen = self._early.screen()
        sio.on("disconnect", self._on_disconnect, namespace=NAMESPACE)
        for event in EVENTS:
            if event.value.startswith("client:"):
                forward = self._forwarding.forwarder(event)
                handler = self._guard(event, forward, internal_error)
            elif event is Event.LIST_ROOM:
                handler = self._guard(event, self._membership.on_list_room, internal_error)
            elif event in (Event.JOIN_OFFICE, Event.LEAVE_OFFICE):
                membership = self._membership
                on = membership.on_join if event is Event.JOIN_OFFICE else membership.on_leave
                handler = self._guard(event, on, lambda: JOIN_FAILED)
            elif event in UPDATE_EVENTS:
                handler = self._guard(event, self._relay.updater(event), lambda: None)
            elif event is Event.TOOL_CALL_CANCEL:
                handler = self._guard(event, self._relay.canceller(), lambda: None)
            else:
                continue  # notify:* are only ever sent by the Server
            sio.on(event.value, handler, namespace=NAMESPACE)
        self._progress.register()
        unknown = UnknownEvents(not_handled(sio), self._effects.penalize)
        sio.on("*", unknown.handle, namespace=NAMESPACE)

    def _guard(self, event: Event, handler: Handler, on_error: Callable[[], Any]) -> Any:
        async def guarded(sid: str, *args: Any) -> Any:
            # Exactly one argument is a payload; anything else fails validation as a list.
            data = args[0] if len(args) == 1 else list(args) if args else None
            if not self._limiter.allow(sid, event):
                return self._limiter.answer(event)
            try:
                return await handler(sid, data)
            except StoreUnavailableError as exc:
                log(LOG, logging.WARNING, "request failed: registry unavailable", sid=sid,
                    event=event.value, reason=exc)  # fmt: skip
                if event is Event.JOIN_OFFICE:
                    self._join_deadlines.undecided(sid)
                return unavailable_answer(event, exc)
            except Exception:
                LOG.exception("handler failed event=%s sid=%s", event.value, sid)
                return on_error()

        guarded.__name__ = f"on_{event.name.lower()}"
        return guarded

    # ------------------------------------------------------------------ lifecycle

    async def _on_connect(self, sid: str, environ: Mapping[str, Any], auth: Any = None) -> None:
        if not is_connecting(self._sio, sid, NAMESPACE):
            # Not python-socketio's own CONNECT: never re-run admission for a live session.
            log(LOG, logging.WARNING, "lifecycle refused: connect outside a handshake", sid=sid)
            raise refusal(ErrorCode.BAD_REQUEST, "Already connected")
        try:
            await self._admit(sid, environ, auth)
        except socketio.exceptions.ConnectionRefusedError as exc:
            self._metrics.connection_refused(refusal_code(exc))
            raise
        except StoreUnavailableError as exc:
            self._sio.refusals.refused("registry_unavailable",
                "connection refused: registry unavailable", peer_of(environ), sid=sid,
                reason=exc)  # fmt: skip
            self._metrics.connection_refused(exc.code)
            raise refusal(exc.code, UNAVAILABLE) from exc
        except Exception as exc:
            LOG.exception("connect handler failed sid=%s", sid)
            self._metrics.connection_refused(ErrorCode.INTERNAL_ERROR)
            raise refusal(ErrorCode.INTERNAL_ERROR, "Internal server error") from exc

    async def _admit(self, sid: str, environ: Mapping[str, Any], auth: Any) -> None:
        scope = environ.get("asgi.scope") or {}
        peer = peer_of(environ)
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        # The gate already ran; checking again costs nothing and guards a misconfiguration.
        if check_version_query(query, self._settings.served_versions) is not None:
            self._sio.refusals.refused("version", "connection refused: version", peer, sid=sid)
            raise refusal(ErrorCode.PROTOCOL_VERSION_MISMATCH, "A2C version handshake rejected")
        version = str(ProtocolVersion.parse(first_query_value(query, VERSION_QUERY_PARAM) or ""))
        if auth is None:
            auth = {}
        # A role given at connect is checked; none at all is admitted (the official SDKs
        # never send one) and the first server:join_office settles it (docs/compatibility.md).
        claimed = auth.get("role") if isinstance(auth, dict) else _NOT_AN_OBJECT
        role = ROLES.get(claimed) if isinstance(claimed, str) else None
        if role is None and claimed is not None:
            self._sio.refusals.refused("bad_role", "connection refused: bad auth.role", peer,
                                       sid=sid)  # fmt: skip
            raise refusal(
                ErrorCode.BAD_REQUEST, 'auth.role, when given, must be "agent" or "computer"'
            )
        bad_secret = reclaim_secret_problem(auth)
        if bad_secret is not None:
            self._sio.refusals.refused("bad_reclaim", "connection refused: bad auth.a2c_reclaim",
                                       peer, sid=sid)  # fmt: skip
            raise refusal(ErrorCode.BAD_REQUEST, bad_secret)
        headers = {
            bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", ())
        }
        request = AuthRequest(role=role, auth=dict(auth), headers=headers, peer=peer)
        try:
            identity = await self._auth.authenticate(request)
        except AuthenticationError as exc:
            self._early.auth_refused(sid, role, exc, peer, sid=sid)
            raise refusal(ErrorCode.UNAUTHORIZED, str(exc) or "Authentication failed") from exc
        except Exception as exc:
            LOG.exception("auth provider failed sid=%s", sid)
            raise refusal(ErrorCode.INTERNAL_ERROR, "Authentication failed") from exc
        if role is None and identity.grant is not None:
            role = identity.grant.role  # the grant's role wins over a join's
        refused = await self._access.check_connect(sid, role, identity, peer)
        if refused is not None:
            self._sio.refusals.refused(f"refused_{refused.code}", "connection refused", peer,
                sid=sid, identity=identity.subject, code=refused.code,
                reason=refused.message)  # fmt: skip
            raise refusal(refused.code, refused.message)
        try:
            await self._enter(sid, role, version, identity, peer, announced_extensions(auth),
                              reclaim_key(auth, identity.subject))  # fmt: skip
        except BaseException:
            await self._access.forget(sid)  # it no longer counts against its subject's cap
            raise

    async def _enter(
        self,
        sid: str,
        role: Role | None,
        version: str,
        identity: Identity,
        peer: str | None,
        extensions: frozenset[str] = frozenset(),
        reclaim: str | None = None,
    ) -> None:
        if not self._transport_alive(sid):
            # The client left while the provider was deciding; python-socketio will not
            # report a disconnect for a connection it never finished, so stop here.
            log(LOG, logging.INFO, "client left during authentication", sid=sid, peer=peer)
            raise refusal(ErrorCode.BAD_REQUEST, "Client went away")
        await self._sio.save_session(
            sid,
            {
                "a2c_version": version,
                "role": role.value if role else None,
                "identity": identity.subject,
            },
            namespace=NAMESPACE,
        )
        await self._offices.connect(sid, role, version, extensions, reclaim)
        self._sessions.opened(sid)
        self._access.admitted(sid, identity)
        self._join_deadlines.connected(sid, peer)
        self._metrics.connected(sid, role)
        self._metrics.protocol(sid, version)
        log(LOG, logging.INFO, "connected", sid=sid, role=role.value if role else None,
            identity=identity.subject, a2c_version=version, peer=peer)  # fmt: skip

    def _transport_alive(self, sid: str) -> bool:
        return transport_alive(self._sio, sid, NAMESPACE)

    async def _on_disconnect(self, sid: str, reason: Any = None) -> None:
        if not is_disconnecting(self._sio, sid, NAMESPACE):
            # Removal only while python-socketio drops the sid: otherwise the transport and
            # its rooms would outlive the registry entry (a ghost).
            log(LOG, logging.WARNING, "lifecycle refused: disconnect of a live session", sid=sid)
            return
        try:
            await self._access.forget(sid)
            self._join_deadlines.forget(sid)
            self._limiter.forget(sid)
            self._notices.forget(sid)
            self._new_offices.forget(sid)
            self._sessions.closed(sid)
            self._metrics.disconnected(sid)
            await self._effects.cancel_abandoned(sid)
            if self._drain.draining and self._remote is not None:
                await self._hold_for_return(sid)
            outcome = await self._offices.disconnect(sid)
            await self._effects.broadcast(outcome.before_leave)
            log(LOG, logging.INFO, "disconnected", sid=sid, office=outcome.left_office)
        except Exception:
            LOG.exception("disconnect handler failed sid=%s", sid)

    async def _hold_for_return(self, sid: str) -> None:
        """A Computer cut by this node's graceful shutdown: keep its name for its return
        (``_state._absent`` A7: ``--node-ttl``, at least 20 s), so calls to it from other
        nodes wait for it instead of a 404 (A6)."""
        member = await self._store.get(sid)
        if member is None or member.role is not Role.COMPUTER:
            return
        if member.name is None or member.office_id is None or self._remote is None:
            return
        try:
            hold = return_hold(self._settings.node_ttl)
            await self._remote.hold(member.office_id, member.name, hold)
        except StoreUnavailableError as exc:  # the 404 of old, not a failed disconnect
            log(LOG, logging.WARNING, "name not kept for its return", sid=sid,
                name=member.name, office=member.office_id, reason=exc)  # fmt: skip

    # ------------------------------------------------------------------ node-wide effects

    async def _expire(self, sid: str) -> None:
        """The session's token expired: once its tool calls in flight have ended (see
        :mod:`a2c_server._relay._expiry`), tell it why and disconnect it (its office is told)."""
        connected = self._sessions.connected
        await self._expiry.drain(sid, connected)
        if not connected(sid):
            return  # it left by itself meanwhile
        log(LOG, logging.INFO, "token expired, disconnecting", sid=sid)
        try:  # an extension notice (docs/compatibility.md): clients name the reason
            await self._sio.emit(A2C_SESSION_EXPIRED, expired_notice(), to=sid,
                                 namespace=NAMESPACE)  # fmt: skip
        except Exception as exc:  # the cut below matters, the notice is a courtesy
            log(LOG, logging.DEBUG, "expiry notice not sent", sid=sid, reason=exc)
        await self._sio.disconnect(sid, namespace=NAMESPACE)

    async def _announce_shutdown(self) -> None:
        """Tell the sessions of this node that are in an office (those that may route
        requests) that they are about to be cut (a graceful shutdown): the extension notice,
        so our clients hold new requests for their next connection."""
        notice = shutdown_notice()
        connected = self._sessions.connected
        for sid in self._sessions.sids():
            member = await self._store.get(sid)
            if member is not None and member.office_id is not None and connected(sid):
                await self._sio.emit(A2C_SESSION_EXPIRED, notice, to=sid, namespace=NAMESPACE)

    async def _close_unjoined(self, sid: str) -> None:
        if self._sessions.connected(sid):
            await self._sio.disconnect(sid, namespace=NAMESPACE)

    async def broadcast(self, broadcasts: tuple[Broadcast, ...]) -> None:
        """Send ``notify:*`` events to office rooms (on every node)."""
        await self._effects.broadcast(broadcasts)

    async def leave_room(self, sid: str, office_id: str) -> None:
        """Take a session hosted here out of an office's room."""
        await self._sio.leave_room(sid, office_id, namespace=NAMESPACE)

    async def end_session(self, sid: str) -> None:
        """Disconnect a session hosted here (one a reconnect of its client replaced)."""
        await self._sio.disconnect(sid, namespace=NAMESPACE)
