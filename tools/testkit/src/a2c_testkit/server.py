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
from collections.abc import AsyncIterator

import attrs
import uvicorn

from a2c_server import A2CServerApp, AuthProvider, ServerSettings, create_app

__all__ = ["RunningServer", "running_server"]

_HOST = "127.0.0.1"


@attrs.frozen
class RunningServer:
    """A server started by :func:`running_server`."""

    url: str
    port: int
    socketio_path: str
    settings: ServerSettings
    app: A2CServerApp


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
    port: int = 0,
    startup_timeout: float = 30.0,
    ws: str = "auto",
) -> AsyncIterator[RunningServer]:
    """Serve :func:`a2c_server.create_app` on ``127.0.0.1:port`` until the block exits.

    ``settings.host``/``port`` are overridden with the real bind address. ``ws`` selects
    uvicorn's WebSocket implementation (``"websockets"``, ``"wsproto"``…). On exit open
    connections are dropped (clients see a transport loss and may reconnect).
    """
    base = settings or ServerSettings()
    base = attrs.evolve(base, host=_HOST, port=port)
    app = create_app(base, auth=auth)
    config = uvicorn.Config(
        app,
        host=_HOST,
        port=port,
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        ws=ws,
        ws_max_size=base.max_message_bytes + 1024,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    loop = asyncio.get_running_loop()
    task = loop.create_task(server.serve(sockets=None))
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
        final = attrs.evolve(base, port=bound)
        app.settings = final
        yield RunningServer(
            url=f"http://{_HOST}:{bound}",
            port=bound,
            socketio_path=final.socketio_path,
            settings=final,
            app=app,
        )
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=30)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
