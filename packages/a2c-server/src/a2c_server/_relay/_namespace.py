"""The ``/smcp`` namespace: translates Socket.IO events to the office rules and back.

Everything protocol-specific is decided in :mod:`a2c_server._state._rules` and
:mod:`a2c_server._state._offices`; the namespace decodes payloads, asks, and performs the effects
(rooms, broadcasts, forwarding). Every handler is wrapped: whatever a payload does, a
request with an ack gets exactly one answer (a flat 500 for a bug, logged), never silence.

:class:`SmcpNamespace` is the composition of its parts, one module each: office membership
(:mod:`~a2c_server._relay._namespace_offices`), forwarding ``client:*`` calls
(:mod:`~a2c_server._relay._namespace_forward`), the ``server:*`` to ``notify:*`` relay
(:mod:`~a2c_server._relay._namespace_relay`), on a shared core
(:mod:`~a2c_server._relay._namespace_core`).
Here live the handler table, the guard around every handler, and a session's lifecycle
(admission at connect, clean-up at disconnect).
"""

from __future__ import annotations

import asyncio
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
    ErrorPayload,
    Event,
    ProtocolVersion,
    Role,
    to_wire,
)
from a2c_server._auth import AuthRequest, Identity
from a2c_server._edge._gate import check_version_query, first_query_value
from a2c_server._exceptions import AuthenticationError, StoreUnavailableError
from a2c_server._observe._logs import log
from a2c_server._state._reclaim import reclaim_key, reclaim_secret_problem
from a2c_server._state._uploads import announced_extensions
from a2c_server._upstream import not_handled, transport_alive

from ._early import ROLES, EarlyRefusalMixin, peer_of
from ._namespace_core import _JOIN_FAILED, Handler, _flat, _internal_error, _log
from ._namespace_forward import ForwardingMixin
from ._namespace_offices import MembershipMixin
from ._namespace_relay import RelayMixin
from ._sio import is_connecting, is_disconnecting
from ._unknown import UnknownEvents

__all__ = ["SmcpNamespace"]

_NOT_AN_OBJECT: Final = object()  # an auth that is not a JSON object: a bad role too


class SmcpNamespace(ForwardingMixin, MembershipMixin, RelayMixin, EarlyRefusalMixin):
    """Registers the handlers of namespace ``/smcp`` on ``sio``."""

    def register(self) -> None:
        sio = self._sio
        sio.on("connect", self._on_connect, namespace=NAMESPACE)
        sio.connect_screen = self._early_screen()
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
        unknown = UnknownEvents(not_handled(sio), self._penalize)
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
                log(_log, logging.WARNING, "request failed: registry unavailable", sid=sid,
                    event=event.value, reason=exc)  # fmt: skip
                if event is Event.JOIN_OFFICE:
                    self._join_deadlines.undecided(sid)
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
            self._sio.refusals.refused("registry_unavailable",
                "connection refused: registry unavailable", peer_of(environ), sid=sid,
                reason=exc)  # fmt: skip
            self._metrics.connection_refused(exc.code)
            raise _refusal(exc.code, _UNAVAILABLE) from exc
        except Exception as exc:
            _log.exception("connect handler failed sid=%s", sid)
            self._metrics.connection_refused(ErrorCode.INTERNAL_ERROR)
            raise _refusal(ErrorCode.INTERNAL_ERROR, "Internal server error") from exc

    async def _admit(self, sid: str, environ: Mapping[str, Any], auth: Any) -> None:
        scope = environ.get("asgi.scope") or {}
        peer = peer_of(environ)
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        # The gate already ran; checking again costs nothing and guards a misconfiguration.
        if check_version_query(query, self._settings.served_versions) is not None:
            self._sio.refusals.refused("version", "connection refused: version", peer, sid=sid)
            raise _refusal(ErrorCode.PROTOCOL_VERSION_MISMATCH, "A2C version handshake rejected")
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
            raise _refusal(
                ErrorCode.BAD_REQUEST, 'auth.role, when given, must be "agent" or "computer"'
            )
        bad_secret = reclaim_secret_problem(auth)
        if bad_secret is not None:
            self._sio.refusals.refused("bad_reclaim", "connection refused: bad auth.a2c_reclaim",
                                       peer, sid=sid)  # fmt: skip
            raise _refusal(ErrorCode.BAD_REQUEST, bad_secret)
        headers = {
            bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", ())
        }
        request = AuthRequest(role=role, auth=dict(auth), headers=headers, peer=peer)
        try:
            identity = await self._auth.authenticate(request)
        except AuthenticationError as exc:
            self._auth_refused(sid, role, exc, peer, sid=sid)
            raise _refusal(ErrorCode.UNAUTHORIZED, str(exc) or "Authentication failed") from exc
        except Exception as exc:
            _log.exception("auth provider failed sid=%s", sid)
            raise _refusal(ErrorCode.INTERNAL_ERROR, "Authentication failed") from exc
        if role is None and identity.grant is not None:
            role = identity.grant.role  # the grant's role wins over a join's
        refused = await self._access.check_connect(sid, role, identity, peer)
        if refused is not None:
            self._sio.refusals.refused(f"refused_{refused.code}", "connection refused", peer,
                sid=sid, identity=identity.subject, code=refused.code,
                reason=refused.message)  # fmt: skip
            raise _refusal(refused.code, refused.message)
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
            log(_log, logging.INFO, "client left during authentication", sid=sid, peer=peer)
            raise _refusal(ErrorCode.BAD_REQUEST, "Client went away")
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
        self._gone[sid] = asyncio.get_running_loop().create_future()
        self._access.admitted(sid, identity)
        self._join_deadlines.connected(sid, peer)
        self._metrics.connected(sid, role)
        self._metrics.protocol(sid, version)
        log(
            _log,
            logging.INFO,
            "connected",
            sid=sid,
            role=role.value if role else None,
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
            await self._access.forget(sid)
            self._join_deadlines.forget(sid)
            self._limiter.forget(sid)
            self._notices.forget(sid)
            self._new_offices.forget(sid)
            gone = self._gone.pop(sid, None)
            if gone is not None and not gone.done():
                gone.set_result(None)
            self._metrics.disconnected(sid)
            await self._cancel_abandoned(sid)
            if self._drain.draining and self._remote is not None:
                await self._hold_for_return(sid)
            outcome = await self._offices.disconnect(sid)
            await self._broadcast(outcome.before_leave)
            log(_log, logging.INFO, "disconnected", sid=sid, office=outcome.left_office)
        except Exception:
            _log.exception("disconnect handler failed sid=%s", sid)

    async def _hold_for_return(self, sid: str) -> None:
        """A Computer cut by this node's graceful shutdown: keep its name for its return
        (``--node-ttl`` seconds, the reclaim window of a node that dies), so calls to it
        from other nodes wait for it instead of a 404 (``_state._absent`` A6)."""
        member = await self._store.get(sid)
        if member is None or member.role is not Role.COMPUTER:
            return
        if member.name is None or member.office_id is None or self._remote is None:
            return
        try:
            await self._remote.hold(member.office_id, member.name, self._settings.node_ttl)
        except StoreUnavailableError as exc:  # the 404 of old, not a failed disconnect
            log(_log, logging.WARNING, "name not kept for its return", sid=sid,
                name=member.name, office=member.office_id, reason=exc)  # fmt: skip


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
        # Raised before the call went out: not delivered, trying again is safe.
        return _flat(exc.code, _UNAVAILABLE, {"reason": "registry_unavailable", "delivered": False})
    return None


def _refusal(code: int, message: str) -> socketio.exceptions.ConnectionRefusedError:
    """A connect refusal whose ``connect_error`` data is a flat ErrorPayload.

    python-socketio delivers it to the client as ``{"message": ..., "data": {code, message}}``,
    so SDKs can map a refused token to 401 instead of parsing free text.
    """
    return socketio.exceptions.ConnectionRefusedError(
        message, to_wire(ErrorPayload(code=code, message=message))
    )
