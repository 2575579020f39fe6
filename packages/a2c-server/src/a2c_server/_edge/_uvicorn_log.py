"""uvicorn's log records about a client's mistake, left to the Server's own WARNING.

uvicorn's WebSocket protocol (``websockets-sansio``, the default) logs a text frame that
is not UTF-8 with ``logger.exception("Invalid UTF-8 sequence received from client.")`` on
``uvicorn.error``: an ERROR with a traceback, and no peer, for something a client did. It
then closes the connection with 1007 and tells the app (``websocket.disconnect``, code
1007), where :class:`a2c_server._edge._oversize.OversizeWatch` logs one WARNING with the peer.
:func:`quiet_client_faults` takes uvicorn's record out (its traceback goes to DEBUG on
``a2c_server.guard``). The message text is uvicorn's (0.3x-0.5x); a guard test pins it.

When that invalid text frame and a close frame arrive in one read, the close is parsed
first, and uvicorn's ``send_close(1007)`` raises ``websockets``' ``InvalidState`` out of
``data_received``: the event loop logs ``Fatal error: protocol.data_received() call
failed.`` at ERROR with both tracebacks and drops the connection. :func:`guard_loop`
installs an event-loop exception handler that turns exactly that case into one WARNING
with the peer and hands everything else to the previous handler.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from a2c_server._observe._logs import log

__all__ = ["CLIENT_FAULTS", "guard_loop", "quiet_client_faults", "unguard_loop"]

Handler = Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object]

#: Beginnings of uvicorn ERROR messages that only ever report a client's mistake.
CLIENT_FAULTS: Final = ("Invalid UTF-8 sequence received from client",)

_debug = logging.getLogger("a2c_server.guard")
_log = logging.getLogger("a2c_server.limits")


class _ClientFaults(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR or not record.getMessage().startswith(CLIENT_FAULTS):
            return True
        _debug.debug("uvicorn: %s", record.getMessage(), exc_info=record.exc_info)
        return False


_FILTER: Final = _ClientFaults()


def quiet_client_faults() -> None:
    """Filter uvicorn's client-fault ERRORs out of ``uvicorn.error`` (idempotent)."""
    logger = logging.getLogger("uvicorn.error")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def _closing_race(context: dict[str, Any]) -> bool:
    """uvicorn's WebSocket protocol failed to answer an invalid text frame with 1007."""
    exc = context.get("exception")
    protocol = context.get("protocol")
    return (
        type(exc).__name__ == "InvalidState"
        and type(exc).__module__.startswith("websockets")
        and isinstance(getattr(exc, "__context__", None), UnicodeDecodeError)
        and type(protocol).__module__.startswith("uvicorn.protocols.websockets")
    )


class _LoopGuard:
    def __init__(self, previous: Handler | None) -> None:
        self.previous = previous

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not _closing_race(context):
            if self.previous is not None:
                self.previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        client = getattr(context.get("protocol"), "client", None)
        log(_log, logging.WARNING,
            "WebSocket dropped: a text frame was not valid UTF-8 (sent with a close frame)",
            peer=f"{client[0]}:{client[1]}" if client else "?")  # fmt: skip
        _debug.debug("uvicorn: %s", context.get("message"), exc_info=context.get("exception"))


def guard_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Install the exception handler described in the module doc (idempotent)."""
    current = loop.get_exception_handler()
    if not isinstance(current, _LoopGuard):
        loop.set_exception_handler(_LoopGuard(current))


def unguard_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Put back the handler :func:`guard_loop` found."""
    current = loop.get_exception_handler()
    if isinstance(current, _LoopGuard):
        loop.set_exception_handler(current.previous)
