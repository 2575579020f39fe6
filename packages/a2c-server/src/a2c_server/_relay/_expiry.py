"""Token expiry with tool calls in flight: the session stays until its calls have ended.

A short-lived token (five-minute OIDC tokens are common) must not cut a longer tool call:
when a session's token expires while it has ``client:tool_call`` requests in flight (as
the calling Agent, or as the Computer running them), the Server keeps it connected until
those calls have ended, at most ``--max-tool-timeout`` + ``--tool-call-buffer`` (no call
of its can legitimately last longer). Meanwhile every NEW ``client:*`` request of that
session is refused at once with a 401, and NEW calls to that Computer with a "retry"
error, so the window only drains. Then the session is disconnected as before, after the
extension notice ``notify:a2c_session_expired``, and its client reconnects with its
renewed token.

Per call this costs the forwarding hot path one truthiness check of :attr:`sids` (an
empty set but while a session is in its window).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Final

from a2c_protocol import ErrorCode, ExtensionEvent
from a2c_server._observe._logs import log
from a2c_server._state._rules import Member, Refusal

__all__ = [
    "A2C_SESSION_EXPIRED",
    "EXPIRED_MESSAGE",
    "ExpiryWindow",
    "expired_notice",
    "expiry_refusal",
    "shutdown_notice",
]

_log = logging.getLogger("a2c_server.auth")

#: The extension event sent to a session just before it is cut for token expiry.
A2C_SESSION_EXPIRED: Final = ExtensionEvent.NOTIFY_SESSION_EXPIRED.value
#: The 401 message of a request from a session in its expiry window.
EXPIRED_MESSAGE: Final = "token expired: reconnect with a fresh token"
#: How often the window looks whether the session's calls have ended. A poll (only while
#: a window is open) keeps every per-call path free of expiry bookkeeping.
_POLL: Final = 0.1


def expired_notice() -> dict[str, str]:
    """The payload of :data:`A2C_SESSION_EXPIRED`."""
    return {"reason": "token expired"}


def shutdown_notice() -> dict[str, str]:
    """The payload of :data:`A2C_SESSION_EXPIRED` sent to every session of a node that
    begins its graceful shutdown (its connections close after the drain)."""
    return {"reason": "server shutting down"}


def expiry_refusal(sids: set[str], sid: str, target: Member | None) -> Refusal | None:
    """Why a ``client:*`` request is refused because of an open expiry window, or None.

    ``sid`` is the asking session; ``target`` the Computer asked (None: not found).
    """
    if sid in sids:
        return Refusal(code=ErrorCode.UNAUTHORIZED, message=EXPIRED_MESSAGE,
                       details={"reason": "token_expired"})  # fmt: skip
    if target is not None and target.sid in sids:
        return Refusal(
            code=ErrorCode.INTERNAL_ERROR,
            message=f"Computer {target.name!r} is reconnecting (its token expired): "
            "retry in a moment (the request was not sent)",
            details={"computer_name": target.name or "", "reason": "computer_reconnecting"},
        )
    return None


class ExpiryWindow:
    """The sessions whose token expired while their calls still run (see the module)."""

    def __init__(self, busy: Callable[[str], bool], bound: float) -> None:
        self._busy = busy
        self._bound = bound
        #: Sessions in their window; read (truthiness first) by the forwarding path.
        self.sids: set[str] = set()

    async def drain(self, sid: str, connected: Callable[[str], bool]) -> None:
        """Return once ``sid`` has no call in flight (at once if it has none), or after the
        bound, or when the session left by itself; new requests are refused meanwhile."""
        if not self._busy(sid):
            return
        self.sids.add(sid)
        log(_log, logging.INFO, "token expired with tool calls in flight: refusing new "
            "requests, disconnecting once they have ended", sid=sid,
            at_most=self._bound)  # fmt: skip
        deadline = time.monotonic() + self._bound
        try:
            while self._busy(sid) and connected(sid) and time.monotonic() < deadline:
                await asyncio.sleep(_POLL)
        finally:
            self.sids.discard(sid)
