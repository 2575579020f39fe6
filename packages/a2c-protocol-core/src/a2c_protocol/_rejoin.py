"""Getting back into the office after a reconnect: the rules both clients follow.

A client whose Server node died reconnects through the balancer to another node in about a
second, while its old session may still hold its name (and, for an Agent, the office's
seat) until the dead node is reaped (``--node-ttl``, 6 s by default, plus a reaper tick).

Rules:

* RJ1 Each client instance makes one reclaim secret (:func:`new_reclaim_secret`) and sends
  it as ``auth.a2c_reclaim`` on every connect. A Server of this project lets the session
  that presents it take its own name and seat back at once (docs/server.md, "A node
  dies"); other Servers ignore the field.
* RJ2 A re-join refused because the name or the seat is held (:func:`join_refusal_may_pass`:
  the phrasings of this project's Server and of the official one), or because the
  registry is unavailable, may pass: the holder may be this client's own session on a
  node nobody has reaped yet. It is tried again after :func:`rejoin_delays` (0, 1, 2, 4,
  8, 8, ... s, a quarter of jitter) for at least :data:`REJOIN_BUDGET` seconds, ten times
  the default ``--node-ttl``; :class:`HeldWait` keeps one such wait (what a client does
  once the budget is spent, and what it logs, stays its own).
* RJ3 Any other refused join (a grant that forbids the office, a role mismatch, a bad
  name) cannot pass by waiting: it is final, as is a refused token or version.
"""

from __future__ import annotations

import itertools
import random
import secrets
from collections.abc import Iterator
from typing import Final

from ._handshake import reconnect_delays

__all__ = [
    "RECLAIM_AUTH_KEY",
    "REJOIN_BUDGET",
    "HeldWait",
    "join_refusal_may_pass",
    "new_reclaim_secret",
    "rejoin_delays",
    "seat_held_refusal",
]

#: The connect ``auth`` field carrying a client's reclaim secret (RJ1).
RECLAIM_AUTH_KEY: Final = "a2c_reclaim"
#: How long a refused re-join that may pass is tried again, at least (RJ2).
REJOIN_BUDGET: Final = 60.0

# How a Server refusing the office's only Agent seat says so: the protocol's seat
# sentence (this project's Server), the official Server's wording.
_SEAT_HELD: Final = ("already has an agent", "agent already in room")
# What a refusal that may pass says: a held name (this project's Server, the official
# one's wording) or seat, or a registry that is away.
_HELD: Final = (
    "is already taken in office",
    "already registered by sid",
    *_SEAT_HELD,
    "registry unavailable",
)


def new_reclaim_secret() -> str:
    """A fresh secret for one client instance (RJ1): 43 URL-safe characters, 256 bits."""
    return secrets.token_urlsafe(32)


def join_refusal_may_pass(reason: str | None) -> bool:
    """RJ2/RJ3: whether a refused join's ``reason`` may pass by trying again later."""
    return _says_any(reason, _HELD)


def seat_held_refusal(reason: str | None) -> bool:
    """Whether a refused join's ``reason`` says the office's one Agent seat is taken."""
    return _says_any(reason, _SEAT_HELD)


def _says_any(reason: str | None, phrases: tuple[str, ...]) -> bool:
    if not reason:
        return False
    text = reason.casefold()
    return any(phrase in text for phrase in phrases)


def rejoin_delays(*, rng: random.Random | None = None) -> Iterator[float]:
    """RJ2: endless delays before each new try: 0, 1, 2, 4, then 8 s, each but the first
    within a quarter either way, so the clients of one dead node do not retry in step."""
    return itertools.chain((0.0,), reconnect_delays(initial=1.0, maximum=8.0, rng=rng))


class HeldWait:
    """RJ2 for one wait out of a held name or seat: when it began, the delays still to come,
    and whether the budget is spent. No clock of its own: callers pass ``now``
    (``time.monotonic()``), so the rule is tested without waiting."""

    __slots__ = ("_delays", "since")

    def __init__(self, now: float, *, rng: random.Random | None = None) -> None:
        self.since = now
        self._delays = rejoin_delays(rng=rng)

    def next_delay(self) -> float:
        """The wait before the next try (:func:`rejoin_delays`)."""
        return next(self._delays)

    def waited(self, now: float) -> float:
        """Seconds since the wait began."""
        return now - self.since

    def spent(self, budget: float | None, now: float) -> bool:
        """Whether the wait has outlasted ``budget`` seconds (None: it never does)."""
        return budget is not None and self.waited(now) > budget
