"""The tool-call span is skipped only when nothing would record or carry it."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from a2c_agent._rpc._otel import tracing_idle


def test_idle_without_provider_or_current_span() -> None:
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return  # another test installed a provider in this process: nothing to check here
    assert tracing_idle()


def test_not_idle_when_a_current_span_would_be_handed_on() -> None:
    parent = SpanContext(trace_id=0x1234, span_id=0x5678, is_remote=True, trace_flags=TraceFlags(1))
    with trace.use_span(NonRecordingSpan(parent)):
        assert not tracing_idle()
