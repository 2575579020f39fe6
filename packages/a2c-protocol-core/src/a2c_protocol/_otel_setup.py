"""Start-up of the optional OpenTelemetry tracing the three roles share.

The core depends on attrs and cattrs only: ``opentelemetry`` is imported inside these
functions, and only once the environment asked for tracing and the role's ``[otel]`` extra
is installed. The spans themselves belong to each role's ``_otel`` module.
"""

from __future__ import annotations

import os

__all__ = ["install_tracer_provider", "shutdown_tracer_provider", "tracing_wanted"]


def tracing_wanted() -> bool:
    """Whether ``OTEL_*`` asks for OTLP traces and the SDK and exporter are installed.

    ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``…_TRACES_ENDPOINT``) must be set;
    ``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none`` turn it off.
    """
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    if os.environ.get("OTEL_TRACES_EXPORTER", "otlp").lower() == "none":
        return False
    if not (
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    ):
        return False
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        return False
    return True


def install_tracer_provider(service_name: str) -> bool:
    """Install an SDK tracer provider exporting over OTLP/HTTP, if :func:`tracing_wanted`.

    ``OTEL_SERVICE_NAME`` wins over ``service_name``. Returns whether tracing is on.
    """
    if not tracing_wanted():
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


def shutdown_tracer_provider() -> None:
    """Flush and stop the installed provider (a process's last spans), if it has a stop."""
    from opentelemetry import trace

    stop = getattr(trace.get_tracer_provider(), "shutdown", None)
    if callable(stop):
        stop()
