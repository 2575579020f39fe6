"""Per-session request rate limits: one token bucket per session, off by default.

A session over its rate gets a flat 429 (``client:*``, ``server:list_room``), a refused
join/leave ack, or its relayed event dropped; it never waits, so a flooding client costs
others nothing but the refusals. Counted in ``a2c_server_rate_limited_total{event}``; the
refusal is logged once per session per ``_LOG_EVERY`` seconds.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter

from a2c_protocol import EVENTS, ErrorPayload, Event, to_wire
from a2c_server._observe._logs import log

__all__ = ["TOO_MANY_REQUESTS", "RequestLimiter", "TokenBucket"]

#: The flat ErrorPayload code of a refusal for rate (HTTP's "Too Many Requests").
TOO_MANY_REQUESTS: Final = 429
_LOG_EVERY: Final = 10.0
_log = logging.getLogger("a2c_server.namespace")


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; :meth:`take` never waits."""

    __slots__ = ("_burst", "_rate", "_stamp", "_tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._stamp = now

    def take(self, now: float) -> bool:
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class RequestLimiter:
    """The buckets of the sessions on this node (``rate`` None: no limit)."""

    def __init__(
        self, rate: float | None, burst: int, registry: CollectorRegistry | None = None
    ) -> None:
        self._rate = rate
        self._burst = burst
        self._buckets: dict[str, TokenBucket] = {}
        self._logged: dict[str, float] = {}
        self._limited = Counter(
            "a2c_server_rate_limited",
            "Requests refused because their session exceeded its request rate, by event",
            ["event"],
            registry=registry,
        )

    @property
    def enabled(self) -> bool:
        return self._rate is not None

    def allow(self, sid: str, event: Event) -> bool:
        """Whether ``sid`` may send one more request now (counts and logs a refusal).

        A cancel is never limited: it stops work, it never starts any.
        """
        if self._rate is None or event is Event.TOOL_CALL_CANCEL:
            return True
        now = time.monotonic()
        bucket = self._buckets.get(sid)
        if bucket is None:
            bucket = self._buckets[sid] = TokenBucket(self._rate, self._burst, now)
        if bucket.take(now):
            return True
        self._limited.labels(event.value).inc()
        if now - self._logged.get(sid, -_LOG_EVERY) >= _LOG_EVERY:
            self._logged[sid] = now
            log(_log, logging.WARNING, "request refused: rate limit", sid=sid,
                event=event.value, limit=self._rate)  # fmt: skip
        return False

    def answer(self, event: Event) -> Any:
        """What a refused request gets: a 429, a refused ack, or nothing (no ack)."""
        message = f"Too many requests: this session may send {self._rate:g} per second"
        if event in (Event.JOIN_OFFICE, Event.LEAVE_OFFICE):
            return (False, message)
        if EVENTS[event].response is None:
            return None  # relayed notifications have no ack
        return to_wire(ErrorPayload(code=TOO_MANY_REQUESTS, message=message))

    def forget(self, sid: str) -> None:
        self._buckets.pop(sid, None)
        self._logged.pop(sid, None)
