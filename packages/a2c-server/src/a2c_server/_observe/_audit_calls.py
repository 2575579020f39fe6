"""Per-call audit records: opt-in (``--audit-calls``), on a logger and sink of their own.

The default audit trail (:mod:`a2c_server._observe._audit`) records who connected, joined, was
refused or expired: events a deployment sees a few of per session. A forwarded
``client:tool_call`` happens thousands of times a second on a busy relay, and one INFO line
each was most of the relay's CPU at the default log level, so a record per call is written
only when ``audit_calls`` is set: ``-`` sends the records to the log stream, a path appends
them to that file (same format and redaction as the log) and keeps them off the console.

Records go to the logger ``a2c_server.audit.calls`` at INFO whatever ``--log-level`` says
(asking for them is the opt-in), and count in ``a2c_server_audit_events{event="route",
outcome="ok"}`` as before.
"""

from __future__ import annotations

import logging
from typing import Final

__all__ = ["CALLS_LOGGER", "STREAM", "configure_call_audit"]

CALLS_LOGGER: Final = "a2c_server.audit.calls"
#: The ``audit_calls`` value that sends per-call records to the log stream.
STREAM: Final = "-"


def configure_call_audit(
    audit_calls: str | None, formatter: logging.Formatter, redacting: logging.Filter
) -> None:
    """Point ``a2c_server.audit.calls`` at the sink ``audit_calls`` names (None: off)."""
    logger = logging.getLogger(CALLS_LOGGER)
    for handler in [h for h in logger.handlers if getattr(h, "_a2c_owned", False)]:
        logger.removeHandler(handler)
        handler.close()
    logger.propagate = True
    if audit_calls is None:
        logger.setLevel(logging.NOTSET)
        return
    logger.setLevel(logging.INFO)
    if audit_calls == STREAM:
        return
    sink = logging.FileHandler(audit_calls, encoding="utf-8")
    sink.setFormatter(formatter)
    sink.addFilter(redacting)
    sink._a2c_owned = True  # type: ignore[attr-defined]
    logger.addHandler(sink)
    logger.propagate = False  # the file is the sink: keep the console readable
