"""Redis clients of one node: a single server, or the primary of a service behind Sentinel.

Behind Sentinel (``redis+sentinel://``, see :mod:`._redis_url`) every new connection asks
the sentinels for the primary first (redis-py's ``SentinelConnectionPool``), so after a
failover the next connection reaches the promoted replica; a demoted primary's
``READONLY`` answer drops the connection (redis-py's sentinel connection turns it into a
``ConnectionError``), and the registry's one retry asks the sentinels again.
"""

from __future__ import annotations

import weakref
from typing import Any

from redis import asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from ._redis_url import RedisTarget, parse_redis_target

__all__ = ["close_redis", "connect_redis", "redis_pool", "sentinel_options"]

#: The Sentinel client behind each pool made here, closed with the pool's client.
_SENTINELS: weakref.WeakKeyDictionary[aioredis.ConnectionPool, Sentinel] = (
    weakref.WeakKeyDictionary()
)


def connect_redis(target: RedisTarget | str, *, timeout: float = 5.0) -> aioredis.Redis:
    """An asyncio Redis client that fails fast: ``timeout`` per command, then an error.

    A registry that is down must answer peers with 503 at once, and one that hangs
    (SIGSTOP, a full network buffer) within ``timeout``. A lost connection is retried
    once (a pooled connection that outlived a Redis restart); a timeout is not, since
    the retry would double the deadline.
    """
    if isinstance(target, str):
        target = parse_redis_target(target)
    options: dict[str, Any] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(
            ExponentialBackoff(cap=0.2, base=0.05), 1, supported_errors=(RedisConnectionError,)
        ),
        "decode_responses": True,
        **target.primary_options(),
    }
    if target.is_sentinel:
        sentinel = Sentinel(
            list(target.sentinels), sentinel_kwargs=sentinel_options(target, timeout)
        )
        primary: aioredis.Redis = sentinel.master_for(str(target.service), **options)
        _SENTINELS[primary.connection_pool] = sentinel
        return primary
    client: aioredis.Redis = aioredis.Redis.from_url(target.url, **options)
    return client


def sentinel_options(target: RedisTarget, timeout: float) -> dict[str, Any]:
    """How to talk to the sentinels: the same deadlines as the primary, their password."""
    return {"socket_timeout": timeout, "socket_connect_timeout": timeout,
            **target.sentinel_options()}  # fmt: skip


def redis_pool(target: RedisTarget, **options: Any) -> aioredis.ConnectionPool:
    """A connection pool to the primary (asked of the sentinels on each connect)."""
    options = {**options, **target.primary_options()}
    if target.is_sentinel:
        timeout = options.get("socket_connect_timeout") or 5.0
        sentinel = Sentinel(
            list(target.sentinels), sentinel_kwargs=sentinel_options(target, timeout)
        )
        pool: aioredis.ConnectionPool = sentinel.master_for(
            str(target.service), **options
        ).connection_pool
        _SENTINELS[pool] = sentinel
        return pool
    return aioredis.ConnectionPool.from_url(target.url, **options)


async def close_redis(client: aioredis.Redis | aioredis.ConnectionPool) -> None:
    """Close a client (or pool) made here, and its connections to the sentinels."""
    if isinstance(client, aioredis.Redis):
        pool = client.connection_pool
        await client.aclose()
    else:
        pool = client
        await pool.disconnect()
    sentinel = _SENTINELS.pop(pool, None)
    if sentinel is not None:
        await sentinel.aclose()
