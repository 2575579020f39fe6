"""Builds the console from the parts of the app it reads (no new state on the hot path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import socketio

from a2c_server._edge._shutdown import Drain
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._relay._namespace import SmcpNamespace
from a2c_server._settings import ServerSettings
from a2c_server._state._store import StateStore

from ._access import Access
from ._feed import ConsoleFeed
from ._registry import Registry
from ._routes import Console

if TYPE_CHECKING:
    from a2c_server._cluster._multinode import MultiNode

__all__ = ["create_console"]


def create_console(
    *,
    sio: socketio.AsyncServer,
    store: StateStore,
    metrics: ServerMetrics,
    settings: ServerSettings,
    node_id: str,
    namespace: SmcpNamespace,
    drain: Drain,
    multinode: MultiNode | None = None,
) -> Console:
    registry = Registry(sio=sio, store=store, metrics=metrics, settings=settings, node_id=node_id)

    def attach(observer: ConsoleFeed | None) -> None:
        namespace.observer = observer

    feed = ConsoleFeed(
        registry=registry,
        metrics=metrics,
        node_id=node_id,
        attach=attach,
        stale_after=settings.max_tool_timeout + settings.tool_call_buffer + 5,
    )
    if multinode is not None:
        from ._cluster import ConsoleChannel

        feed.join_cluster(ConsoleChannel(
            channel=f"{settings.redis_prefix}:console", node_id=node_id,
            publish=multinode.manager.publish_raw, subscribers=multinode.manager.subscribers,
            pubsub=multinode.manager.console_pubsub,
        ))  # fmt: skip
    access = Access(settings.admin_token)
    return Console(feed=feed, access=access, node_id=node_id, drain=drain, audit=namespace.audit)
