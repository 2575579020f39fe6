"""Ack ids the Server stopped waiting for, so their late answers cost nothing.

An acknowledgement whose id no call waits for is refused from its head and costs its
session :data:`~a2c_server._floods._inbound.REFUSED_COST` packets of its inbound budget:
forged or flooded acks get a session cut. But when the Server itself gave up on a call (it
timed out, or the Agent, the Computer or the Server went away first), the Computer's
answer still comes, late, and is no abuse: a few short-timeout calls to a slow tool put
the office's own Computer over its budget (8 late answers, 400 packets) and its next,
timely answers were dropped. :class:`GivenUp` remembers, per session, the ids the Server
gave up on; a late answer to one of them is dropped without charge, once (a second ack for
the same id is a stale one again). Bounded: at most ``per_session`` ids a session, the
oldest forgotten first, and a session's ids go with it.

Pure: no I/O; the Socket.IO server (:mod:`a2c_server._relay._sio`) records and asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["GivenUp"]

#: Ids remembered per session: a slow tool with thousands of calls timed out at once is
#: past what one Computer serves honestly; their oldest answers are charged again.
PER_SESSION: Final = 1024


class GivenUp:
    """The ack ids each session's calls were given up on (see module doc)."""

    __slots__ = ("_ids", "_per_session")

    def __init__(self, per_session: int = PER_SESSION) -> None:
        self._per_session = per_session
        self._ids: dict[str, dict[int, None]] = {}  # eio_sid -> ids, oldest first

    def add(self, eio_sid: str, ack_ids: Iterable[int]) -> None:
        """The Server stopped waiting for ``ack_ids`` of ``eio_sid``."""
        ids = self._ids.get(eio_sid)
        for ack_id in ack_ids:
            if ids is None:
                ids = self._ids[eio_sid] = {}
            ids[ack_id] = None
            if len(ids) > self._per_session:
                del ids[next(iter(ids))]

    def take(self, eio_sid: str, ack_id: int | None) -> bool:
        """Whether ``ack_id`` is a late answer of ``eio_sid`` (forgotten from now on)."""
        ids = self._ids.get(eio_sid)
        if ids is None or ack_id not in ids:
            return False
        del ids[ack_id]
        if not ids:
            del self._ids[eio_sid]
        return True

    def forget(self, eio_sid: str) -> None:
        """``eio_sid`` ended: its ids go with it."""
        self._ids.pop(eio_sid, None)

    def __len__(self) -> int:
        return sum(len(ids) for ids in self._ids.values())
