"""uvicorn's per-request INFO lines, at most one per kind and client address per interval.

uvicorn logs every HTTP request (``uvicorn.access``) and every WebSocket (``connection
open``, ``... [accepted]`` on ``uvicorn.error``) at INFO. A connect flood is several
requests per attempt, so even with the Server's own refusals aggregated those lines grew
the log by ~150 bytes a request. :class:`RepeatedLines` lets the first line of a kind (the
message template, the client's host and the status) through and then one per
``interval``, the later one carrying ``suppressed=N``. Other levels always pass.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

__all__ = ["RepeatedLines", "quiet_repeated_lines"]

_MAX_KEYS: Final = 4096
_LOGGERS: Final = ("uvicorn.access", "uvicorn.error")


class RepeatedLines(logging.Filter):
    """Rate-limits INFO records per (template, client host, status)."""

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._interval = interval
        self._clock = clock
        self._last: dict[tuple[object, ...], float] = {}
        self._suppressed: dict[tuple[object, ...], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True  # warnings, and DEBUG/TRACE (asked for: --log-level, --log-protocol)
        args = record.args if isinstance(record.args, tuple) else ()
        client = args[0] if args and isinstance(args[0], str) else "?"
        host = client.rpartition(":")[0] or client
        status = args[4] if len(args) > 4 else None
        key = (record.msg, host, status)
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self._interval:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        if last is None and len(self._last) >= _MAX_KEYS:
            self._last.clear()
            self._suppressed.clear()
        self._last[key] = now
        suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            record.msg = f"{record.getMessage()} suppressed={suppressed}"
            record.args = ()
        return True


_FILTER: Final = RepeatedLines()


def quiet_repeated_lines() -> None:
    """Install :class:`RepeatedLines` on uvicorn's loggers (idempotent)."""
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
