"""List changes told to MCP hosts, in the era each host speaks.

Rules:

* a handshake-era connection hears ``notifications/tools/list_changed`` and
  ``notifications/resources/list_changed`` on its own channel once it has made a request
  (hosts list tools first); the newest :data:`MAX_SESSIONS` connections are kept, the
  oldest forgotten, one whose transport went away is dropped at its first failed send;
* a 2026-07-28 host has no connection to push to: it opens a ``subscriptions/listen``
  stream, and every change is published on the bus its :attr:`ListChanges.listen` handler
  serves (only the kinds each stream asked for reach it);
* sending never blocks the caller (the Agent's listeners): each send is a task of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

__all__ = ["MAX_SESSIONS", "ListChanges"]

logger = logging.getLogger("a2c_agent.bridge")

#: handshake-era connections told of list changes (an HTTP bridge may see many hosts)
MAX_SESSIONS: Final = 256


class ListChanges:
    """Whom to tell that the tool or resource list changed (see module rules)."""

    def __init__(self) -> None:
        self._bus = InMemorySubscriptionBus()
        #: serves ``subscriptions/listen`` (2026-07-28 hosts)
        self.listen = ListenHandler(self._bus)
        # One ``ServerSession`` per handshake connection (mcp 2 builds one per request; any
        # of them reaches the connection's standalone channel), keyed by the connection's
        # ``initialize`` params: the same object for all its requests, held so its id
        # stays unique.
        self._sessions: OrderedDict[int, tuple[object, ServerSession]] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def remember(self, ctx: ServerRequestContext[Any]) -> None:
        """Note the connection of a handshake-era request (a modern one has none)."""
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return
        session = ctx.session
        key = session.client_params
        self._sessions[id(key)] = (key, session)
        self._sessions.move_to_end(id(key))
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)

    def tools(self) -> None:
        """The served tool list changed."""
        self._tell(lambda s: s.send_tool_list_changed(), ToolsListChanged())

    def resources(self) -> None:
        """A Computer entered or left, or a desktop changed."""
        self._tell(lambda s: s.send_resource_list_changed(), ResourcesListChanged())

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _tell(self, send: Callable[[ServerSession], Awaitable[None]], event: ServerEvent) -> None:
        self._spawn(self._bus.publish(event))
        for key, (_, session) in list(self._sessions.items()):
            self._spawn(self._send(key, session, send))

    async def _send(
        self, key: int, session: ServerSession, send: Callable[[ServerSession], Awaitable[None]]
    ) -> None:
        try:
            await send(session)
        except Exception as exc:  # a connection whose transport went away
            logger.debug("notification not delivered: %s", exc)
            self._sessions.pop(key, None)
