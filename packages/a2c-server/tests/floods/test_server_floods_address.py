"""One busy address must not lock out its neighbours, on a real uvicorn.

Offices behind one NAT or reverse proxy share an address. Abandoned Engine.IO handshakes
from it (opened, never admitted) used to fill its quota of unadmitted sessions, and every
later handshake from it, a prompt legitimate client's included, was refused with 401.
"""

from __future__ import annotations

import json

import httpx

from a2c_protocol import PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_testkit import RunningServer, connect_raw, running_server

ABANDONED = 80  # over the cap of 64


async def abandon(http: httpx.AsyncClient, srv: RunningServer, forwarded: str | None) -> str:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    opened = await http.get(
        f"{srv.url}/{srv.socketio_path}/?EIO=4&transport=polling&a2c_version={PROTOCOL_VERSION}",
        headers=headers,
    )
    assert opened.status_code == 200, opened.text  # never refused for its neighbours
    sid: str = json.loads(opened.text[1:])["sid"]
    return sid


async def test_floods_a_prompt_client_connects_behind_abandoned_handshakes() -> None:
    async with (
        running_server(ServerSettings()) as srv,
        httpx.AsyncClient(timeout=30) as http,
    ):
        for _ in range(ABANDONED):
            await abandon(http, srv, None)
        sio = srv.app.sio
        waiting = [addr for addr, _ in sio._pending.values()]
        assert waiting.count("127.0.0.1") == 64  # the cap still bounds what they hold
        async with connect_raw(srv, "agent", transports=["polling"]) as agent:
            assert agent.sio.connected
        assert sio.refusals.counts.get("unadmitted_evicted", 0) == ABANDONED - 64 + 1


async def test_floods_behind_a_trusted_proxy_the_forwarded_address_is_counted() -> None:
    # The proxy is named (--forwarded-allow-ips): its X-Forwarded-For is the client.
    async with (
        running_server(ServerSettings(forwarded_allow_ips="127.0.0.1")) as srv,
        httpx.AsyncClient(timeout=30) as http,
    ):
        for _ in range(70):
            await abandon(http, srv, "203.0.113.7")
        neighbour = await abandon(http, srv, "203.0.113.8")
        pending = srv.app.sio._pending
        addresses = [addr for addr, _ in pending.values()]
        assert addresses.count("203.0.113.7") == 64
        assert pending[neighbour][0] == "203.0.113.8"  # its own count, not the flooder's
