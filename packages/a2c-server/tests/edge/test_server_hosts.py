"""A tokenless loopback Server refuses a rebinding ``Host`` (421)."""

from __future__ import annotations

import logging

import httpx
import pytest

from a2c_protocol import PROTOCOL_VERSION
from a2c_server import ServerSettings
from a2c_server._edge._hosts import host_name
from a2c_testkit.server import running_server


def test_host_name_drops_the_port() -> None:
    assert host_name("LocalHost:8000") == "localhost"
    assert host_name("[::1]:80") == "[::1]"
    assert host_name("127.0.0.1") == "127.0.0.1"
    assert host_name("evil.example:80") == "evil.example"


@pytest.mark.parametrize(
    "header",
    ["localhost:evil", "localhost:", "localhost:80:80", "127.0.0.1:8000x", "[::1]evil",
     "[::1]:", "[::1]:80x", "localhost:123456", "localhost:８０"],
)  # fmt: skip
def test_host_name_keeps_a_header_whose_port_is_not_a_port(header: str) -> None:
    # The name was whatever preceded the last colon, so these passed
    # as loopback names; whole, they match no allowed name.
    assert host_name(header) == header.lower()


async def test_rebinding_host_is_refused_loopback_names_work(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server.hosts")
    settings = ServerSettings(allowed_hosts=("proxy.example",))
    async with running_server(settings) as srv, httpx.AsyncClient(timeout=30) as http:
        base = srv.url.rstrip("/")
        handshake = f"{base}/{srv.socketio_path.strip('/')}/?EIO=4&transport=polling"
        handshake += f"&a2c_version={PROTOCOL_VERSION}"
        port = base.rsplit(":", 1)[1]
        for url in (f"{base}/healthz", handshake):
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.2", "localhost:evil"):
                answer = await http.get(url, headers={"Host": host})
                assert answer.status_code == 421, (url, host, answer.status_code)
            for host in (f"localhost:{port}", f"127.0.0.1:{port}", "[::1]", "proxy.example"):
                answer = await http.get(url, headers={"Host": host})
                assert answer.status_code == 200, (url, host, answer.status_code)
    warned = [r for r in caplog.records if "tokenless loopback" in r.getMessage()]
    assert len(warned) == 1  # one per interval, not per request


async def test_a_server_with_a_token_is_unchanged() -> None:
    settings = ServerSettings(auth_token="t" * 32)
    async with running_server(settings) as srv, httpx.AsyncClient(timeout=30) as http:
        url = f"{srv.url.rstrip('/')}/healthz"
        answer = await http.get(url, headers={"Host": "evil.example"})
        assert answer.status_code == 200


async def test_a_rebinding_websocket_is_closed_before_accept() -> None:
    import aiohttp

    async with running_server() as srv, aiohttp.ClientSession() as http:
        base = srv.url.rstrip("/").replace("http://", "ws://")
        url = f"{base}/{srv.socketio_path.strip('/')}/?EIO=4&transport=websocket"
        url += f"&a2c_version={PROTOCOL_VERSION}"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(url, headers={"Host": "evil.example"})
        assert refused.value.status == 403
        port = base.rsplit(":", 1)[1]
        ws = await http.ws_connect(url, headers={"Host": f"localhost:{port}"})
        await ws.close()


async def test_the_console_is_guarded_alike() -> None:
    settings = ServerSettings(console=True)
    async with running_server(settings) as srv, httpx.AsyncClient(timeout=30) as http:
        base = srv.url.rstrip("/")
        port = base.rsplit(":", 1)[1]
        evil = await http.get(f"{base}/console/", headers={"Host": "evil.example"})
        assert evil.status_code == 421
        local = await http.get(f"{base}/console/", headers={"Host": f"localhost:{port}"})
        assert local.status_code == 200
