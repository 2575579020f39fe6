"""A session in no office must join one in time.

A session in no office may only join, leave and list; it still holds its transport, its
subject's place under ``--max-connections-per-subject`` and, without a role, a ``pending``
slot in the metrics. A connect without ``auth.role`` that never joined held those for as
long as it liked (30 never-joining sessions were still connected after an hour); so did a
connect that announced its role and never joined, and a session that joined and then left.

Rules:

* every session gets ``join_timeout`` seconds to join an office, counted from its connect;
* a successful ``server:join_office`` stops the clock; a successful
  ``server:leave_office`` (the session is in no office again) starts it afresh, and so does
  a join the Server could not decide because its registry was unavailable (the Server's
  fault, not the client's: a Computer retrying through a Redis failover keeps its session);
* past the deadline the session is disconnected, with a folded WARNING ``connection
  closed: in no office for join_timeout`` naming the peer, the timeout and what started
  the clock (``since=connect``, ``leave`` or ``registry_unavailable``), counted in
  ``a2c_server_refusals_total{cause="join_deadline"}``;
* ``join_timeout`` 0 turns the deadline off.
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
    """One timer per session in no office; its peer kept until it disconnects."""

    def __init__(
        self, timeout: float, refusals: RefusalLog,
        close: Callable[[str], Coroutine[Any, Any, None]],
    ) -> None:  # fmt: skip
        self._timeout = timeout
        self._refusals = refusals
        self._close = close
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._peers: dict[str, str | None] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def connected(self, sid: str, peer: str | None) -> None:
        """``sid`` was admitted (in no office yet): it has ``timeout`` seconds to join."""
        if self._timeout > 0:
            self._peers[sid] = peer
            self._start(sid, "connect")

    def joined(self, sid: str) -> None:
        """``sid`` is in an office: no deadline while it stays there."""
        timer = self._timers.pop(sid, None)
        if timer is not None:
            timer.cancel()

    def left(self, sid: str) -> None:
        """``sid`` left its office and is in none: the clock starts afresh."""
        if sid in self._peers:
            self._start(sid, "leave")

    def undecided(self, sid: str) -> None:
        """A join of ``sid`` failed on the registry: if it is in no office, a fresh clock."""
        if sid in self._timers:
            self._start(sid, "registry_unavailable")

    def forget(self, sid: str) -> None:
        """``sid`` disconnected."""
        self.joined(sid)
        self._peers.pop(sid, None)

    def _start(self, sid: str, since: str) -> None:
        old = self._timers.pop(sid, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[sid] = loop.call_later(self._timeout, self._expired, sid, since)

    def _expired(self, sid: str, since: str) -> None:
        if self._timers.pop(sid, None) is None:
            return
        self._refusals.refused(CAUSE, "connection closed: in no office for join_timeout "
                               "(no server:join_office in time)", self._peers.get(sid),
                               sid=sid, timeout=self._timeout, since=since)  # fmt: skip
        task = asyncio.get_running_loop().create_task(self._close(sid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
