"""New handshakes paced while connects are being refused in numbers, shared per address.

A tokenless connect flood is refused (401) at ~1.5 ms of Server CPU each, two thirds of
it python-engineio's handshake before the CONNECT packet that carries the token. Closed-
loop flooders send the next attempt as soon as one is answered, so on a quiet machine
they take the whole event loop (100 % CPU at ~620 refusals/s, honest p99 x11-
x21). While more than ``trigger`` connects a second are refused, :class:`HandshakePacer`
lets new Engine.IO handshakes start at most ``rate`` a second; the others wait (no CPU).
Requests of sessions that already have an Engine.IO id, and so every admitted client's
traffic, never wait; without refusals nothing is paced (a reconnect storm of valid clients
after a restart starts at full speed).

The wait is shared per client address: each address has its own queue and
the turns go round the addresses, one handshake each. With one queue for everybody, 600
tokenless handshakes in flight from one address filled it 5 s deep and an honest client
from another address was answered 503 (11 of 12 tries) or waited 5 s; served in turn, it
waits for one handshake per other waiting address. An address may hold at most its share
of ``max_wait`` worth of turns (``max_wait * rate`` split among the waiting addresses);
past it, its new handshake is refused, and a handshake still waiting at ``max_wait`` is
refused then. So nothing waits longer than ``max_wait`` and at most about
``max_wait * rate`` handshakes wait for a turn in all, however many addresses send them.
A refused handshake is held until ``max_wait`` before its answer (up to ``max_held`` of
them; past that, answered at once): answered at once, a closed-loop flooder's surplus
lanes came straight back, thousands of 503s a second that cost the loop more than the
paced handshakes (600 lanes from one address: Server CPU ~50 %). Addresses count in the
share :func:`~a2c_server._floods._address.address_key` gives (IPv6 per /64, an IPv4 client
of a dual-stack bind as its IPv4 address). The address is the one the ASGI server reports:
behind a proxy, the client's only when the proxy is named for ``X-Forwarded-For``
(``--forwarded-allow-ips``), else every client shares the proxy's.

Pure: the clock is passed in; the ASGI edge (:mod:`a2c_server._edge._pace`) waits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any, Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from a2c_server._floods._address import address_key

__all__ = ["REFUSE", "HandshakePacer", "Ticket", "address_key"]

#: What :meth:`HandshakePacer.admit` answers for a handshake to refuse at once.
REFUSE: Final = -1.0

#: How early a wake-up may come and still count as on time (timers round; a float sum of
#: periods drifts): without it a timer a hair early would find nothing due and re-arm.
_EARLY: Final = 1e-6

WAITING: Final = 0
STARTED: Final = 1
SHED: Final = 2
WITHDRAWN: Final = 3


class Ticket:
    """One waiting handshake; ``state`` says what became of it, ``waker`` is the edge's.
    ``key`` is its address's share, None for a refused one held until its deadline."""

    __slots__ = ("deadline", "key", "state", "waker")

    def __init__(self, key: str | None, deadline: float) -> None:
        self.key = key
        self.deadline = deadline
        self.state = WAITING
        self.waker: Any = None


class HandshakePacer:
    """Fair pacing of new handshakes while connects are refused (see module doc)."""

    __slots__ = ("_count", "_live", "_max_held", "_max_wait", "_next", "_order", "_period",
                 "_prev", "_queues", "_rate", "_trigger", "_window", "held", "paced",
                 "shed")  # fmt: skip

    def __init__(
        self, rate: float = 100.0, trigger: int = 20, max_wait: float = 5.0,
        max_held: int = 1000,
    ) -> None:  # fmt: skip
        if rate < 0:
            raise ValueError("rate must be >= 0 (0 turns pacing off)")
        self._rate = rate
        self._period = 1.0 / rate if rate > 0 else 0.0
        self._trigger = trigger
        self._max_wait = max_wait
        self._max_held = max_held
        self._window = 0  # the whole second refusals are being counted in
        self._count = 0  # refusals in that second
        self._prev = 0  # refusals in the second before it
        self._next = 0.0  # when the next handshake may start
        # Waiting tickets per address key, in the order the turns go round (a dict keeps
        # insertion order: the key served goes to the end if it still has tickets).
        self._queues: dict[str, deque[Ticket]] = {}
        self._live: dict[str, int] = {}  # tickets still waiting, per key
        self._order: deque[Ticket] = deque()  # every ticket by arrival, so by deadline
        #: refused handshakes held until their answer now
        self.held = 0
        #: handshakes that waited for a turn, and handshakes answered 503
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

    @property
    def waiting(self) -> int:
        """Handshakes waiting for their turn now."""
        return sum(self._live.values())

    def admit(self, address: str, now: float) -> float | Ticket:
        """A new handshake from ``address`` at ``now``: 0.0 to start at once,
        :data:`REFUSE` to answer it busy, or the :class:`Ticket` it waits with (the edge
        calls :meth:`due` at :meth:`next_due` to learn when it starts)."""
        if not self.active(now):
            return 0.0
        if not self._queues and now >= self._next:
            self._next = now + self._period
            return 0.0
        key = address_key(address)
        live = self._live.get(key, 0)
        sharing = len(self._queues) + (key not in self._queues)
        if (live + 1) * sharing * self._period > self._max_wait:
            if self.held >= self._max_held:
                self.shed += 1
                return REFUSE
            self.held += 1
            held = Ticket(None, now + self._max_wait)
            self._order.append(held)  # shed at its deadline, never given a turn
            return held
        ticket = Ticket(key, now + self._max_wait)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(ticket)
        self._live[key] = live + 1
        self._order.append(ticket)
        self.paced += 1
        return ticket

    def next_due(self) -> float | None:
        """When :meth:`due` has something to say next (None: nothing waits)."""
        order = self._order
        while order and order[0].state != WAITING:
            order.popleft()  # started or withdrawn: nothing to wait for
        if not order:
            return None
        if self._queues:
            return min(self._next, order[0].deadline)
        return order[0].deadline  # only held ones: their deadline, not a turn

    def due(self, now: float) -> list[Ticket]:
        """The tickets whose wait ends at ``now``: STARTED (their turn came) or SHED
        (waited ``max_wait``), in that order of events."""
        ended: list[Ticket] = []
        order = self._order
        now += _EARLY
        while order and (order[0].state != WAITING or order[0].deadline <= now):
            expired = order.popleft()
            if expired.state == WAITING:
                self._end(expired, SHED)
                self.shed += 1
                ended.append(expired)
        # One turn per period; a late wake-up catches up one turn at most (a loop that
        # woke late is busy: a burst of handshakes would not help it).
        start = max(self._next, now - self._period)
        while start <= now and (ticket := self._take_turn()) is not None:
            self._end(ticket, STARTED)
            ended.append(ticket)
            start += self._period
            self._next = start
        return ended

    def withdraw(self, ticket: Ticket) -> None:
        """The handshake went away while waiting: its turn goes to the next one."""
        if ticket.state == WAITING:
            self._end(ticket, WITHDRAWN)

    def release_all(self) -> list[Ticket]:
        """Every waiting ticket, SHED (the Server is shutting down)."""
        ended = [t for t in self._order if t.state == WAITING]
        for ticket in ended:
            self._end(ticket, SHED)
        self._order.clear()
        self._queues.clear()
        self.shed += len(ended)
        return ended

    def _end(self, ticket: Ticket, state: int) -> None:
        ticket.state = state
        key = ticket.key
        if key is None:
            self.held -= 1
            return
        left = self._live[key] - 1
        if left:
            self._live[key] = left
        else:
            del self._live[key]

    def _take_turn(self) -> Ticket | None:
        """The head ticket of the next address round, skipping ended ones."""
        while self._queues:
            key = next(iter(self._queues))
            queue = self._queues.pop(key)
            while queue and queue[0].state != WAITING:
                queue.popleft()
            if not queue:
                continue
            ticket = queue.popleft()
            while queue and queue[0].state != WAITING:
                queue.popleft()
            if queue:
                self._queues[key] = queue  # to the end of the round
            return ticket
        return None

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "a2c_server_handshakes_paced",
            "New handshakes that waited their turn while connects were refused in numbers",
            value=self.paced,
        )
        yield CounterMetricFamily(
            "a2c_server_handshakes_shed",
            "New handshakes answered 503 (or closed 1013): their address's share of the "
            "wait was full, or their turn did not come within 5 s",
            value=self.shed,
        )
        yield GaugeMetricFamily(
            "a2c_server_handshakes_held",
            "Refused new handshakes held until their 503 (5 s) so flooders retry no faster",
            value=self.held,
        )
        yield GaugeMetricFamily(
            "a2c_server_handshakes_waiting",
            "New handshakes waiting for their turn now", value=self.waiting,
        )  # fmt: skip
