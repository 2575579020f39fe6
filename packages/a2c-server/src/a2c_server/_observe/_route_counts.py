"""The per-call route metrics as plain counters, turned into Prometheus samples at scrape.

Every relayed ``client:*`` request counts one outcome and, once answered, one duration.
prometheus_client's ``Counter.inc`` and ``Histogram.observe`` take a lock per value (three
for a duration: its bucket, its sum, the count), which measured several times the routing
check itself. The Server counts on its event loop only, so :class:`RouteCounts` keeps plain
ints and floats and builds the same two metric families (names, help, labels, buckets) when
``/metrics`` is read.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from typing import Final

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

__all__ = ["RouteCounts"]

_ROUTED: Final = "a2c_server_routed_requests"
_ROUTED_HELP: Final = "Routed client:* requests by event and outcome"
_SECONDS: Final = "a2c_server_routed_request_duration_seconds"
_SECONDS_HELP: Final = "Time from forwarding a client:* request to the Computer to its answer"


class RouteCounts:
    """A prometheus_client collector: routed requests by (event, outcome), durations by event."""

    def __init__(self, buckets: Sequence[float]) -> None:
        self._bounds = (*sorted(buckets), math.inf)
        self._les = [floatToGoString(b) for b in self._bounds]  # type: ignore[no-untyped-call]
        self.outcomes: dict[tuple[str, str], int] = {}
        self._buckets: dict[str, list[int]] = {}
        self._sums: dict[str, float] = {}

    def count(self, event: str, outcome: str, seconds: float | None) -> None:
        """One routed request; ``seconds`` from forwarding to its end, when it was forwarded."""
        key = (event, outcome)
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        if seconds is not None:
            buckets = self._buckets.get(event)
            if buckets is None:
                buckets = self._buckets[event] = [0] * len(self._bounds)
                self._sums[event] = 0.0
            # The first bound >= seconds: prometheus_client's "amount <= bound" bucket.
            buckets[bisect.bisect_left(self._bounds, seconds)] += 1
            self._sums[event] += seconds

    def describe(self) -> Iterator[Metric]:
        yield CounterMetricFamily(_ROUTED, _ROUTED_HELP, labels=["event", "outcome"])
        yield HistogramMetricFamily(_SECONDS, _SECONDS_HELP, labels=["event"])

    def collect(self) -> Iterator[Metric]:
        routed = CounterMetricFamily(_ROUTED, _ROUTED_HELP, labels=["event", "outcome"])
        for (event, outcome), value in sorted(self.outcomes.items()):
            routed.add_metric([event, outcome], value)
        yield routed
        seconds = HistogramMetricFamily(_SECONDS, _SECONDS_HELP, labels=["event"])
        for event, counts in sorted(self._buckets.items()):
            cumulative, total = [], 0
            for le, value in zip(self._les, counts, strict=True):
                total += value
                cumulative.append((le, float(total)))
            seconds.add_metric([event], cumulative, self._sums[event])
        yield seconds
