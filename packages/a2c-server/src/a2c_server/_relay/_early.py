"""Cheap refusals: a CONNECT whose auth object alone shows it is refused (issue 41).

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

from collections.abc import Callable, Mapping
from typing import Any, Final

from a2c_protocol import ErrorCode, ErrorPayload, Role, to_wire

from ._namespace_core import NamespaceCore

__all__ = ["EarlyRefusalMixin"]

_ROLES: Final = {role.value: role for role in Role}


class EarlyRefusalMixin(NamespaceCore):
    """The CONNECT screen that :class:`~a2c_server._relay._sio.SmcpSocketServer` asks first."""

    def _early_screen(self) -> Callable[[str, Mapping[str, Any], Any], Any] | None:
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
            role = _ROLES.get(claimed) if isinstance(claimed, str) else None
            if role is None and claimed is not None:
                return None
            error = quick(auth)
            if error is None:
                return None
            client = (environ.get("asgi.scope") or {}).get("client")
            peer = f"{client[0]}:{client[1]}" if client else None
            count = self._sio.refusals.refused("unauthorized", "authentication failed", peer,
                                               eio_sid=eio_sid, reason=error)  # fmt: skip
            if count is not None:
                reason = str(error) if count == 1 else f"{error} (x{count} from this address)"
                self._access.refused(eio_sid, role, reason, peer)
            self._metrics.connection_refused(ErrorCode.UNAUTHORIZED)
            message = str(error) or "Authentication failed"
            # The shape python-socketio gives a ConnectionRefusedError(message, payload).
            payload = to_wire(ErrorPayload(code=ErrorCode.UNAUTHORIZED, message=message))
            return {"message": message, "data": payload}

        return screen
