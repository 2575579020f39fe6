"""A call to a Computer whose node just died: find the Computer again under its name.

When a node dies its sessions stay in the registry until a survivor reaps them (up to
``node_ttl``), while its clients reconnect to another node and take their names back
(usually within a second). A call routed in that window found the Computer's old session,
whose node no longer listens on Redis, and was refused 503 "Registry unavailable" although
Redis was healthy (``_recovery.require_listener``). Here the call looks the name up again
until it names a session whose node listens (the reconnected Computer), the name is gone
(a plain 404 follows), or the hold runs out (the 503 follows, as before: nothing was sent).

Only a call whose target's node is not known to listen pays for this; the hot path asks
one dict (the publisher's audience) and goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from a2c_server._state._rules import Member

from ._redis_store import RedisStateStore

__all__ = ["Rehoming"]

#: Seconds between two lookups of a name whose session's node does not listen.
LOOK_AGAIN: Final = 0.1


class Rehoming:
    """Follows a Computer's name from a dead node's session to its reconnected one."""

    def __init__(
        self,
        store: RedisStateStore,
        *,
        known_heard: Callable[[str], bool | None],
        heard: Callable[[str], Awaitable[bool]],
        hold: float,
        listening: Callable[[], bool] = lambda: True,
    ) -> None:
        self.store = store
        self._listening = listening
        self._known_heard = known_heard
        self._heard = heard
        #: The longest a call waits for its Computer to come back (its own wait may be less).
        self.hold = hold

    def unheard(self, sid: str) -> bool:
        """Whether ``sid`` is hosted by another node not known to listen (no I/O)."""
        node = self.store.node_of(sid)
        if node is None or node == self.store.node_id:
            return False
        return self._known_heard(node) is not True

    async def follow(self, office_id: str, name: str, target: Member, wait: float) -> Member | None:
        """The session to route to: ``target``, its successor under ``name``, or None."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(self.hold, wait)
        while True:
            if not self._listening():
                return target  # this node cannot hear an answer: the 503 says so at once
            node = self.store.node_of(target.sid)
            if node is None or node == self.store.node_id or await self._heard(node):
                return target
            if loop.time() >= deadline:
                return target  # still unheard: the publisher's 503 says so
            await asyncio.sleep(LOOK_AGAIN)
            found = await self.store.member_named(office_id, name)
            if found is None:
                return None
            target = found
