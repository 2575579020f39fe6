"""The announcer of the core: who is told about changes, and the background tasks that tell.

It alone holds the listeners told about ``server:update_*`` worthy changes, the server
observers (told as MCP servers come, go and change their resources) and the background
tasks started to tell them. It decides nothing about servers, tools or calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from a2c_protocol import Event

from ._observers import ServerObserver

__all__ = ["Announcer", "UpdateListener"]

logger = logging.getLogger("a2c_computer")


#: Called with ``Event.UPDATE_CONFIG`` / ``UPDATE_TOOL_LIST`` / ``UPDATE_DESKTOP``.
UpdateListener: TypeAlias = Callable[[Event], Awaitable[None] | None]


class Announcer:
    """Listeners, server observers and the background tasks that tell them."""

    def __init__(self) -> None:
        self._listeners: list[UpdateListener] = []
        self._observers: list[ServerObserver] = []
        self._side: set[asyncio.Task[Any]] = set()

    def add_observer(self, observer: ServerObserver) -> None:
        self._observers.append(observer)

    async def tell(self, event: str, *args: Any, **kwargs: Any) -> None:
        """Call ``event`` on every server observer; a failure is logged, not raised."""
        for observer in list(self._observers):
            try:
                await getattr(observer, event)(*args, **kwargs)
            except Exception as exc:
                logger.warning("server observer %s failed: %s", event, exc)

    def add_listener(self, listener: UpdateListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: UpdateListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    async def announce(self, event: Event) -> None:
        """Tell every listener about ``event``; a failure is logged, not raised."""
        logger.debug("change: %s", event)
        for listener in list(self._listeners):
            try:
                outcome = listener(event)
                if outcome is not None:
                    await outcome
            except Exception:
                logger.exception("update listener failed for %s", event)

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in the background until it ends or :meth:`close` cancels it."""
        task = asyncio.ensure_future(coro)
        self._side.add(task)
        task.add_done_callback(self._side.discard)

    async def close(self) -> None:
        """Cancel the background tasks and wait for them to end."""
        for task in list(self._side):
            task.cancel()
        await asyncio.gather(*self._side, return_exceptions=True)
