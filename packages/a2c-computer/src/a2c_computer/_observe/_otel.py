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
import time
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
    """What the link needs of a traced call: the MCP request's span and the outcome setter.

    The MCP client span starts only when the MCP request is sent (:meth:`mcp_request`): a
    call the Computer answers itself (unknown or forbidden tool, refused confirmation) has
    the Computer's span alone.
    """

    def __init__(self, outer: Any, tracer: Any, attributes: dict[str, Any]) -> None:
        self._outer = outer
        self._tracer = tracer
        self._attributes = attributes
        self._inner: Any = None
        self._inner_end: int | None = None

    @contextlib.contextmanager
    def mcp_request(self) -> Iterator[dict[str, Any]]:
        """The ``mcp.tools/call`` span around the MCP request; yields its ``_meta`` keys."""
        from opentelemetry import propagate
        from opentelemetry.trace import SpanKind

        # Ended by finished(), with this block's end time, so the outcome is on it.
        with self._tracer.start_as_current_span(
            "mcp.tools/call", kind=SpanKind.CLIENT, attributes=self._attributes,
            end_on_exit=False,
        ) as inner:  # fmt: skip
            self._inner = inner
            meta: dict[str, str] = {}
            propagate.inject(meta)
            try:
                yield {k: v for k, v in meta.items() if k in ("traceparent", "tracestate")}
            finally:
                self._inner_end = time.time_ns()

    def finished(self, result: CallToolResult, mcp_server: str | None) -> None:
        from opentelemetry.trace import Status, StatusCode

        meta = result.meta or {}
        code = meta.get("error_code") if result.is_error else None
        spans = (self._outer,) if self._inner is None else (self._outer, self._inner)
        for span in spans:
            if mcp_server is not None:
                span.set_attribute("a2c.mcp_server", mcp_server)
            span.set_attribute("a2c.outcome", "error" if result.is_error else "ok")
            if isinstance(code, int):
                span.set_attribute("a2c.error_code", int(code))
            if result.is_error:
                span.set_status(Status(StatusCode.ERROR))
        self.close()

    def close(self) -> None:
        """End the MCP span if one started and is not ended yet (idempotent)."""
        inner, self._inner = self._inner, None
        if inner is not None and inner.is_recording():
            inner.end(end_time=self._inner_end)


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
    with tracer.start_as_current_span(
        "a2c.computer.tool_call", context=parent, kind=SpanKind.SERVER, attributes=attributes
    ) as outer:
        call = CallTrace(outer, tracer, attributes)
        try:
            yield call
        finally:
            call.close()
