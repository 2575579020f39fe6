"""The coalescing rule of the progress extension: at most one report per interval per call.

Pure (no clock of its own, no I/O): the caller passes ``now`` and performs the effects.
A report that arrives too early is held as the call's *pending* one, replacing an older
pending one (only the latest matters), and is due at :meth:`ProgressGate.due`; the caller
flushes it then, so the last report of a burst is never lost, only the ones between.
"""

from __future__ import annotations

from typing import Final, Generic, TypeVar

__all__ = ["PROGRESS_MIN_INTERVAL", "ProgressGate"]

PROGRESS_MIN_INTERVAL: Final = 0.1
"""Seconds between two reports of one call that are passed on (≤ 10 per second)."""

T = TypeVar("T")


class ProgressGate(Generic[T]):
    """One call's gate: :meth:`offer` says whether a report passes now."""

    __slots__ = ("_interval", "_last", "_pending")

    def __init__(self, interval: float = PROGRESS_MIN_INTERVAL) -> None:
        self._interval = interval
        self._last: float | None = None
        self._pending: T | None = None

    def offer(self, report: T, now: float) -> bool:
        """True: pass ``report`` on now. False: it is held (see :meth:`due`)."""
        if self._last is None or now - self._last >= self._interval:
            self._last = now
            self._pending = None
            return True
        self._pending = report
        return False

    def due(self) -> float | None:
        """When the held report may pass; None when nothing is held."""
        if self._pending is None or self._last is None:
            return None
        return self._last + self._interval

    def take(self, now: float) -> T | None:
        """The held report if it is due at ``now`` (it then counts as passed), else None."""
        due = self.due()
        if due is None or now < due:
            return None
        report, self._pending = self._pending, None
        self._last = now
        return report
