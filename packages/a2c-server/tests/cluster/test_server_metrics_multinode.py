"""``GET /metrics`` of Redis nodes: registry reachability, pub/sub
traffic and losses, and the 503 refusal while Redis is down, on a real scrape of two
in-process nodes sharing a private redis-server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
import socketio

from a2c_protocol import NAMESPACE, Event
from a2c_server import ServerSettings
from a2c_testkit.metrics import metric_sample as sample
from a2c_testkit.metrics import scrape_metrics
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.server import RunningServer, connect_raw, joined_raw, running_nodes
from a2c_testkit.triangle import eventually

SETTINGS = ServerSettings(tool_call_buffer=0.5, node_ttl=1.5)
CALL = {"agent": "alice", "req_id": "r1", "computer": "c1", "tool_name": "echo",
        "params": {}, "timeout": 30}  # fmt: skip


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


async def scrape(node: RunningServer) -> str:
    return await scrape_metrics(f"{node.url}/metrics")


async def test_multinode_metrics_on_a_real_scrape(private_redis: RedisServer) -> None:
    async with running_nodes(private_redis.url, SETTINGS) as srv, AsyncExitStack() as stack:
        n0, n1 = srv.nodes
        alice = await joined_raw(stack, n0, "agent", "alice", "o1")
        c1 = await joined_raw(stack, n1, "computer", "c1", "o1")

        async def answer(payload: Any) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "pong"}], "isError": False}

        c1.sio.on(Event.TOOL_CALL.value, answer, namespace=NAMESPACE)
        assert (await alice.call(Event.TOOL_CALL, CALL))["content"][0]["text"] == "pong"  # type: ignore[index]

        # The call went A -> B and its ack B -> A: each node published and received.
        for node in (n0, n1):
            text = await scrape(node)
            assert sample(text, "a2c_server_registry_reachable") == 1
            assert (sample(text, "a2c_server_pubsub_messages_published_total") or 0) >= 1
            assert (sample(text, "a2c_server_pubsub_messages_received_total") or 0) >= 1
            assert sample(text, "a2c_server_pubsub_messages_lost_total", how="unsent") == 0
            assert sample(text, "a2c_server_pubsub_messages_lost_total", how="maybe_sent") == 0
            assert sample(text, "a2c_server_connection_refusals_total", code="503") is None

        private_redis.stop()

        async def unreachable() -> bool:
            return sample(await scrape(n0), "a2c_server_registry_reachable") == 0

        await eventually(unreachable, what="the gauge says the registry is unreachable")

        with pytest.raises(socketio.exceptions.ConnectionError):
            async with connect_raw(n0, "computer"):
                pass
        text = await scrape(n0)
        assert sample(text, "a2c_server_connection_refusals_total", code="503") == 1

        async def counted_lost() -> bool:
            # A room broadcast has to go through Redis, which is not there.
            await n0.app.sio.emit("notify:probe", {}, room="nobody", namespace=NAMESPACE)
            text = await scrape(n0)
            return (sample(text, "a2c_server_pubsub_messages_lost_total", how="unsent") or 0) >= 1

        await eventually(counted_lost, what="a publish with Redis down is counted lost")

        private_redis.start()

        async def reachable() -> bool:
            return sample(await scrape(n0), "a2c_server_registry_reachable") == 1

        await eventually(reachable, what="the gauge says the registry is back")
