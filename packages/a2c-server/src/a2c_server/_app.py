"""The ASGI application: routing, the version gate, Socket.IO, ``GET /healthz`` and
``GET /metrics``.

Requests on the Engine.IO mount path go through :class:`~a2c_server.VersionGate` to
python-socketio; ``/healthz`` answers JSON, ``/metrics`` the Prometheus text format;
everything else is 404. The lifespan shuts
Socket.IO's background tasks down.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import socketio

from a2c_protocol import NAMESPACE

from . import _json
from ._auth import AllowAllAuth, AuthProvider, SharedTokenAuth, is_loopback_host
from ._gate import Receive, Scope, Send, VersionGate, mount_matches
from ._metrics import METRICS_CONTENT_TYPE, ServerMetrics
from ._namespace import SmcpNamespace
from ._offices import Offices
from ._oversize import OversizeWatch
from ._settings import ServerSettings
from ._shutdown import Drain
from ._store import MemoryStateStore, StateStore

__all__ = ["A2CServerApp", "create_app"]

_log = logging.getLogger("a2c_server")

HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"


class A2CServerApp:
    """The ASGI app returned by :func:`create_app`.

    ``sio`` is the python-socketio ``AsyncServer`` (namespace ``/smcp``), ``store`` the
    state store, ``settings`` the settings it runs with, ``metrics`` what ``/metrics``
    serves, ``drain`` the graceful-shutdown state (``await app.drain.drain(grace)`` lets
    routed calls finish, then answers the rest; the ``a2c-server`` command does it on
    SIGTERM/SIGINT).
    """

    def __init__(
        self,
        *,
        settings: ServerSettings,
        sio: socketio.AsyncServer,
        store: StateStore,
        metrics: ServerMetrics | None = None,
        drain: Drain | None = None,
    ) -> None:
        self.settings = settings
        self.drain = drain if drain is not None else Drain()
        self.sio = sio
        self.store = store
        self.metrics = metrics if metrics is not None else ServerMetrics()
        watched = OversizeWatch(
            self._engineio,
            limit=settings.max_message_bytes,
            describe=self._describe_eio,
            on_drop=self.metrics.dropped_for_size,
        )
        self._gate = VersionGate(
            watched,
            server_version=settings.protocol_version,
            mount=settings.socketio_path,
            on_refusal=self.metrics.version_refused,
        )

    async def _describe_eio(self, eio_sid: str) -> tuple[str | None, str | None, str | None]:
        sid = self.sio.manager.sid_from_eio_sid(eio_sid, NAMESPACE)
        member = await self.store.get(sid) if sid else None
        if member is None:
            return sid, None, None
        return sid, member.role.value, member.name

    async def _engineio(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.sio.handle_request(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind in ("http", "websocket") and mount_matches(
            scope.get("path", ""), self.settings.socketio_path
        ):
            await self._gate(scope, receive, send)
        elif kind == "http" and scope.get("path") == HEALTH_PATH:
            await self._health(scope, send)
        elif kind == "http" and scope.get("path") == METRICS_PATH:
            await self._metrics(scope, send)
        elif kind == "http":
            await _plain(send, 404, {"code": 404, "message": "Not Found"})
        elif kind == "websocket":
            await receive()
            await send({"type": "websocket.close", "code": 1008})

    async def health(self) -> dict[str, Any]:
        """The ``/healthz`` document."""
        stats = await self.store.stats()
        return {
            "status": "ok",
            "protocol_version": self.settings.protocol_version,
            "namespace": NAMESPACE,
            "connections": stats.connections,
            "offices": stats.offices,
        }

    async def _health(self, scope: Scope, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _plain(send, 405, {"code": 405, "message": "Method Not Allowed"})
            return
        await _plain(send, 200, await self.health())

    async def _metrics(self, scope: Scope, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _plain(send, 405, {"code": 405, "message": "Method Not Allowed"})
            return
        body = self.metrics.render((await self.store.stats()).offices)
        await _respond(send, 200, METRICS_CONTENT_TYPE, body)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.sio.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _plain(send: Send, status: int, document: dict[str, Any]) -> None:
    body = json.dumps(document, separators=(",", ":")).encode()
    await _respond(send, status, "application/json", body)


async def _respond(send: Send, status: int, content_type: str, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def default_auth(settings: ServerSettings) -> AuthProvider:
    """Shared-token auth when ``settings.auth_token`` is set, else allow-all."""
    if settings.auth_token:
        return SharedTokenAuth(settings.auth_token)
    return AllowAllAuth()


def create_app(
    settings: ServerSettings | None = None,
    *,
    auth: AuthProvider | None = None,
    store: StateStore | None = None,
) -> A2CServerApp:
    """Build the Server's ASGI app.

    ``auth`` defaults to :class:`SharedTokenAuth` when ``settings.auth_token`` is set and
    to :class:`AllowAllAuth` otherwise (with a WARNING when ``settings.host`` is not a
    loopback address). ``store`` defaults to a fresh :class:`MemoryStateStore`.
    """
    settings = settings or ServerSettings()
    provider = auth if auth is not None else default_auth(settings)
    if isinstance(provider, AllowAllAuth) and not is_loopback_host(settings.host):
        _log.warning(
            "allow-all authentication on non-loopback address %s: anyone who can reach this "
            "port may connect; set an auth token for anything but local development",
            settings.host,
        )
    sio = socketio.AsyncServer(
        async_mode="asgi",
        max_http_buffer_size=settings.max_message_bytes,
        ping_interval=settings.ping_interval,
        ping_timeout=settings.ping_timeout,
        cors_allowed_origins=list(settings.cors_allowed_origins) or None,
        logger=False,
        engineio_logger=False,
        json=_json,
    )
    state = store if store is not None else MemoryStateStore()
    metrics = ServerMetrics()
    drain = Drain()
    SmcpNamespace(
        sio, settings=settings, offices=Offices(state), auth=provider, metrics=metrics,
        drain=drain,
    ).register()  # fmt: skip
    return A2CServerApp(settings=settings, sio=sio, store=state, metrics=metrics, drain=drain)
