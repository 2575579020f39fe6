"""The Computer's logs: redaction of resolved secrets, formats, quiet libraries, call lines.

Rules:

* every resolved ``${input:...}`` string value (and the ``auth.token`` the command line
  sends) is registered in :data:`SECRETS`; once :func:`configure_logging` has run, every
  record of every logger (ours, httpx2, mcp, uvicorn...) is redacted before it is formatted;
* ``httpx2`` / ``httpcore2`` (the HTTP client of ``mcp`` 2 and ours) log each request at
  INFO: they stay at WARNING unless ``-v``;
* one INFO line per tool call: agent, tool, MCP server, duration, outcome;
* an MCP server's ``notifications/message`` is logged under ``a2c_computer.mcp_log.<server>``
  at the level it names (notice → INFO, alert/emergency → CRITICAL);
* the mcp library's own ERROR-with-traceback records about a lost HTTP transport (an SSE or
  Streamable HTTP server that died) are dropped, or kept at DEBUG with ``-v``: the Computer
  logs that loss itself as one WARNING line ("MCP server X went away: …").
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any, Final, Literal

import anyio
import httpx2

from a2c_protocol import JsonLogFormatter, RedactingFilter, SecretRedactor, is_cancelled

from ._otel import current_trace_id

__all__ = [
    "SECRETS",
    "TransportNoiseFilter",
    "call_outcome",
    "configure_logging",
    "forward_mcp_log",
    "log_tool_call",
    "redacting_filter",
    "register_secret",
]

#: Secrets of this process (resolved inputs, the Server token): masked in every log line.
SECRETS: Final = SecretRedactor()

_TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_CHATTY: Final = ("httpx2", "httpcore2")
_MCP_LEVELS: Final[Mapping[str, int]] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

_MCP_CLIENT: Final = ("mcp.client.sse", "mcp.client.streamable_http")
_TRANSPORT_LOSS: Final = (
    httpx2.TransportError,
    httpx2.HTTPStatusError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
)

_calls = logging.getLogger("a2c_computer.calls")
_FILTER: Final = RedactingFilter(SECRETS)


def register_secret(value: object) -> None:
    """Mask ``value`` in every log line from now on (non-strings and short values: no-op)."""
    SECRETS.add(value)


def redacting_filter() -> RedactingFilter:
    """A filter masking this process's resolved inputs; add it to your own log handlers.

    ``a2c-computer`` installs it itself. An application embedding :class:`Computer` with
    its own logging setup adds it to each handler::

        handler.addFilter(a2c_computer.redacting_filter())
    """
    return _FILTER


class TransportNoiseFilter(logging.Filter):
    """Drops (or with ``verbose`` demotes to DEBUG) the mcp client's tracebacks of a lost
    HTTP transport; the Computer's own WARNING line reports the loss."""

    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(_MCP_CLIENT) or record.levelno < logging.ERROR:
            return True
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, _TRANSPORT_LOSS):
            return True
        if not self.verbose:
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def configure_logging(level: int, *, verbose: bool, fmt: Literal["text", "json"] = "text") -> None:
    """One stderr handler on the root logger, with the redacting filter, in ``fmt``."""
    redacting = redacting_filter()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter() if fmt == "json" else logging.Formatter(_TEXT_FORMAT))
    # Before the redaction, which renders the traceback and clears exc_info.
    handler.addFilter(TransportNoiseFilter(verbose))
    handler.addFilter(redacting)
    root = logging.getLogger()
    # Replace our own earlier handler (a second call), keep anyone else's (e.g. a test's).
    root.handlers[:] = [h for h in root.handlers if not getattr(h, "_a2c_owned", False)]
    handler._a2c_owned = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
    # Handlers installed by anyone else (a library, a test) get the filter too.
    for logger in [root, *logging.Logger.manager.loggerDict.values()]:
        for other in getattr(logger, "handlers", ()):
            if redacting not in other.filters:
                other.addFilter(redacting)


def call_outcome(is_error: bool, meta: Mapping[str, Any] | None) -> str:
    """``ok``, ``cancelled`` or ``error <code>`` for the call line."""
    if not is_error:
        return "ok"
    meta = meta or {}
    if is_cancelled({"meta": meta}):
        return "cancelled"
    return f"error {meta.get('error_code', '?')}"


def log_tool_call(
    *, agent: str | None, tool: str, server: str, duration: float, outcome: str, req_id: str
) -> None:
    """The one INFO line of a finished tool call (fields also as ``extra`` for JSON logs).

    With tracing on, the line ends with the call's ``trace_id``.
    """
    fields: dict[str, Any] = {
        "agent": agent,
        "tool": tool,
        "mcp_server": server,
        "duration_s": round(duration, 6),
        "outcome": outcome,
        "req_id": req_id,
    }
    trace_id = current_trace_id()
    if trace_id is None:
        _calls.info("tool call %s on %s by %s: %s in %.3f s", tool, server, agent or "-",
                    outcome, duration, extra={"a2c": fields})  # fmt: skip
        return
    fields["trace_id"] = trace_id
    _calls.info("tool call %s on %s by %s: %s in %.3f s trace_id=%s", tool, server,
                agent or "-", outcome, duration, trace_id, extra={"a2c": fields})  # fmt: skip


def forward_mcp_log(server: str, level: str, data: Any, origin: str | None) -> None:
    """Log an MCP server's ``notifications/message`` at its own level."""
    target = logging.getLogger(f"a2c_computer.mcp_log.{server}")
    number = _MCP_LEVELS.get(str(level).lower(), logging.INFO)
    if not target.isEnabledFor(number):
        return
    text = data if isinstance(data, str) else repr(data)
    target.log(
        number,
        "%s%s",
        f"[{origin}] " if origin else "",
        text,
        extra={"a2c": {"mcp_server": server, "mcp_level": level}},
    )
