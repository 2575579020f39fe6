"""redis-py connection internals of the fence: what the publisher
(:mod:`a2c_server._cluster._publish`), the registry lookups (:mod:`a2c_server._cluster._mux`)
and the Sentinel wiring (:mod:`a2c_server._cluster._redis_conn`) touch.

The stream reader and writer of a connection, a connection made from a pool's class and
settings (``connection_class``, ``connection_kwargs``) without being one of its
connections, the address a connection is at, and the ``Sentinel`` behind a
``master_for`` pool (``sentinel_manager``). Re-exported by :mod:`._redis`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis import asyncio as aioredis

__all__ = [
    "abort_connection",
    "close_sentinel",
    "closed_by_peer",
    "connection_address",
    "connection_writer",
    "fresh_connection",
    "pool_option",
    "read_reply",
    "send_packed",
    "sentinel_of",
    "write_packed",
]


def sentinel_of(client: Any) -> Any:
    """The ``Sentinel`` a ``master_for`` client asks for its primary (None for a plain one).

    Upstream's manager makes one per connect and never closes it; its connections to the
    sentinels would stay open after each outage.
    """
    pool = getattr(client, "connection_pool", None)
    return getattr(pool, "sentinel_manager", None)


async def close_sentinel(sentinel: Any) -> None:
    """Close a ``Sentinel``'s clients (``Sentinel.aclose`` is missing from older redis-py)."""
    close = getattr(sentinel, "aclose", None)
    if close is not None:
        await close()
        return
    for client in sentinel.sentinels:
        await client.aclose()


def connection_address(conn: Any) -> tuple[Any, Any] | None:
    """(host, port) a connection is connected to; None while it is not connected."""
    if not getattr(conn, "is_connected", False):
        return None
    return (getattr(conn, "host", None), getattr(conn, "port", None))


def fresh_connection(pool: aioredis.ConnectionPool, **overrides: Any) -> Any:
    """A connection with ``pool``'s class and settings (TLS, unix socket, auth), not its own."""
    return pool.connection_class(**{**pool.connection_kwargs, **overrides})


def pool_option(pool: aioredis.ConnectionPool, name: str) -> Any:
    """A connection setting of ``pool`` (``socket_timeout``...), None when it is not set."""
    return pool.connection_kwargs.get(name)


def connection_writer(conn: Any) -> asyncio.StreamWriter | None:
    """The connection's stream writer; None while it is not connected."""
    writer: asyncio.StreamWriter | None = getattr(conn, "_writer", None)
    return writer


def write_packed(conn: Any, packed: bytes) -> None:
    """Hand commands packed as RESP to the connection's transport now (no await)."""
    conn._writer.write(packed)


async def read_reply(conn: Any) -> Any:
    """The next reply on ``conn`` (a pipelined read: no command is sent)."""
    return await conn.read_response()


async def send_packed(conn: Any, packed: list[bytes]) -> None:
    """Write already packed commands, without the health-check PING redis-py may send first.

    A PING would be answered on a ``CLIENT REPLY OFF`` connection by nothing, and waited for.
    """
    await conn.send_packed_command(packed, check_health=False)


def closed_by_peer(conn: Any) -> bool:
    """Whether Redis closed the connection (its stream reader saw the end or an error)."""
    # redis-py has no public "was this connection closed by the peer" test; the stream
    # reader sees the end of the stream as soon as Redis closes it.
    reader = getattr(conn, "_reader", None)
    return reader is not None and (reader.at_eof() or reader.exception() is not None)


def abort_connection(conn: Any) -> None:
    """Drop the connection's socket at once, with whatever replies are still on their way."""
    writer = getattr(conn, "_writer", None)
    if writer is not None:
        writer.transport.abort()
