"""Failed console logins, throttled per client address.

Each address has a small budget of failures that refills slowly; once spent, every
attempt from that address (a right token too, or it would still be confirmed by the
answer) is refused with 429 until the budget has refilled a little. Without it an admin
token could be guessed at the speed of the network. The table is bounded: past
``max_addresses`` the address idle longest is forgotten.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

__all__ = ["LoginThrottle"]

#: Failures an address may make in a burst, then one more per ``_REFILL`` seconds.
_BURST: Final = 5
_REFILL: Final = 10.0
_MAX_ADDRESSES: Final = 10_000


class LoginThrottle:
    def __init__(
        self,
        *,
        burst: int = _BURST,
        refill_seconds: float = _REFILL,
        max_addresses: int = _MAX_ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._burst = burst
        self._refill = refill_seconds
        self._max = max_addresses
        self._clock = clock
        # address -> (failures still allowed, when that was computed)
        self._budget: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _current(self, address: str) -> float:
        entry = self._budget.get(address)
        if entry is None:
            return float(self._burst)
        left, at = entry
        return min(float(self._burst), left + (self._clock() - at) / self._refill)

    def retry_after(self, address: str) -> float | None:
        """Seconds until ``address`` may try again, or None if it may try now."""
        left = self._current(address)
        if left >= 1.0:
            return None
        return (1.0 - left) * self._refill

    def failed(self, address: str) -> None:
        """Count one failed attempt from ``address``."""
        left = max(0.0, self._current(address) - 1.0)
        self._budget[address] = (left, self._clock())
        self._budget.move_to_end(address)
        while len(self._budget) > self._max:
            self._budget.popitem(last=False)
