"""The Redis :class:`~a2c_server.StateStore`: one registry shared by several server nodes.

Every change that reads before it writes (a put checks the name and the Agent seat, a
removal unindexes what the record says, a reap drops a dead node's sessions) is one Lua
script, so two nodes can never interleave between the check and the write and a failure
leaves nothing half-written. Keys live under one hash tag (``{prefix}``) so the scripts
also run on a Redis Cluster.

Each node is authoritative for the sessions it hosts: it keeps them in memory too, which
lets it rebuild its part of the registry after Redis lost it (restart, or a reap while
this node could not heartbeat). Redis connection failures become
:class:`StoreUnavailableError`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any, Final

import attrs
from redis import asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ReadOnlyError
from redis.exceptions import TimeoutError as RedisTimeoutError

from a2c_protocol import Role
from a2c_server._exceptions import (
    SessionReclaimedError,
    StateConflictError,
    StoreUnavailableError,
)
from a2c_server._state._rules import Member
from a2c_server._state._store import StoreStats, check_member_shape
from a2c_server._upstream._redis_conn import pool_option

from . import _redis_scripts as scripts
from ._mux import Multiplexer
from ._redis_conn import close_redis, connect_redis

__all__ = ["REDIS_UNAVAILABLE", "RedisStateStore", "connect_redis", "decode_member"]

#: What redis-py raises when the registry cannot be reached now (a 503 to the caller).
REDIS_UNAVAILABLE: Final = (RedisConnectionError, RedisTimeoutError, ReadOnlyError, OSError)
_ROLES: Final = {role.value: role for role in Role}
#: The put script's status for a session that a reconnect of its client took over.
_RECLAIMED: Final = 2
#: How many other nodes' sessions :meth:`RedisStateStore.node_of` remembers (oldest go first).
_REMEMBERED_NODES: Final = 65536


def _encode(member: Member, node: str) -> str:
    return json.dumps(
        {
            "sid": member.sid,
            "role": member.role.value if member.role is not None else "",
            "v": member.a2c_version,
            "name": member.name or "",
            "office": member.office_id or "",
            "node": node,
            "x": sorted(member.extensions),
            "k": member.reclaim or "",
        },
        separators=(",", ":"),
    )


def decode_member(record: str) -> tuple[Member, str]:
    """A session record: the member and the node hosting it."""
    data = json.loads(record)
    member = Member(
        sid=data["sid"],
        role=_ROLES[data["role"]] if data["role"] else None,
        a2c_version=data["v"],
        name=data["name"] or None,
        office_id=data["office"] or None,
        extensions=frozenset(data.get("x", ())),  # absent in records of older nodes
        reclaim=data.get("k") or None,
    )
    return member, data["node"]


@attrs.frozen
class Heartbeat:
    """What one heartbeat learned: whether the registry still knew this node as it was."""

    kept: bool
    epoch: str
    reaped: bool
    #: Writes this node saw acknowledged are missing (a failover lost them): resync.
    lost: bool = False


class RedisStateStore:
    """A :class:`~a2c_server.StateStore` in Redis, shared by every node of a deployment.

    ``node_id`` tags the sessions this process hosts. Only the hosting node writes a
    session (survivors only ever drop a dead node's sessions), which is why this node's
    own sessions can be served from memory.
    """

    def __init__(self, client: aioredis.Redis, *, prefix: str, node_id: str) -> None:
        self.client = client
        self.node_id = node_id
        self.incarnation = uuid.uuid4().hex
        self._keys = ["{" + prefix + "}"]
        self._p = self._keys[0]
        self._local: dict[str, Member] = {}
        # Which node hosts a session seen in a record read here. A sid never moves to
        # another node (a reconnect is a new sid), so an entry is never wrong, only stale.
        self._nodes: dict[str, str] = {}
        self._unannounced: dict[str, Member] = {}
        #: A write failed midway from this node's point of view: the registry may not
        #: match :meth:`local_sessions` until the next resync.
        self.dirty = False
        # Each write carries a sequence number the scripts keep the highest of; a
        # heartbeat compares it with the highest one acknowledged here (see Heartbeat.lost).
        self._seq = 0
        self._acked = 0
        self._put = client.register_script(scripts.PUT)
        self._remove = client.register_script(scripts.REMOVE)
        self._members = client.register_script(scripts.MEMBERS)
        self._named = client.register_script(scripts.NAMED)
        self._heartbeat = client.register_script(scripts.HEARTBEAT)
        self._reap_dead = client.register_script(scripts.REAP_DEAD)
        self._reap_self = client.register_script(scripts.REAP_SELF)
        self._hold = client.register_script(scripts.HOLD)
        self._held = client.register_script(scripts.HELD)
        # The routing lookup of every call: concurrent ones share one connection.
        timeout = pool_option(client.connection_pool, "socket_timeout") or 5.0
        self._lookups = Multiplexer(client.connection_pool, timeout=timeout)

    async def reconnect(self, primary: Any) -> None:
        """The primary moved to ``primary`` (host, port): drop the lookup connection and
        the idle pooled ones that are not connected there; the next commands connect
        again (commands under way finish where they are)."""
        self._lookups.reset("the Redis primary changed", unless_at=primary)
        await self.client.connection_pool.disconnect(inuse_connections=False)

    async def aclose(self) -> None:
        """Close the client and the lookup connection."""
        await self._lookups.aclose()
        await close_redis(self.client)

    async def _run(self, op: Callable[[], Awaitable[Any]], *, write: bool = False) -> Any:
        try:
            return await op()
        except REDIS_UNAVAILABLE as exc:
            if write:
                self.dirty = True
            raise StoreUnavailableError(f"registry unavailable: {exc}") from exc

    # -- StateStore ------------------------------------------------------------------

    async def get(self, sid: str) -> Member | None:
        local = self._local.get(sid)
        if local is not None:
            return local
        record = await self._run(lambda: self.client.get(f"{self._p}:session:{sid}"))
        return self._read(record) if record else None

    async def put(self, member: Member) -> None:
        await self._write(member, ())

    async def take_over(self, member: Member, displaces: Collection[str]) -> list[Member]:
        return await self._write(member, displaces)

    async def _write(self, member: Member, displaces: Collection[str]) -> list[Member]:
        check_member_shape(member)
        self._seq += 1
        seq = self._seq
        args: list[str | int] = [_encode(member, self.node_id), seq, *displaces]
        result = await self._run(lambda: self._put(self._keys, args), write=True)
        self._acked = max(self._acked, seq)
        status = int(result[0])
        if status == _RECLAIMED:
            raise SessionReclaimedError(str(result[1]))
        if status != 0:
            raise StateConflictError(str(result[1]))
        self._local[member.sid] = member
        displaced = [decode_member(r)[0] for r in result[2:]]
        for victim in displaced:
            self._local.pop(victim.sid, None)  # hosted here: its disconnect finds it gone
        return displaced

    async def remove(self, sid: str) -> Member | None:
        # Forget locally first: if Redis is down the next resync drops the stale record.
        local = self._local.pop(sid, None)
        self._seq += 1
        seq = self._seq
        try:
            record = await self._run(
                lambda: self._remove(self._keys, [sid, self.node_id, seq]), write=True
            )
            self._acked = max(self._acked, seq)
        except StoreUnavailableError:
            if local is not None:
                self._unannounced[sid] = local  # its office hears of it after the outage
            raise
        if record == "":
            return None  # taken over by a reconnect of its client: its office knows
        return decode_member(record)[0] if record else local

    async def hold_name(self, office_id: str, name: str, seconds: float) -> None:
        """Keep ``name`` of ``office_id`` for its Computer's return for ``seconds``: calls
        to it meanwhile are told to wait, not 404 (a join under the name ends the hold)."""
        args = [office_id, name, str(max(1, int(seconds * 1000)))]
        await self._run(lambda: self._hold(self._keys, args))

    async def held_for(self, office_id: str, name: str) -> float | None:
        """Seconds left of ``name``'s hold in ``office_id`` (:meth:`hold_name`), or None."""
        left = await self._run(lambda: self._held(self._keys, [office_id, name]))
        return int(left) / 1000 if left else None

    async def reclaimed(self, sids: Iterable[str]) -> set[str]:
        """Which of ``sids`` a reconnect of their client took over (their offices know)."""
        wanted = list(sids)
        if not wanted:
            return set()

        async def ask() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                for sid in wanted:
                    pipe.exists(f"{self._p}:reclaimed:{sid}")
                answers: list[Any] = await pipe.execute()
            return answers

        answers = await self._run(ask)
        return {sid for sid, hit in zip(wanted, answers, strict=True) if int(hit)}

    async def sid_of(self, office_id: str, name: str) -> str | None:
        key = f"{self._p}:names:{office_id}"
        owner: str | None = await self._run(lambda: self.client.hget(key, name))
        return owner

    async def member_named(self, office_id: str, name: str) -> Member | None:
        record = await self._run(lambda: self._lookup_named(office_id, name))
        return self._read(record) if record else None

    async def _lookup_named(self, office_id: str, name: str) -> Any:
        args = (1, self._p, office_id, name)
        try:
            return await self._lookups.execute("EVALSHA", self._named.sha, *args)
        except NoScriptError:  # Redis restarted or its script cache was flushed
            return await self._lookups.execute("EVAL", scripts.NAMED, *args)

    async def office_agent(self, office_id: str) -> str | None:
        agent: str | None = await self._run(lambda: self.client.get(f"{self._p}:agent:{office_id}"))
        return agent

    async def office_members(self, office_id: str) -> list[Member]:
        records = await self._run(lambda: self._members(self._keys, [office_id]))
        return sorted((self._read(r) for r in records), key=lambda m: m.sid)

    async def stats(self) -> StoreStats:
        async def both() -> tuple[int, int]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.scard(f"{self._p}:sessions")
                pipe.scard(f"{self._p}:offices")
                sessions, offices = await pipe.execute()
            return int(sessions), int(offices)

        sessions, offices = await self._run(both)
        return StoreStats(connections=sessions, offices=offices)

    def _read(self, record: str) -> Member:
        """Decode a session record, remembering which node hosts it (see :meth:`node_of`)."""
        member, node = decode_member(record)
        nodes = self._nodes
        if member.sid not in nodes:
            if len(nodes) >= _REMEMBERED_NODES:
                del nodes[next(iter(nodes))]  # the oldest entry: dicts keep insertion order
            nodes[member.sid] = node
        return member

    # -- node bookkeeping (used by a2c_server._cluster._liveness and _multinode) ---------------

    def node_of(self, sid: str) -> str | None:
        """The node hosting ``sid``, when this node hosts it or has read its record.

        No round trip: the cross-node publisher uses it to address one node's channel.
        """
        if sid in self._local:
            return self.node_id
        return self._nodes.get(sid)

    def take_unannounced(self) -> list[Member]:
        """Sessions that left while Redis was down (their offices were not told yet)."""
        members, self._unannounced = list(self._unannounced.values()), {}
        return members

    def local_sessions(self) -> dict[str, Member]:
        """The sessions this node hosts, as it knows them."""
        return dict(self._local)

    async def stored_local_sids(self) -> set[str]:
        """The sids the registry files under this node."""
        key = f"{self._p}:node:{self.node_id}:sessions"
        sids: set[str] = await self._run(lambda: self.client.smembers(key))
        return sids

    async def heartbeat(self, ttl: float) -> Heartbeat:
        candidate = uuid.uuid4().hex
        args = [self.node_id, self.incarnation, str(max(1, int(ttl * 1000))), candidate]
        # Only writes acknowledged before the heartbeat is sent were applied before it.
        acked = self._acked
        kept, epoch, reaped, seq = await self._run(lambda: self._heartbeat(self._keys, args))
        return Heartbeat(kept=bool(int(kept)), epoch=str(epoch), reaped=bool(int(reaped)),
                         lost=int(seq) < acked)  # fmt: skip

    async def reap_dead(self) -> list[Member]:
        """Drop the sessions of every node whose heartbeat expired (exactly once each)."""
        return [m for members in (await self.reap_dead_nodes()).values() for m in members]

    async def reap_dead_nodes(self) -> dict[str, list[Member]]:
        """:meth:`reap_dead`, with the sessions grouped by the dead node that hosted them."""
        records = await self._run(lambda: self._reap_dead(self._keys, [self.node_id]))
        dead: dict[str, list[Member]] = {}
        for record in records:
            member, node = decode_member(record)
            dead.setdefault(node, []).append(member)
        return dead

    async def reap_self(self) -> list[Member]:
        """Drop what an earlier process with this node id left in the registry."""
        self._acked = 0  # the script forgets the write sequence too
        records = await self._run(lambda: self._reap_self(self._keys, [self.node_id]))
        return [decode_member(r)[0] for r in records]

    async def retire(self) -> None:
        """Leave the registry on a clean shutdown (sessions were removed one by one)."""
        await self._run(lambda: self._reap_self(self._keys, [self.node_id]))

    async def channel_heard_by_all(self, channel: str) -> bool:
        """Whether every registered node listens on the Socket.IO ``channel`` right now."""

        async def ask() -> bool:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.pubsub_numsub(channel)
                pipe.scard(f"{self._p}:nodes")
                numsub, nodes = await pipe.execute()
            return int(numsub[0][1]) >= int(nodes)

        heard: bool = await self._run(ask)
        return heard

    async def current_epoch(self) -> str | None:
        """The registry epoch (None: reset, and no node has heartbeated since)."""
        epoch: str | None = await self._run(lambda: self.client.get(f"{self._p}:epoch"))
        return epoch

    async def sessions_exist(self, sids: Iterable[str]) -> tuple[str | None, list[bool]]:
        """(the registry epoch, whether each sid is registered), in one round trip."""
        wanted = list(sids)

        async def ask() -> tuple[str | None, list[bool]]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.get(f"{self._p}:epoch")
                if wanted:
                    pipe.smismember(f"{self._p}:sessions", wanted)
                answers: list[Any] = await pipe.execute()
            flags = [bool(int(x)) for x in answers[1]] if wanted else []
            return answers[0], flags

        answer: tuple[str | None, list[bool]] = await self._run(ask)
        return answer
