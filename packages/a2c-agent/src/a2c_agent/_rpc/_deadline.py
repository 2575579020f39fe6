"""How long a request waits for its answer: one event-loop timer that fails its future.

Every acked request arms one timer (``loop.call_at``) that sets :class:`AckTimeoutError`
on the answer's future when it fires, and cancels it once the answer is in. An
``asyncio.timeout`` block did the same job at about twice the CPU (a scope object, task
cancellation and its undoing), on every tool call.

A call with the progress extension's ``timeout_resets_on_progress`` needs a deadline it
can push back: :class:`Deadline` wraps the timer for that path only, with the three
methods of ``asyncio.Timeout`` that :mod:`._progress` uses.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2c_agent._exceptions import AckTimeoutError

__all__ = ["Deadline", "expire"]


def expire(future: asyncio.Future[Any], event: str, wait: float) -> None:
    """The timer's callback: no answer to ``event`` within ``wait`` seconds."""
    if not future.done():
        future.set_exception(AckTimeoutError(event, wait))


class Deadline:
    """A request's timer that progress reports may restart."""

    __slots__ = ("_event", "_future", "_handle", "_loop", "_wait")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], event: str, wait: float
    ) -> None:
        self._loop = loop
        self._future = future
        self._event = event
        self._wait = wait  # what the error reports, however often the deadline moved
        self._handle = loop.call_at(loop.time() + wait, expire, future, event, wait)

    def when(self) -> float | None:
        """The loop time the timer fires at (None once the wait is over)."""
        return None if self._future.done() else self._handle.when()

    def expired(self) -> bool:
        """Whether the wait is over: answered, failed or timed out."""
        return self._future.done()

    def reschedule(self, when: float | None) -> None:
        """Fire at loop time ``when`` instead (None: never); no-op once the wait is over."""
        if self._future.done():
            return
        self._handle.cancel()
        if when is not None:
            args = (self._future, self._event, self._wait)
            self._handle = self._loop.call_at(when, expire, *args)

    def cancel(self) -> None:
        """Stop the timer (the answer is in, or the request was abandoned)."""
        self._handle.cancel()
