"""The Socket.IO side of :class:`a2c_server._floods._notices.NoticeCoalescer`.

A relayed ``server:update_*`` asks :meth:`CoalescedNotices.send`: it is broadcast now, or
held and broadcast by a timer when its interval ends (the last one held wins). The
broadcast happens on the sender's node before anything is published, so with ``--redis``
the other nodes see the coalesced stream too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from a2c_protocol import Event
from a2c_server._floods._notices import NoticeCoalescer
from a2c_server._observe._logs import log

__all__ = ["CoalescedNotices"]

_log = logging.getLogger("a2c_server.namespace")
_PRUNE_EVERY = 1024  # held-free slots are swept after this many offers

Emit = Callable[[str, Any, str, str], Awaitable[None]]  # (notify event, notice, office, skip_sid)


class CoalescedNotices:
    """Broadcasts ``notify:update_*`` for a sender at most once per ``interval`` seconds."""

    def __init__(self, interval: float, emit: Emit,
                 coalesced: Callable[[str], None] | None = None) -> None:  # fmt: skip
        self._rule = NoticeCoalescer(interval)
        self._emit = emit
        self._coalesced = coalesced  # told the sender of each notice replaced unsent
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._offers = 0

    async def send(self, sid: str, notify: Event, notice: Any, office: str) -> None:
        """Broadcast ``notice`` to ``office`` (without ``sid``) now or at its interval's end."""
        now = time.monotonic()
        self._offers += 1
        if self._offers % _PRUNE_EVERY == 0:
            self._rule.prune(now)
        key = (sid, notify.value)
        due = self._rule.offer(key, (notice, office), now)
        if due is None:
            await self._emit(notify.value, notice, office, sid)
        elif due >= 0:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_at(loop.time() + max(0.0, due - now), self._fire, key)
        elif self._coalesced is not None:
            self._coalesced(sid)

    def forget(self, sid: str) -> None:
        """``sid`` left: what it still held is stale (its office hears it leave)."""
        self._rule.forget(sid)
        for key in [k for k in self._timers if k[0] == sid]:
            self._timers.pop(key).cancel()

    def _fire(self, key: tuple[str, str]) -> None:
        self._timers.pop(key, None)
        held = self._rule.due(key, time.monotonic())
        if held is None:
            return
        notice, office = held
        task = asyncio.create_task(self._deliver(key, notice, office))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, key: tuple[str, str], notice: Any, office: str) -> None:
        try:
            await self._emit(key[1], notice, office, key[0])
        except Exception as exc:  # a registry or pub/sub error: the next notice retries
            log(_log, logging.WARNING, "held notice not sent", sid=key[0], event=key[1],
                reason=exc)  # fmt: skip
