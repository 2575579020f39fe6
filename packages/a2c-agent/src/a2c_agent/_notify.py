"""Notification plumbing of the Agent: async-iterator streams and listener sets.

Kept apart from the agent's transport code: a stream is registered the moment it is
created, so a notification that arrives before the first ``__anext__`` is not lost.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from a2c_protocol import Event

from ._types import AgentNotification

__all__ = ["Listeners", "NotificationStream"]

logger = logging.getLogger("a2c_agent")

_END = object()


class NotificationStream:
    """An async iterator of notifications; registered from the moment it is created.

    It ends when the agent closes, or when :meth:`close` is called. Use it as
    ``async with agent.notifications() as stream: async for n in stream: ...``.
    """

    def __init__(self, events: frozenset[Event] | None, on_close: Callable[[], None]) -> None:
        self._events = events
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._on_close = on_close
        self._closed = False

    def _offer(self, notification: AgentNotification) -> None:
        if not self._closed and (self._events is None or notification.event in self._events):
            self._queue.put_nowait(notification)

    def close(self) -> None:
        """Stop the stream; iteration ends after the notifications already queued."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(_END)
            self._on_close()

    def __aiter__(self) -> NotificationStream:
        return self

    async def __anext__(self) -> AgentNotification:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)
            raise StopAsyncIteration
        assert isinstance(item, AgentNotification)  # only _offer and close put items
        return item

    async def __aenter__(self) -> NotificationStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class Listeners:
    """Callbacks of one kind; sync ones run inline, coroutine ones as tracked tasks."""

    def __init__(self, spawn: Callable[[Awaitable[Any]], None]) -> None:
        self._callbacks: list[Callable[..., Any]] = []
        self._spawn = spawn

    def add(self, callback: Callable[..., Any]) -> Callable[[], None]:
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def __bool__(self) -> bool:
        return bool(self._callbacks)

    def fire(self, *args: Any) -> None:
        for callback in list(self._callbacks):
            try:
                result = callback(*args)
            except Exception:
                logger.exception("listener %r failed", callback)
                continue
            if inspect.isawaitable(result):
                self._spawn(result)
