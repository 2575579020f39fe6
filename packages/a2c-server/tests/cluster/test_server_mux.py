"""The registry lookups' multiplexed connection (a2c_server._cluster._mux) against a real Redis.

Replies must reach the command they answer whatever happens around them: many at once,
an error reply among them, a caller that gave up, a connection Redis kills, a Redis that
stops answering, a Redis that forgot its scripts.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis import asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from a2c_protocol import Role
from a2c_server import Member
from a2c_server._cluster._mux import Multiplexer
from a2c_server._cluster._redis_store import RedisStateStore, connect_redis
from a2c_testkit.redis_server import RedisServer


@pytest.fixture
async def admin(redis: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = connect_redis(redis.url)
    yield client
    await client.aclose()


@pytest.fixture
async def mux(admin: aioredis.Redis) -> AsyncIterator[Multiplexer]:
    multiplexer = Multiplexer(admin.connection_pool, timeout=5.0)
    yield multiplexer
    await multiplexer.aclose()


async def test_concurrent_commands_each_get_their_own_reply(
    admin: aioredis.Redis, mux: Multiplexer
) -> None:
    prefix = uuid.uuid4().hex
    await admin.mset({f"{prefix}:{i}": f"v{i}" for i in range(200)})
    replies = await asyncio.gather(*(mux.execute("GET", f"{prefix}:{i}") for i in range(200)))
    assert replies == [f"v{i}" for i in range(200)]


async def test_an_error_reply_fails_only_its_own_command(
    admin: aioredis.Redis, mux: Multiplexer
) -> None:
    key = uuid.uuid4().hex
    await admin.set(key, "text")
    before, wrong, after = await asyncio.gather(
        mux.execute("GET", key), mux.execute("INCR", key), mux.execute("GET", key),
        return_exceptions=True,
    )  # fmt: skip
    assert (before, after) == ("text", "text")
    assert isinstance(wrong, ResponseError)


async def test_a_caller_that_gave_up_does_not_shift_the_replies(
    admin: aioredis.Redis, mux: Multiplexer
) -> None:
    key = uuid.uuid4().hex
    await admin.set(key, "mine")
    await mux.execute("PING")  # connected: the next command is queued at once
    abandoned = asyncio.get_running_loop().create_task(mux.execute("GET", "other"))
    await asyncio.sleep(0)  # queued
    abandoned.cancel()
    assert await mux.execute("GET", key) == "mine"


async def test_a_killed_connection_fails_the_waiting_and_the_next_reconnects(
    admin: aioredis.Redis, mux: Multiplexer
) -> None:
    name = f"mux-{uuid.uuid4().hex[:8]}"
    assert await mux.execute("CLIENT", "SETNAME", name) == "OK"
    # BLPOP holds the connection's reply back until Redis drops the connection.
    waiting = asyncio.get_running_loop().create_task(mux.execute("BLPOP", "nothing", 0))
    await asyncio.sleep(0.1)
    (victim,) = [c for c in await admin.client_list() if c.get("name") == name]
    await admin.client_kill_filter(_id=victim["id"])
    with pytest.raises(RedisConnectionError):
        await asyncio.wait_for(waiting, 10)
    assert await mux.execute("PING") == "PONG"  # raw replies: no redis-py callbacks


async def test_no_answer_in_time_fails_the_waiting_then_it_recovers(
    admin: aioredis.Redis,
) -> None:
    key = uuid.uuid4().hex
    await admin.set(key, "back")
    mux = Multiplexer(admin.connection_pool, timeout=0.3)
    try:
        await mux.execute("PING")
        await admin.client_pause(2000)  # Redis holds every client's commands for 2 s
        with pytest.raises(RedisTimeoutError):
            await asyncio.wait_for(mux.execute("GET", key), 10)
        await admin.client_unpause()
        assert await mux.execute("GET", key) == "back"
    finally:
        await admin.client_unpause()
        await mux.aclose()


async def test_lookups_survive_a_redis_that_forgot_its_scripts(
    redis: RedisServer, admin: aioredis.Redis
) -> None:
    store = RedisStateStore(connect_redis(redis.url), prefix=uuid.uuid4().hex[:8], node_id="n")
    try:
        member = Member(sid="s1", role=Role.COMPUTER, a2c_version="0.2.3", name="c1",
                        office_id="o1")  # fmt: skip
        await store.put(member)
        assert await store.member_named("o1", "c1") == member
        await admin.script_flush()
        assert await store.member_named("o1", "c1") == member
        assert await store.member_named("o2", "c1") is None
        assert await store.member_named("o1", "nobody") is None
    finally:
        await store.remove("s1")
        await store.aclose()
