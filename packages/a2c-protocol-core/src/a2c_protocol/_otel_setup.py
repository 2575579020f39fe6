"""Start-up of the optional OpenTelemetry tracing the three roles share.

The core depends on attrs and cattrs only: ``opentelemetry`` is imported inside these
functions, and only once the environment asked for tracing and the role's ``[otel]`` extra
is installed. The spans themselves belong to each role's ``_otel`` module.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = [
    "install_tracer_provider",
    "shutdown_tracer_provider",
    "traces_endpoint",
    "tracing_wanted",
]


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
    # The exporter's own default (10 s, retried) made every short-lived CLI call wait that
    # long at exit when the collector is down; an explicit OTEL_* timeout still wins.
    timeout = None if _timeout_configured() else EXPORT_TIMEOUT
    exporter = OTLPSpanExporter(timeout=timeout)
    destination = traces_endpoint()
    reporting = cast("SpanExporter", _Reporting(exporter, destination))
    provider.add_span_processor(BatchSpanProcessor(reporting))
    trace.set_tracer_provider(provider)
    logger.info("tracing on: spans of %s go to %s (OTLP/HTTP)", name, destination)
    return True


#: Seconds one export may take, retries included, unless ``OTEL_*_TIMEOUT`` says otherwise.
EXPORT_TIMEOUT = 2.0

logger = logging.getLogger("a2c_protocol.tracing")

_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"


def traces_endpoint() -> str:
    """Where spans go: the URL the OTLP/HTTP exporter posts to, from ``OTEL_*``."""
    explicit = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if explicit:
        return explicit
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318")
    return base.rstrip("/") + "/v1/traces"


def _timeout_configured() -> bool:
    return bool(
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    )


class _LastWords(logging.Filter):
    """Keeps the exporter's first complaint of an export (it names the cause; the last one
    only says that retries ran out) for our one WARNING, and drops its own lines: it writes
    one per retry and per batch, several a second while the collector is down."""

    def __init__(self) -> None:
        super().__init__()
        self.first: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if self.first is None:
            self.first = record.getMessage()
        return False


class _Reporting:
    """Wraps the span exporter: one WARNING when exports start failing (with the reason),
    one INFO when they work again, nothing per batch."""

    def __init__(self, inner: Any, destination: str) -> None:
        self._inner = inner
        self._destination = destination
        self._failing = False
        self._words = _LastWords()
        logging.getLogger(_EXPORTER_LOGGER).addFilter(self._words)

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self._words.first = None
        result = self._inner.export(spans)
        failed = result is not SpanExportResult.SUCCESS
        if failed and not self._failing:
            logger.warning(
                "tracing: spans could not be sent to %s (%s); spans are dropped until it "
                "answers (said once)",
                self._destination,
                self._words.first or "export failed",
            )
        elif not failed and self._failing:
            logger.info("tracing: %s answers again; spans are sent", self._destination)
        self._failing = failed
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()
        logging.getLogger(_EXPORTER_LOGGER).removeFilter(self._words)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))


def shutdown_tracer_provider() -> None:
    """Flush and stop the installed provider (a process's last spans), if it has a stop."""
    from opentelemetry import trace

    stop = getattr(trace.get_tracer_provider(), "shutdown", None)
    if callable(stop):
        stop()
