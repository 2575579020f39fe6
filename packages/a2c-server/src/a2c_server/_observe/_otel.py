"""OpenTelemetry tracing of relayed tool calls (extra ``a2c-server[otel]``).

Off unless :func:`configure_from_env` turned it on at start-up (the extra is installed and
the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set); while off, the relay's hot path only
reads :data:`STATE.active`. When on, a ``client:tool_call`` whose request carries W3C
trace context (the ``a2c_trace`` extension field) gets a span on each node it crosses:
``a2c.server.forward`` on the Agent's node with its CLIENT child
``a2c.server.call_computer`` (the hop to the Computer), ``a2c.server.relay`` on the
Computer's node when that is another one; each replaces ``a2c_trace`` with its own
context, so the Computer's span is a child of the hop. Attributes: office, tool,
Computer, node, outcome/code; never arguments or results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from a2c_protocol import install_tracer_provider, shutdown_tracer_provider

from ._outcome import call_outcome

__all__ = ["STATE", "ForwardSpan", "configure_from_env", "forward_span", "relay_span"]

TRACE_KEY = "a2c_trace"


class _State:
    active = False
    node: str | None = None


STATE = _State()


def configure_from_env(service_name: str = "a2c-server", node: str | None = None) -> bool:
    """Install an OTLP-exporting tracer provider when the extra and ``OTEL_*`` say so."""
    if not install_tracer_provider(service_name):
        return False
    STATE.active = True
    STATE.node = node
    return True


def shutdown() -> None:
    if STATE.active:
        shutdown_tracer_provider()


class ForwardSpan:
    """The outcome side of a forward span (and of its CLIENT span towards the Computer)."""

    def __init__(self, span: Any, hop: Any = None) -> None:
        self._span = span
        self._hop = hop

    def answered(self, answer: Any) -> None:
        for span in (self._span, self._hop):
            if span is not None:
                _outcome(span, answer)


def _outcome(span: Any, answer: Any) -> None:
    from opentelemetry.trace import Status, StatusCode

    kind, code = call_outcome(answer)
    if kind not in ("error", "tool error"):
        span.set_attribute("a2c.outcome", "ok")
        return
    span.set_attribute("a2c.outcome", "error")
    span.set_attribute("a2c.error_code", code if code is not None else 0)
    span.set_status(Status(StatusCode.ERROR))


def _parent(carrier: Any) -> Any:
    from opentelemetry import propagate

    if not isinstance(carrier, dict):
        return None
    clean = {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate")}
    return propagate.extract({k: v for k, v in clean.items() if isinstance(v, str)})


def _carrier() -> dict[str, str]:
    from opentelemetry import propagate

    out: dict[str, str] = {}
    propagate.inject(out)
    return {k: v for k, v in out.items() if k in ("traceparent", "tracestate")}


@contextlib.contextmanager
def forward_span(
    data: dict[str, Any], office: str | None, computer: str, tool: str
) -> Iterator[tuple[dict[str, Any], ForwardSpan]]:
    """``a2c.server.forward`` as a child of the request's context; yields the data to send."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    attributes: dict[str, Any] = {"a2c.computer": computer, "a2c.tool": tool}
    attributes["a2c.role"] = "server"
    if office is not None:
        attributes["a2c.office"] = office
    if STATE.node is not None:
        attributes["a2c.node"] = STATE.node
    tracer = trace.get_tracer("a2c_server")
    parent = _parent(data.get(TRACE_KEY))
    with (
        tracer.start_as_current_span(
            "a2c.server.forward", context=parent, kind=SpanKind.SERVER, attributes=attributes
        ) as span,
        # The hop to the Computer (or to its node) is a request of ours: a CLIENT span, so
        # trace views show the Server calling the Computer, whose span is its child.
        tracer.start_as_current_span(
            "a2c.server.call_computer", kind=SpanKind.CLIENT, attributes=attributes
        ) as hop,
    ):
        yield {**data, TRACE_KEY: _carrier()}, ForwardSpan(span, hop)


def relay_span(data: Any) -> Any:
    """On the Computer's node: a short ``a2c.server.relay`` span; the data it forwards."""
    if not isinstance(data, dict) or not isinstance(data.get(TRACE_KEY), dict):
        return data
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    attributes: dict[str, Any] = {"a2c.role": "server"}
    for key in ("computer", "tool_name"):
        if isinstance(data.get(key), str):
            attributes["a2c.tool" if key == "tool_name" else "a2c.computer"] = data[key]
    if STATE.node is not None:
        attributes["a2c.node"] = STATE.node
    tracer = trace.get_tracer("a2c_server")
    parent = _parent(data[TRACE_KEY])
    with tracer.start_as_current_span(
        "a2c.server.relay", context=parent, kind=SpanKind.INTERNAL, attributes=attributes
    ):
        return {**data, TRACE_KEY: _carrier()}
