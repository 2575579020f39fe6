"""A per-connection budget for everything a client sends, checked before any decoding.

The request limiter (``--max-requests-per-second``, off by default) sees only requests, and
only after python-socketio decoded them; acknowledgements, ``server:tool_call_progress``,
``notify:*`` and unknown events were not covered, and each cost its full decode.
:class:`InboundBudget` is a token bucket per Engine.IO session, taken
once per Socket.IO packet (an event *or* an ack, whatever its name) from the raw text,
before python-socketio decodes it; cancels (``server:tool_call_cancel``) draw on a bucket
of their own so a flood of other events never stops an Agent from cancelling. On by
default at a rate no honest client reaches: the busiest honest clients measured here are
the relay benchmark's (one Agent with 32 calls in flight: ~4,200 calls a second, and its
Computer as many acks); the default allows 10,000 with bursts of 20,000, because a
packet dropped from an honest client is a call that hangs until its timeout. A packet
over budget is dropped undecoded (counted; the client is told nothing); a session
refused again and again (never a second without a refusal) for ``cut_after`` seconds is
disconnected. A packet the Server refuses after reading it costs :data:`REFUSED_COST`
packets (:meth:`InboundBudget.charge`): the Server reads a flood at 5-15k packets a
second, near the budget, and a flooder it never reads faster than the budget was never
cut; refused packets are rare from honest clients and make such a flooder's budget run
out at 200 a second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily, Metric

from a2c_protocol import Event

__all__ = [
    "ADMIT",
    "COALESCED_COST",
    "CUT",
    "DROP",
    "REFUSED_COST",
    "InboundBudget",
    "InboundStats",
]

ADMIT: Final = 0
DROP: Final = 1
CUT: Final = 2
_CANCEL: Final = f'"{Event.TOOL_CALL_CANCEL.value}"'
_CANCEL_RATE: Final = 200.0
_CANCEL_BURST: Final = 1000.0
#: What a packet the Server refused after reading it (a forged ack, a spoofed or unknown
#: event, a progress report for nobody) costs its session's budget, in packets: honest
#: clients are refused rarely, a flooder of such packets is over budget at a fiftieth of
#: the rate, below what the Server can read, so it is cut.
REFUSED_COST: Final = 50.0
#: What a ``server:update_*`` notice coalesced away (never relayed) costs.
COALESCED_COST: Final = 10.0
_PAUSE: Final = 1.0  # refusals this far apart are separate episodes, not one abuse


class InboundStats:
    """Process-wide counts for ``/metrics``."""

    __slots__ = ("cut", "dropped", "late_acks", "notify", "stale_acks", "unhandled")

    def __init__(self) -> None:
        self.dropped = 0
        self.cut = 0
        #: acks refused from their head: no call of the session waits for that id
        self.stale_acks = 0
        #: acks dropped from their head without charge: the Server had given up on the call
        self.late_acks = 0
        #: events dropped from their head: no handler for the name, none to answer
        self.unhandled = 0
        #: told ``(eio_sid, DROP | CUT)`` of each refusal (the Server logs, rate-limited)
        self.notify: Callable[[str, int], None] | None = None

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "a2c_server_inbound_refused",
            "Packets dropped undecoded because their session was over its inbound budget",
            value=self.dropped,
        )
        yield CounterMetricFamily(
            "a2c_server_inbound_disconnects",
            "Sessions disconnected for sustained traffic over their inbound budget",
            value=self.cut,
        )
        yield CounterMetricFamily(
            "a2c_server_stale_acks_refused",
            "Acknowledgements dropped undecoded because no call of their session waits for the id",
            value=self.stale_acks,
        )
        yield CounterMetricFamily(
            "a2c_server_late_acks",
            "Answers that came after the Server stopped waiting for their call (timed out, "
            "or a party left), dropped undecoded without charging the sender's budget",
            value=self.late_acks,
        )
        yield CounterMetricFamily(
            "a2c_server_unhandled_events_refused",
            "Events dropped undecoded because no handler takes their name (notify:* from a "
            "client, made-up names)",
            value=self.unhandled,
        )


class InboundBudget:
    """The buckets of one session (see module doc). :meth:`take` never waits."""

    __slots__ = ("_abuse_since", "_burst", "_cancel_stamp", "_cancel_tokens", "_cut_after",
                 "_last_refusal", "_rate", "_stamp", "_tokens", "stats")  # fmt: skip

    def __init__(self, rate: float, burst: int, now: float, stats: InboundStats,
                 cut_after: float = 5.0) -> None:  # fmt: skip
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._stamp = now
        self._cancel_tokens = _CANCEL_BURST
        self._cancel_stamp = now
        self._cut_after = cut_after
        self._abuse_since = 0.0
        self._last_refusal = float("-inf")
        self.stats = stats

    def charge(self, cost: float, now: float) -> None:
        """Take ``cost`` more tokens (a refused packet); the debt is at most one burst."""
        tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        self._tokens = max(-self._burst, tokens - cost)

    def take(self, text: object, now: float) -> int:
        """ADMIT, DROP or CUT for one Socket.IO packet ``text`` arriving at ``now``."""
        tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if tokens >= 1.0:
            self._tokens = tokens - 1.0
            return ADMIT
        self._tokens = tokens
        # Over budget: a cancel still passes on its own bucket (the name is near the start).
        if isinstance(text, str) and _CANCEL in text[:64]:
            cancel = min(_CANCEL_BURST, self._cancel_tokens
                         + (now - self._cancel_stamp) * _CANCEL_RATE)  # fmt: skip
            self._cancel_stamp = now
            if cancel >= 1.0:
                self._cancel_tokens = cancel - 1.0
                return ADMIT
            self._cancel_tokens = cancel
        self.stats.dropped += 1
        # Abuse is sustained while refusals keep coming less than a second apart (a flood
        # is refused all the time even though the refill admits a packet now and then).
        if now - self._last_refusal > _PAUSE:
            self._abuse_since = now
        self._last_refusal = now
        if now - self._abuse_since >= self._cut_after:
            self.stats.cut += 1
            return CUT
        return DROP
