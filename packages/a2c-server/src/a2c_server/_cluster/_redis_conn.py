"""Redis clients of one node: a single server, or the primary of a service behind Sentinel.

Behind Sentinel (``redis+sentinel://``, see :mod:`._redis_url`) every new connection asks
the sentinels for the primary first (redis-py's ``SentinelConnectionPool``), so after a
failover the next connection reaches the promoted replica; a demoted primary's
``READONLY`` answer drops the connection (redis-py's sentinel connection turns it into a
``ConnectionError``), and the registry's one retry asks the sentinels again.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from redis import asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from a2c_server._exceptions import StoreUnavailableError
from a2c_server._upstream._redis_conn import close_sentinel

from ._redis_url import RedisTarget, parse_redis_target

if TYPE_CHECKING:
    from a2c_server._settings import ServerSettings

__all__ = [
    "PrimaryWatch",
    "check_redis",
    "close_redis",
    "connect_redis",
    "redis_pool",
    "sentinel_options",
]

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
        await close_sentinel(sentinel)


class PrimaryWatch:
    """Behind Sentinel: notices when the sentinels name another primary.

    A connection is pointed at the primary when it connects and stays there: after a
    forced failover (``SENTINEL FAILOVER``) the old primary keeps accepting writes until
    the sentinels demote it (their next look at it, up to 10 s later), so a node whose
    connections outlived the promotion would write its heartbeats where nobody reads
    them, and another node would reap it. :meth:`changed` asks the sentinels (one
    ``SENTINEL MASTERS``, through redis-py's pool, which also drops its idle connections
    to the old primary) and says whether the primary moved since the last ask.
    """

    def __init__(self, client: aioredis.Redis) -> None:
        pool = client.connection_pool
        self._pool = pool if isinstance(pool, SentinelConnectionPool) else None
        self._address: Any = None

    @property
    def active(self) -> bool:
        return self._pool is not None

    async def changed(self) -> tuple[Any, Any] | None:
        """(old, new) address when the primary moved; None otherwise (or unknown)."""
        if self._pool is None:
            return None
        try:
            address = await self._pool.get_master_address()  # type: ignore[no-untyped-call]
        except (RedisConnectionError, RedisTimeoutError, OSError):
            return None  # no sentinel answers: the heartbeat says how the registry is
        old, self._address = self._address, address
        return (old, address) if old is not None and old != address else None


async def check_redis(url: str, settings: ServerSettings | None = None) -> None:
    """Raise :class:`StoreUnavailableError` unless Redis answers at ``url`` (behind
    Sentinel: unless the sentinels name a primary that answers)."""
    try:
        target = parse_redis_target(
            url,
            password=settings.redis_password if settings else None,
            sentinel_password=settings.redis_sentinel_password if settings else None,
        )
    except ValueError as exc:
        raise StoreUnavailableError(f"bad Redis URL: {exc}") from exc
    client = connect_redis(target, timeout=3.0)
    try:
        await client.ping()
    except Exception as exc:
        raise StoreUnavailableError(f"cannot reach Redis: {exc}") from exc
    finally:
        await close_redis(client)
