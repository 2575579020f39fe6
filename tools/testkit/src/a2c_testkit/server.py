"""Run the real a2c Server in-process under uvicorn, on 127.0.0.1, for tests.

::

    async with running_server() as srv:
        client = socketio.AsyncClient()
        await client.connect(srv.url + "?a2c_version=0.2.0", namespaces=["/smcp"],
                             socketio_path=srv.socketio_path, auth={"role": "agent"})

``port=0`` picks a free port; pass ``srv.port`` to a second ``running_server`` after the
first one exited to restart on the same port (reconnect tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import AsyncIterator
from typing import Any

import attrs
import socketio
import uvicorn

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION, Event
from a2c_server import (
    A2CServerApp,
    AuthProvider,
    ServerSettings,
    StateStore,
    create_app,
    registry_mismatches,
)

__all__ = [
    "RawClient",
    "RunningServer",
    "assert_registry_matches_rooms",
    "close_client",
    "connect_raw",
    "connect_refusal",
    "echo_computer",
    "joined_raw",
    "running_nodes",
    "running_server",
    "serving",
]

_HOST = "127.0.0.1"


@attrs.frozen
class RunningServer:
    """A server started by :func:`running_server` (or the first node of :func:`running_nodes`).

    ``nodes`` lists every node of a multi-node deployment; :func:`connect_raw` spreads
    clients over them in turn.
    """

    url: str
    port: int
    socketio_path: str
    settings: ServerSettings
    app: A2CServerApp
    nodes: tuple[RunningServer, ...] = ()
    _turn: itertools.count[int] = attrs.field(factory=itertools.count, eq=False, repr=False)

    def next_node(self) -> RunningServer:
        """The node the next client should use (this one on a single-node server)."""
        if not self.nodes:
            return self
        return self.nodes[next(self._turn) % len(self.nodes)]


def _bound_port(server: uvicorn.Server) -> int:
    for listener in server.servers:
        for sock in listener.sockets:
            return int(sock.getsockname()[1])
    raise RuntimeError("uvicorn started without a listening socket")


async def _wait_accepting(port: int, task: asyncio.Task[None], deadline: float) -> None:
    loop = asyncio.get_running_loop()
    while True:
        if task.done():
            task.result()  # surfaces the startup error
            raise RuntimeError("uvicorn exited during startup")
        try:
            _, writer = await asyncio.open_connection(_HOST, port)
        except OSError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.02)
        else:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            return


@contextlib.asynccontextmanager
async def running_server(
    settings: ServerSettings | None = None,
    *,
    auth: AuthProvider | None = None,
    store: StateStore | None = None,
    port: int = 0,
    startup_timeout: float = 30.0,
    ws: str = "auto",
    host: str = _HOST,
) -> AsyncIterator[RunningServer]:
    """Serve :func:`a2c_server.create_app` on ``127.0.0.1:port`` until the block exits.

    ``auth`` and ``store`` are passed to ``create_app``. ``settings.host``/``port`` are
    overridden with the real bind address. ``ws`` selects uvicorn's WebSocket
    implementation (``"websockets-sansio"``, ``"wsproto"``…). On exit open connections are
    dropped (clients see a transport loss and may reconnect). ``host="::"`` binds dual-stack
    as ``a2c-server --host ::`` does (``url`` still names 127.0.0.1: IPv4 clients arrive
    as ``::ffff:127.0.0.1``). ``settings.forwarded_allow_ips`` is applied as the CLI does.
    """
    base = settings or ServerSettings()
    base = attrs.evolve(base, host=host, port=port)
    app = create_app(base, auth=auth, store=store)
    async with serving(
        app, port=port, ws=ws, ws_max_size=base.max_message_bytes + 1024,
        startup_timeout=startup_timeout, host=host,
        forwarded_allow_ips=base.forwarded_allow_ips,
    ) as bound:  # fmt: skip
        final = attrs.evolve(base, port=bound)
        app.settings = final
        yield RunningServer(
            url=f"http://{_HOST}:{bound}",
            port=bound,
            socketio_path=final.socketio_path,
            settings=final,
            app=app,
        )


@contextlib.asynccontextmanager
async def serving(
    app: Any,
    *,
    port: int = 0,
    ws: str = "auto",
    ws_max_size: int = 16 * 1024 * 1024,
    startup_timeout: float = 30.0,
    host: str = _HOST,
    forwarded_allow_ips: str = "",
) -> AsyncIterator[int]:
    """Serve the ASGI ``app`` under uvicorn on ``127.0.0.1:port``; yield the bound port.

    Any ASGI app: the a2c Server (:func:`running_server`) or a stand-in peer built from
    plain python-socketio, such as an older Server. ``X-Forwarded-For`` is trusted only
    from ``forwarded_allow_ips`` (none by default, as ``a2c-server``).
    """
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        proxy_headers=bool(forwarded_allow_ips),
        forwarded_allow_ips=forwarded_allow_ips or None,
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        ws=ws,
        ws_max_size=ws_max_size,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    loop = asyncio.get_running_loop()
    # Another host is bound as the CLI binds it (asyncio's own bind of "::" is IPv6-only).
    sockets = None if host == _HOST else [config.bind_socket()]
    task = loop.create_task(server.serve(sockets=sockets))
    try:
        deadline = loop.time() + startup_timeout
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("uvicorn exited during startup")
            if loop.time() > deadline:
                raise TimeoutError("uvicorn did not start in time")
            await asyncio.sleep(0.02)
        bound = _bound_port(server)
        await _wait_accepting(bound, task, deadline)
        yield bound
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=30)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def running_nodes(
    redis_url: str,
    settings: ServerSettings | None = None,
    *,
    count: int = 2,
    auth: AuthProvider | None = None,
    prefix: str | None = None,
) -> AsyncIterator[RunningServer]:
    """``count`` Server nodes (``node-0``…) sharing ``redis_url`` under ``prefix``.

    The default prefix is fresh, so tests sharing one Redis never see each other's keys.
    Returns the first node with ``nodes`` set, so :func:`connect_raw` spreads clients.
    """
    base = attrs.evolve(
        settings or ServerSettings(),
        redis_url=redis_url,
        redis_prefix=prefix or uuid.uuid4().hex[:12],
    )
    async with contextlib.AsyncExitStack() as stack:
        nodes = [
            await stack.enter_async_context(
                running_server(attrs.evolve(base, node_id=f"node-{i}"), auth=auth)
            )
            for i in range(count)
        ]
        yield attrs.evolve(nodes[0], nodes=tuple(nodes))


class RawClient:
    """A bare python-socketio client on ``/smcp`` that records every ``notify:*`` it gets.

    For tests that need to speak the wire protocol directly (no SDK in between).
    """

    def __init__(self, sio: socketio.AsyncClient) -> None:
        self.sio = sio
        self.notifications: asyncio.Queue[tuple[Event, object]] = asyncio.Queue()
        for event in Event:
            if event.value.startswith("notify:"):
                sio.on(event.value, self._recorder(event), namespace=NAMESPACE)

    def _recorder(self, event: Event) -> object:
        async def record(data: object = None) -> None:
            await self.notifications.put((event, data))

        return record

    async def call(self, event: Event | str, data: object = None, *, timeout: float = 30) -> object:
        """Emit ``event`` with an ack and return the ack (a tuple for several arguments)."""
        return await self.sio.call(str(event), data, namespace=NAMESPACE, timeout=timeout)

    async def emit(self, event: Event | str, data: object = None) -> None:
        await self.sio.emit(str(event), data, namespace=NAMESPACE)

    async def next_notification(
        self, event: Event | None = None, *, timeout: float = 30
    ) -> tuple[Event, object]:
        """The next recorded notification (of type ``event`` when given; others are skipped)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"no {event or 'notification'} within {timeout} s")
            got = await asyncio.wait_for(self.notifications.get(), remaining)
            if event is None or got[0] is event:
                return got

    async def join(self, role: str, name: str, office_id: str) -> object:
        return await self.call(
            Event.JOIN_OFFICE, {"role": role, "name": name, "office_id": office_id}
        )


@contextlib.asynccontextmanager
async def connect_raw(
    server: RunningServer,
    role: str | None,
    *,
    auth: dict[str, object] | None = None,
    a2c_version: str = PROTOCOL_VERSION,
    transports: list[str] | None = None,
    reconnection: bool = False,
) -> AsyncIterator[RawClient]:
    """Connect a :class:`RawClient` as ``role`` (``auth`` adds fields; it may override role).

    ``role=None`` connects without ``auth.role``, as the official SDKs do.

    On a multi-node ``server`` each call connects to the next node in turn.
    """
    server = server.next_node()
    sio = socketio.AsyncClient(reconnection=reconnection)
    client = RawClient(sio)
    await sio.connect(
        f"{server.url}?a2c_version={a2c_version}",
        namespaces=[NAMESPACE],
        socketio_path=server.socketio_path,
        auth={"role": role, **(auth or {})} if role is not None else dict(auth or {}),
        transports=transports or ["polling", "websocket"],
        wait_timeout=30,
    )
    try:
        yield client
    finally:
        await close_client(sio)


async def connect_refusal(
    server: RunningServer, auth: dict[str, object], transports: list[str] | None = None
) -> Any:
    """Connect to ``/smcp`` with ``auth``, expecting a refusal; returns its
    ``connect_error`` data (``{"message": ..., "data": {"code": ..., ...}}``)."""
    sio = socketio.AsyncClient(reconnection=False)
    error: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def on_connect_error(data: Any = None) -> None:
        if not error.done():
            error.set_result(data)

    sio.on("connect_error", on_connect_error, namespace=NAMESPACE)
    try:
        with contextlib.suppress(socketio.exceptions.ConnectionError):
            await sio.connect(f"{server.url}?a2c_version={PROTOCOL_VERSION}",
                              namespaces=[NAMESPACE], socketio_path=server.socketio_path,
                              auth=auth, transports=transports or ["polling", "websocket"],
                              wait_timeout=30)  # fmt: skip
        assert not sio.connected, "the connect was accepted"
        return await asyncio.wait_for(error, 30)
    finally:
        await close_client(sio)


async def joined_raw(
    stack: contextlib.AsyncExitStack, node: RunningServer, role: str, name: str, office: str
) -> RawClient:
    """A websocket :class:`RawClient` on ``node``, joined to ``office``, closed with ``stack``."""
    client = await stack.enter_async_context(connect_raw(node, role, transports=["websocket"]))
    assert await client.join(role, name, office) == (True, None)
    return client


def echo_computer(client: RawClient) -> None:
    """Make the raw Computer ``client`` answer every tool call with the text ``pong``."""

    async def answer(payload: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "pong"}], "isError": False}

    client.sio.on(Event.TOOL_CALL.value, answer, namespace=NAMESPACE)


async def close_client(sio: socketio.AsyncClient) -> None:
    """Disconnect ``sio`` and release its HTTP session, even after a refused connect.

    python-engineio keeps its aiohttp session open when ``connect()`` fails; left to the
    garbage collector it becomes an "unclosed client session" warning in a later test.
    """
    if sio.connected:
        await sio.disconnect()
    await sio.shutdown()
    http = getattr(sio.eio, "http", None)
    if http is not None and not http.closed:
        await http.close()


async def assert_registry_matches_rooms(server: RunningServer) -> None:
    """Fail unless the office registry and the Socket.IO rooms of ``/smcp`` agree.

    On every node: each connected session must be registered and be in exactly its
    office's room; and the registry must hold no session that no node has (no ghosts
    either way).
    """
    problems: list[str] = []
    connected = 0
    for node in server.nodes or (server,):
        app = node.app
        problems += await registry_mismatches(app.sio, app.store, NAMESPACE)
        manager = app.sio.manager
        connected += sum(
            1
            for sid in manager.rooms.get(NAMESPACE, {}).get(None, {})
            if manager.is_connected(sid, NAMESPACE)
        )
    registered = (await server.app.store.stats()).connections
    if registered != connected:
        problems.append(f"registry holds {registered} sessions, Socket.IO {connected}")
    assert not problems, "registry != rooms: " + "; ".join(problems)
