"""Publishing Socket.IO messages to Redis pub/sub, without waiting for Redis's answers.

A round trip per PUBLISH (send, wait, wake up, parse the reply) was a large part of what a
call crossing nodes cost over one node: it makes two publishes, one per direction. Redis's
answer to PUBLISH is only the number of subscribers, and pub/sub delivery is at-most-once
whatever that number says, so the publisher turns replies off on its own connection
(``CLIENT REPLY OFF``) and writes what queued up in one go.

What the count was used for (is anyone listening on a node's channel?) comes from
``PUBSUB NUMSUB`` instead, asked once per channel and remembered briefly by
:class:`Audience`. NUMSUB counts subscribers of that exact channel, so a monitoring
``PSUBSCRIBE`` can no longer make a dead node's channel look heard.

The PUBLISH commands are packed by :mod:`a2c_server._cluster._resp`, not by redis-py's
general packer, which was the largest part of a publish's CPU. The connection's stream
reader and writer are redis-py internals, reached through the fence
(:mod:`a2c_server._upstream._redis`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Protocol

from redis import asyncio as aioredis

from a2c_server._observe._logs import cause, log
from a2c_server._observe._metrics import PubSubCounts
from a2c_server._upstream._redis_conn import (
    closed_by_peer,
    connection_address,
    connection_writer,
    fresh_connection,
    send_packed,
)

from ._redis_conn import close_redis
from ._resp import pack_publish

__all__ = ["Audience", "PublishTransport", "Publisher", "ReplylessPublish"]

#: A message's text: a str is sent as UTF-8 (what redis-py's default encoder does).
Payload = str | bytes

_log = logging.getLogger("a2c_server.multinode")

AUDIENCE_TTL = 1.0
"""Seconds a channel's subscriber count is trusted. A node that went away is heard for at
most this long (its sessions went with it); a node that just came up, after this long."""

WRITE_NOW_LIMIT = 1 << 20
"""Bytes waiting in the connection's buffer past which a batch waits for it to drain."""

FLUSH_TIMEOUT = 2.0
"""Seconds :meth:`Publisher.aclose` lets queued messages leave before it gives up on them."""


class Audience:
    """Whether a channel has subscribers, as Redis last said, for ``ttl`` seconds. No I/O."""

    def __init__(self, ttl: float = AUDIENCE_TTL) -> None:
        self.ttl = ttl
        self._known: dict[str, tuple[bool, float]] = {}

    def heard(self, channel: str, now: float) -> bool | None:
        """True or False while the last answer is fresh; None when Redis must be asked."""
        known = self._known.get(channel)
        if known is None or now - known[1] >= self.ttl:
            return None
        return known[0]

    def learn(self, channel: str, subscribers: int, now: float) -> None:
        self._known[channel] = (subscribers > 0, now)


class PublishTransport(Protocol):
    """Writes PUBLISH commands in order, and counts a channel's subscribers."""

    def write_now(self, batch: list[tuple[str, Payload]]) -> bool:
        """Write ``batch`` without waiting when the connection is open and keeping up.

        False means nothing was written: the batch takes :meth:`ready` and :meth:`send`.
        """

    async def ready(self) -> None:
        """Connect if needed. Raising here means nothing of the next batch was written."""

    async def send(self, batch: list[tuple[str, Payload]]) -> None:
        """Write ``batch`` (after :meth:`ready`). Raising here: part of it may have arrived."""

    async def subscribers(self, channel: str) -> int: ...

    async def aclose(self) -> None: ...


class ReplylessPublish:
    """PUBLISH on a redis-py connection of its own with replies turned off.

    Redis never writes to this connection, so anything readable on it means it was
    closed: it is checked before each write, and a closed connection is opened again
    (with ``CLIENT REPLY OFF`` again) instead of writing into a socket nobody reads.
    """

    def __init__(self, pool: aioredis.ConnectionPool | str, **options: Any) -> None:
        # A pool from _redis_conn.redis_pool (behind Sentinel: it asks for the primary on
        # each connect), or a plain redis:// URL.
        self._pool = (
            aioredis.ConnectionPool.from_url(pool, **options) if isinstance(pool, str) else pool
        )
        self._client = aioredis.Redis(connection_pool=self._pool)
        # The pool's class and settings (TLS, unix socket, auth), but not one of its connections.
        self._conn: Any = fresh_connection(self._pool)

    def write_now(self, batch: list[tuple[str, Payload]]) -> bool:
        conn = self._conn
        writer = connection_writer(conn)
        if writer is None or not conn.is_connected or closed_by_peer(conn):
            return False
        transport = writer.transport
        if transport.is_closing() or transport.get_write_buffer_size() > WRITE_NOW_LIMIT:
            return False
        # The transport takes the bytes now (buffering what the socket does not): no
        # task, no await, where the awaited write was a task per batch.
        writer.write(pack_publish(batch))
        return True

    async def send(self, batch: list[tuple[str, Payload]]) -> None:
        conn = self._conn
        if not conn.is_connected:
            # redis-py would reconnect by itself, without CLIENT REPLY OFF, and the
            # replies would pile up unread.
            raise ConnectionError("the publishing connection closed before the write")
        await send_packed(conn, [pack_publish(batch)])

    async def ready(self) -> None:
        conn = self._conn
        if closed_by_peer(conn):
            await conn.disconnect()
        if not conn.is_connected:
            await conn.connect()
            await conn.send_command("CLIENT", "REPLY", "OFF", check_health=False)

    async def reconnect(self, primary: Any) -> None:
        """The primary moved to ``primary`` (host, port): drop the connection unless it
        is connected there; the next batch connects again."""
        if connection_address(self._conn) != primary:
            await self._conn.disconnect()
        await self._pool.disconnect(inuse_connections=False)

    async def subscribers(self, channel: str) -> int:
        ((_, count),) = await self._client.pubsub_numsub(channel)
        return int(count)

    def pubsub(self) -> Any:
        """A redis-py ``PubSub`` on this pool (its own connection while subscribed)."""
        return self._client.pubsub(ignore_subscribe_messages=True)

    async def aclose(self) -> None:
        await self._conn.disconnect()
        await self._client.aclose()
        await close_redis(self._pool)


_MIDWAY = (
    "publish to Redis failed midway: messages may be lost (not sent again, part may have arrived)"
)


class Publisher:
    """PUBLISH in order, with what queued up meanwhile written together.

    :meth:`publish` only queues: a flush at the end of the loop turn writes the queue in
    one write, at once when the connection is open and keeping up, else in a task that
    (re)connects first, one batch at a time, so the order per channel (and across
    channels) is kept. When no connection can be made (nothing was written) the batch is
    tried once more; a write that fails is not repeated, since part of it may have reached
    Redis and a call delivered twice would run its tool twice. Either way what is lost is
    logged at ERROR with how many messages, on which channels and why, never dropped
    silently.
    """

    def __init__(
        self,
        transport: PublishTransport,
        *,
        audience: Audience | None = None,
        counts: PubSubCounts | None = None,
    ) -> None:
        self.transport = transport
        self.audience = audience or Audience()
        self.counts = counts if counts is not None else PubSubCounts()
        self._queue: list[tuple[str, Payload]] = []
        self._task: asyncio.Task[None] | None = None

    def publish(self, channel: str, payload: Payload) -> None:
        """Queue one PUBLISH; it leaves with the next flush."""
        if not self._queue and self._task is None:
            asyncio.get_running_loop().call_soon(self._flush)
        self._queue.append((channel, payload))

    def _flush(self) -> None:
        if self._task is not None or not self._queue:
            return  # the task takes the queue, or aclose() dropped it
        batch, self._queue = self._queue, []
        try:
            if self.transport.write_now(batch):
                self.counts.published += len(batch)
                return
        except Exception as exc:
            self.counts.maybe_lost += len(batch)
            _report(logging.ERROR, _MIDWAY, batch, exc)
            return
        self._queue = batch
        self._task = asyncio.get_running_loop().create_task(self._drain())

    async def heard(self, channel: str) -> bool:
        """Whether ``channel`` has a subscriber (asks Redis at most once per TTL).

        When Redis cannot be asked, the answer is True: the publish that follows fails
        the same way and is the one that logs it.
        """
        # time.monotonic, not the loop's clock: get_running_loop() is a getpid() syscall
        # on Python 3.11, twice per cross-node message here.
        known = self.audience.heard(channel, time.monotonic())
        if known is not None:
            return known
        try:
            count = await self.transport.subscribers(channel)
        except Exception:
            return True
        self.audience.learn(channel, count, time.monotonic())
        return count > 0

    async def flushed(self) -> None:
        """Return once everything queued so far has been written (or given up on)."""
        while self._queue or self._task is not None:
            if self._task is None:
                await asyncio.sleep(0)  # the flush is due at the end of this loop turn
            else:
                await asyncio.shield(self._task)

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                await self._send(batch)
        finally:
            self._task = None

    async def _send(self, batch: list[tuple[str, Payload]]) -> None:
        for attempt in (1, 2):
            try:
                await self.transport.ready()
                break
            except Exception as exc:
                if attempt == 2:
                    self.counts.unsent += len(batch)
                    _report(logging.ERROR, "cannot publish to Redis, giving up: messages lost",
                            batch, exc)  # fmt: skip
                    return
                _report(logging.WARNING, "cannot publish to Redis, retrying", batch, exc)
        try:
            await self.transport.send(batch)
        except Exception as exc:
            self.counts.maybe_lost += len(batch)
            _report(logging.ERROR, _MIDWAY, batch, exc)
        else:
            self.counts.published += len(batch)

    async def aclose(self) -> None:
        """Let queued messages leave (for up to :data:`FLUSH_TIMEOUT`), then close."""
        try:
            await asyncio.wait_for(self.flushed(), FLUSH_TIMEOUT)
        except TimeoutError:
            self.counts.unsent += len(self._queue)
            log(_log, logging.ERROR, "cannot publish to Redis at shutdown: messages lost",
                messages=len(self._queue) or None)  # fmt: skip
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._queue = []
        await self.transport.aclose()


def _report(level: int, message: str, batch: list[tuple[str, Payload]], exc: Exception) -> None:
    """Log a publishing problem with the batch's size, its channels and the cause."""
    channels = ",".join(sorted({channel for channel, _ in batch}))
    log(_log, level, message, messages=len(batch), channel=channels, reason=cause(exc))
