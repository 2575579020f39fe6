"""The console's feed across the nodes of a cluster, over one Redis channel.

A console viewer sees what the node it reaches relays; behind a balancer the calls and
office events of clients on other nodes never reached it. Rules:

* every node serving the console with ``--redis`` publishes its console records (a
  relayed call started, a call ended, an office event) on ``{prefix}:console``, and only
  while a console on another node has a viewer;
* whether one has is the channel's subscriber count (``PUBSUB NUMSUB``, less this node's
  own subscription), asked once a second by a background task, never on a call's path;
  with nobody watching anywhere the namespace's observer stays None and a relayed call
  costs one attribute check, as on one node;
* a node with at least one viewer subscribes to the channel on a connection of its own
  (from the publisher's pool), opened for its first viewer and closed with its last, and
  hands what the other nodes publish to its feed (its own messages are skipped: it
  recorded them already);
* records carry names only (office, event, tool, Computer, Agent, outcome), never
  arguments or results, as the feed keeps them; a message that does not decode is
  dropped with a DEBUG line (Redis is the deployment's own, not a peer).

Publishing reuses the node's replyless publisher (:meth:`MultiNode.publish_raw`), so the
records leave in order with the relay's own messages and cost no round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from a2c_server._observe._logs import cause, log

__all__ = ["ConsoleChannel"]

_log = logging.getLogger("a2c_server.console")

#: Seconds between two asks of the channel's subscriber count.
POLL: Final = 1.0
#: Seconds before a lost subscription is tried again.
RETRY: Final = 1.0


class ConsoleChannel:
    """Console records to and from the other nodes (see the module doc)."""

    def __init__(
        self,
        *,
        channel: str,
        node_id: str,
        publish: Callable[[str, bytes], None],
        subscribers: Callable[[str], Awaitable[int]],
        pubsub: Callable[[], Any],
    ) -> None:
        self.channel = channel
        self._pubsub = pubsub
        self._node_id = node_id
        self._publish = publish
        self._subscribers = subscribers
        #: Whether a console on another node has a viewer (as last asked).
        self.remote_watchers = False
        #: Called when :attr:`remote_watchers` changes (the feed attaches or detaches).
        self.changed: Callable[[], None] = lambda: None
        #: Called with each record another node published (set by the feed).
        self.deliver: Callable[[str, str, dict[str, Any]], None] = lambda node, kind, r: None
        self._subscribed = False
        self._poller: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        if self._poller is None:
            self._poller = asyncio.get_running_loop().create_task(self._poll())

    async def stop(self) -> None:
        for task in (self._poller, self._listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._poller = self._listener = None

    def watching(self, local: bool) -> None:
        """This node's console has viewers (``local``) or none any more."""
        if local and self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen())
        elif not local and self._listener is not None:
            self._listener.cancel()
            self._listener = None

    # -- out ---------------------------------------------------------------------------

    def send(self, kind: str, record: dict[str, Any]) -> None:
        """Publish one record for the other nodes' viewers (only while there are some)."""
        if self.remote_watchers:
            message = {"node": self._node_id, "kind": kind, "record": record}
            self._publish(self.channel, json.dumps(message, separators=(",", ":")).encode())

    async def _poll(self) -> None:
        failed = False
        while True:
            try:
                count = await self._subscribers(self.channel)
            except Exception as exc:  # Redis away: keep the last answer, say it once
                if not failed:
                    log(_log, logging.WARNING, "console: cannot ask who watches on other nodes",
                        reason=cause(exc))  # fmt: skip
                failed = True
            else:
                failed = False
                remote = count - (1 if self._subscribed else 0) > 0
                if remote != self.remote_watchers:
                    self.remote_watchers = remote
                    self.changed()
            await asyncio.sleep(POLL)

    # -- in ----------------------------------------------------------------------------

    async def _listen(self) -> None:
        while True:
            pubsub: Any = None
            try:
                pubsub = self._pubsub()
                await pubsub.subscribe(self.channel)
                self._subscribed = True
                async for message in pubsub.listen():
                    self._received(message.get("data"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log(_log, logging.WARNING, "console: lost the other nodes' feed, retrying",
                    reason=cause(exc), retry_in=RETRY)  # fmt: skip
            finally:
                self._subscribed = False
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()
            await asyncio.sleep(RETRY)

    def _received(self, data: Any) -> None:
        try:
            message = json.loads(data)
            node, kind, record = message["node"], message["kind"], message["record"]
        except (TypeError, ValueError, KeyError) as exc:
            log(_log, logging.DEBUG, "console: undecodable message on the cluster channel",
                reason=cause(exc))  # fmt: skip
            return
        if node == self._node_id or not isinstance(record, dict):
            return
        self.deliver(str(node), str(kind), record)
