"""Multi-node mode: the pieces ``create_app`` wires in when ``settings.redis_url`` is set.

Socket.IO messages (room broadcasts, calls to a sid on another node and their acks) go
through python-socketio's ``AsyncRedisManager``, with a channel per node for what only one
node needs; the registry is a
:class:`~a2c_server._cluster._redis_store.RedisStateStore`; :mod:`a2c_server._cluster._liveness`
keeps the
nodes honest. Importing this module needs the ``redis`` package (extra ``a2c-server[redis]``).
The manager's private steps are overridden in the fence
(:class:`a2c_server._upstream._redis.RedisManagerShim`); this module implements the hooks.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from a2c_protocol import Event
from a2c_server._observe import _otel as otel
from a2c_server._observe._logs import cause, log
from a2c_server._observe._metrics import PubSubCounts
from a2c_server._settings import ServerSettings
from a2c_server._upstream._redis import RedisManagerShim

from . import _envelope
from ._liveness import BroadcastFn, DisconnectFn, LeaveRoomFn, NodeLiveness, RemoteCalls
from ._publish import Audience, Publisher, ReplylessPublish
from ._recovery import confirm_absent, require_listener
from ._redis_conn import (
    PrimaryWatch,
    check_redis,
    connect_redis,
    redis_pool,
    sentinel_options,
)
from ._redis_store import RedisStateStore
from ._redis_subjects import RedisSubjectCounts
from ._redis_url import parse_redis_target
from ._rehome import Rehoming

__all__ = ["MultiNode", "check_redis", "default_node_id"]

_log = logging.getLogger("a2c_server.multinode")


def default_node_id(settings: ServerSettings) -> str:
    """``host:port``: stable across restarts of the same node, so a restart starts clean."""
    if settings.node_id is not None:
        return settings.node_id
    if settings.port:
        return f"{socket.gethostname()}:{settings.port}"
    return f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"


def node_channel(channel: str, node_id: str) -> str:
    """The channel only node ``node_id`` listens on (besides the shared ``channel``)."""
    return f"{channel}:node:{node_id}"


class _RedisManager(RedisManagerShim):
    """python-socketio's Redis manager with addressed channels.

    Upstream publishes every message on one channel that every node receives and decodes:
    a call to a sid on one node, the ack meant for the one node that made the call, even
    the sender's own messages. Here each node also listens on its node channel
    (:func:`node_channel`) and the manager's ``host_id`` is the node id, so

    - an ack (``callback`` message) goes only to the node that made the call;
    - a call to a sid hosted by another node goes only to that node when ``locate`` knows
      which (the registry records it; no extra round trip);
    - everything else (room broadcasts, disconnects, room changes) stays on the shared
      channel, and so does an ack whose node channel nobody hears (a node that is gone, or
      one running a version without node channels);
    - a call is not published when nobody would hear it or its answer (this node is not
      subscribed, or the other node's channel has no subscriber): it is answered 503
      unsent (:mod:`a2c_server._cluster._recovery`), where it used to wait out its timeout.

    An emit to a sid connected to this node skips Redis altogether.
    """

    def __init__(
        self,
        url: str,
        *,
        channel: str,
        node_id: str,
        locate: Callable[[str], str | None],
        redis_options: dict[str, Any],
        registry_timeout: float = 0.5,
        sentinel_password: str | None = None,
    ) -> None:
        redis_options = dict(redis_options)
        target = parse_redis_target(url, password=redis_options.pop("password", None),
                                    sentinel_password=sentinel_password)  # fmt: skip
        manager_options = {**redis_options, **target.primary_options()}
        if target.is_sentinel:
            # Upstream gives its options to Sentinel(): the primary's, and with
            # sentinel_kwargs how to reach the sentinels (their password, the deadline).
            connect_timeout = redis_options.get("socket_connect_timeout", 5.0)
            manager_options["sentinel_kwargs"] = sentinel_options(target, connect_timeout)
        counts = PubSubCounts()
        super().__init__(url, channel=channel, host_id=node_id, redis_options=manager_options,
                         counts=counts)  # fmt: skip
        self.node_id = node_id
        self.shared_channel = channel
        self.node_channel = node_channel(channel, node_id)
        self._locate = locate
        self._transport = ReplylessPublish(redis_pool(target, **redis_options))
        self._publisher = Publisher(self._transport, counts=counts)
        #: Whether this node receives from Redis (every subscription confirmed).
        self.listening = False
        self._listen_failures = 0
        #: The deadline of asking Redis who listens before a call goes out.
        self.registry_timeout = registry_timeout
        # Event name → a handler of this node that takes a message for one of its sids
        # instead of delivering it as is (the progress extension: the Agent's node decides).
        self.intercepts: dict[str, Callable[[str, Any], Awaitable[None]]] = {}
        self._node_channels: dict[str, str] = {}

    async def emit(self, event: str, data: Any, namespace: str | None = None,
                   room: str | None = None, **kwargs: Any) -> Any:  # fmt: skip
        target = kwargs.get("to") or room
        ns = namespace or "/"
        if isinstance(target, str) and kwargs.get("skip_sid") is None:
            # An emit to one sid connected to this node (a forwarded call to a local
            # Computer) needs no other node: skip the publish.
            if self.is_connected(target, ns):
                kwargs.pop("to", None)
                kwargs["ignore_queue"] = True
                return await super().emit(event, data, namespace=ns, room=target, **kwargs)
            callback = kwargs.get("callback")
            if callback is not None and not kwargs.get("ignore_queue"):
                node = self._other_node(self._locate(target))
                if node is not None:
                    return await self._call_remote(event, data, ns, target, callback, node)
        return await super().emit(event, data, namespace=namespace, room=room, **kwargs)

    async def _call_remote(self, event: str, data: Any, namespace: str, sid: str,
                           callback: Callable[..., Any], node: str) -> None:  # fmt: skip
        """Upstream's emit of a call to a sid on ``node``, without what it cannot need.

        Upstream also delivers every emit locally (no participant here has this sid) and
        walks the data for bytes in Python; here the encoder finds bytes by refusing
        them, and such a call takes upstream's path, which carries them.
        """
        channel = self._channel_of(node)
        if not self.listening or not self._publisher.audience.heard(channel, time.monotonic()):
            # Published to nobody, the call would wait out its timeout: answer 503 now.
            await require_listener(self.listening, self._publisher, channel, node,
                                   self.registry_timeout)  # fmt: skip
        ack = self.new_ack_id(sid, callback)
        message = {
            "method": "emit", "event": event,
            "data": list(data) if isinstance(data, tuple) else [data], "binary": False,
            "namespace": namespace, "room": sid, "callback": (sid, namespace, ack),
            "host_id": self.node_id,
        }  # fmt: skip
        try:
            payload = _envelope.encode(message)
        except TypeError:
            self.drop_ack_id(sid, ack)
            await super().emit(event, data, namespace=namespace, room=sid, callback=callback)
            return
        # require_listener found the channel heard (or Redis too slow to say): publish
        # there, in this loop turn.
        self._publisher.publish(channel, payload)

    def return_ack(
        self, host_id: Any, sid: str, namespace: str, ack: int, args: tuple[Any, ...]
    ) -> Coroutine[Any, Any, None] | None:
        """A local Computer's answer to a call from node ``host_id``, sent back to it.

        Upstream's ``_return_callback`` → ``_publish`` → :meth:`publish_envelope`, without
        the coroutine each of those is, while ``host_id``'s channel is known to be heard.
        """
        node = self._other_node(host_id)
        if node is None or sid is None or namespace is None or ack is None:
            return super().return_ack(host_id, sid, namespace, ack, args)
        message = {"method": "callback", "host_id": node, "sid": sid,
                   "namespace": namespace, "id": ack, "args": args}  # fmt: skip
        channel = self._channel_of(node)
        if self._publisher.audience.heard(channel, time.monotonic()) is not True:
            return self.publish_envelope(message)  # asks Redis who listens first
        try:
            payload = _envelope.encode(message)
        except TypeError:
            return self.publish_envelope(message)  # fails as upstream's path does
        self._publisher.publish(channel, payload)
        return None

    def known_heard(self, node: str) -> bool | None:
        """Whether ``node`` listens, as last asked (None: not asked lately). No I/O."""
        return self._publisher.audience.heard(self._channel_of(node), time.monotonic())

    async def node_heard(self, node: str) -> bool:
        """Whether ``node`` listens (asks Redis at most once per audience TTL, within the
        registry deadline; a slow answer counts as heard, as in ``require_listener``)."""
        try:
            async with asyncio.timeout(self.registry_timeout):
                return await self._publisher.heard(self._channel_of(node))
        except TimeoutError:
            return True

    def _channel_of(self, node: str) -> str:
        """``node``'s channel (:func:`node_channel`), built once per node."""
        channel = self._node_channels.get(node)
        if channel is None:
            channel = self._node_channels[node] = node_channel(self.shared_channel, node)
        return channel

    async def screen_emit(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """A message from another node: the one to deliver, or None when handled here."""
        event = message.get("event")
        if otel.STATE.active and event == Event.TOOL_CALL.value and message.get("callback"):
            data, room = message.get("data"), message.get("room")
            local = isinstance(room, str) and self.is_connected(room, message.get("namespace"))
            if local and isinstance(data, list) and len(data) == 1:
                message = {**message, "data": [otel.relay_span(data[0])]}
        hook = self.intercepts.get(event) if self.intercepts and isinstance(event, str) else None
        room = message.get("room")
        if hook is not None and isinstance(room, str) and message.get("callback") is None:
            if self.is_connected(room, message.get("namespace") or "/"):
                data = message.get("data")
                await hook(room, data[0] if isinstance(data, list) and len(data) == 1 else data)
            return None
        return message

    def addressee(self, message: dict[str, Any]) -> str | None:
        """The one other node ``message`` is for, when that is known; else None (shared)."""
        method = message.get("method")
        if method == "callback":
            node = message.get("host_id")
        elif (
            method == "emit"
            and message.get("callback") is not None
            and message.get("skip_sid") is None
            and isinstance(room := message.get("room"), str)
        ):
            node = self._locate(room)
        else:
            return None
        return self._other_node(node)

    def _other_node(self, node: object) -> str | None:
        """``node`` when it names a node other than this one; else None."""
        return node if isinstance(node, str) and node != self.node_id else None

    async def publish_envelope(self, data: dict[str, Any]) -> None:
        # Every receiver reads the envelope with .get(): a None field can stay out, and a
        # "null" in the text sends the encoder down its slow exact path.
        message = {key: value for key, value in data.items() if value is not None}
        payload = _envelope.encode(message)
        await self._send(payload, self.addressee(data), data.get("method"))

    async def _send(self, payload: bytes, node: str | None, method: Any) -> None:
        """Publish on ``node``'s channel when someone hears it; else on the shared one."""
        channel = self.shared_channel
        if node is not None:
            if await self._publisher.heard(addressed := self._channel_of(node)):
                channel = addressed
            else:
                log(_log, logging.DEBUG, "node channel not heard, using the shared channel",
                    node=node, method=method)  # fmt: skip
        self._publisher.publish(channel, payload)

    def listen_channels(self) -> tuple[str, ...]:
        return (self.shared_channel, self.node_channel)

    def publish_raw(self, channel: str, payload: bytes) -> None:
        """Queue one message on ``channel`` with the node's replyless publisher (the
        console's feed across nodes: in order with the relay's own messages)."""
        self._publisher.publish(channel, payload)

    async def subscribers(self, channel: str) -> int:
        """How many connections subscribe to ``channel`` now (PUBSUB NUMSUB)."""
        return await self._publisher.transport.subscribers(channel)

    def console_pubsub(self) -> Any:
        """A redis-py ``PubSub`` on the publisher's pool, for a subscriber of this node's
        own (the console's feed from the other nodes). Not named ``pubsub``: upstream's
        manager keeps its own subscription in an attribute of that name."""
        transport = self._publisher.transport
        if not isinstance(transport, ReplylessPublish):  # pragma: no cover - always is
            raise TypeError("the publisher has no pool to subscribe with")
        return transport.pubsub()

    def listen_failed(self, exc: Exception, retry_in: float) -> None:
        # Subscriptions made before are gone with the connection (everyone's, if Redis
        # restarted): forget who was heard, ask again.
        self.listening = False
        self._publisher.audience = Audience(self._publisher.audience.ttl)
        self._listen_failures += 1
        # One line per state change, not one per retry (a retry each second at most).
        level = logging.ERROR if self._listen_failures == 1 else logging.DEBUG
        log(_log, level, "cannot receive from Redis, retrying",
            reason=cause(exc), retry_in=retry_in)  # fmt: skip

    def listen_ready(self) -> None:
        self.listening = True
        if self._listen_failures:
            log(_log, logging.WARNING, "receiving from Redis again",
                failed_attempts=self._listen_failures)  # fmt: skip
        self._listen_failures = 0

    async def reconnect(self, primary: Any) -> None:
        """The primary moved to ``primary``: publish and listen through connections there."""
        await self._transport.reconnect(primary)
        await self.drop_listener(unless_at=primary)

    async def aclose(self) -> None:
        """Stop listening and close every client (``sio.shutdown()`` leaves them open)."""
        await self.close_redis()
        await self._publisher.aclose()


class MultiNode:
    """The Redis client manager, store, liveness and remote-call watch of one node."""

    def __init__(self, settings: ServerSettings, node_id: str) -> None:
        if settings.redis_url is None:  # pragma: no cover - create_app checks
            raise ValueError("MultiNode needs settings.redis_url")
        self.node_id = node_id
        target = parse_redis_target(settings.redis_url, password=settings.redis_password,
                                    sentinel_password=settings.redis_sentinel_password)  # fmt: skip
        self.store = RedisStateStore(
            connect_redis(target, timeout=settings.registry_timeout),
            prefix=settings.redis_prefix,
            node_id=node_id,
        )
        self.manager = _RedisManager(
            settings.redis_url,
            channel=f"{settings.redis_prefix}:socketio",
            node_id=node_id,
            locate=self.store.node_of,
            # RESP2: pub/sub messages arrive as plain replies, not as push notifications
            # that redis-py's parser logs (building their text) one by one.
            redis_options={"socket_connect_timeout": 5.0, "protocol": 2,
                           **target.primary_options()},
            registry_timeout=settings.registry_timeout,
            sentinel_password=settings.redis_sentinel_password,
        )  # fmt: skip
        self.subjects = RedisSubjectCounts(
            self.store.client, prefix=settings.redis_prefix, node_id=node_id
        )
        self.remote = RemoteCalls(self.store, settle=settings.node_ttl, epoch=self._epoch,
                                  absent=self._confirm_absent)  # fmt: skip
        self._ttl = settings.node_ttl
        self.liveness: NodeLiveness | None = None
        self._primary = PrimaryWatch(self.store.client)
        # By node_ttl (and a heartbeat) a dead node's sessions are reaped: its name is
        # either back on a live node or gone by then.
        self.remote.rehoming = Rehoming(
            self.store, known_heard=self.manager.known_heard, heard=self.manager.node_heard,
            hold=settings.node_ttl * 4 / 3, listening=lambda: self.manager.listening,
        )  # fmt: skip

    def bind(
        self, broadcast: BroadcastFn, leave_room: LeaveRoomFn, disconnect: DisconnectFn
    ) -> None:
        """Give liveness the namespace's way to tell offices about reaped sessions and to
        end the ones a reconnect of their client replaced."""
        self.liveness = NodeLiveness(
            self.store, ttl=self._ttl, broadcast=broadcast, leave_room=leave_room,
            channel=self.manager.shared_channel, subjects=self.subjects, disconnect=disconnect,
            before_beat=self._follow_primary if self._primary.active else None,
        )  # fmt: skip

    async def start(self) -> None:
        if self.liveness is None:  # pragma: no cover - create_app binds
            raise RuntimeError("MultiNode.start() before bind()")
        await self.liveness.start()
        log(_log, logging.INFO, "node registered", node=self.node_id)

    async def stop(self) -> None:
        await self.remote.stop()
        if self.liveness is not None:
            await self.liveness.stop()
        await self.store.aclose()
        await self.manager.aclose()

    async def _follow_primary(self) -> None:
        """Behind Sentinel, before each heartbeat: move every connection to a new primary."""
        moved = await self._primary.changed()
        if moved is None:
            return
        old, new = moved
        log(_log, logging.WARNING, "the sentinels name another Redis primary: reconnecting",
            node=self.node_id, old=f"{old[0]}:{old[1]}", new=f"{new[0]}:{new[1]}")  # fmt: skip
        # After kill -9 most connections already reconnected to the new primary: only
        # the ones still at another address are dropped.
        await self.store.reconnect(new)
        await self.manager.reconnect(new)

    def _epoch(self) -> str | None:
        return self.liveness.epoch if self.liveness is not None else None

    async def _confirm_absent(self) -> None:
        await confirm_absent(self.liveness, self.store.current_epoch)

    def registry_reachable(self) -> bool:
        """Whether the last heartbeat reached Redis (the ``/metrics`` gauge)."""
        return self.liveness is not None and self.liveness.redis_ok

    async def health(self) -> dict[str, Any]:
        """The multi-node part of ``/healthz``."""
        ok = self.liveness is not None and self.liveness.redis_ok
        if ok:
            try:
                await self.store.client.ping()
            except Exception:
                ok = False
        return {"registry": "redis", "redis": "ok" if ok else "unavailable"}
