"""Sessions admitted without a role must join an office in time.

A connect without ``auth.role`` is admitted (the official SDKs never send one; see
docs/compatibility.md) and its first ``server:join_office`` settles its role. Until then
it is in no office and may only join, leave and list; a client that never joins held its
session, its subject's place under ``--max-connections-per-subject`` and a ``pending``
slot in the metrics for as long as it liked (30 never-joining sessions were still
connected after 14 s, and after an hour). :class:`JoinDeadlines` gives each such session
``join_timeout`` seconds; past it the session is disconnected, with a folded WARNING
``connection closed: no server:join_office in time after a connect without auth.role``
naming the peer and the timeout, counted in ``a2c_server_refusals_total{cause="join_deadline"}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Final

from a2c_server._floods._refusals import RefusalLog

__all__ = ["CAUSE", "JoinDeadlines"]

#: The ``cause`` label of a session closed for not joining in time.
CAUSE: Final = "join_deadline"


class JoinDeadlines:
    """One timer per role-less session, cancelled by its first successful join."""

    def __init__(
        self, timeout: float, refusals: RefusalLog,
        close: Callable[[str], Coroutine[Any, Any, None]],
    ) -> None:  # fmt: skip
        self._timeout = timeout
        self._refusals = refusals
        self._close = close
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def arm(self, sid: str, peer: str | None) -> None:
        """``sid`` was admitted without a role: it has ``timeout`` seconds to join."""
        if self._timeout > 0 and sid not in self._timers:
            loop = asyncio.get_running_loop()
            self._timers[sid] = loop.call_later(self._timeout, self._expired, sid, peer)

    def settled(self, sid: str) -> None:
        """``sid`` joined (its role is settled), or left: no deadline any more."""
        timer = self._timers.pop(sid, None)
        if timer is not None:
            timer.cancel()

    def _expired(self, sid: str, peer: str | None) -> None:
        if self._timers.pop(sid, None) is None:
            return
        self._refusals.refused(CAUSE, "connection closed: no server:join_office in time after "
                               "a connect without auth.role", peer, sid=sid,
                               timeout=self._timeout)  # fmt: skip
        task = asyncio.get_running_loop().create_task(self._close(sid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
