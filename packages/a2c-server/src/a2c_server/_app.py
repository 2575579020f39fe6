"""The ASGI application: routing, the version gate, Socket.IO, ``GET /healthz`` and
``GET /metrics``.

Requests on the Engine.IO mount path go through :class:`~a2c_server.VersionGate` to
python-socketio; ``/healthz`` answers JSON, ``/metrics`` the Prometheus text format;
everything else is 404. The lifespan shuts
Socket.IO's background tasks down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any

from a2c_protocol import NAMESPACE, Event

from ._auth import AllowAllAuth, AuthProvider, JwtAuth, SharedTokenAuth, is_loopback_host
from ._cluster._consistency import registry_mismatches
from ._edge._gate import Receive, Scope, Send, VersionGate, first_query_value, mount_matches
from ._edge._hosts import HostGuard
from ._edge._open_requests import OpenRequests
from ._edge._oversize import OversizeWatch
from ._edge._pace import HandshakeTurns
from ._edge._polling import PostScreen
from ._edge._shutdown import Drain
from ._edge._transport import serve_engineio
from ._edge._uvicorn_log import guard_loop, quiet_client_faults, unguard_loop
from ._exceptions import StoreUnavailableError
from ._floods._accesslog import quiet_repeated_lines
from ._floods._collector import FloodsCollector
from ._floods._refusals import RefusalLog
from ._observe._metrics import METRICS_CONTENT_TYPE, ServerMetrics
from ._relay._namespace import SmcpNamespace
from ._relay._packet import SmcpPacket
from ._relay._sio import SmcpSocketServer
from ._settings import ServerSettings
from ._state._offices import Offices
from ._state._store import MemoryStateStore, StateStore
from ._upstream import polling_sessions

if TYPE_CHECKING:
    from ._cluster._multinode import MultiNode
    from ._console._routes import Console

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
    SIGTERM/SIGINT), ``requests`` the open HTTP requests and WebSockets (ended by
    :meth:`end_requests` after the drain). ``node_id`` is this process's name among the
    nodes of a multi-node deployment.
    """

    def __init__(
        self,
        *,
        settings: ServerSettings,
        sio: SmcpSocketServer,
        store: StateStore,
        metrics: ServerMetrics | None = None,
        drain: Drain | None = None,
        node_id: str = "local",
        multinode: MultiNode | None = None,
        console: Console | None = None,
    ) -> None:
        self.settings = settings
        self.console = console
        self.drain = drain if drain is not None else Drain()
        self.sio = sio
        self.store = store
        self.metrics = metrics if metrics is not None else ServerMetrics()
        screened = PostScreen(
            self._engineio,
            sio=sio,
            limit=settings.max_message_bytes,
            on_refusal=self.metrics.polling_refused,
            on_oversize=self.metrics.dropped_for_size,
        )
        watched = OversizeWatch(
            screened,
            limit=settings.max_message_bytes,
            describe=self._describe_eio,
            on_drop=self.metrics.dropped_for_size,
        )
        self.node_id = node_id
        self.multinode = multinode
        self.requests = OpenRequests()
        self.host_guard: HostGuard | None = None  # DNS rebinding (tokenless loopback only)
        self.handshake_turns = HandshakeTurns(sio.handshake_pacer)
        self._gate = VersionGate(
            watched,
            server_version=settings.served_versions,
            mount=settings.socketio_path,
            on_refusal=self.metrics.version_refused,
            log_refusal=RefusalLog(logging.getLogger("a2c_server.gate")).refused,
        )

    async def _describe_eio(self, eio_sid: str) -> tuple[str | None, str | None, str | None]:
        sid = self.sio.manager.sid_from_eio_sid(eio_sid, NAMESPACE)
        member = await self.store.get(sid) if sid else None
        if member is None:
            return sid, None, None
        return sid, member.role.value if member.role else None, member.name

    async def _engineio(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve_engineio(self.sio, scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "lifespan":
            await self._lifespan(receive, send)
        elif self.host_guard is not None and await self.host_guard.screen(scope, receive, send):
            return
        else:
            await self.requests.serve(self._route, scope, receive, send)

    async def end_requests(self, timeout: float = 2.0) -> None:
        """At shutdown: answer open HTTP requests with 503 and close polling sessions.

        The ``a2c-server`` command runs it after the drain, before uvicorn closes the
        connections (see :mod:`a2c_server._edge._open_requests`). Handshakes waiting for
        their pacing turn are answered busy (503 / close 1013) first: uvicorn would
        cancel them with a traceback each.
        """
        self.handshake_turns.close()
        await self.requests.end(self._close_polling_sessions, timeout)

    async def _close_polling_sessions(self) -> int:
        polling = polling_sessions(self.sio)
        for eio_sid in polling:
            await self.sio.close_transport(eio_sid)
        return len(polling)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind in ("http", "websocket") and mount_matches(
            scope.get("path", ""), self.settings.socketio_path
        ):
            if await self.handshake_turns.wait_turn(scope, receive, send):
                await self._gate(scope, receive, send)
        elif kind == "http" and scope.get("path") == HEALTH_PATH:
            await self._health(scope, send)
        elif kind == "http" and scope.get("path") == METRICS_PATH:
            await self._metrics(scope, send)
        elif kind == "http" and self.console is not None and _under_console(scope):
            await self.console(scope, receive, send)
        elif kind == "http":
            await _plain(send, 404, {"code": 404, "message": "Not Found"})
        elif kind == "websocket":
            await receive()
            await send({"type": "websocket.close", "code": 1008})

    async def health(self, *, deep: bool = False) -> dict[str, Any]:
        """The ``/healthz`` document (``status`` is ``degraded`` while Redis is unreachable).

        ``deep`` (``/healthz?deep=1``) adds ``registry_matches_rooms``: whether every
        session connected to this node is in exactly its registered office's Socket.IO
        room. It reads the store once per session, so it is opt-in.
        """
        document: dict[str, Any] = {
            "status": "ok",
            "protocol_version": self.settings.protocol_version,
            "protocols": list(self.settings.served_versions),
            "namespace": NAMESPACE,
            "node_id": self.node_id,
            "registry": "memory",
        }
        if self.multinode is not None:
            document.update(await self.multinode.health())
        try:
            stats = await self.store.stats()
        except StoreUnavailableError:
            document.update(status="degraded", connections=None, offices=None)
        else:
            document.update(connections=stats.connections, offices=stats.offices)
        if document.get("redis") == "unavailable":
            document["status"] = "degraded"
        if deep:
            problems = await registry_mismatches(self.sio, self.store, NAMESPACE)
            document["registry_matches_rooms"] = not problems
        return document

    async def _health(self, scope: Scope, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _plain(send, 405, {"code": 405, "message": "Method Not Allowed"})
            return
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        await _plain(send, 200, await self.health(deep=first_query_value(query, "deep") == "1"))

    async def _metrics(self, scope: Scope, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _plain(send, 405, {"code": 405, "message": "Method Not Allowed"})
            return
        offices: int | None = None
        # While Redis is down the metrics still answer (a2c_server_registry_reachable 0).
        with contextlib.suppress(StoreUnavailableError):
            offices = (await self.store.stats()).offices
        body = self.metrics.render(offices)
        await _respond(send, 200, METRICS_CONTENT_TYPE, body)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    if self.multinode is not None:
                        await self.multinode.start()
                    if self.console is not None:
                        await self.console.feed.start()
                except StoreUnavailableError as exc:
                    _log.error("cannot start: %s", exc)
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                guard_loop(asyncio.get_running_loop())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.console is not None:
                    self.console.feed.close()
                    await self.console.feed.stop()
                await self.sio.shutdown()
                if self.multinode is not None:
                    await self.multinode.stop()
                unguard_loop(asyncio.get_running_loop())
                await send({"type": "lifespan.shutdown.complete"})
                return


def _under_console(scope: Scope) -> bool:
    path = str(scope.get("path", ""))
    return path == "/console" or path.startswith("/console/")


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


def jwt_auth(settings: ServerSettings) -> JwtAuth:
    """The JWT provider ``settings`` describe (their ``jwt_*`` fields).

    Here, not in :mod:`a2c_server._auth`: ``_settings`` imports ``_auth``, so ``_auth``
    knows nothing of :class:`ServerSettings`.
    """
    issuer, audience = settings.jwt_issuer or "", settings.jwt_audience or ""
    if settings.jwt_public_key is not None:
        return JwtAuth.from_files(
            issuer=issuer, audience=audience, public_key_file=settings.jwt_public_key
        )
    return JwtAuth(
        issuer=issuer,
        audience=audience,
        jwks_url=settings.jwt_jwks_url,
        secret=settings.jwt_secret,
    )


def default_auth(settings: ServerSettings) -> AuthProvider:
    """JWT auth when a ``jwt_*`` key source is set, shared-token auth when
    ``settings.auth_token`` is, else allow-all (both limited by ``allow_offices``)."""
    if settings.jwt_enabled:
        return jwt_auth(settings)
    if settings.auth_token:
        return SharedTokenAuth(settings.auth_token, settings.allow_offices)
    return AllowAllAuth(settings.allow_offices)


def create_app(
    settings: ServerSettings | None = None,
    *,
    auth: AuthProvider | None = None,
    store: StateStore | None = None,
) -> A2CServerApp:
    """Build the Server's ASGI app.

    ``auth`` defaults to :class:`SharedTokenAuth` when ``settings.auth_token`` is set and
    to :class:`AllowAllAuth` otherwise (with a WARNING when ``settings.host`` is not a
    loopback address). ``store`` defaults to a fresh :class:`MemoryStateStore`, or to the
    Redis store (with python-socketio's Redis client manager and node liveness) when
    ``settings.redis_url`` is set; that needs the ``a2c-server[redis]`` extra.
    """
    settings = settings or ServerSettings()
    quiet_client_faults()
    quiet_repeated_lines()
    provider = auth if auth is not None else default_auth(settings)
    if isinstance(provider, AllowAllAuth) and not is_loopback_host(settings.host):
        _log.warning(
            "allow-all authentication on non-loopback address %s: anyone who can reach this "
            "port may connect; set an auth token for anything but local development",
            settings.host,
        )
    multinode: MultiNode | None = None
    node_id = settings.node_id or "local"
    if settings.redis_url is not None and store is None:
        from ._cluster._multinode import MultiNode, default_node_id

        node_id = default_node_id(settings)
        multinode = MultiNode(settings, node_id)
    sio = SmcpSocketServer(
        async_mode="asgi",
        client_manager=multinode.manager if multinode is not None else None,
        max_http_buffer_size=settings.max_message_bytes,
        ping_interval=settings.ping_interval,
        ping_timeout=settings.ping_timeout,
        cors_allowed_origins=list(settings.cors_allowed_origins) or None,
        serializer=SmcpPacket,
        # Only /smcp: python-socketio would otherwise also admit anyone to "/".
        namespaces=[NAMESPACE],
        limits=settings,  # the per-client bounds it enforces
        tuple_ack_events=(Event.JOIN_OFFICE.value, Event.LEAVE_OFFICE.value),
    )
    state: StateStore
    if multinode is not None:
        state = multinode.store
    else:
        state = store if store is not None else MemoryStateStore()
    metrics = ServerMetrics()
    metrics.registry.register(
        FloodsCollector(sio.output_budget, sio.refusals, sio.inbound_stats, sio.handshake_pacer)
    )
    drain = Drain()
    namespace = SmcpNamespace(
        sio, settings=settings, offices=Offices(state), auth=provider, metrics=metrics,
        drain=drain, remote=multinode.remote if multinode is not None else None,
        subjects=multinode.subjects if multinode is not None else None,
    )  # fmt: skip
    namespace.register()
    if multinode is not None:
        multinode.bind(namespace.broadcast, namespace.leave_room, namespace.end_session)
        metrics.watch_multinode(multinode.manager.counts, multinode.registry_reachable)
    console = None
    if settings.console:
        from ._console._setup import create_console

        console = create_console(sio=sio, store=state, metrics=metrics, settings=settings,
                                 node_id=node_id, namespace=namespace, drain=drain,
                                 multinode=multinode)  # fmt: skip
    app = A2CServerApp(
        settings=settings, sio=sio, store=state, metrics=metrics, drain=drain,
        node_id=node_id, multinode=multinode, console=console,
    )  # fmt: skip
    if isinstance(provider, AllowAllAuth) and is_loopback_host(settings.host):
        app.host_guard = HostGuard(settings.allowed_hosts)
    return app
