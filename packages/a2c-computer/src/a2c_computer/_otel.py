"""OpenTelemetry tracing of tool calls (extra ``a2c-computer[otel]``).

Off unless :func:`configure_from_env` turned it on at start-up (the extra is installed and
the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set); while off the link only reads
:data:`STATE.active`. When on, a ``client:tool_call`` that carries W3C trace context (the
``a2c_trace`` extension field) gets the span ``a2c.computer.tool_call`` (child of the
Server's) and inside it the MCP client span ``mcp.tools/call``, whose context goes into the
MCP request as ``params._meta.traceparent`` / ``tracestate`` (the MCP convention), so an
MCP server that instruments itself joins the trace. The call's one-line log gains its
``trace_id``. Attributes: office, tool, Computer, MCP server, outcome/code; never
arguments or results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from a2c_protocol import (
    CallToolResult,
    ToolCallReq,
    install_tracer_provider,
    shutdown_tracer_provider,
)

__all__ = ["STATE", "CallTrace", "configure_from_env", "current_trace_id", "traced_call"]


class _State:
    active = False


STATE = _State()


def configure_from_env(service_name: str = "a2c-computer") -> bool:
    """Install an OTLP-exporting tracer provider when the extra and ``OTEL_*`` say so."""
    if not install_tracer_provider(service_name):
        return False
    STATE.active = True
    return True


def shutdown() -> None:
    if STATE.active:
        shutdown_tracer_provider()


def current_trace_id() -> str | None:
    """The trace id (32 hex digits) of the current span while tracing is on, else None."""
    if not STATE.active:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


class CallTrace:
    """What the link needs of a traced call: the MCP ``_meta`` and the outcome setter."""

    def __init__(self, spans: tuple[Any, ...], mcp_meta: dict[str, str]) -> None:
        self._spans = spans
        self.mcp_meta = mcp_meta

    def finished(self, result: CallToolResult, mcp_server: str | None) -> None:
        from opentelemetry.trace import Status, StatusCode

        meta = result.meta or {}
        code = meta.get("error_code") if result.is_error else None
        for span in self._spans:
            if mcp_server is not None:
                span.set_attribute("a2c.mcp_server", mcp_server)
            span.set_attribute("a2c.outcome", "error" if result.is_error else "ok")
            if isinstance(code, int):
                span.set_attribute("a2c.error_code", code)
            if result.is_error:
                span.set_status(Status(StatusCode.ERROR))


@contextlib.contextmanager
def traced_call(req: ToolCallReq, computer: str, office: str | None) -> Iterator[CallTrace]:
    """The Computer's span and the MCP client span around one call (tracing must be on)."""
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanKind

    carrier = req.a2c_trace or {}
    parent = propagate.extract(
        {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate")}
    )
    attributes: dict[str, Any] = {"a2c.computer": computer, "a2c.tool": req.tool_name}
    if office is not None:
        attributes["a2c.office"] = office
    tracer = trace.get_tracer("a2c_computer")
    with (
        tracer.start_as_current_span(
            "a2c.computer.tool_call", context=parent, kind=SpanKind.SERVER, attributes=attributes
        ) as outer,
        tracer.start_as_current_span(
            "mcp.tools/call", kind=SpanKind.CLIENT, attributes=attributes
        ) as inner,
    ):
        meta: dict[str, str] = {}
        propagate.inject(meta)
        meta = {k: v for k, v in meta.items() if k in ("traceparent", "tracestate")}
        yield CallTrace((outer, inner), meta)
