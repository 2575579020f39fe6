"""The Redis side of the fence: python-socketio's Redis manager and redis-py's connection.

Importing this module needs the ``redis`` package (extra ``a2c-server[redis]``), which is
why :mod:`a2c_server._upstream` does not import it: the multi-node modules do.

:class:`RedisManagerShim` overrides the private steps of ``socketio.AsyncRedisManager``
(``_publish``, ``_thread``, ``_listen``, ``_handle_emit``, ``_redis_connect``) and calls hooks that
:class:`a2c_server._cluster._multinode._RedisManager` implements; it also reads the manager's
undocumented ``pubsub``, ``redis``, ``thread`` and ``callbacks`` and sets ``host_id``.

The redis-py connection internals the publisher (:mod:`a2c_server._cluster._publish`),
the registry lookups (:mod:`a2c_server._cluster._mux`) and the Sentinel wiring write and
read with live in :mod:`._redis_conn` (re-exported here). What they write is packed by
:mod:`a2c_server._cluster._resp` (RESP is Redis's documented format).
The listener reads the pub/sub connection's hiredis parser (``_reader``,
``read_from_socket``, ``_connected``) to take every message one socket read brought.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import socketio
from redis import asyncio as aioredis
from redis._parsers.hiredis import NOT_ENOUGH_DATA, _AsyncHiredisParser
from redis.exceptions import ConnectionError as RedisConnectionError
from socketio import packet as sio_packet

from ._redis_conn import (
    close_sentinel,
    connection_address,
    sentinel_of,
)

__all__ = [
    "RedisManagerShim",
    "read_replies",
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
    * ``return_ack(host_id, sid, namespace, ack, args)``: a local Computer answered a call
      from node ``host_id`` (upstream's ``_return_callback``); may return a coroutine,
      which upstream's ``trigger_callback`` awaits.

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

    def return_ack(
        self, host_id: Any, sid: str, namespace: str, ack: int, args: tuple[Any, ...]
    ) -> Coroutine[Any, Any, None] | None:
        coroutine: Coroutine[Any, Any, None] = self._return_callback(
            host_id, sid, namespace, ack, *args
        )
        return coroutine

    # ----------------------------------------------------------------- helpers

    def new_ack_id(self, sid: str, callback: Callable[..., Any]) -> int:
        """Register ``callback`` for an ack from ``sid``; the id to send with the call."""
        ack: int = self._generate_ack_id(sid, callback)
        return ack

    def drop_ack_id(self, sid: str, ack: int) -> None:
        """Unregister the callback :meth:`new_ack_id` registered as ``ack``."""
        del self.callbacks[sid][ack]

    async def drop_listener(self, unless_at: Any = None) -> None:
        """Close the listener's connection (unless it is connected to ``unless_at``, a
        (host, port)): it reconnects (upstream's ``_redis_connect``, which asks the
        sentinels for the primary anew) and subscribes again."""
        pubsub = getattr(self, "pubsub", None)
        connection = getattr(pubsub, "connection", None)
        if connection is not None and connection_address(connection) != unless_at:
            await connection.disconnect()

    async def close_redis(self) -> None:
        """Stop listening and close both upstream clients (``sio.shutdown()`` leaves them open)."""
        listener = getattr(self, "thread", None)
        if isinstance(listener, asyncio.Task):
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        sentinel = sentinel_of(getattr(self, "redis", None))
        for client in (getattr(self, "pubsub", None), getattr(self, "redis", None)):
            if client is not None:
                await client.aclose()
        if sentinel is not None:
            await close_sentinel(sentinel)

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
        # upstream: partial(self._return_callback, host_id, *remote), a coroutine per ack
        callback = _AckReturn(self, message.get("host_id"), *remote)
        ack = self._generate_ack_id(sid, callback)
        pkt = self.server.packet_class(sio_packet.EVENT, namespace=namespace,
                                       data=[event, *data], id=ack)  # fmt: skip
        await self.server._send_packet(eio_sid, pkt)
        return True

    async def _thread(self) -> None:
        # Upstream's listener, minus what it spends per message besides handling it: an
        # async generator step, a debug line formatted whether or not it is logged. The
        # messages one socket read brought are handled in a row.
        async for batch in self._listen():
            for text in batch:
                try:
                    await self._dispatch(text)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    self.server.logger.exception("Handler error in pubsub listening thread")

    async def _dispatch(self, text: bytes) -> None:
        """Upstream's handling of one message (``AsyncPubSubManager._thread``'s body)."""
        try:
            data = self.json.loads(text)
        except ValueError:
            return  # upstream ignores what it cannot decode
        if not isinstance(data, dict) or "method" not in data:
            return
        method = data["method"]
        if method == "callback":
            await self._handle_callback(data)
        elif data.get("host_id") != self.host_id:
            handler = _HANDLERS.get(method) if isinstance(method, str) else None
            if handler is not None:
                await getattr(self, handler)(data)

    async def _listen(self) -> AsyncIterator[list[bytes]]:
        # Upstream subscribes to the shared channel only, and PubSub.listen() wraps each
        # message in retry, timing, observability and dict-building layers that cost more
        # than decoding it. Here the replies are taken off the connection's parser, every
        # complete one a socket read brought at once (read_replies).
        channels = self.listen_channels()
        wanted = {*channels, *(c.encode() for c in channels)}
        retry = LISTEN_RETRY
        while True:
            try:
                self._redis_connect()
                await self.pubsub.subscribe(*channels)
                connection = self.pubsub.connection
                while True:
                    batch = []
                    for reply in await read_replies(connection):
                        if _is_message(reply) and reply[1] in wanted:
                            batch.append(reply[2])
                        elif _subscribed_all(reply, len(channels)):
                            retry = LISTEN_RETRY
                            self.listen_ready()
                    if batch:
                        self.counts.received += len(batch)
                        yield batch
            except Exception as exc:
                self.listen_failed(exc, retry)
                await asyncio.sleep(retry)
                # Upstream doubles up to 60 s: a node then stayed deaf for seconds after
                # Redis was back. A refused connect costs little; retry at least each second.
                retry = min(retry * 2, LISTEN_RETRY_MAX)

    def _redis_connect(self) -> None:
        redis = getattr(self, "redis", None)
        # Behind Sentinel upstream makes a Sentinel client per connect: close it too.
        old = [c for c in (getattr(self, "pubsub", None), redis, sentinel_of(redis)) if c]
        super()._redis_connect()
        for client in old:
            task = asyncio.get_running_loop().create_task(_close_quietly(client))
            self.closing_clients.add(task)
            task.add_done_callback(self.closing_clients.discard)


class _AckReturn:
    """The callback of a call delivered by ``_deliver_call``: the ack goes to ``return_ack``.

    Upstream's ``partial(_return_callback, ...)`` makes a coroutine per ack, which its
    ``trigger_callback`` awaits; ``return_ack`` publishes without one when it can.
    """

    __slots__ = ("ack", "host_id", "manager", "namespace", "sid")

    def __init__(
        self, manager: RedisManagerShim, host_id: Any, sid: str, namespace: str, ack: int
    ) -> None:
        self.manager, self.host_id, self.sid = manager, host_id, sid
        self.namespace, self.ack = namespace, ack

    def __call__(self, *args: Any) -> Coroutine[Any, Any, None] | None:
        return self.manager.return_ack(self.host_id, self.sid, self.namespace, self.ack, args)


#: Upstream's handler of each method a message from another node may carry.
_HANDLERS = {
    "emit": "_handle_emit",
    "disconnect": "_handle_disconnect",
    "enter_room": "_handle_enter_room",
    "leave_room": "_handle_leave_room",
    "close_room": "_handle_close_room",
}


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
        if isinstance(client, aioredis.Sentinel):
            await close_sentinel(client)
        else:
            await client.aclose()


# ------------------------------------------------------------- redis-py connections


async def read_replies(conn: Any) -> list[Any]:
    """The replies waiting on pub/sub connection ``conn``, at least one (one read at most).

    redis-py's ``read_response`` returns one reply per call, through three coroutines and
    a host:port string built for its error messages; its hiredis parser already holds
    every reply the last socket read brought. Error replies are returned, not raised.
    """
    parser: Any = getattr(conn, "_parser", None)
    # Without hiredis (its pure-Python parser), or over RESP3 (push notifications):
    # redis-py's path.
    if not isinstance(parser, _AsyncHiredisParser) or conn.protocol not in (2, "2"):
        # push_request: over RESP3 (a URL may ask for it) a message is a push
        # notification, which read_response otherwise skips.
        return [await conn.read_response(timeout=math.inf, push_request=True)]
    reader: Any = parser._reader
    fill: Any = parser.read_from_socket  # raises ConnectionError when Redis closed it
    reply = reader.gets()
    while reply is NOT_ENOUGH_DATA:
        if not parser._connected:
            raise RedisConnectionError("the pub/sub connection closed")
        await fill()
        reply = reader.gets()
    replies = [reply]
    while (reply := reader.gets()) is not NOT_ENOUGH_DATA:
        replies.append(reply)
    return replies
