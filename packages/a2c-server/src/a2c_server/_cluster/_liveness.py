"""Node liveness for the Redis store: heartbeats, reaping dead nodes, watching remote peers.

Each node refreshes a heartbeat key (TTL ``node_ttl``) every third of the TTL. On the same
tick it reaps every node whose key expired: one Lua script drops that node's sessions and
the node itself, so exactly one survivor gets them and sends the ``notify:leave_office``
a clean disconnect would have sent.

When the registry forgot this node (Redis restarted, or a survivor reaped it while it
could not heartbeat), lost some of its acknowledged writes (a Sentinel failover promoted a
replica they had not reached: the heartbeat compares the node's write sequence) or a
write failed midway, the node resyncs: it puts back the
sessions it hosts, drops the ones that disconnected meanwhile, and tells the offices.

:class:`RemoteCalls` settles calls to a Computer on another node: every ``poll`` seconds
one round trip asks whether the targets are still registered. A registry that goes away
or is reset never fails a call already sent (its Computer may be running it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import attrs

from a2c_server._exceptions import (
    SessionReclaimedError,
    StateConflictError,
    StoreUnavailableError,
)
from a2c_server._observe._logs import log
from a2c_server._state._offices import Broadcast, enter_notice, leave_notice
from a2c_server._state._rules import Member

from ._redis_store import RedisStateStore
from ._redis_subjects import RedisSubjectCounts
from ._rehome import Rehoming

__all__ = ["NodeLiveness", "RemoteCalls"]

_log = logging.getLogger("a2c_server.liveness")

BroadcastFn = Callable[[tuple[Broadcast, ...]], Awaitable[None]]
LeaveRoomFn = Callable[[str, str], Awaitable[None]]
DisconnectFn = Callable[[str], Awaitable[None]]


async def _no_disconnect(sid: str) -> None:
    return None


#: Seconds between heartbeats while the registry cannot be reached.
UNREACHABLE_RETRY: Final = 0.5

#: How often a pending cross-node call checks that its Computer is still registered.
REMOTE_POLL: Final = 0.5


def _leave_notices(members: Iterable[Member]) -> tuple[Broadcast, ...]:
    return tuple(
        leave_notice(m, m.office_id, m.name)
        for m in members
        if m.office_id is not None and m.name is not None
    )


class NodeLiveness:
    """Keeps this node registered and reaps the dead ones (one background task)."""

    def __init__(
        self,
        store: RedisStateStore,
        *,
        ttl: float,
        broadcast: BroadcastFn,
        leave_room: LeaveRoomFn,
        channel: str = "socketio",
        subjects: RedisSubjectCounts | None = None,
        disconnect: DisconnectFn = _no_disconnect,
        before_beat: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.channel = channel
        #: Run before each heartbeat (behind Sentinel: follow the primary when it moves).
        self._before_beat = before_beat
        self._disconnect = disconnect
        #: What this node's sessions count against their subjects' cap (restored in a resync).
        self.subjects = subjects
        self.store = store
        self.ttl = ttl
        self._broadcast = broadcast
        self._leave_room = leave_room
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._announcing: set[asyncio.Task[None]] = set()
        #: False while the last heartbeat could not reach Redis.
        self.redis_ok = False
        self.epoch: str | None = None
        #: Loop time before which live sessions may still be missing from the registry
        #: (Redis just came back or was reset: every node puts its own back within a ttl).
        self.settled_from = 0.0

    async def start(self) -> None:
        """Start clean (forget a previous process with this id), then heartbeat."""
        stale = await self.store.reap_self()
        if stale:
            log(_log, logging.WARNING, "node restarted: dropped its previous sessions",
                node=self.store.node_id, sessions=len(stale))  # fmt: skip
            await self._broadcast(_leave_notices(stale))
        beat = await self.store.heartbeat(self.ttl)
        self.redis_ok, self.epoch = True, beat.epoch
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        self._stopping.set()
        for task in list(self._announcing):
            task.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(StoreUnavailableError):
            await self.store.retire()

    async def _run(self) -> None:
        while not self._stopping.is_set():
            # While the registry cannot be reached (a failover in progress), look again
            # soon: the sessions go back as soon as it is writable again.
            interval = self.ttl / 3 if self.redis_ok else min(self.ttl / 3, UNREACHABLE_RETRY)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), interval)
                return
            try:
                await self.tick()
            except Exception:
                _log.exception("liveness tick failed node=%s", self.store.node_id)

    async def tick(self) -> None:
        """One heartbeat, a resync when the registry lost track of us, one reap round."""
        if self._before_beat is not None:
            await self._before_beat()
        try:
            beat = await self.store.heartbeat(self.ttl)
            if not self.redis_ok:
                log(_log, logging.WARNING if self.epoch else logging.INFO, "registry reachable",
                    node=self.store.node_id)  # fmt: skip
            if not self.redis_ok or beat.epoch != self.epoch:
                self.settled_from = asyncio.get_running_loop().time() + self.ttl
            self.redis_ok = True
            self.epoch = beat.epoch
            subjects_dirty = self.subjects is not None and self.subjects.dirty
            if not beat.kept or beat.reaped or beat.lost or self.store.dirty or subjects_dirty:
                if beat.lost:
                    log(_log, logging.WARNING, "the registry lost writes of this node "
                        "(a failover?): putting its sessions back",
                        node=self.store.node_id)  # fmt: skip
                await self.resync(announce=beat.reaped)
            # Right after an outage (a failover, a restart) every node's heartbeat key may
            # have run out while none could write it: reap only once each live node has
            # had a ttl to heartbeat again, or a live node's offices would see it leave.
            recovering = asyncio.get_running_loop().time() < self.settled_from
            dead = {} if recovering else await self.store.reap_dead_nodes()
        except StoreUnavailableError as exc:
            if self.redis_ok or self.epoch is None:
                log(_log, logging.WARNING, "registry unavailable", node=self.store.node_id,
                    reason=exc)  # fmt: skip
            self.redis_ok = False
            return
        for dead_node, reaped in dead.items():
            # node= is this node (the reaper), as on every line it logs.
            log(_log, logging.WARNING, "reaped sessions of a dead node",
                node=self.store.node_id, dead_node=dead_node, sessions=len(reaped))  # fmt: skip
            await self._broadcast(_leave_notices(reaped))

    async def resync(self, *, announce: bool) -> None:
        """Make the registry match the sessions this node hosts.

        ``announce``: the offices were told these sessions left (a survivor reaped this
        node), so restored members are announced again.
        """
        self.store.dirty = False
        local = self.store.local_sessions()
        try:
            gone = await self.store.stored_local_sids() - local.keys()
            removed = [m for sid in gone if (m := await self.store.remove(sid)) is not None]
            seen = {m.sid for m in removed}
            unannounced = [m for m in self.store.take_unannounced() if m.sid not in seen]
            # A session its client's reconnect took over: its office heard it leave then.
            replaced = await self.store.reclaimed(m.sid for m in unannounced)
            removed += [m for m in unannounced if m.sid not in replaced]
            restored: list[Member] = []
            evicted: list[Member] = []
            displaced: list[str] = []
            for member in local.values():
                try:
                    await self.store.put(member)
                    restored.append(member)
                except SessionReclaimedError:
                    # Its client reconnected elsewhere and took its place: it stays out,
                    # silently (the office saw it leave), and ends where it still lingers.
                    await self.store.remove(member.sid)
                    displaced.append(member.sid)
                except StateConflictError:
                    # Someone took the name or the seat while the registry had lost us.
                    await self.store.put(attrs.evolve(member, name=None, office_id=None))
                    evicted.append(member)
            if self.subjects is not None:
                await self.subjects.restore()
        except BaseException:
            self.store.dirty = True
            raise
        log(_log, logging.WARNING if local or removed else logging.INFO,
            "resynced this node's sessions with the registry", node=self.store.node_id,
            restored=len(restored), removed=len(removed), evicted=len(evicted),
            replaced=len(displaced))  # fmt: skip
        for sid in displaced:
            log(_log, logging.INFO, "session replaced by a reconnect of its client", sid=sid)
            await self._disconnect(sid)
        for member in evicted:
            log(_log, logging.WARNING, "session lost its office in a resync", sid=member.sid,
                name=member.name, office=member.office_id)  # fmt: skip
            if member.office_id is not None:
                await self._leave_room(member.sid, member.office_id)
        notices = _leave_notices([*removed, *evicted])
        if announce:
            notices += tuple(
                enter_notice(m, m.office_id, m.name)
                for m in restored
                if m.office_id is not None and m.name is not None
            )
        if notices:
            # Other nodes may still be re-subscribing to the Socket.IO channel after the
            # outage, and a message published before they listen is lost: wait for them.
            task = asyncio.get_running_loop().create_task(self._announce(notices))
            self._announcing.add(task)
            task.add_done_callback(self._announcing.discard)

    async def _announce(self, notices: tuple[Broadcast, ...]) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.ttl
        try:
            while not await self.store.channel_heard_by_all(self.channel):
                if loop.time() > deadline:
                    log(_log, logging.WARNING, "announcing before every node listens again",
                        node=self.store.node_id)  # fmt: skip
                    break
                await asyncio.sleep(0.1)
        except StoreUnavailableError:
            pass
        try:
            await self._broadcast(notices)
        except Exception:
            _log.exception("announcing resynced sessions failed node=%s", self.store.node_id)


@attrs.define
class _Watched:
    """One watched call: its Computer's sid and what the watch learned about the registry."""

    sid: str
    #: The registry epoch this call was checked against (None: learn it at the next check).
    epoch: str | None = None
    #: Loop time before which an absent sid proves nothing (the registry was lost, and a
    #: live node puts its sessions back only on its next heartbeat).
    trust_from: float = 0.0
    disrupted: bool = False


class RemoteCalls:
    """Settles waits on Computers hosted by other nodes when they leave the registry.

    :meth:`watch` returns a future that resolves when ``sid`` is no longer registered;
    :meth:`release` it when the call ends.

    The call it watches was already sent: when the registry cannot be asked or was reset
    (Redis restarted) the Computer may be running it, so the watch never fails the call
    for that. It marks the call disrupted (:meth:`release` says so: whatever ends it
    without the Computer's answer then says it may have run) and stops trusting an absent
    sid until the registry has answered with one epoch for ``settle`` seconds: long
    enough for every live node to heartbeat and put its sessions back. Each call learns
    the epoch when it is made (this node's last heartbeat) or at its first check, never
    from an earlier call, so a reset long before the call was made is never held against it.
    """

    def __init__(
        self,
        store: RedisStateStore,
        *,
        poll: float = REMOTE_POLL,
        settle: float = 6.0,
        epoch: Callable[[], str | None] = lambda: None,
        absent: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.poll = poll
        self.settle = settle
        # The epoch this node's last heartbeat saw: a reset between sending a call and its
        # first check then still counts as a reset.
        self._epoch = epoch
        self._absent = absent
        self._watched: dict[asyncio.Future[None], _Watched] = {}
        self._task: asyncio.Task[None] | None = None
        #: Finds a Computer again whose node died (set by the multi-node wiring).
        self.rehoming: Rehoming | None = None

    def unheard(self, sid: str) -> bool:
        """Whether a call to ``sid`` should first :meth:`follow` it (no I/O)."""
        return self.rehoming is not None and self.rehoming.unheard(sid)

    async def follow(self, office_id: str, name: str, target: Member, wait: float) -> Member | None:
        """See :meth:`a2c_server._cluster._rehome.Rehoming.follow`."""
        if self.rehoming is None:
            return target
        return await self.rehoming.follow(office_id, name, target, wait)

    def watch(self, sid: str) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._watched[future] = _Watched(sid, epoch=self._epoch())
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())
        return future

    async def confirm_absent(self) -> None:
        """Raise :class:`StoreUnavailableError` unless a name missing from the registry
        is really gone (see :func:`a2c_server._cluster._recovery.confirm_absent`)."""
        if self._absent is not None:
            await self._absent()

    async def hold(self, office_id: str, name: str, seconds: float) -> None:
        """Keep a Computer's name for its return (its node is shutting down under it)."""
        await self.store.hold_name(office_id, name, seconds)

    async def held_for(self, office_id: str, name: str) -> float | None:
        """Seconds left of a name kept for its Computer's return, or None."""
        return await self.store.held_for(office_id, name)

    def release(self, future: asyncio.Future[None]) -> bool:
        """Stop watching ``future``'s call; whether the registry was lost while it waited."""
        future.cancel()
        watched = self._watched.pop(future, None)
        return watched is not None and watched.disrupted

    def disrupted_calls(self) -> int:
        """How many calls still out have seen the registry lost or reset (diagnostics)."""
        return sum(1 for w in self._watched.values() if w.disrupted)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.poll)
            if all(f.done() for f in self._watched):
                return  # what is left waits for release()
            try:
                await self._check()
            except Exception:
                _log.exception("remote call watch failed")

    async def _check(self) -> None:
        pending = [(f, w) for f, w in self._watched.items() if not f.done()]
        now = asyncio.get_running_loop().time()
        try:
            epoch, present = await self.store.sessions_exist(w.sid for _, w in pending)
        except StoreUnavailableError:
            epoch = None
        if epoch is None:  # unreachable, or emptied and no node has heartbeated yet
            for _, watched in pending:
                _disrupt(watched)
            return
        for (future, watched), here in zip(pending, present, strict=True):
            if watched.epoch is None:
                watched.epoch = epoch
                if watched.disrupted:
                    watched.trust_from = now + self.settle
            elif watched.epoch != epoch:
                _disrupt(watched)
                watched.epoch, watched.trust_from = epoch, now + self.settle
            if not here and now >= watched.trust_from and not future.done():
                future.set_result(None)


def _disrupt(watched: _Watched) -> None:
    if not watched.disrupted:
        log(_log, logging.WARNING, "registry lost while a cross-node call was pending: "
            "waiting for its answer", sid=watched.sid)  # fmt: skip
    watched.disrupted, watched.epoch = True, None
