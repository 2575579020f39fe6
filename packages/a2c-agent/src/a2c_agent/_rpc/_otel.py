"""OpenTelemetry tracing of tool calls (extra ``a2c-agent[otel]``); absent, nothing happens.

The Agent uses the application's tracer provider (the library convention: configure the
SDK in your program, or let :func:`configure_from_env` do it from the standard ``OTEL_*``
variables, as the ``a2c-agent`` command does). A call gets a ``a2c.tool_call`` span, and
its W3C trace context travels in the request's ``a2c_trace`` extension field, so the
Server, the Computer and the MCP server join the same trace. Attributes name the office,
tool and Computer and the outcome, never arguments or results.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from a2c_agent._upstream import tracer_provider_unset
from a2c_protocol import install_tracer_provider, shutdown_tracer_provider

trace: Any
try:
    from opentelemetry import propagate
    from opentelemetry import trace as _trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    trace = _trace
    _IDLE_PROVIDERS: tuple[type, ...] = (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)
    _PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
except ImportError:  # pragma: no cover - the extra is installed in the dev environment
    trace = None

__all__ = ["AVAILABLE", "CallSpan", "call_span", "configure_from_env", "tracing_idle"]

AVAILABLE = trace is not None


class CallSpan:
    """The span of one call, or a stand-in that does nothing."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def carrier(self) -> dict[str, str] | None:
        """``{"traceparent", "tracestate"?}`` for the request, or None (nothing to send)."""
        if self._span is None or not self._span.get_span_context().is_valid:
            return None
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        return {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate")} or None

    def outcome(self, outcome: str, code: int | None = None) -> None:
        if self._span is None:
            return
        self._span.set_attribute("a2c.outcome", outcome)
        if code is not None:
            self._span.set_attribute("a2c.error_code", code)
            self._span.set_status(Status(StatusCode.ERROR))


def tracing_idle() -> bool:
    """True when a span would be neither recorded nor propagated: skip it altogether.

    That is the case without the extra, or with no tracer provider installed (the API's
    proxy or no-op provider) and no valid span current (a no-op tracer would otherwise
    hand the current span's context on). Creating the span anyway cost about 5 % of a
    call's CPU.

    While no provider is set, the API's own check reads the environment on every call;
    the fence tells "none set" cheaply instead. A provider named by
    ``OTEL_PYTHON_TRACER_PROVIDER`` is honoured when the variable is set at import time
    (the API loads it on the first public check), as the standard variables are.
    """
    if trace is None:
        return True
    public = _PROVIDER_FROM_ENV or tracer_provider_unset(trace) is not True
    if public and not isinstance(trace.get_tracer_provider(), _IDLE_PROVIDERS):
        return False
    return not trace.get_current_span().get_span_context().is_valid


@contextlib.contextmanager
def call_span(office: str | None, computer: str, tool: str) -> Iterator[CallSpan]:
    """A ``a2c.tool_call`` span around the block when tracing is available."""
    if trace is None:
        yield CallSpan()
        return
    tracer = trace.get_tracer("a2c_agent")
    attributes = {"a2c.computer": computer, "a2c.tool": tool, "a2c.role": "agent"}
    if office is not None:
        attributes["a2c.office"] = office
    with tracer.start_as_current_span(
        "a2c.tool_call", kind=SpanKind.CLIENT, attributes=attributes
    ) as span:
        yield CallSpan(span)


def configure_from_env(service_name: str = "a2c-agent") -> bool:
    """Install an SDK tracer provider exporting over OTLP when ``OTEL_*`` asks for it.

    Only when the extra is installed and ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set and ``OTEL_TRACES_EXPORTER`` is not
    ``none``; ``OTEL_SERVICE_NAME`` names the service. Returns whether tracing is on.
    """
    return trace is not None and install_tracer_provider(service_name)


def shutdown() -> None:
    """Flush what is queued (a command's last spans) before the process ends."""
    if trace is not None:
        shutdown_tracer_provider()
