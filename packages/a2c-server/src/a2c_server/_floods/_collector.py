"""``/metrics`` for floods: read at each scrape from the counters kept where things happen."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ._outbox import OutputBudget

__all__ = ["FloodsCollector"]


class FloodsCollector:
    """Queued output, slow-consumer drops by cause (no cost on the hot path)."""

    def __init__(self, budget: OutputBudget, *sources: Any) -> None:
        self._budget = budget
        self._sources = sources  # more collectors' ``collect()`` (refusals, inbound budget)

    def collect(self) -> Iterator[Metric]:
        b = self._budget
        yield GaugeMetricFamily(
            "a2c_server_queued_output_bytes",
            "Bytes waiting in the outgoing queues of all sessions of this process",
            value=b.total,
        )
        yield GaugeMetricFamily(
            "a2c_server_queued_output_limit_bytes",
            "max_queued_output_bytes: past it, sessions holding over 1 MB are dropped",
            value=b.limit,
        )
        drops = CounterMetricFamily(
            "a2c_server_slow_consumer_drops",
            "Sessions dropped with their queue freed and connection cut, by cause "
            "(client_limit, process_budget, ping_timeout)",
            labels=["cause"],
        )
        for cause in ("client_limit", "process_budget", "ping_timeout"):
            drops.add_metric([cause], b.drops.get(cause, 0))
        yield drops
        for source in self._sources:
            yield from source.collect()
