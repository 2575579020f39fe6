"""New handshakes paced while connects are being refused in numbers (issue 41).

A tokenless connect flood is refused (401) at ~1.5 ms of Server CPU each, two thirds of
it python-engineio's handshake before the CONNECT packet that carries the token. Closed-
loop flooders send the next attempt as soon as one is answered, so on a quiet machine
they take the whole event loop (measured: 100 % CPU at ~620 refusals/s, honest p99 x11-
x21). While more than ``trigger`` connects a second are refused, :class:`HandshakePacer`
lets new Engine.IO handshakes start at most ``rate`` a second, in arrival order; the ones
that must wait sleep (no CPU) and a handshake that would wait longer than ``max_wait``
is answered 503 at once. Requests of sessions that already have an Engine.IO id, and so
every admitted client's traffic, never wait. Legitimate newcomers during a flood wait
their turn behind the flooders' attempts in flight (at ``rate`` 100 and 24 attempts in
flight, about a quarter of a second). Without refusals nothing is paced: a reconnect
storm of valid clients after a restart starts at full speed.

Pure: the clock is passed in; the ASGI edge (:mod:`a2c_server._app`) sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily, Metric

__all__ = ["REFUSE", "HandshakePacer"]

#: What :meth:`HandshakePacer.delay` answers for a handshake to refuse at once.
REFUSE: Final = -1.0


class HandshakePacer:
    """Pacing of new handshakes while connects are refused (see module doc)."""

    __slots__ = ("_count", "_max_wait", "_next", "_prev", "_rate", "_trigger", "_window",
                 "paced", "shed")  # fmt: skip

    def __init__(self, rate: float = 100.0, trigger: int = 20, max_wait: float = 5.0) -> None:
        if rate < 0:
            raise ValueError("rate must be >= 0 (0 turns pacing off)")
        self._rate = rate
        self._trigger = trigger
        self._max_wait = max_wait
        self._window = 0  # the whole second refusals are being counted in
        self._count = 0  # refusals in that second
        self._prev = 0  # refusals in the second before it
        self._next = 0.0  # when the next paced handshake may start
        #: handshakes that waited, and handshakes answered 503 at once
        self.paced = 0
        self.shed = 0

    def _roll(self, now: float) -> None:
        window = int(now)
        if window != self._window:
            self._prev = self._count if window == self._window + 1 else 0
            self._count = 0
            self._window = window

    def refused(self, now: float) -> None:
        """Count one connect refused at ``now``."""
        self._roll(now)
        self._count += 1

    def active(self, now: float) -> bool:
        """Whether handshakes are paced at ``now`` (refusals over the trigger this second
        or the last)."""
        if self._rate <= 0:
            return False
        self._roll(now)
        return self._count >= self._trigger or self._prev >= self._trigger

    def delay(self, now: float) -> float:
        """Seconds a new handshake arriving at ``now`` waits (0: start at once), or
        :data:`REFUSE` when its turn is more than ``max_wait`` away."""
        if not self.active(now):
            return 0.0
        start = max(self._next, now)
        wait = start - now
        if wait > self._max_wait:
            self.shed += 1
            return REFUSE
        self._next = start + 1.0 / self._rate
        if wait > 0:
            self.paced += 1
        return wait

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "a2c_server_handshakes_paced",
            "New handshakes that waited their turn while connects were refused in numbers",
            value=self.paced,
        )
        yield CounterMetricFamily(
            "a2c_server_handshakes_shed",
            "New handshakes answered 503 (or closed 1013) at once: their turn was too far",
            value=self.shed,
        )
