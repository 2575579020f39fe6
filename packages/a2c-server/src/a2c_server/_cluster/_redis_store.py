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
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

import attrs
from redis import asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ReadOnlyError
from redis.exceptions import TimeoutError as RedisTimeoutError

from a2c_protocol import Role
from a2c_server._exceptions import StateConflictError, StoreUnavailableError
from a2c_server._state._rules import Member
from a2c_server._state._store import StoreStats, check_member_shape
from a2c_server._upstream._redis import pool_option

from ._mux import Multiplexer

__all__ = ["RedisStateStore", "connect_redis"]

_UNAVAILABLE: Final = (RedisConnectionError, RedisTimeoutError, ReadOnlyError, OSError)
_ROLES: Final = {role.value: role for role in Role}
#: How many other nodes' sessions :meth:`RedisStateStore.node_of` remembers (oldest go first).
_REMEMBERED_NODES: Final = 65536

# Shared by every script: KEYS[1] is the key prefix ("{a2c}"). Records are JSON objects
# {sid, role, v, name, office, node} with "" for "no name"/"no office" (cjson's null is
# awkward to compare). Names are per office: a hash {prefix}:names:<office> of name → sid.
_LUA_COMMON: Final = """
local p = KEYS[1]
local function unindex(m)
  -- The Server-wide name key of older nodes (before issue 35): dropped with the record.
  if m.name ~= '' and redis.call('GET', p..':name:'..m.name) == m.sid then
    redis.call('DEL', p..':name:'..m.name)
  end
  if m.office ~= '' then
    if m.name ~= '' and redis.call('HGET', p..':names:'..m.office, m.name) == m.sid then
      redis.call('HDEL', p..':names:'..m.office, m.name)
    end
    redis.call('SREM', p..':office:'..m.office, m.sid)
    if redis.call('SCARD', p..':office:'..m.office) == 0 then
      redis.call('SREM', p..':offices', m.office)
    end
    if redis.call('GET', p..':agent:'..m.office) == m.sid then
      redis.call('DEL', p..':agent:'..m.office)
    end
  end
end
local function index(m)
  if m.name ~= '' and m.office ~= '' then
    redis.call('HSET', p..':names:'..m.office, m.name, m.sid)
    redis.call('SADD', p..':office:'..m.office, m.sid)
    redis.call('SADD', p..':offices', m.office)
    if m.role == 'agent' then redis.call('SET', p..':agent:'..m.office, m.sid) end
  end
end
local function drop(sid)
  local rec = redis.call('GET', p..':session:'..sid)
  if not rec then return false end
  local m = cjson.decode(rec)
  unindex(m)
  redis.call('DEL', p..':session:'..sid)
  redis.call('SREM', p..':sessions', sid)
  redis.call('SREM', p..':node:'..m.node..':sessions', sid)
  return rec
end
local function drop_node(node)
  local dropped = {}
  for _, sid in ipairs(redis.call('SMEMBERS', p..':node:'..node..':sessions')) do
    local rec = drop(sid)
    if rec then table.insert(dropped, rec) end
  end
  redis.call('DEL', p..':node:'..node..':sessions')
  -- What its sessions counted against their subjects' cap (a2c_server._cluster._redis_subjects).
  for _, s in ipairs(redis.call('SMEMBERS', p..':node:'..node..':subjects')) do
    redis.call('DEL', p..':node:'..node..':subject:'..s)
  end
  redis.call('DEL', p..':node:'..node..':subjects')
  redis.call('SREM', p..':nodes', node)
  return dropped
end
"""

# ARGV[1]: the record. Returns {0, ''} or {1, reason} when an invariant would break.
_PUT: Final = (
    _LUA_COMMON
    + """
local m = cjson.decode(ARGV[1])
if m.name ~= '' and m.office ~= '' then
  local owner = redis.call('HGET', p..':names:'..m.office, m.name)
  if owner and owner ~= m.sid then return {1, 'name '..m.name..' is taken in its office'} end
end
if m.office ~= '' and m.role == 'agent' then
  local agent = redis.call('GET', p..':agent:'..m.office)
  if agent and agent ~= m.sid then return {1, 'office '..m.office..' already has an agent'} end
end
drop(m.sid)
redis.call('SET', p..':session:'..m.sid, ARGV[1])
redis.call('SADD', p..':sessions', m.sid)
redis.call('SADD', p..':node:'..m.node..':sessions', m.sid)
index(m)
return {0, ''}
"""
)

# ARGV[1]: sid. Returns the dropped record or nil.
_REMOVE: Final = _LUA_COMMON + "return drop(ARGV[1])\n"

# ARGV[1]: office id. Returns the member records (one read, never a torn view).
_MEMBERS: Final = """
local p = KEYS[1]
local out = {}
for _, sid in ipairs(redis.call('SMEMBERS', p..':office:'..ARGV[1])) do
  local rec = redis.call('GET', p..':session:'..sid)
  if rec then table.insert(out, rec) end
end
return out
"""

# ARGV: an office, a name. Returns the record of the session holding the name there, or nil.
_NAMED: Final = """
local p = KEYS[1]
local sid = redis.call('HGET', p..':names:'..ARGV[1], ARGV[2])
if not sid then return false end
return redis.call('GET', p..':session:'..sid)
"""

# ARGV: node, incarnation, ttl ms, epoch candidate. Refreshes the node's heartbeat key and
# returns {was the key still ours (1/0), the registry epoch, was the node reaped (1/0)}.
_HEARTBEAT: Final = """
local p = KEYS[1]
local alive = p..':node:'..ARGV[1]..':alive'
local ours = redis.call('GET', alive) == ARGV[2]
redis.call('SET', alive, ARGV[2], 'PX', ARGV[3])
redis.call('SADD', p..':nodes', ARGV[1])
redis.call('SET', p..':epoch', ARGV[4], 'NX')
local reaped = redis.call('DEL', p..':node:'..ARGV[1]..':reaped')
return {ours and 1 or 0, redis.call('GET', p..':epoch'), reaped}
"""

# ARGV[1]: this node. Drops every session of every other node whose heartbeat key expired;
# the node is removed in the same script, so exactly one survivor reports each session.
_REAP_DEAD: Final = (
    _LUA_COMMON
    + """
local dropped = {}
for _, node in ipairs(redis.call('SMEMBERS', p..':nodes')) do
  if node ~= ARGV[1] and redis.call('EXISTS', p..':node:'..node..':alive') == 0 then
    for _, rec in ipairs(drop_node(node)) do table.insert(dropped, rec) end
    redis.call('SET', p..':node:'..node..':reaped', '1', 'EX', 86400)
  end
end
return dropped
"""
)

# ARGV[1]: this node. Forgets what a previous process with this node id left behind.
_REAP_SELF: Final = (
    _LUA_COMMON
    + """
local dropped = drop_node(ARGV[1])
redis.call('DEL', p..':node:'..ARGV[1]..':alive', p..':node:'..ARGV[1]..':reaped')
return dropped
"""
)


def connect_redis(url: str, *, timeout: float = 5.0) -> aioredis.Redis:
    """An asyncio Redis client that fails fast: ``timeout`` per command, then an error.

    A registry that is down must answer peers with 503 at once, and one that hangs
    (SIGSTOP, a full network buffer) within ``timeout``. A lost connection is retried
    once (a pooled connection that outlived a Redis restart); a timeout is not, since
    the retry would double the deadline.
    """
    client: aioredis.Redis = aioredis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(
            ExponentialBackoff(cap=0.2, base=0.05), 1, supported_errors=(RedisConnectionError,)
        ),
        decode_responses=True,
    )
    return client


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
        },
        separators=(",", ":"),
    )


def _decode(record: str) -> tuple[Member, str]:
    """A session record: the member and the node hosting it."""
    data = json.loads(record)
    member = Member(
        sid=data["sid"],
        role=_ROLES[data["role"]] if data["role"] else None,
        a2c_version=data["v"],
        name=data["name"] or None,
        office_id=data["office"] or None,
        extensions=frozenset(data.get("x", ())),  # absent in records of older nodes
    )
    return member, data["node"]


@attrs.frozen
class Heartbeat:
    """What one heartbeat learned: whether the registry still knew this node as it was."""

    kept: bool
    epoch: str
    reaped: bool


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
        self._put = client.register_script(_PUT)
        self._remove = client.register_script(_REMOVE)
        self._members = client.register_script(_MEMBERS)
        self._named = client.register_script(_NAMED)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._reap_dead = client.register_script(_REAP_DEAD)
        self._reap_self = client.register_script(_REAP_SELF)
        # The routing lookup of every call: concurrent ones share one connection.
        timeout = pool_option(client.connection_pool, "socket_timeout") or 5.0
        self._lookups = Multiplexer(client.connection_pool, timeout=timeout)

    async def aclose(self) -> None:
        """Close the client and the lookup connection."""
        await self._lookups.aclose()
        await self.client.aclose()

    async def _run(self, op: Callable[[], Awaitable[Any]], *, write: bool = False) -> Any:
        try:
            return await op()
        except _UNAVAILABLE as exc:
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
        check_member_shape(member)
        record = _encode(member, self.node_id)
        result = await self._run(lambda: self._put(self._keys, [record]), write=True)
        if int(result[0]) != 0:
            raise StateConflictError(str(result[1]))
        self._local[member.sid] = member

    async def remove(self, sid: str) -> Member | None:
        # Forget locally first: if Redis is down the next resync drops the stale record.
        local = self._local.pop(sid, None)
        try:
            record = await self._run(lambda: self._remove(self._keys, [sid]), write=True)
        except StoreUnavailableError:
            if local is not None:
                self._unannounced[sid] = local  # its office hears of it after the outage
            raise
        return _decode(record)[0] if record else local

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
            return await self._lookups.execute("EVAL", _NAMED, *args)

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
        member, node = _decode(record)
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
        kept, epoch, reaped = await self._run(lambda: self._heartbeat(self._keys, args))
        return Heartbeat(kept=bool(int(kept)), epoch=str(epoch), reaped=bool(int(reaped)))

    async def reap_dead(self) -> list[Member]:
        """Drop the sessions of every node whose heartbeat expired (exactly once each)."""
        return [m for members in (await self.reap_dead_nodes()).values() for m in members]

    async def reap_dead_nodes(self) -> dict[str, list[Member]]:
        """:meth:`reap_dead`, with the sessions grouped by the dead node that hosted them."""
        records = await self._run(lambda: self._reap_dead(self._keys, [self.node_id]))
        dead: dict[str, list[Member]] = {}
        for record in records:
            member, node = _decode(record)
            dead.setdefault(node, []).append(member)
        return dead

    async def reap_self(self) -> list[Member]:
        """Drop what an earlier process with this node id left in the registry."""
        records = await self._run(lambda: self._reap_self(self._keys, [self.node_id]))
        return [_decode(r)[0] for r in records]

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
