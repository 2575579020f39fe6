"""New sessions take turns, so a connect flood cannot queue admitted clients' traffic.

The Server's event loop runs every ready callback of a turn in order: when 24 flooding
connects are in flight, a frame of an admitted session waits behind each of their steps
(the handshake, the CONNECT, the refusal, the close), and on a machine whose CPU the
flood also takes that wait was most of the honest p99 (issue 41: x15 of baseline when the
Server was starved of CPU, x2 when the same flood hit another process). Here the requests
of sessions not admitted yet (a new Engine.IO handshake, a long-polling request of a
session that has not joined the namespace) start at most ``per_turn`` per loop turn; the
others wait, first come first served, parked on a future. Requests of admitted sessions
never wait. A legitimate client connecting during a flood waits behind the requests
already queued (at most one per flooding connection in flight), not behind the flood's
total; ``a2c_server_handshake_waits_total`` counts the requests that had to wait.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

__all__ = ["PER_TURN", "Turns"]

#: Requests of unadmitted sessions started per event-loop turn.
PER_TURN: Final = 2


class Turns:
    """At most ``per_turn`` starts per loop turn; the rest wait in arrival order."""

    def __init__(self, per_turn: int = PER_TURN) -> None:
        if per_turn < 1:
            raise ValueError("per_turn must be at least 1")
        self._per_turn = per_turn
        self._left = per_turn
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._refill_due = False
        #: requests that could not start in the turn they arrived in
        self.waited = 0

    @property
    def queued(self) -> int:
        """Requests waiting for their turn now."""
        return sum(1 for future in self._waiting if not future.done())

    async def turn(self) -> None:
        """Return when this request may start (at once when the turn has room)."""
        if self._left > 0 and not self._waiting:
            self._left -= 1
            self._refill_later()
            return
        self.waited += 1
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        self._refill_later()
        await future

    def _refill_later(self) -> None:
        if not self._refill_due:
            self._refill_due = True
            # call_soon from inside a turn runs at the next turn, after its I/O callbacks.
            asyncio.get_running_loop().call_soon(self._refill)

    def _refill(self) -> None:
        self._refill_due = False
        self._left = self._per_turn
        while self._left and self._waiting:
            future = self._waiting.popleft()
            if not future.done():  # a cancelled waiter (the client went away) is skipped
                future.set_result(None)
                self._left -= 1
        if self._waiting or self._left < self._per_turn:
            self._refill_later()

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "a2c_server_handshake_waits",
            "Requests of sessions not admitted yet that waited for a later event-loop turn",
            value=self.waited,
        )
        yield GaugeMetricFamily(
            "a2c_server_handshakes_queued",
            "Requests of sessions not admitted yet waiting for their turn now",
            value=self.queued,
        )
