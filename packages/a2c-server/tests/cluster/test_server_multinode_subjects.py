"""``max_connections_per_subject`` on several nodes sharing Redis: one cap for the deployment.

Two real nodes under uvicorn on a real redis-server; a third node that registers and then
falls silent (a kill -9 in effect) is a bare store, as in test_server_multinode.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
import socketio
from redis import asyncio as aioredis

from a2c_protocol import NAMESPACE, PROTOCOL_VERSION
from a2c_server import AuthRequest, Identity, ServerSettings
from a2c_server._cluster._redis_store import RedisStateStore, connect_redis
from a2c_server._cluster._redis_subjects import RedisSubjectCounts
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.server import RawClient, RunningServer, connect_raw, running_nodes
from a2c_testkit.triangle import eventually

SETTINGS = ServerSettings(node_ttl=1.5, max_connections_per_subject=2)
TOO_MANY = {"code": 429, "message": "Too many connections: this identity may hold 2"}
UNAVAILABLE = {"code": 503, "message": "Registry unavailable, try again later"}


class _BySubject:
    """The token is the subject: each test picks its identities."""

    async def authenticate(self, request: AuthRequest) -> Identity:
        return Identity(subject=str(request.auth.get("token")))


@pytest.fixture
async def nodes(redis: RedisServer) -> AsyncIterator[RunningServer]:
    async with running_nodes(redis.url, SETTINGS, auth=_BySubject()) as srv:
        yield srv


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


async def connect(stack: AsyncExitStack, node: RunningServer, subject: str) -> RawClient:
    return await stack.enter_async_context(connect_raw(node, "agent", auth={"token": subject}))


async def refusal(node: RunningServer, subject: str) -> dict[str, Any] | None:
    """The flat error a connection of ``subject`` to ``node`` gets; None when admitted."""
    errors: list[Any] = []
    sio = socketio.AsyncClient(reconnection=False)
    sio.on("connect_error", errors.append, namespace=NAMESPACE)
    try:
        await sio.connect(
            f"{node.url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
            auth={"role": "agent", "token": subject}, transports=["websocket"], wait_timeout=30,
        )  # fmt: skip
    except socketio.exceptions.ConnectionError:
        assert errors, "refused without a connect_error"
        data: dict[str, Any] = errors[0]["data"]
        return data
    finally:
        await sio.shutdown()
    return None


def refused_lines(caplog: pytest.LogCaptureFixture, subject: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.getMessage().startswith("connection refused")
        and getattr(r, "a2c", {}).get("identity") == subject
    ]


async def test_multinode_subject_cap_counts_every_node(
    nodes: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server.namespace")
    n0, n1 = nodes.nodes
    async with AsyncExitStack() as stack:
        first = await connect(stack, n0, "u1")
        await connect(stack, n1, "u1")
        # The third, whichever node it reaches, is over the deployment's cap.
        assert await refusal(n0, "u1") == TOO_MANY
        assert await refusal(n1, "u1") == TOO_MANY
        lines = refused_lines(caplog, "u1")
        assert len(lines) == 2 and all(r.a2c["code"] == 429 for r in lines)  # type: ignore[attr-defined]
        # Another identity is not affected, on either node.
        for node in (n0, n1):
            assert (await connect(stack, node, "u2")).sio.connected
        # Once one leaves, a new session is admitted (on the other node).
        await first.sio.disconnect()
        await eventually(lambda: _admitted(stack, n1, "u1"), what="u1 admitted again")
        assert await refusal(n0, "u1") == TOO_MANY


async def _admitted(stack: AsyncExitStack, node: RunningServer, subject: str) -> bool:
    try:
        await connect(stack, node, subject)
    except socketio.exceptions.ConnectionError:
        return False
    return True


async def test_multinode_subject_cap_two_nodes_admitting_at_once(nodes: RunningServer) -> None:
    n0, n1 = nodes.nodes
    async with AsyncExitStack() as stack:
        attempts = await asyncio.gather(
            *(_admitted(stack, (n0, n1)[i % 2], "u3") for i in range(12))
        )
        assert sum(attempts) == 2, attempts


async def test_multinode_subject_cap_frees_a_dead_nodes_share(nodes: RunningServer) -> None:
    n0, n1 = nodes.nodes
    prefix = n0.settings.redis_prefix
    assert n0.settings.redis_url is not None
    ghost = RedisStateStore(connect_redis(n0.settings.redis_url), prefix=prefix, node_id="ghost")
    counts = RedisSubjectCounts(ghost.client, prefix=prefix, node_id="ghost")

    async def heartbeat() -> None:
        while True:
            await ghost.heartbeat(1.0)
            await asyncio.sleep(0.2)

    beating = asyncio.get_running_loop().create_task(heartbeat())
    try:
        await ghost.heartbeat(1.0)
        assert await counts.hold("u4", "ghost-1", 2) == 0
        assert await counts.hold("u4", "ghost-2", 2) == 1
        for node in (n0, n1):
            assert await refusal(node, "u4") == TOO_MANY
        beating.cancel()  # the ghost node crashes: its sessions are gone
        async with AsyncExitStack() as stack:
            await eventually(lambda: _admitted(stack, n0, "u4"), what="the dead node's share freed")
            await connect(stack, n1, "u4")
            assert await refusal(n0, "u4") == TOO_MANY
        # Reaped with the node: nothing of it is left in Redis.
        keys = f"{{{prefix}}}:node:ghost:subject*"
        await eventually(lambda: _none_left(ghost.client, keys), what="the ghost's keys reaped")
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
        await ghost.client.aclose()


async def _none_left(client: aioredis.Redis, pattern: str) -> bool:
    return not [key async for key in client.scan_iter(match=pattern)]


async def test_multinode_subject_cap_when_redis_is_down_and_back(
    private_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="a2c_server.namespace")
    async with (
        running_nodes(private_redis.url, SETTINGS, auth=_BySubject()) as srv,
        AsyncExitStack() as stack,
    ):
        n0, n1 = srv.nodes
        await connect(stack, n0, "u5")
        await connect(stack, n1, "u5")
        private_redis.stop()
        # Like every admission while the registry is down: a flat 503, the cause logged.
        assert await refusal(n0, "u6") == UNAVAILABLE
        down = [r for r in caplog.records if "registry unavailable" in r.getMessage()]
        assert down and "reason" in down[0].a2c  # type: ignore[attr-defined]
        private_redis.start()  # empty: each node puts back what its sessions hold
        client = aioredis.Redis.from_url(private_redis.url, decode_responses=True)
        try:
            prefix = n0.settings.redis_prefix

            async def restored() -> bool:
                sets = [f"{{{prefix}}}:node:{n}:subject:u5" for n in ("node-0", "node-1")]
                return [await client.scard(key) for key in sets] == [1, 1]

            await eventually(restored, what="both nodes restored their counts")
        finally:
            await client.aclose()
        for node in (n0, n1):
            assert await refusal(node, "u5") == TOO_MANY
        assert (await connect(stack, n1, "u6")).sio.connected
