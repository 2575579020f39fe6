"""Shared fixtures of the a2c-server tests: a real server on an ephemeral port.

``server`` runs every test that uses it twice: on one node with the memory store, and on
two nodes sharing a private redis-server (clients alternate between the nodes; a test
marked ``single_node`` gets one Redis-backed node).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from a2c_server import ServerSettings
from a2c_testkit.redis_server import RedisServer, redis_server
from a2c_testkit.server import RunningServer, running_nodes, running_server


@pytest.fixture
def settings() -> ServerSettings:
    """Override in a test module to run the server with other settings."""
    return ServerSettings(tool_call_buffer=0.5)


@pytest.fixture(scope="session")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
async def server(
    request: pytest.FixtureRequest, settings: ServerSettings
) -> AsyncIterator[RunningServer]:
    if request.param == "memory":
        async with running_server(settings) as srv:
            yield srv
        return
    redis: RedisServer = request.getfixturevalue("redis")
    # Per-process observations (metrics counters) need every client on the node asked.
    count = 1 if request.node.get_closest_marker("single_node") else 2
    async with running_nodes(redis.url, settings, count=count) as srv:
        yield srv
