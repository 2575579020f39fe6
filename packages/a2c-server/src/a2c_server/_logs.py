"""Structured logging: a message plus key=value context (sid, name, office, req_id…).

Fields are appended to the text so they survive any formatter, and attached as
``record.a2c`` (a dict) for structured handlers. Callers never pass tokens or auth
objects here.
"""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["UTCFormatter", "configure_logging", "log"]


def _render(value: Any) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in '"=' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def log(logger: logging.Logger, level: int, message: str, **fields: Any) -> None:
    """Log ``message`` with ``fields`` (None values are left out)."""
    if not logger.isEnabledFor(level):
        return
    context = {k: v for k, v in fields.items() if v is not None}
    suffix = " ".join(f"{k}={_render(v)}" for k, v in context.items())
    logger.log(level, f"{message} {suffix}" if suffix else message, extra={"a2c": context})


class UTCFormatter(logging.Formatter):
    """ISO 8601 UTC timestamps, as the security-logging guidance asks."""

    @staticmethod
    def converter(secs: float | None = None, /) -> time.struct_time:
        return time.gmtime(secs)

    def __init__(self) -> None:
        super().__init__(
            "%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s %(message)s",
            datefmt="%Y-%m-%dT%H:%M:%S",
        )


def configure_logging(level: str) -> None:
    """Send ``a2c_server`` logs to stderr at ``level`` (used by the command line)."""
    handler = logging.StreamHandler()
    handler.setFormatter(UTCFormatter())
    root = logging.getLogger("a2c_server")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
