"""Registry reads of many concurrent calls, multiplexed on one Redis connection.

Every routed call reads the registry once (``member_named``), and under load several of
those reads are out at any moment (3-10 of 16 calls in flight, measured). redis-py's client
takes a connection from its pool for each command, so N reads were N connections, N writes,
N wake-ups to read N replies, and a task per write for the socket timeout. Here commands
issued in the same loop turn are written together on one connection and one reader takes
the replies in order, several per read when they arrive together: Redis answers a
connection's commands in the order it received them, so the n-th reply belongs to the
n-th command still waiting.

Failures end every waiting command at once with redis-py's own exception types (a lost
connection: ``ConnectionError``; no answer within ``timeout``: ``TimeoutError``), which
the store turns into its 503; the next command opens a new connection. An error reply
(``NOSCRIPT``, a wrong type) is that one command's answer and leaves the others alone.
Commands are packed by :mod:`a2c_server._cluster._resp` (redis-py's general packer cost
ten times as much); the connection's stream writer is a redis-py internal, reached
through the fence (:mod:`a2c_server._upstream._redis`).
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from redis import asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from a2c_server._observe._logs import cause
from a2c_server._upstream._redis_conn import (
    abort_connection,
    connection_address,
    fresh_connection,
    read_reply,
    write_packed,
)

from ._resp import Arg, pack_commands

__all__ = ["Multiplexer"]


class Multiplexer:
    """Commands from many tasks on one redis-py connection, replies matched in order."""

    def __init__(self, pool: aioredis.ConnectionPool, *, timeout: float) -> None:
        # The pool's settings (address, TLS, auth, decoding) without its per-command
        # socket timeout: the reader waits for replies without a timer, and ``timeout``
        # is watched here, once for all waiting commands.
        self._conn: Any = fresh_connection(pool, socket_timeout=None)
        self.timeout = timeout
        self._waiting: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self._outbox: list[tuple[Arg, ...]] = []
        self._reader: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._connecting: asyncio.Task[None] | None = None

    async def execute(self, *args: Arg) -> Any:
        """Send one command and return its reply (raising an error reply as redis-py does)."""
        if self._reader is None:
            await self._connect()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        now = loop.time()
        if not self._outbox:  # the first command of this loop turn: one flush takes them all
            loop.call_soon(self._flush)
        self._waiting.append((future, now))
        self._outbox.append(args)
        if self._timer is None:
            self._timer = loop.call_at(now + self.timeout, self._check)
        return await future

    async def _connect(self) -> None:
        # Callers that find no connection share one attempt: queued one behind another,
        # each would wait out its own timeout against a hung Redis.
        if self._connecting is None:
            self._connecting = asyncio.get_running_loop().create_task(self._open())
            # Read by every caller, unless all of them were cancelled meanwhile.
            self._connecting.add_done_callback(lambda t: t.cancelled() or t.exception())
        task = self._connecting
        try:
            await asyncio.shield(task)
        finally:
            if task.done() and self._connecting is task:
                self._connecting = None

    async def _open(self) -> None:
        if self._reader is not None:
            return
        await self._conn.disconnect()
        # The connection has no socket timeout (see __init__), and connecting also waits
        # for replies (CLIENT SETINFO...): a hung Redis must not hold it past the deadline.
        try:
            async with asyncio.timeout(self.timeout):
                await self._conn.connect()
        except TimeoutError:
            abort_connection(self._conn)
            raise RedisTimeoutError(f"no answer from Redis within {self.timeout:g} s") from None
        self._reader = asyncio.get_running_loop().create_task(self._read())

    def _flush(self) -> None:
        commands, self._outbox = self._outbox, []
        if not commands:
            return
        conn = self._conn
        try:
            if not conn.is_connected:
                raise RedisConnectionError("the registry connection closed")
            # A synchronous write: the transport buffers what the socket does not take.
            write_packed(conn, pack_commands(commands))
        except Exception as exc:
            self._fail(exc)

    async def _read(self) -> None:
        conn = self._conn
        while True:
            try:
                reply: Any = await read_reply(conn)
            except ResponseError as exc:
                reply = exc  # the answer of one command, not a broken connection
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._fail(exc)
                return
            if not self._waiting:
                self._fail(RedisConnectionError("Redis sent a reply nobody waits for"))
                return
            future, _ = self._waiting.popleft()
            if future.done():  # its caller gave up (cancelled): the reply is dropped
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def _check(self) -> None:
        self._timer = None
        if not self._waiting:
            return
        loop = asyncio.get_running_loop()
        due = self._waiting[0][1] + self.timeout
        if loop.time() >= due:
            self._fail(RedisTimeoutError(f"no answer from Redis within {self.timeout:g} s"))
        else:
            self._timer = loop.call_at(due, self._check)

    def _fail(self, exc: BaseException) -> None:
        """End every waiting command with ``exc``; the next command reconnects."""
        if not isinstance(exc, RedisConnectionError | RedisTimeoutError):
            exc = RedisConnectionError(cause(exc))
        waiting, self._waiting = self._waiting, collections.deque()
        self._outbox = []
        for future, _ in waiting:
            if not future.done():
                future.set_exception(exc)
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
        # Replies still on their way belong to the commands failed above: the connection
        # is dropped with them (the next _connect disconnects it properly).
        abort_connection(self._conn)

    def reset(self, why: str, unless_at: Any = None) -> None:
        """Drop the connection (the primary moved) unless it is connected to ``unless_at``
        (host, port): waiting commands fail, the next one connects again (behind
        Sentinel: to the primary the sentinels name now)."""
        if self._reader is not None and connection_address(self._conn) != unless_at:
            self._fail(RedisConnectionError(why))

    async def aclose(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        if self._timer is not None:
            self._timer.cancel()
        await self._conn.disconnect()
