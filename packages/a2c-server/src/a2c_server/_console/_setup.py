"""Builds the console from the parts of the app it reads (no new state on the hot path)."""

from __future__ import annotations

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
) -> Console:
    registry = Registry(sio=sio, store=store, metrics=metrics, settings=settings, node_id=node_id)

    def attach(observer: ConsoleFeed | None) -> None:
        namespace.observer = observer

    feed = ConsoleFeed(registry=registry, metrics=metrics, node_id=node_id, attach=attach)
    access = Access(settings.admin_token)
    return Console(feed=feed, access=access, node_id=node_id, drain=drain, audit=namespace.audit)
