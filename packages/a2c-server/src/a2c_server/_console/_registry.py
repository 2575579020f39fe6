"""Who is connected where, read from what the Server already keeps (no new bookkeeping).

The in-memory store is read from its snapshot; the Redis store from the keys the nodes
already maintain (``nodes``, each node's ``alive`` key and session set, the session
records), so every node's console shows every node's sessions. The subject, transport and
connection time of a session are only known to the node hosting it.
"""

from __future__ import annotations

import time
from typing import Any, Final

import attrs
import socketio

from a2c_protocol import NAMESPACE
from a2c_server._observe._metrics import ServerMetrics
from a2c_server._settings import ServerSettings
from a2c_server._state._rules import Member
from a2c_server._state._store import MemoryStateStore, StateStore
from a2c_server._upstream import transport_name

__all__ = ["Registry", "Snapshot"]

#: The console shows at most this many sessions (a bigger deployment is summarised).
MAX_SESSIONS: Final = 2000


@attrs.frozen
class Snapshot:
    nodes: list[dict[str, Any]]
    members: list[dict[str, Any]]
    truncated: bool
    registry: str  # "memory", "redis" or "unavailable"


class Registry:
    """Reads sessions and nodes for one console tick."""

    def __init__(
        self,
        *,
        sio: socketio.AsyncServer,
        store: StateStore,
        metrics: ServerMetrics,
        settings: ServerSettings,
        node_id: str,
    ) -> None:
        self._sio = sio
        self._store = store
        self._metrics = metrics
        self._settings = settings
        self._node_id = node_id

    async def read(self) -> Snapshot:
        if self._settings.redis_url is not None and hasattr(self._store, "client"):
            try:
                return await self._read_redis()
            except Exception:  # Redis down: this node's own sessions still show
                local = [(m, self._node_id) for m in self._local_members()]
                members = await self._describe(local)
                node = {"id": self._node_id, "self": True, "alive": None,
                        "heartbeat_age": None, "sessions": len(members)}  # fmt: skip
                return Snapshot([node], members, False, "unavailable")
        pairs = [(m, self._node_id) for m in self._memory_members()]
        truncated = len(pairs) > MAX_SESSIONS
        members = await self._describe(pairs[:MAX_SESSIONS])
        node = {"id": self._node_id, "self": True, "alive": True, "heartbeat_age": None,
                "sessions": len(pairs)}  # fmt: skip
        return Snapshot([node], members, truncated, "memory")

    def _memory_members(self) -> list[Member]:
        if isinstance(self._store, MemoryStateStore):
            return list(self._store.snapshot()[0].values())
        return self._local_members()

    def _local_members(self) -> list[Member]:
        local = getattr(self._store, "local_sessions", None)
        return list(local().values()) if callable(local) else []

    async def _read_redis(self) -> Snapshot:
        from a2c_server._cluster._redis_store import decode_member

        client: Any = getattr(self._store, "client")  # noqa: B009 - only the Redis store has it
        p = "{" + self._settings.redis_prefix + "}"
        nodes = sorted(await client.smembers(f"{p}:nodes"))
        async with client.pipeline(transaction=False) as pipe:
            for node in nodes:
                pipe.pttl(f"{p}:node:{node}:alive")
                pipe.smembers(f"{p}:node:{node}:sessions")
            replies = await pipe.execute()
        ttl_ms = self._settings.node_ttl * 1000
        node_rows: list[dict[str, Any]] = []
        sids: list[str] = []
        for i, node in enumerate(nodes):
            remaining, sessions = int(replies[2 * i]), replies[2 * i + 1]
            alive = remaining >= 0
            node_rows.append({
                "id": node, "self": node == self._node_id, "alive": alive,
                # Every heartbeat resets the key's TTL to node_ttl, so what is gone of it is
                # the time since the last one (all nodes run with the same node_ttl).
                "heartbeat_age": round((ttl_ms - remaining) / 1000, 1) if alive else None,
                "sessions": len(sessions),
            })  # fmt: skip
            sids.extend(sorted(sessions))
        truncated = len(sids) > MAX_SESSIONS
        sids = sids[:MAX_SESSIONS]
        records = await client.mget([f"{p}:session:{sid}" for sid in sids]) if sids else []
        pairs = [decode_member(r) for r in records if r]
        return Snapshot(node_rows, await self._describe(pairs), truncated, "redis")

    async def _describe(self, pairs: list[tuple[Member, str]]) -> list[dict[str, Any]]:
        since = self._metrics.connected_at
        now = time.time()
        rows = []
        for member, node in pairs:
            row: dict[str, Any] = {
                "name": member.name, "office": member.office_id,
                "role": member.role.value if member.role else "pending",
                "version": member.a2c_version, "node": node, "subject": None,
                "since": None, "transport": None,
            }  # fmt: skip
            if member.sid in since:  # hosted here: what only this node knows
                row["since"] = round(now - since[member.sid], 1)
                row["transport"], row["subject"] = await self._local_details(member.sid)
            rows.append(row)
        return rows

    async def _local_details(self, sid: str) -> tuple[str | None, str | None]:
        transport = transport_name(self._sio, sid, NAMESPACE)
        subject = None
        try:
            session = await self._sio.get_session(sid, namespace=NAMESPACE)
        except KeyError:  # it left meanwhile
            return transport, None
        identity = session.get("identity") if isinstance(session, dict) else None
        if isinstance(identity, str):
            subject = identity
        elif identity is not None:  # an identity object (JWT provider): only its subject
            value = getattr(identity, "subject", None)
            subject = value if isinstance(value, str) else None
        return transport, subject
