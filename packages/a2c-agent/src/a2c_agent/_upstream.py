"""The Agent's fence over library internals: the one module that touches them.

Checked against python-socketio 5.18.1 (the pin's upper bound in pyproject.toml stops there;
``tools/check_latest.sh`` says when a newer release can be let in), opentelemetry-api
1.45.2 (no upper bound: :func:`tracer_provider_unset` falls back to the public API when the
name is gone) and mcp 2.3.0 (the ``mcp`` extra's pin: :func:`quiet_host_departures` reads
the messages of its streamable HTTP transport's log). Every name used here is pinned by
``tests/test_agent_upstream_guard.py``; ``tools/check_upstream.py`` (CI) fails when another
module of the package reaches an internal.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # the CLI entry imports this fence (tracing) but must not load socketio
    import socketio

__all__ = [
    "MCP_TEARDOWN_MESSAGES",
    "namespace_refused",
    "quiet_host_departures",
    "tracer_provider_unset",
]

_MISSING = object()

#: The ``logger.exception`` messages of ``mcp.server.streamable_http`` (mcp 2.3) that a host
#: leaving reaches: its session is torn down (a DELETE, its connection gone) while a
#: message of it is still being handled, and the write meets a closed stream.
MCP_TEARDOWN_MESSAGES: Final = (
    "Error handling POST request",
    "Error in standalone SSE writer",
    "SSE response error",
)
_MCP_HTTP_LOGGER: Final = "mcp.server.streamable_http"


def namespace_refused(sio: socketio.AsyncClient) -> bool:
    """Whether the last ``connect`` failed because the Server refused a namespace.

    python-socketio records the refused namespaces in the undocumented ``failed_namespaces``
    list but raises the same ``ConnectionError`` as for a dead host; the Agent needs the
    difference to say "refused" (no retry) rather than "unreachable".
    """
    return bool(getattr(sio, "failed_namespaces", None))


def tracer_provider_unset(trace: ModuleType) -> bool | None:
    """Whether no global tracer provider was set yet; None when that cannot be told.

    ``opentelemetry.trace.get_tracer_provider()`` answers the same question publicly, but
    while nothing is set it looks ``OTEL_PYTHON_TRACER_PROVIDER`` up in ``os.environ`` on
    every call (a failed lookup raises and catches a KeyError): about a third of what the
    Agent added to a tool call. The module global it keeps the provider in,
    ``_TRACER_PROVIDER``, tells it for the price of an attribute read.
    """
    provider = getattr(trace, "_TRACER_PROVIDER", _MISSING)
    return None if provider is _MISSING else provider is None


class _HostDepartures(logging.Filter):
    """Drops mcp's ERROR for a write into a session its host already ended (see
    :func:`quiet_host_departures`); every other record passes unchanged."""

    def __init__(self, gone: tuple[type[BaseException], ...]) -> None:
        super().__init__()
        self._gone = gone

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg not in MCP_TEARDOWN_MESSAGES or not record.exc_info:
            return True
        error = record.exc_info[1]
        if not isinstance(error, self._gone):
            return True
        logging.getLogger("a2c_agent.bridge").debug(
            "a host left while its message was handled (%s: %s)", record.msg, type(error).__name__
        )
        return False


def quiet_host_departures() -> None:
    """Stop mcp's streamable HTTP transport from logging a host's normal departure as an
    ERROR with a traceback; idempotent.

    When a host cancels a call and closes its session at once (what mcp's own client does),
    the notification it posted is answered 202, then written into the session the DELETE
    just closed: mcp logs ``Error handling POST request`` with ``anyio.ClosedResourceError``
    (and tries to answer 500 on the finished response, which the bridge's ASGI layer
    absorbs). Nothing is lost: the host is gone. Only those records, matched by message
    and by a closed or broken stream as the cause, are dropped (a DEBUG line remains).
    """
    import anyio

    target = logging.getLogger(_MCP_HTTP_LOGGER)
    if not any(isinstance(f, _HostDepartures) for f in target.filters):
        target.addFilter(_HostDepartures((anyio.ClosedResourceError, anyio.BrokenResourceError)))
