"""Cheap refusals: a CONNECT whose auth object alone shows it is refused.

A client without the token, or with a wrong shared token, is refused before
python-socketio builds a Socket.IO session for it (a sid, its rooms, a task running the
connect handler, its teardown): the namespace screens the CONNECT packet and the
``connect_error`` goes out at once. Only the auth provider's ``refusal_at_once`` decides
(:class:`~a2c_server.SharedTokenAuth`: no token or a wrong one; ``JwtAuth``: no token);
everything else, a bad ``auth.role`` included, takes the full admission path so every
refusal keeps its own cause and order. What the client sees is what the full path sends
(the flat 401 in the ``connect_error`` data); the folded WARNING, the aggregated audit
line and the counters are the same too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs
import socketio

from a2c_protocol import ErrorCode, ErrorPayload, Role, to_wire
from a2c_server._auth import AuthProvider
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._state._access import Access

__all__ = ["ROLES", "EarlyRefusals", "peer_of", "refusal", "refusal_code"]

#: ``auth.role`` values a CONNECT may claim.
ROLES: Final = {role.value: role for role in Role}


def peer_of(environ: Mapping[str, Any]) -> str | None:
    """``host:port`` of the client of an ASGI ``environ``, None when the server did not say."""
    client = (environ.get("asgi.scope") or {}).get("client")
    return f"{client[0]}:{client[1]}" if client else None


def refusal(code: int, message: str) -> socketio.exceptions.ConnectionRefusedError:
    """A connect refusal whose ``connect_error`` data is a flat ErrorPayload.

    python-socketio delivers it to the client as ``{"message": ..., "data": {code, message}}``,
    so SDKs can map a refused token to 401 instead of parsing free text.
    """
    return socketio.exceptions.ConnectionRefusedError(
        message, to_wire(ErrorPayload(code=code, message=message))
    )


def refusal_code(exc: socketio.exceptions.ConnectionRefusedError) -> int:
    """The ErrorPayload code a connect refusal carries (500 when it carries none)."""
    data = exc.error_args.get("data") if isinstance(exc.error_args, dict) else None
    code = data.get("code") if isinstance(data, dict) else None
    return code if isinstance(code, int) else ErrorCode.INTERNAL_ERROR


@attrs.define
class EarlyRefusals:
    """The CONNECT screen that :class:`~a2c_server._relay._sio.SmcpSocketServer` asks first,
    and the refused-token record it shares with the full admission path."""

    _sio: socketio.AsyncServer
    _auth: AuthProvider
    _access: Access
    _metrics: ServerMetrics

    def screen(self) -> Callable[[str, Mapping[str, Any], Any], Any] | None:
        """The screen to install, or None when the provider cannot refuse that early."""
        quick = getattr(self._auth, "refusal_at_once", None)
        if not callable(quick):
            return None

        def screen(eio_sid: str, environ: Mapping[str, Any], auth: Any) -> Any:
            if auth is None:
                auth = {}
            if not isinstance(auth, dict):
                return None  # a bad role: the full path names that cause
            claimed = auth.get("role")
            role = ROLES.get(claimed) if isinstance(claimed, str) else None
            if role is None and claimed is not None:
                return None
            error = quick(auth)
            if error is None:
                return None
            self.auth_refused(eio_sid, role, error, peer_of(environ), eio_sid=eio_sid)
            self._metrics.connection_refused(ErrorCode.UNAUTHORIZED)
            message = str(error) or "Authentication failed"
            # The shape python-socketio gives a ConnectionRefusedError(message, payload).
            payload = to_wire(ErrorPayload(code=ErrorCode.UNAUTHORIZED, message=message))
            return {"message": message, "data": payload}

        return screen

    def auth_refused(
        self, session: str, role: Role | None, error: object, peer: str | None, **key: str
    ) -> None:
        """The folded WARNING of a refused token and, once per fold, its audit line (a
        tokenless flood must not fill the disk); ``key`` names the session in the log."""
        self._sio.handshake_pacer.refused(time.monotonic())
        count = self._sio.refusals.refused("unauthorized", "authentication failed", peer,
                                           **key, reason=error)  # fmt: skip
        if count is not None:
            reason = str(error) if count == 1 else f"{error} (x{count} from this address)"
            self._access.refused(session, role, reason, peer)
