"""The shipped nginx example (docs/deploy/nginx-sticky.conf) in front of two Redis nodes.

Long-polling sessions from several client addresses (127.0.0.2…) must each stay on one
node; the same file with the ``hash`` line removed (round robin) is the control that
shows stickiness is what makes them work. A real Agent and Computer then talk through
nginx, over polling upgraded to WebSocket.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_agent import AsyncAgent
from a2c_protocol import PROTOCOL_VERSION
from a2c_testkit.nginx import nginx_process
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.server import connect_raw
from a2c_testkit.triangle import ServerProcess, eventually, server_process

# `hash $remote_addr consistent` places the nodes on its ring by address, and the nodes'
# ports are new each run, so which client lands where changes too. With 8 clients all of
# them landed on one node once (seen in a CI run; about 2 x 0.5^8 on an even ring); with 40
# that is about 2 x 0.5^40.
CLIENT_ADDRESSES = [f"127.0.0.{i}" for i in range(2, 42)]


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@contextlib.asynccontextmanager
async def nginx(
    procs: Any, tmp_path: Path, nodes: list[ServerProcess], *, sticky: bool
) -> AsyncIterator[str]:
    prefix = tmp_path / ("nginx-sticky" if sticky else "nginx-round-robin")
    async with nginx_process(procs.log_dir, prefix, [n.port for n in nodes], sticky=sticky,
                             track=procs.track) as url:  # fmt: skip
        yield url


async def polling_session(url: str, source: str) -> bool:
    """Open an Engine.IO session from ``source``, connect /smcp, read the connect ack."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    base = f"{url}/socket.io/?EIO=4&transport=polling"
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        opened = await http.get(f"{base}&a2c_version={PROTOCOL_VERSION}")
        if opened.status_code != 200:
            return False
        sid = json.loads(opened.text[1:])["sid"]
        sent = await http.post(f"{base}&sid={sid}", content=b'40/smcp,{"role":"agent"}')
        if sent.status_code != 200:
            return False  # another node: it does not know this session (a long-poll would wait)
        answer = await http.get(f"{base}&sid={sid}")
        return answer.status_code == 200 and answer.text.startswith("40/smcp,")


async def test_nginx_example_keeps_polling_sessions_on_one_node(
    procs: Any, tmp_path: Path, redis: RedisServer
) -> None:
    args = ["--redis", redis.url, "--redis-prefix", "sticky", "--node-ttl", "5"]
    async with (
        server_process(procs.log_dir, name="node-1", track=procs.track,
                       extra_args=[*args, "--node-id", "n1"]) as n1,
        server_process(procs.log_dir, name="node-2", track=procs.track,
                       extra_args=[*args, "--node-id", "n2"]) as n2,
    ):  # fmt: skip
        async with nginx(procs, tmp_path, [n1, n2], sticky=True) as url:
            results = [await polling_session(url, source) for source in CLIENT_ADDRESSES]
            assert all(results), results
            # Both nodes served some of them (the hash spreads addresses).
            for node in (n1, n2):
                async with httpx.AsyncClient(timeout=10) as http:
                    metrics = (await http.get(f"{node.url}/metrics")).text
                assert _connections_total(metrics) > 0, metrics[-2000:]

            # A real Agent and Computer through nginx, polling upgraded to WebSocket.
            office = "through-nginx"
            async with AsyncAgent(url, name="planner") as agent:
                await agent.join_office(office)
                server = _AsServer(url)
                async with connect_raw(server, "computer") as computer:  # type: ignore[arg-type]
                    assert await computer.join("computer", "box", office) == (True, None)
                    await eventually(
                        lambda: _names(agent), what="room seen through nginx", timeout=30
                    )

        async with nginx(procs, tmp_path, [n1, n2], sticky=False) as url:
            results = [await polling_session(url, source) for source in CLIENT_ADDRESSES]
            # Round robin sends a session's second request to the other node.
            assert not all(results), results


async def _names(agent: AsyncAgent) -> bool:
    return {s.name for s in await agent.list_room()} == {"planner", "box"}


def _connections_total(metrics: str) -> float:
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith("a2c_server_connected_clients{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


class _AsServer:
    """Just enough of RunningServer for connect_raw (url and Engine.IO path)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.socketio_path = "socket.io"

    def next_node(self) -> _AsServer:
        return self
