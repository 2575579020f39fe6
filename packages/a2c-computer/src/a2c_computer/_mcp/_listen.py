"""2026-07-28 change notifications: :class:`ChangeStream`, one ``subscriptions/listen``
stream per modern session.

In the handshake era an MCP server pushes ``notifications/tools/list_changed``,
``resources/list_changed`` and ``resources/updated`` (after ``resources/subscribe``) on its
session. In 2026-07-28 there is no session and no ``resources/subscribe``: a client opens a
``subscriptions/listen`` stream naming what it wants, and the server sends those
notifications on it only. Rules:

* the stream asks for tool and resource list changes where the server declares
  ``listChanged``, and for updates of every resource URI the Computer subscribed to
  (``resources/subscribe`` on a modern session lands in :meth:`ChangeStream.watch`);
* the notifications reach the session's message handler like handshake-era ones (mcp
  tees them), so the Computer handles both eras in one place; this stream only keeps the
  subscription open;
* a new URI re-opens the stream with it; a stream the server ends, or that is lost, is
  re-opened after a pause (0.5 s, doubling up to 15 s) and the lists are re-read
  (``on_gap``: no notification is replayed); a server that refuses ``subscriptions/listen``
  is logged once and not asked again in this session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
from mcp import ClientSession, MCPError
from mcp.client.subscriptions import Subscription, SubscriptionLost, listen
from mcp.types import ServerCapabilities

from a2c_protocol import reconnect_delays

__all__ = ["ChangeStream"]

logger = logging.getLogger("a2c_computer.mcp")


class ChangeStream:
    """Keeps one ``subscriptions/listen`` stream open for a modern session."""

    def __init__(
        self,
        session: ClientSession,
        server: str,
        capabilities: ServerCapabilities | None,
        on_gap: Callable[[], None],
    ) -> None:
        self._session = session
        self._server = server
        caps = capabilities
        self._tools = bool(caps and caps.tools and caps.tools.list_changed)
        self._resources = bool(caps and caps.resources and caps.resources.list_changed)
        self._on_gap = on_gap
        self._uris: set[str] = set()
        self._changed = anyio.Event()
        #: The stream is open (the server acknowledged it).
        self.open = False

    def watch(self, uri: str) -> None:
        """Also receive ``notifications/resources/updated`` for ``uri``."""
        if uri not in self._uris:
            self._uris.add(uri)
            self._changed.set()

    def forget(self, uri: str) -> None:
        if uri in self._uris:
            self._uris.discard(uri)
            self._changed.set()

    async def run(self) -> None:
        """Until cancelled (the session's end)."""
        delays = reconnect_delays(initial=0.5, maximum=15.0)
        opened_before = False
        while True:
            changed = self._changed = anyio.Event()
            if not (self._tools or self._resources or self._uris):
                await changed.wait()
                continue
            ended = True
            try:
                async with listen(
                    self._session,
                    tools_list_changed=self._tools,
                    resources_list_changed=self._resources,
                    resource_subscriptions=sorted(self._uris),
                ) as subscription:
                    if opened_before:
                        self._on_gap()  # what changed while no stream was open is unknown
                    opened_before = self.open = True
                    try:
                        ended = await _until_ended_or(subscription, changed)
                    finally:
                        self.open = False
            except MCPError as exc:
                logger.info(
                    "MCP server %s refuses subscriptions/listen (MCP error %s: %s): no change "
                    "notifications from it",
                    self._server,
                    exc.code,
                    exc.message,
                )
                return
            except (SubscriptionLost, TimeoutError) as exc:
                logger.debug("MCP server %s: change stream lost: %s", self._server, exc)
            if ended:
                await anyio.sleep(next(delays))
            else:
                delays = reconnect_delays(initial=0.5, maximum=15.0)


async def _until_ended_or(subscription: Subscription, changed: anyio.Event) -> bool:
    """Consume ``subscription`` until it ends (True) or ``changed`` is set (False).

    The events reach the message handler through mcp's tee; they are only consumed here,
    so the subscription's backlog stays empty.
    """
    ended = False
    async with anyio.create_task_group() as tasks:

        async def drain() -> None:
            nonlocal ended
            try:
                async for _ in subscription:
                    pass
            except SubscriptionLost as exc:
                logger.debug("change stream lost: %s", exc)
            ended = True
            tasks.cancel_scope.cancel()

        async def until_changed() -> None:
            await changed.wait()
            tasks.cancel_scope.cancel()

        tasks.start_soon(drain)
        tasks.start_soon(until_changed)
    return ended
