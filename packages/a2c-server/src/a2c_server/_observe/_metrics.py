"""Prometheus metrics of the Server, served as ``GET /metrics`` next to ``/healthz``.

One :class:`ServerMetrics` per app, with its own registry (two apps in one process never
share counters). The namespace, the version gate and the app call it at the points where
they already log. Labels are bounded by construction: roles, catalogue event names, a
fixed set of outcomes and error codes. Never sids, names, office ids, request ids,
tokens, arguments or results.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterator
from typing import Final

import attrs
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from a2c_protocol import Role
from a2c_server._relay._mixed import line_label

from ._route_counts import RouteCounts

__all__ = ["METRICS_CONTENT_TYPE", "PENDING_ROLE", "PubSubCounts", "RouteOutcome", "ServerMetrics"]

#: The ``role`` label of a session that connected without ``auth.role`` and has not joined.
PENDING_ROLE: Final = "pending"

METRICS_CONTENT_TYPE: Final = CONTENT_TYPE_LATEST

#: Routed calls range from a get_tools round trip (milliseconds) to long tool calls.
ROUTE_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class RouteOutcome(enum.StrEnum):
    """How a routed ``client:*`` request ended (the ``outcome`` label)."""

    #: the Computer's answer was relayed (a tool's own isError result included)
    ANSWERED = "answered"
    #: the request failed validation (400)
    INVALID = "invalid"
    #: the office rules refused it (403/404/4103/4104)
    REFUSED = "refused"
    #: the Computer did not answer in time (408)
    TIMEOUT = "timeout"
    #: the Computer disconnected before answering
    COMPUTER_GONE = "computer_gone"
    #: the Computer answered with something that is not an object
    BAD_ANSWER = "bad_answer"
    #: the Computer acked an event newer than itself with nothing (answered with 404)
    UNSUPPORTED = "unsupported"
    #: the Agent left before the answer came; nobody got it
    AGENT_GONE = "agent_gone"
    #: the Server was shutting down and answered with a flat error
    SHUTDOWN = "shutdown"


class ServerMetrics:
    """The Server's counters, gauges and histograms, and their exposition."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        ProcessCollector(registry=r)
        self.clients = Gauge(
            "a2c_server_connected_clients", "Connected Socket.IO clients by role", ["role"],
            registry=r,
        )  # fmt: skip
        self.offices = Gauge("a2c_server_offices", "Offices with at least one member", registry=r)
        self.by_protocol = Gauge(
            "a2c_server_connected_clients_by_protocol",
            "Connected Socket.IO clients by protocol line (0.2, 0.4; other for a pinned one)",
            ["protocol"], registry=r,
        )  # fmt: skip
        self.translations = Counter(
            "a2c_server_translated_requests",
            "client:* requests relayed between protocol lines (a mixed office), by event",
            ["event", "agent_protocol", "computer_protocol"], registry=r,
        )  # fmt: skip
        self._protocols: dict[str, str] = {}
        self.connection_refusals = Counter(
            "a2c_server_connection_refusals", "Socket.IO connections refused, by error code",
            ["code"], registry=r,
        )  # fmt: skip
        self.joins = Counter(
            "a2c_server_joins",
            "server:join_office requests by role, outcome (ok/refused) and refusal reason",
            ["role", "outcome", "reason"], registry=r,
        )  # fmt: skip
        # Counted on every relayed call: plain counters read at scrape (_route_counts.py).
        self.routes = RouteCounts(ROUTE_BUCKETS)
        r.register(self.routes)
        self.version_refusals = Counter(
            "a2c_server_version_refusals", "Handshakes refused by the version gate, by transport",
            ["transport"], registry=r,
        )  # fmt: skip
        self.size_drops = Counter(
            "a2c_server_messages_dropped_for_size",
            "Incoming messages refused for exceeding the size limit, by transport",
            ["transport"], registry=r,
        )  # fmt: skip
        self.agent_gone_cancels = Counter(
            "a2c_server_tool_calls_cancelled_for_absent_agent",
            "Tool calls the Server cancelled on their Computer because the calling Agent left "
            "its office or disconnected with them in flight",
            registry=r,
        )
        self.polling_refusals = Counter(
            "a2c_server_polling_refusals", "Long-polling POSTs refused (400/413), by reason",
            ["reason"], registry=r,
        )  # fmt: skip
        for role in Role:
            self.clients.labels(role.value)
        self.clients.labels(PENDING_ROLE)
        self._roles: dict[str, str] = {}
        #: sid → wall-clock time it was admitted (read by the console, once per connection)
        self.connected_at: dict[str, float] = {}

    # -- hooks (called where the Server already logs) ---------------------------------

    def connected(self, sid: str, role: Role | None) -> None:
        label = role.value if role is not None else PENDING_ROLE
        self._roles[sid] = label
        self.connected_at[sid] = time.time()
        self.clients.labels(label).inc()

    def settled(self, sid: str, role: Role) -> None:
        """A role-less session's first join gave it ``role``: move it to that label."""
        if self._roles.get(sid) == PENDING_ROLE:
            self._roles[sid] = role.value
            self.clients.labels(PENDING_ROLE).dec()
            self.clients.labels(role.value).inc()

    def protocol(self, sid: str, version: str) -> None:
        """``sid`` was admitted speaking ``version``: count it under its line."""
        label = line_label(version)
        self._protocols[sid] = label
        self.by_protocol.labels(label).inc()

    def translated(self, event: str, agent_version: str, computer_version: str) -> None:
        """A request of a mixed office went through the translation."""
        self.translations.labels(
            event, line_label(agent_version), line_label(computer_version)
        ).inc()

    def disconnected(self, sid: str) -> None:
        protocol = self._protocols.pop(sid, None)
        if protocol is not None:
            self.by_protocol.labels(protocol).dec()
        role = self._roles.pop(sid, None)
        self.connected_at.pop(sid, None)
        if role is not None:  # a connection refused during connect was never counted
            self.clients.labels(role).dec()

    def connection_refused(self, code: int) -> None:
        self.connection_refusals.labels(str(int(code))).inc()

    def join(self, role: Role | str | None, refusal: str | None) -> None:
        """One join request: ``refusal`` is None when it was accepted."""
        label = role.value if isinstance(role, Role) else role or "unknown"
        if refusal is None:
            self.joins.labels(label, "ok", "").inc()
        else:
            self.joins.labels(label, "refused", refusal).inc()

    def role_of(self, sid: str) -> str | None:
        """The role ``sid`` connected as (None once it left or if it was refused)."""
        return self._roles.get(sid)

    def route(self, event: str, outcome: RouteOutcome, seconds: float | None = None) -> None:
        self.routes.count(event, outcome.value, seconds)

    def cancelled_for_agent(self) -> None:
        self.agent_gone_cancels.inc()

    def version_refused(self, transport: str) -> None:
        self.version_refusals.labels(transport).inc()

    def dropped_for_size(self, transport: str) -> None:
        self.size_drops.labels(transport).inc()

    def watch_multinode(self, counts: PubSubCounts, reachable: Callable[[], bool]) -> None:
        """Multi-node: expose the registry's reachability and this node's pub/sub traffic."""
        self.registry.register(_MultiNodeCollector(counts, reachable))

    def polling_refused(self, reason: str) -> None:
        self.polling_refusals.labels(reason).inc()

    # -- exposition ----------------------------------------------------------------------

    def render(self, offices: int | None) -> bytes:
        """The text exposition, with the office gauge set from the store's count.

        ``offices`` is None while the registry cannot count them: the gauge keeps its last
        value and ``a2c_server_registry_reachable`` says why.
        """
        if offices is not None:
            self.offices.set(offices)
        return generate_latest(self.registry)


# -- multi-node (Redis) ------------------------------------------------------------------


@attrs.define
class PubSubCounts:
    """One node's Redis pub/sub messages, counted where they happen and read at scrape."""

    #: written to Redis (delivery to subscribers is still at most once)
    published: int = 0
    #: lost for sure: never written (no connection twice, or still queued at shutdown)
    unsent: int = 0
    #: possibly lost: the write failed midway, part of it may have arrived
    maybe_lost: int = 0
    #: messages read from the shared channel and this node's own
    received: int = 0


class _MultiNodeCollector:
    """Reads :class:`PubSubCounts` and the registry state at each scrape (no hot-path cost)."""

    def __init__(self, counts: PubSubCounts, reachable: Callable[[], bool]) -> None:
        self._counts = counts
        self._reachable = reachable

    def collect(self) -> Iterator[Metric]:
        c = self._counts
        yield GaugeMetricFamily(
            "a2c_server_registry_reachable",
            "1 while the last heartbeat reached the shared registry (Redis), else 0",
            value=1.0 if self._reachable() else 0.0,
        )
        yield CounterMetricFamily(
            "a2c_server_pubsub_messages_published",
            "Socket.IO messages this node wrote to Redis pub/sub", value=c.published,
        )  # fmt: skip
        lost = CounterMetricFamily(
            "a2c_server_pubsub_messages_lost",
            "Pub/sub messages lost: unsent (never written) or maybe_sent (write failed midway)",
            labels=["how"],
        )
        lost.add_metric(["unsent"], c.unsent)
        lost.add_metric(["maybe_sent"], c.maybe_lost)
        yield lost
        yield CounterMetricFamily(
            "a2c_server_pubsub_messages_received",
            "Pub/sub messages this node received from Redis", value=c.received,
        )  # fmt: skip
