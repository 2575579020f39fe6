"""The lock-free route metrics expose exactly what prometheus_client's own would."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from a2c_server._observe._metrics import ROUTE_BUCKETS
from a2c_server._observe._route_counts import RouteCounts

CALLS = [
    ("client:tool_call", "answered", 0.003), ("client:tool_call", "answered", 0.005),
    ("client:tool_call", "timeout", 30.0), ("client:tool_call", "invalid", None),
    ("client:get_tools", "answered", 0.25), ("client:get_tools", "refused", None),
    ("client:tool_call", "answered", 1000.0), ("client:tool_call", "answered", 0.0),
]  # fmt: skip


def exposition(registry: CollectorRegistry) -> list[str]:
    # _created samples are prometheus_client's own timestamps: not ours to copy.
    lines = generate_latest(registry).decode().splitlines()
    return [line for line in lines if "_created" not in line]


def test_route_counts_expose_what_prometheus_client_would() -> None:
    theirs = CollectorRegistry()
    routed = Counter("a2c_server_routed_requests", "Routed client:* requests by event and "
                     "outcome", ["event", "outcome"], registry=theirs)  # fmt: skip
    seconds = Histogram("a2c_server_routed_request_duration_seconds", "Time from forwarding "
                        "a client:* request to the Computer to its answer", ["event"],
                        buckets=ROUTE_BUCKETS, registry=theirs)  # fmt: skip
    ours = CollectorRegistry()
    counts = RouteCounts(ROUTE_BUCKETS)
    ours.register(counts)
    for event, outcome, elapsed in CALLS:
        routed.labels(event, outcome).inc()
        if elapsed is not None:
            seconds.labels(event).observe(elapsed)
        counts.count(event, outcome, elapsed)
    assert sorted(exposition(ours)) == sorted(exposition(theirs))
