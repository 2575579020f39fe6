"""The Redis side of the fence: python-socketio's Redis manager and redis-py's connection.

Importing this module needs the ``redis`` package (extra ``a2c-server[redis]``), which is
why :mod:`a2c_server._upstream` does not import it: the multi-node modules do.

:class:`RedisManagerShim` overrides the private steps of ``socketio.AsyncRedisManager``
(``_publish``, ``_listen``, ``_handle_emit``, ``_redis_connect``) and calls hooks that
:class:`a2c_server._cluster._multinode._RedisManager` implements; it also reads the manager's
undocumented ``pubsub``, ``redis``, ``thread`` and ``callbacks`` and sets ``host_id``.

The functions at the end are redis-py's connection internals the publisher
(:mod:`a2c_server._cluster._publish`) and the registry lookups (:mod:`a2c_server._cluster._mux`)
write
with: the stream reader and writer, a connection made from a pool's class and settings
(``connection_class``, ``connection_kwargs``) without being one of its connections. What
they write is packed by :mod:`a2c_server._cluster._resp` (RESP is Redis's documented format).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import socketio
from redis import asyncio as aioredis
from socketio import packet as sio_packet

__all__ = [
    "RedisManagerShim",
    "abort_connection",
    "closed_by_peer",
    "connection_writer",
    "fresh_connection",
    "pool_option",
    "write_packed",
]


class RedisManagerShim(socketio.AsyncRedisManager):  # type: ignore[misc]
    """``socketio.AsyncRedisManager`` whose private pub/sub steps call hooks.

    ``host_id`` is what upstream addresses acks by (the node id here); ``counts`` is an
    object whose int ``received`` counts the messages the listener yields. Hooks:

    * ``listen_channels() -> tuple[str, ...]``: what the listener subscribes to.
    * ``await publish_envelope(data)``: instead of upstream's ``_publish`` (one PUBLISH of
      ``data`` on the shared channel).
    * ``await screen_emit(message) -> dict | None``: an ``emit`` message from another node
      before upstream delivers it; the message to deliver, or None when handled.
    * ``listen_failed(exc, retry_in)``: the listener lost Redis and retries.
    * ``listen_ready()``: Redis confirmed every subscription of the listener.

    After an outage upstream builds new clients and drops the old ones unclosed; they are
    closed here, so a long-running node does not leak a connection per outage.
    """

    def __init__(
        self, url: str, *, channel: str, host_id: str, redis_options: dict[str, Any], counts: Any
    ) -> None:
        super().__init__(url, channel=channel, redis_options=dict(redis_options))
        # python-socketio addresses acks by host_id: make it the node id every node can
        # derive a channel from.
        self.host_id = host_id
        self.counts = counts
        self.closing_clients: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ hooks

    def listen_channels(self) -> tuple[str, ...]:
        return (self.channel,)

    async def publish_envelope(self, data: dict[str, Any]) -> None:
        await super()._publish(data)

    async def screen_emit(self, message: dict[str, Any]) -> dict[str, Any] | None:
        return message

    def listen_failed(self, exc: Exception, retry_in: float) -> None:
        pass

    def listen_ready(self) -> None:
        pass

    # ----------------------------------------------------------------- helpers

    def new_ack_id(self, sid: str, callback: Callable[..., Any]) -> int:
        """Register ``callback`` for an ack from ``sid``; the id to send with the call."""
        ack: int = self._generate_ack_id(sid, callback)
        return ack

    def drop_ack_id(self, sid: str, ack: int) -> None:
        """Unregister the callback :meth:`new_ack_id` registered as ``ack``."""
        del self.callbacks[sid][ack]

    async def close_redis(self) -> None:
        """Stop listening and close both upstream clients (``sio.shutdown()`` leaves them open)."""
        listener = getattr(self, "thread", None)
        if isinstance(listener, asyncio.Task):
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        for client in (getattr(self, "pubsub", None), getattr(self, "redis", None)):
            if client is not None:
                await client.aclose()

    # ------------------------------------------------------- private overrides

    async def _publish(self, data: dict[str, Any]) -> None:
        await self.publish_envelope(data)

    async def _handle_emit(self, message: dict[str, Any]) -> None:
        screened = await self.screen_emit(message)
        if screened is not None and not await self._deliver_call(screened):
            await super()._handle_emit(screened)

    async def _deliver_call(self, message: dict[str, Any]) -> bool:
        """Upstream's delivery of a call from another node to one sid of this node.

        Upstream sends each recipient's packet in a task of its own and waits for the set
        (``asyncio.wait``), which for the one recipient of a relayed call was a task, a
        wait set and two loop turns per call. Same packet, same ack registration, same
        ``_return_callback``; False (upstream's path) for anything else: a room, bytes,
        a sid not here, a shape upstream would read differently.
        """
        remote, room, data = message.get("callback"), message.get("room"), message.get("data")
        namespace, event = message.get("namespace"), message.get("event")
        if (
            not isinstance(remote, list)
            or len(remote) != 3
            or not isinstance(room, str)
            or not isinstance(namespace, str)
            or not isinstance(event, str)
            or not isinstance(data, list)
            or data == [None]  # upstream sends that as no argument at all
            or message.get("skip_sid") is not None
            or message.get("binary")
        ):
            return False
        participants = self.rooms.get(namespace, {}).get(room)
        if participants is None or len(participants) != 1:
            return False
        ((sid, eio_sid),) = participants.items()
        callback = functools.partial(self._return_callback, message.get("host_id"), *remote)
        ack = self._generate_ack_id(sid, callback)
        pkt = self.server.packet_class(sio_packet.EVENT, namespace=namespace,
                                       data=[event, *data], id=ack)  # fmt: skip
        await self.server._send_packet(eio_sid, pkt)
        return True

    async def _listen(self) -> AsyncIterator[Any]:
        # Upstream subscribes to the shared channel only. Messages are read with the
        # connection's own read_response: PubSub.listen() wraps each one in retry, timing,
        # observability and dict-building layers that cost more than decoding the message.
        channels = self.listen_channels()
        wanted = {*channels, *(c.encode() for c in channels)}
        retry = LISTEN_RETRY
        while True:
            try:
                self._redis_connect()
                await self.pubsub.subscribe(*channels)
                connection = self.pubsub.connection
                while True:
                    # push_request: over RESP3 (a URL may ask for it) a message is a push
                    # notification, which read_response otherwise skips.
                    reply = await connection.read_response(timeout=math.inf, push_request=True)
                    if _is_message(reply) and reply[1] in wanted:
                        self.counts.received += 1
                        yield reply[2]
                    elif _subscribed_all(reply, len(channels)):
                        retry = LISTEN_RETRY
                        self.listen_ready()
            except Exception as exc:
                self.listen_failed(exc, retry)
                await asyncio.sleep(retry)
                # Upstream doubles up to 60 s: a node then stayed deaf for seconds after
                # Redis was back. A refused connect costs little; retry at least each second.
                retry = min(retry * 2, LISTEN_RETRY_MAX)

    def _redis_connect(self) -> None:
        old = [c for c in (getattr(self, "pubsub", None), getattr(self, "redis", None)) if c]
        super()._redis_connect()
        for client in old:
            task = asyncio.get_running_loop().create_task(_close_quietly(client))
            self.closing_clients.add(task)
            task.add_done_callback(self.closing_clients.discard)


def _subscribed_all(reply: Any, channels: int) -> bool:
    """Whether ``reply`` confirms the last of ``channels`` subscriptions."""
    return (
        isinstance(reply, list)
        and len(reply) == 3
        and reply[0] in _SUBSCRIBE
        and isinstance(reply[2], int)
        and reply[2] >= channels
    )


_SUBSCRIBE = (b"subscribe", "subscribe")

#: Seconds before the listener's first retry after losing Redis, and its cap (doubling).
LISTEN_RETRY = 0.1
LISTEN_RETRY_MAX = 1.0


def _is_message(reply: Any) -> bool:
    """Whether a pub/sub reply is a published message (not a subscribe confirmation)."""
    return isinstance(reply, list) and len(reply) == 3 and reply[0] in _MESSAGE


_MESSAGE = (b"message", "message")


async def _close_quietly(client: Any) -> None:
    with contextlib.suppress(Exception):
        await client.aclose()


# ------------------------------------------------------------- redis-py connections


def fresh_connection(pool: aioredis.ConnectionPool, **overrides: Any) -> Any:
    """A connection with ``pool``'s class and settings (TLS, unix socket, auth), not its own."""
    return pool.connection_class(**{**pool.connection_kwargs, **overrides})


def pool_option(pool: aioredis.ConnectionPool, name: str) -> Any:
    """A connection setting of ``pool`` (``socket_timeout``...), None when it is not set."""
    return pool.connection_kwargs.get(name)


def connection_writer(conn: Any) -> asyncio.StreamWriter | None:
    """The connection's stream writer; None while it is not connected."""
    writer: asyncio.StreamWriter | None = getattr(conn, "_writer", None)
    return writer


def write_packed(conn: Any, packed: bytes) -> None:
    """Hand commands packed as RESP to the connection's transport now (no await)."""
    conn._writer.write(packed)


async def read_reply(conn: Any) -> Any:
    """The next reply on ``conn`` (a pipelined read: no command is sent)."""
    return await conn.read_response()


async def send_packed(conn: Any, packed: list[bytes]) -> None:
    """Write already packed commands, without the health-check PING redis-py may send first.

    A PING would be answered on a ``CLIENT REPLY OFF`` connection by nothing, and waited for.
    """
    await conn.send_packed_command(packed, check_health=False)


def closed_by_peer(conn: Any) -> bool:
    """Whether Redis closed the connection (its stream reader saw the end or an error)."""
    # redis-py has no public "was this connection closed by the peer" test; the stream
    # reader sees the end of the stream as soon as Redis closes it.
    reader = getattr(conn, "_reader", None)
    return reader is not None and (reader.at_eof() or reader.exception() is not None)


def abort_connection(conn: Any) -> None:
    """Drop the connection's socket at once, with whatever replies are still on their way."""
    writer = getattr(conn, "_writer", None)
    if writer is not None:
        writer.transport.abort()
