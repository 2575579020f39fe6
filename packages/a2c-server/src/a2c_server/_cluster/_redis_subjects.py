"""The sessions each subject holds, counted across every node sharing one Redis.

Each node files the sessions it admitted under its own keys: a set of sids per subject
(``{prefix}:node:<node>:subject:<subject>``) and the set of its subjects
(``{prefix}:node:<node>:subjects``). An admission is one Lua script that sums the sets of
this node and of every node whose heartbeat key is alive, applies the cap and adds the sid,
so two nodes admitting at once cannot both take the last place. A dead node's sessions stop
counting when its heartbeat expires, and its keys go with its sessions when it is reaped
(:mod:`a2c_server._cluster._redis_store`, ``drop_node``), as on a restart under the same node id.

Like the session registry, this node is authoritative for what it holds: it keeps its sids
in memory and puts them back after Redis lost them (:meth:`RedisSubjectCounts.restore`,
called by the liveness resync). Sets of sids, not counters, so a replay never counts twice.
"""

from __future__ import annotations

import logging
from typing import Final

from redis import asyncio as aioredis

from a2c_server._exceptions import StoreUnavailableError
from a2c_server._observe._logs import log
from a2c_server._state._subjects import subject_refusal

from ._redis_store import REDIS_UNAVAILABLE

__all__ = ["RedisSubjectCounts"]

_log = logging.getLogger("a2c_server.auth")

# KEYS[1]: the key prefix. ARGV: this node, subject, sid, cap. Returns the sessions the
# subject held before; adds the sid when that is under the cap (subject_refusal's rule).
_HOLD: Final = """
local p, node, subject = KEYS[1], ARGV[1], ARGV[2]
local held = redis.call('SCARD', p..':node:'..node..':subject:'..subject)
for _, other in ipairs(redis.call('SMEMBERS', p..':nodes')) do
  if other ~= node and redis.call('EXISTS', p..':node:'..other..':alive') == 1 then
    held = held + redis.call('SCARD', p..':node:'..other..':subject:'..subject)
  end
end
if held < tonumber(ARGV[4]) then
  redis.call('SADD', p..':node:'..node..':subject:'..subject, ARGV[3])
  redis.call('SADD', p..':node:'..node..':subjects', subject)
end
return held
"""

# KEYS[1]: the key prefix. ARGV: this node, the number of (sid, subject) pairs to hold,
# those pairs, then (sid, subject) pairs to release.
_SYNC: Final = """
local p, node = KEYS[1], ARGV[1]
local last_hold = 2 + 2 * tonumber(ARGV[2])
for i = 3, #ARGV, 2 do
  local key = p..':node:'..node..':subject:'..ARGV[i + 1]
  if i < last_hold then
    redis.call('SADD', key, ARGV[i])
    redis.call('SADD', p..':node:'..node..':subjects', ARGV[i + 1])
  else
    redis.call('SREM', key, ARGV[i])
    if redis.call('SCARD', key) == 0 then
      redis.call('SREM', p..':node:'..node..':subjects', ARGV[i + 1])
    end
  end
end
return 0
"""


class RedisSubjectCounts:
    """A :class:`~a2c_server._state._subjects.SubjectCounts` shared by a deployment's nodes."""

    def __init__(self, client: aioredis.Redis, *, prefix: str, node_id: str) -> None:
        self.node_id = node_id
        self._keys = ["{" + prefix + "}"]
        self._held: dict[str, str] = {}  # sid → subject, for the sessions admitted here
        self._unreleased: dict[str, str] = {}  # released here while Redis was down
        #: A release could not reach Redis: :meth:`restore` is due.
        self.dirty = False
        self._hold = client.register_script(_HOLD)
        self._sync = client.register_script(_SYNC)

    async def hold(self, subject: str, sid: str, cap: int) -> int:
        args = [self.node_id, subject, sid, str(cap)]
        try:
            held = int(await self._hold(self._keys, args))
        except REDIS_UNAVAILABLE as exc:
            raise StoreUnavailableError(f"registry unavailable: {exc}") from exc
        if subject_refusal(held, cap) is None:
            self._held[sid] = subject
        return held

    async def release(self, sid: str) -> None:
        subject = self._held.pop(sid, None)
        if subject is None:
            return
        try:
            await self._sync(self._keys, [self.node_id, "0", sid, subject])
        except Exception as exc:  # never in the way of the rest of a disconnect
            # Counted until the next resync: a cap that errs on the strict side for a while.
            self._unreleased[sid] = subject
            self.dirty = True
            log(_log, logging.WARNING, "connection count not released, retried at the next "
                "resync", sid=sid, reason=exc)  # fmt: skip

    async def restore(self) -> None:
        """Put back this node's sessions (Redis restarted, or reaped this node).

        Only adds what this node holds and removes what it released during an outage, so
        an admission racing with it is never undone.
        """
        self.dirty = False
        unreleased, self._unreleased = self._unreleased, {}
        args = [self.node_id, str(len(self._held))]
        for pairs in (self._held, unreleased):
            for sid, subject in pairs.items():
                args += (sid, subject)
        try:
            await self._sync(self._keys, args)
        except REDIS_UNAVAILABLE as exc:
            self._unreleased = {**unreleased, **self._unreleased}
            self.dirty = True
            raise StoreUnavailableError(f"registry unavailable: {exc}") from exc
