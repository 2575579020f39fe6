"""The progress extension's route: a Computer's report reaches the call's Agent, no one else.

A Computer sends ``server:tool_call_progress`` only for a call whose request carried
``a2c_progress: true``. The node the Computer is connected to checks the sender (a
Computer in an office) and the named Agent (an Agent in the same office), stamps the
report with the sender's registered name, and hands it to the Agent's node. That node
relays the call, so it has the last word: the report must name a call of that Agent that
is still waiting for this very Computer and asked for progress; anything else is dropped.
There each report restarts the Server's wait for the answer (bounded by
``--max-tool-timeout``), passes the per-call :class:`~a2c_protocol.ProgressGate`
(≤ 10 per second, the latest of a burst kept) and is dropped, never queued, while the
Agent's outgoing queue is backed up. Progress is advisory: nothing here answers the
Computer or fails the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

import attrs
import socketio

from a2c_protocol import (
    NAMESPACE,
    ExtensionEvent,
    InvalidPayloadError,
    ProgressGate,
    Role,
    ToolCallProgress,
    from_wire,
    to_wire,
)
from a2c_server._observe._logs import log
from a2c_server._state._store import StateStore
from a2c_server._upstream import queued_packets

__all__ = ["Keepalive", "ProgressRoutes"]

_log = logging.getLogger("a2c_server.progress")

SLOW_READER_PACKETS: Final = 16
"""Packets waiting in an Agent's outgoing queue past which its progress reports are dropped."""

Deliver = Callable[[str, Any], Awaitable[None]]


class Keepalive:
    """The restartable part of the Server's wait for a progress call's answer.

    ``idle`` finishes when no report came for ``idle_after`` seconds; the caller's own
    timeout (``bound``) stays the hard limit.
    """

    def __init__(self, idle_after: float, bound: float) -> None:
        self._loop = asyncio.get_running_loop()
        self.idle: asyncio.Future[None] = self._loop.create_future()
        self.idle_after = idle_after
        self.bound = max(bound, idle_after)
        self.reports = 0
        self._timer = self._loop.call_later(idle_after, self._expire)

    def _expire(self) -> None:
        if not self.idle.done():
            self.idle.set_result(None)

    def touch(self) -> None:
        if self.idle.done():
            return
        self.reports += 1
        self._timer.cancel()
        self._timer = self._loop.call_later(self.idle_after, self._expire)

    def close(self) -> None:
        self._timer.cancel()

    def timeout_message(self, computer: str, waited: float, cap: int) -> str:
        """The 408's message: which limit ended the wait, and how long it lasted.

        Either the Computer went ``idle_after`` seconds without answering or reporting, or
        it kept reporting until the Server's ``--max-tool-timeout`` (``cap``) ran out.
        """
        reports = f"{self.reports} progress report{'' if self.reports == 1 else 's'}"
        if self.idle.done() and not self.reports:
            return f"Computer {computer!r} did not answer within {self.idle_after:g} seconds"
        if self.idle.done():
            return (
                f"Computer {computer!r} did not answer within {self.idle_after:g} seconds "
                f"of its last progress report (waited {waited:.1f} s in all, {reports})"
            )
        return (
            f"Computer {computer!r} did not answer within this Server's cap for calls that "
            f"report progress (--max-tool-timeout {cap} s); waited {waited:.1f} s, {reports}"
        )


@attrs.define
class _Watched:
    computer: str
    keepalive: Keepalive
    gate: ProgressGate[dict[str, Any]] = attrs.field(factory=ProgressGate)
    timer: asyncio.TimerHandle | None = None
    last: float | None = None


class ProgressRoutes:
    """Routes ``server:tool_call_progress`` (see the module docstring)."""

    def __init__(self, sio: socketio.AsyncServer, store: StateStore) -> None:
        self._sio = sio
        self._store = store
        self._calls: dict[tuple[str, str], _Watched] = {}
        self.dropped = 0
        # Multi-node: a report for an Agent of this node that another node routed here
        # comes through the Redis manager; take it there instead of delivering it as is.
        intercepts = getattr(sio.manager, "intercepts", None)
        if isinstance(intercepts, dict):
            intercepts[ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value] = self.deliver

    def register(self) -> None:
        self._sio.on(
            ExtensionEvent.TOOL_CALL_PROGRESS.value, self.from_computer, namespace=NAMESPACE
        )

    @contextlib.contextmanager
    def watching(
        self, agent_sid: str, req_id: str, computer: str, keepalive: Keepalive
    ) -> Iterator[None]:
        """Accept reports for the call ``req_id`` of ``agent_sid`` while the block runs."""
        key = (agent_sid, req_id)
        watched = _Watched(computer=computer, keepalive=keepalive)
        self._calls[key] = watched
        try:
            yield
        finally:
            keepalive.close()
            if watched.timer is not None:
                watched.timer.cancel()
            if self._calls.get(key) is watched:
                del self._calls[key]

    async def from_computer(self, sid: str, data: Any = None, *_: Any) -> None:
        try:
            await self._route(sid, data)
        except Exception:  # advisory: one log line, never a traceback to the peer
            _log.exception("progress report failed sid=%s", sid)

    async def _route(self, sid: str, data: Any) -> None:
        try:
            report = from_wire(ToolCallProgress, data)
        except InvalidPayloadError as exc:
            self._drop("invalid report", sid=sid, reason=exc)
            self._charge(sid)
            return
        try:
            sender = await self._store.get(sid)
            if (
                sender is None
                or sender.role is not Role.COMPUTER
                or sender.name is None
                or sender.office_id is None
            ):
                self._drop("sender is no Computer in an office", sid=sid)
                self._charge(sid)
                return
            # Names are per office: the Agent is looked up in the sender's office only.
            agent = await self._store.member_named(sender.office_id, report.agent)
        except Exception as exc:  # the registry is down: a report is not worth an error
            self._drop("registry unavailable", sid=sid, reason=exc)
            return
        if (
            agent is None
            or agent.role is not Role.AGENT
            or agent.office_id is None
            or agent.office_id != sender.office_id
        ):
            self._drop("no such Agent in the sender's office", sid=sid, req_id=report.req_id)
            self._charge(sid)
            return
        # On behalf of the registered name, never a claimed one.
        wire = to_wire(attrs.evolve(report, computer=sender.name))
        if self._sio.manager.is_connected(agent.sid, NAMESPACE):
            await self.deliver(agent.sid, wire)
        else:
            await self._sio.emit(ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value, wire,
                                 to=agent.sid, namespace=NAMESPACE)  # fmt: skip

    async def deliver(self, agent_sid: str, wire: Any) -> None:
        """The Agent's node: the last check, the keepalive, the gate, the send."""
        req_id = wire.get("req_id") if isinstance(wire, dict) else None
        if not isinstance(req_id, str):
            self._drop("report without a req_id", sid=agent_sid)
            return
        watched = self._calls.get((agent_sid, req_id))
        if watched is None or wire.get("computer") != watched.computer:
            self._drop("no such call waiting for this Computer", sid=agent_sid, req_id=req_id)
            return
        watched.keepalive.touch()
        progress = wire.get("progress")
        if not isinstance(progress, int | float):  # pragma: no cover - stamped by a node
            return
        if watched.last is not None and progress < watched.last:
            # Reports are handled concurrently; MCP progress only grows, so this one is stale.
            self._drop("stale report", sid=agent_sid, req_id=req_id)
            return
        watched.last = progress
        loop = asyncio.get_running_loop()
        if watched.gate.offer(wire, loop.time()):
            await self._send(agent_sid, wire)
            return
        due = watched.gate.due()
        if watched.timer is None and due is not None:
            watched.timer = loop.call_at(due, self._flush, agent_sid, req_id, watched)

    def _flush(self, agent_sid: str, req_id: str, watched: _Watched) -> None:
        watched.timer = None
        if self._calls.get((agent_sid, req_id)) is not watched:
            return
        wire = watched.gate.take(asyncio.get_running_loop().time())
        if wire is not None:
            task = asyncio.ensure_future(self._send(agent_sid, wire))
            task.add_done_callback(_quiet)

    async def _send(self, agent_sid: str, wire: Any) -> None:
        if self._backed_up(agent_sid):
            self._drop("agent is not reading", sid=agent_sid, req_id=wire.get("req_id"))
            return
        await self._sio.emit(ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value, wire,
                             to=agent_sid, namespace=NAMESPACE)  # fmt: skip

    def _backed_up(self, agent_sid: str) -> bool:
        return queued_packets(self._sio, agent_sid, NAMESPACE) > SLOW_READER_PACKETS

    def _charge(self, sid: str) -> None:
        # A report refused at its sender costs the sender's inbound budget (floods).
        self._sio.penalize(sid=sid)

    def _drop(self, why: str, **fields: Any) -> None:
        self.dropped += 1
        log(_log, logging.DEBUG, f"progress report dropped: {why}", **fields)


def _quiet(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log(_log, logging.DEBUG, "progress report not sent", reason=task.exception())
