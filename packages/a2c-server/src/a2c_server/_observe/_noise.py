"""Rate-limited WARNING lines for things clients cause.

A hostile or broken client can send the same bad packet thousands of times a second; each
one deserves a log line naming the cause, but not thousands of them. :class:`NoiseLog`
writes the first occurrence of each *kind* of problem at once and then at most one line per
``interval`` for that kind, counting what it left out (``suppressed=N``). Kinds are fixed
strings chosen by the Server, never client text, so the table stays small.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ._logs import log

__all__ = ["NoiseLog", "library_logger"]

_MAX_KINDS = 256  # kinds are Server-chosen constants; this only guards a programming error


class NoiseLog:
    """One WARNING per kind of client-caused problem per ``interval`` seconds."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval = interval
        self._clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def warning(self, kind: str, message: str, **fields: Any) -> bool:
        """Log ``message`` unless ``kind`` was logged less than ``interval`` ago.

        Returns whether a line was written. Never logs a traceback.
        """
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self._interval:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return False
        if last is None and len(self._last) >= _MAX_KINDS:
            self._last.clear()
            self._suppressed.clear()
        self._last[kind] = now
        suppressed = self._suppressed.pop(kind, 0) or None
        log(self._logger, logging.WARNING, message, kind=kind, suppressed=suppressed, **fields)
        return True


class _Reroute(logging.Filter):
    def __init__(self, library: str, noise: NoiseLog) -> None:
        super().__init__()
        self._library = library
        self._noise = noise

    def filter(self, record: logging.LogRecord) -> bool:
        detail = record.getMessage()
        self._noise.warning(
            f"{self._library} {record.levelname.lower()}",
            f"{self._library} refused a client request",
            detail=detail if len(detail) <= 160 else detail[:160] + "…",
            error=record.exc_info[1].__class__.__name__ if record.exc_info else None,
        )
        if record.exc_info:
            _debug.debug("%s traceback", self._library, exc_info=record.exc_info)
        return False  # rerouted: never reaches a handler as an ERROR with a traceback


_debug = logging.getLogger("a2c_server.guard")


def library_logger(library: str, noise: NoiseLog) -> logging.Logger:
    """A logger for python-engineio / python-socketio that speaks only through ``noise``.

    The libraries log what clients cause (a bad session id, an undecodable payload) at
    ERROR, often with a traceback. This logger is outside the logging tree (so no handler
    sees those records directly), passes WARNING and above, and turns each into one
    rate-limited WARNING; the traceback, if any, goes to DEBUG.
    """
    logger = logging.Logger(f"a2c_server.{library}", logging.WARNING)
    logger.addFilter(_Reroute(library, noise))
    return logger
