"""Prometheus metrics of the Computer, served on an opt-in ``--metrics-port``.

One :class:`ComputerMetrics` per Computer, with its own registry. Tool calls are counted
where the Computer answers them; the MCP servers' states and restart counts are read from
the Computer when scraped. Labels are bounded: configured MCP server names, the tools they
list, a fixed set of outcomes and events. A tool name an Agent asked for that this Computer
does not expose never becomes a label; arguments and results never do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from a2c_computer._mcp import ServerStatus
from a2c_protocol import CallToolResult, ErrorCode, Event, is_cancelled

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from a2c_computer._computer import ServerState

__all__ = ["ComputerMetrics", "call_outcome", "serve_metrics"]

logger = logging.getLogger("a2c_computer.metrics")

#: Tool calls range from instant lookups to long-running jobs.
CALL_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
#: Stands for a tool name this Computer does not expose (the Agent's text is not a label).
UNKNOWN_TOOL: Final = "(unknown)"
_STATES: Final = (*(s.value for s in ServerStatus), "disabled")
_OUTCOMES: Final[dict[int, str]] = {
    ErrorCode.TOOL_NOT_FOUND: "not_found",
    ErrorCode.TOOL_DISABLED: "forbidden",
    ErrorCode.TOOL_TIMEOUT: "timeout",
    ErrorCode.TOOL_REQUIRES_CONFIRMATION: "declined",
    ErrorCode.TOOL_AUTHORIZATION_REQUIRED: "unauthorized",
    ErrorCode.TOOL_AUTHORIZATION_FAILED: "unauthorized",
}


def call_outcome(result: CallToolResult) -> str:
    """The ``outcome`` label of a tool call's result.

    ``ok``, ``error`` (the tool reported isError or failed), ``timeout``, ``cancelled``,
    ``declined`` (confirmation), ``not_found``, ``forbidden`` or ``unauthorized``.
    """
    if not result.is_error:
        return "ok"
    meta = result.meta or {}
    if is_cancelled(result):
        return "cancelled"
    code = meta.get("error_code")
    return _OUTCOMES.get(code, "error") if isinstance(code, int) else "error"


class _StateCollector(Collector):
    """MCP server state (one-hot gauge) and restart counts, read at scrape time."""

    def __init__(self, states: Callable[[], Mapping[str, ServerState]]) -> None:
        self._states = states

    def collect(self) -> Iterable[Metric]:
        state = GaugeMetricFamily(
            "a2c_computer_mcp_server_state",
            "1 for the current state of each configured MCP server, 0 for the others",
            labels=["mcp_server", "state"],
        )
        restarts = CounterMetricFamily(
            "a2c_computer_mcp_server_restarts",
            "Times an MCP server was started again after it failed or went away",
            labels=["mcp_server"],
        )
        for name, current in sorted(self._states().items()):
            for value in _STATES:
                state.add_metric([name, value], 1.0 if current.status == value else 0.0)
            restarts.add_metric([name], float(current.restarts))
        yield state
        yield restarts


class ComputerMetrics:
    """The Computer's counters and histograms."""

    def __init__(self, states: Callable[[], Mapping[str, ServerState]] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        ProcessCollector(registry=r)
        self.calls = Counter(
            "a2c_computer_tool_calls", "Tool calls by MCP server, tool and outcome",
            ["mcp_server", "tool", "outcome"], registry=r,
        )  # fmt: skip
        self.call_seconds = Histogram(
            "a2c_computer_tool_call_duration_seconds",
            "Time to answer a tool call (confirmation and MCP round trip included)",
            ["mcp_server"], buckets=CALL_BUCKETS, registry=r,
        )  # fmt: skip
        self.updates = Counter(
            "a2c_computer_updates", "server:update_* notifications raised, by event",
            ["event"], registry=r,
        )  # fmt: skip
        self.desktop_refreshes = Counter(
            "a2c_computer_desktop_refreshes", "Desktops organized for client:get_desktop",
            registry=r,
        )  # fmt: skip
        self.blob_bytes = Counter(
            "a2c_computer_blob_bytes_served", "Bytes of blob content served to Agents",
            registry=r,
        )  # fmt: skip
        self.reloads = Counter(
            "a2c_computer_config_reloads", "Configuration reloads by outcome (applied/rejected)",
            ["outcome"], registry=r,
        )  # fmt: skip
        if states is not None:
            r.register(_StateCollector(states))

    def tool_call(
        self, mcp_server: str | None, tool: str | None, result: CallToolResult, seconds: float
    ) -> None:
        server = mcp_server or ""
        self.calls.labels(server, tool or UNKNOWN_TOOL, call_outcome(result)).inc()
        self.call_seconds.labels(server).observe(seconds)

    def update(self, event: Event) -> None:
        self.updates.labels(event.value).inc()

    def blob_served(self, nbytes: int) -> None:
        """Count ``nbytes`` of blob content sent to an Agent (called where chunks are served)."""
        self.blob_bytes.inc(nbytes)


def serve_metrics(
    metrics: ComputerMetrics, host: str, port: int
) -> tuple[WSGIServer, Callable[[], None]]:
    """Serve ``/metrics`` on ``host:port`` in a daemon thread; returns the server and a stop
    function. Port 0 picks a free port (``server.server_port`` tells which)."""
    from prometheus_client import start_http_server

    server, thread = start_http_server(port, addr=host, registry=metrics.registry)
    logger.info("metrics on http://%s:%d/metrics", host, server.server_port)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return server, stop
