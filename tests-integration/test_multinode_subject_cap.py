"""``--max-connections-per-subject`` over two ``a2c-server --redis`` processes, one killed.

With allow-all authentication every Agent has one subject (``anonymous-agent``) and every
Computer another, counted per client address: every client here is on
127.0.0.1, so the cap of 2 covers all its Agents on the deployment together.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
import socketio

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.triangle import ServerProcess, eventually, server_process

TOO_MANY = {
    "code": 429,
    "message": "Too many connections: this identity may hold 2 from one address",
}


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


def node(procs: Any, redis: RedisServer, name: str, prefix: str) -> Any:
    args = ["--redis", redis.url, "--node-id", name, "--redis-prefix", prefix,
            "--node-ttl", "2", "--max-connections-per-subject", "2"]  # fmt: skip
    return server_process(procs.log_dir, name=f"node-{name}", extra_args=args, track=procs.track)


@asynccontextmanager
async def client(url: str, role: str) -> Any:
    sio = socketio.AsyncClient(reconnection=False)
    await sio.connect(f"{url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                      auth={"role": role}, transports=["websocket"], wait_timeout=30)  # fmt: skip
    try:
        yield sio
    finally:
        await sio.shutdown()


async def refusal(url: str, role: str) -> dict[str, Any] | None:
    """The flat error a connection gets; None when it was admitted (and closed again)."""
    errors: list[Any] = []
    sio = socketio.AsyncClient(reconnection=False)
    sio.on("connect_error", errors.append, namespace=NAMESPACE)
    try:
        await sio.connect(f"{url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                          auth={"role": role}, transports=["websocket"], wait_timeout=30)  # fmt: skip
    except socketio.exceptions.ConnectionError:
        data: dict[str, Any] = errors[0]["data"]
        return data
    finally:
        await sio.shutdown()
    return None


async def test_subject_cap_spans_nodes_and_a_killed_nodes_share_is_freed(
    procs: Any, redis: RedisServer
) -> None:
    prefix = f"cap-{uuid.uuid4().hex[:8]}"
    async with (
        node(procs, redis, "A", prefix) as a,
        node(procs, redis, "B", prefix) as b,
        AsyncExitStack() as stack,
    ):
        assert isinstance(a, ServerProcess)
        for _ in range(2):
            await stack.enter_async_context(client(b.url, "agent"))
        # Node A holds none of them, yet refuses the third Agent, and says why in its log.
        assert await refusal(a.url, "agent") == TOO_MANY
        await a.process.wait_for_log("identity=anonymous-agent", timeout=30)
        assert "code=429" in a.process.logs()
        # Another identity (the Computers') is not affected.
        await stack.enter_async_context(client(a.url, "computer"))

        b.process.kill()  # kill -9: B's two Agents are gone with it

        async def admitted() -> bool:
            try:
                await stack.enter_async_context(client(a.url, "agent"))
            except socketio.exceptions.ConnectionError:
                return False
            return True

        await eventually(admitted, timeout=120, what="B's share freed after its heartbeat")
        await stack.enter_async_context(client(a.url, "agent"))
        assert await refusal(a.url, "agent") == TOO_MANY
