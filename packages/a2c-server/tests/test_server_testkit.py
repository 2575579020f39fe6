"""The testkit's in-process server: real port, clean shutdown, restart on the same port."""

from __future__ import annotations

import asyncio
import json

import httpx
import socketio

from a2c_protocol import NAMESPACE
from a2c_server import ServerSettings
from a2c_testkit.server import close_client, running_server


async def test_server_testkit_restart_on_same_port_lets_clients_reconnect() -> None:
    sio = socketio.AsyncClient(
        reconnection=True, reconnection_delay=0.1, reconnection_delay_max=0.5
    )
    connects: asyncio.Queue[None] = asyncio.Queue()
    dropped = asyncio.Event()

    async def on_connect() -> None:
        await connects.put(None)

    async def on_disconnect(*args: object) -> None:
        dropped.set()

    sio.on("connect", on_connect, namespace=NAMESPACE)
    sio.on("disconnect", on_disconnect, namespace=NAMESPACE)
    try:
        async with running_server() as first:
            port = first.port
            await sio.connect(
                first.url + "?a2c_version=0.2.0",
                namespaces=[NAMESPACE],
                socketio_path=first.socketio_path,
                auth={"role": "agent"},
                transports=["polling", "websocket"],
                wait_timeout=30,
            )
            await asyncio.wait_for(connects.get(), 30)
        await asyncio.wait_for(dropped.wait(), 30)
        async with running_server(port=port) as second:
            assert second.port == port
            await asyncio.wait_for(connects.get(), 60)  # reconnected by itself
            assert (await second.app.health())["connections"] == 1
    finally:
        await close_client(sio)


async def test_server_testkit_exposes_url_port_path_settings() -> None:
    async with running_server() as srv:
        assert srv.url == f"http://127.0.0.1:{srv.port}"
        assert srv.settings.port == srv.port and srv.settings.host == "127.0.0.1"
        assert srv.socketio_path == "socket.io"
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await http.get(srv.url + "/healthz")).status_code == 200
    async with httpx.AsyncClient(timeout=5) as http:
        try:
            await http.get(srv.url + "/healthz")
        except httpx.ConnectError:
            pass
        else:
            raise AssertionError("the server still answers after the block exited")


async def test_server_testkit_passes_ping_and_size_settings_to_engineio() -> None:
    settings = ServerSettings(ping_interval=7, ping_timeout=3, max_message_bytes=4096)
    async with running_server(settings) as srv:
        eio = srv.app.sio.eio
        assert (eio.ping_interval, eio.ping_timeout) == (7, 3)
        assert eio.max_http_buffer_size == 4096
        async with httpx.AsyncClient(timeout=30) as http:
            opened = await http.get(
                f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling&a2c_version=0.2.0"
            )
        handshake = json.loads(opened.text[1:])
        assert (handshake["pingInterval"], handshake["pingTimeout"]) == (7000, 3000)
        assert handshake["maxPayload"] == 4096
