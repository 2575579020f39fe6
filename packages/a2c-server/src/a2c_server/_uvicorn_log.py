"""uvicorn's log records about a client's mistake, left to the Server's own WARNING.

uvicorn's WebSocket protocol (``websockets-sansio``, the default) logs a text frame that
is not UTF-8 with ``logger.exception("Invalid UTF-8 sequence received from client.")`` on
``uvicorn.error``: an ERROR with a traceback, and no peer, for something a client did. It
then closes the connection with 1007 and tells the app (``websocket.disconnect``, code
1007), where :class:`a2c_server._oversize.OversizeWatch` logs one WARNING with the peer.
:func:`quiet_client_faults` takes uvicorn's record out (its traceback goes to DEBUG on
``a2c_server.guard``). The message text is uvicorn's (0.3x-0.5x); a guard test pins it.
"""

from __future__ import annotations

import logging
from typing import Final

__all__ = ["CLIENT_FAULTS", "quiet_client_faults"]

#: Beginnings of uvicorn ERROR messages that only ever report a client's mistake.
CLIENT_FAULTS: Final = ("Invalid UTF-8 sequence received from client",)

_debug = logging.getLogger("a2c_server.guard")


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
