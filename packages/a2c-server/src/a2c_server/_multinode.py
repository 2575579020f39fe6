"""Multi-node mode: the pieces ``create_app`` wires in when ``settings.redis_url`` is set.

Socket.IO messages (room broadcasts, calls to a sid on another node and their acks) go
through python-socketio's ``AsyncRedisManager``; the registry is a
:class:`~a2c_server._redis_store.RedisStateStore`; :mod:`a2c_server._liveness` keeps the
nodes honest. Importing this module needs the ``redis`` package (extra ``a2c-server[redis]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid
from typing import Any

import socketio

from ._exceptions import StoreUnavailableError
from ._liveness import BroadcastFn, LeaveRoomFn, NodeLiveness, RemoteCalls
from ._logs import log
from ._redis_store import RedisStateStore, connect_redis
from ._settings import ServerSettings

__all__ = ["MultiNode", "check_redis", "default_node_id"]

_log = logging.getLogger("a2c_server.multinode")


def default_node_id(settings: ServerSettings) -> str:
    """``host:port``: stable across restarts of the same node, so a restart starts clean."""
    if settings.node_id is not None:
        return settings.node_id
    if settings.port:
        return f"{socket.gethostname()}:{settings.port}"
    return f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"


class _RedisManager(socketio.AsyncRedisManager):  # type: ignore[misc]
    """python-socketio's Redis manager, closing the clients it replaces on reconnect.

    After an outage it builds a new client and drops the old one unclosed; closing it
    keeps a long-running node from leaking a connection per outage.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._closing: set[asyncio.Task[None]] = set()

    async def emit(self, event: str, data: Any, namespace: str | None = None,
                   room: str | None = None, **kwargs: Any) -> Any:  # fmt: skip
        # An emit to one sid connected to this node (a forwarded call to a local Computer)
        # needs no other node: skip the publish that every node would parse and drop.
        target = kwargs.get("to") or room
        ns = namespace or "/"
        if (
            isinstance(target, str)
            and kwargs.get("skip_sid") is None
            and self.is_connected(target, ns)
        ):
            kwargs.pop("to", None)
            kwargs["ignore_queue"] = True
            return await super().emit(event, data, namespace=ns, room=target, **kwargs)
        return await super().emit(event, data, namespace=namespace, room=room, **kwargs)

    def _redis_connect(self) -> None:
        old = [c for c in (getattr(self, "pubsub", None), getattr(self, "redis", None)) if c]
        super()._redis_connect()
        for client in old:
            task = asyncio.get_running_loop().create_task(_close_quietly(client))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)


async def _close_quietly(client: Any) -> None:
    with contextlib.suppress(Exception):
        await client.aclose()


class MultiNode:
    """The Redis client manager, store, liveness and remote-call watch of one node."""

    def __init__(self, settings: ServerSettings, node_id: str) -> None:
        if settings.redis_url is None:  # pragma: no cover - create_app checks
            raise ValueError("MultiNode needs settings.redis_url")
        self.node_id = node_id
        self.manager = _RedisManager(
            settings.redis_url,
            channel=f"{settings.redis_prefix}:socketio",
            redis_options={"socket_connect_timeout": 5.0},
        )
        self.store = RedisStateStore(
            connect_redis(settings.redis_url), prefix=settings.redis_prefix, node_id=node_id
        )
        self.remote = RemoteCalls(self.store)
        self._ttl = settings.node_ttl
        self.liveness: NodeLiveness | None = None

    def bind(self, broadcast: BroadcastFn, leave_room: LeaveRoomFn) -> None:
        """Give liveness the namespace's way to tell offices about reaped sessions."""
        self.liveness = NodeLiveness(
            self.store, ttl=self._ttl, broadcast=broadcast, leave_room=leave_room,
            channel=self.manager.channel,
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
        await self.store.client.aclose()
        # sio.shutdown() leaves the manager's listener task and its connections running.
        listener = getattr(self.manager, "thread", None)
        if isinstance(listener, asyncio.Task):
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        pubsub, redis = getattr(self.manager, "pubsub", None), getattr(self.manager, "redis", None)
        if pubsub is not None:
            await pubsub.aclose()
        if redis is not None:
            await redis.aclose()

    async def health(self) -> dict[str, Any]:
        """The multi-node part of ``/healthz``."""
        ok = self.liveness is not None and self.liveness.redis_ok
        if ok:
            try:
                await self.store.client.ping()
            except Exception:
                ok = False
        return {"registry": "redis", "redis": "ok" if ok else "unavailable"}


async def check_redis(url: str) -> None:
    """Raise :class:`StoreUnavailableError` unless Redis answers at ``url``."""
    client = connect_redis(url, timeout=3.0)
    try:
        await client.ping()
    except Exception as exc:
        raise StoreUnavailableError(f"cannot reach Redis: {exc}") from exc
    finally:
        await client.aclose()
