"""What every session's outgoing queue holds, added up for the whole process.

Each client has its own cap (``max_outgoing_bytes``); with many clients that stop reading
at once, the caps add up (1,000 non-readers x 16 MB = 16 GB). :class:`OutputBudget` is the
second bound: the bytes queued for all sessions of this process together. While the total
is over ``limit``, a session that holds more than ``fair_share`` of it is dropped as a
slow consumer the next time something is sent to it; sessions that read promptly hold
little and keep flowing. The counts feed ``/metrics``.

Plain counters, no I/O: the Engine.IO socket charges and releases (see the fence).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["DEFAULT_MAX_QUEUED_OUTPUT_BYTES", "FAIR_SHARE", "OutputBudget", "packet_size"]

#: Default bound on the bytes queued for all clients of one process together.
DEFAULT_MAX_QUEUED_OUTPUT_BYTES: Final = 256_000_000
#: Past the budget, what one session may still hold without being dropped for it.
FAIR_SHARE: Final = 1_000_000


def packet_size(pkt: Any) -> int:
    """The bytes an Engine.IO packet holds in a queue (its text or bytes; 0 otherwise)."""
    data = getattr(pkt, "data", None)
    return len(data) if isinstance(data, str | bytes) else 0


class OutputBudget:
    """The process's queued output bytes, its limit, and why sessions were dropped."""

    __slots__ = ("after_drop", "drops", "fair_share", "limit", "peak", "total")

    def __init__(self, limit: int = DEFAULT_MAX_QUEUED_OUTPUT_BYTES,
                 fair_share: int = FAIR_SHARE) -> None:  # fmt: skip
        self.limit = limit
        self.fair_share = min(fair_share, limit)
        self.total = 0
        self.peak = 0
        #: sessions dropped, by cause (``client_limit``, ``process_budget``, ``ping_timeout``)
        self.drops: dict[str, int] = {}
        #: called after each drop (the Server trims the heap then)
        self.after_drop: Callable[[], None] | None = None

    def charge(self, size: int) -> None:
        self.total += size
        if self.total > self.peak:
            self.peak = self.total

    def release(self, size: int) -> None:
        self.total = max(0, self.total - size)

    def exhausted_by(self, held: int) -> bool:
        """Whether a session holding ``held`` bytes must go because the process is over budget."""
        return self.total > self.limit and held > self.fair_share

    def dropped(self, cause: str) -> None:
        self.drops[cause] = self.drops.get(cause, 0) + 1
        if self.after_drop is not None:
            self.after_drop()
