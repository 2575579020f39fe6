"""The Agent's channel: the one Socket.IO client everything sends on.

The dispatcher split: the channel sends (one emit at a time), correlates each acked
request with its answer under a deadline, and holds the requests still waiting for an
ack, so the link can fail them together when the connection drops or the agent closes.
It decides nothing about the protocol; the link hands it each new client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import socketio

from a2c_protocol import NAMESPACE, Event, to_wire
from a2c_protocol._lines import LINE_0_2, Line, translate_answer

from ._exceptions import AgentStateError, ConnectionLostError
from ._rpc._deadline import Deadline, expire


class Channel:
    """Send, request with an ack, and the requests still out (see the module doc)."""

    __slots__ = ("_lock", "_pending", "_request_timeout", "line", "sio")

    def __init__(self, line: Line, request_timeout: float) -> None:
        #: The current Socket.IO client, None until the agent opens.
        self.sio: socketio.AsyncClient | None = None
        #: The protocol line the session speaks: 0.2 first, 0.4 after a 4008 fallback.
        self.line = line
        self._lock: asyncio.Lock | None = None
        self._pending: set[asyncio.Future[tuple[Any, ...]]] = set()
        self._request_timeout = request_timeout

    def attach(self, sio: socketio.AsyncClient) -> None:
        """Send on ``sio`` from now on, one emit at a time (the agent opens)."""
        self._lock = asyncio.Lock()
        self.sio = sio

    def client(self) -> socketio.AsyncClient:
        if self.sio is None:
            raise AgentStateError("the agent is not open")
        return self.sio

    async def emit(
        self, event: Event, data: Any, callback: Callable[..., None] | None = None
    ) -> None:
        sio = self.client()
        lock = self._lock
        if lock is None:  # pragma: no cover - set in open()
            raise AgentStateError("the agent is not open")
        try:
            async with lock:
                await sio.emit(event.value, data, namespace=NAMESPACE, callback=callback)
        except socketio.exceptions.SocketIOError as exc:
            raise ConnectionLostError(f"cannot send {event.value}: not connected") from exc

    async def request(
        self,
        event: Event,
        payload: Any,
        *,
        timeout: float | None = None,
        bind: Callable[[Deadline], None] | None = None,
    ) -> tuple[Any, ...]:
        """Send ``payload`` (a model, or its JSON object as ``to_wire`` gives it) and wait
        for the ack's values; :class:`AckTimeoutError` after ``timeout`` (default: the
        agent's ``request_timeout``). ``bind`` receives a deadline it may push back."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Any, ...]] = loop.create_future()

        def on_ack(*args: Any) -> None:
            if self.line != LINE_0_2:  # a 0.4 session: answers in 0.4 shapes, we read 0.2
                args = tuple(translate_answer(event.value, a, agent=LINE_0_2,
                                              computer=self.line) for a in args)  # fmt: skip
            if not future.done():
                future.set_result(args)

        self._pending.add(future)
        wait = self._request_timeout if timeout is None else timeout
        try:
            await self.emit(event, payload if type(payload) is dict else to_wire(payload), on_ack)
            timer: asyncio.TimerHandle | Deadline
            if bind is None:
                timer = loop.call_at(loop.time() + wait, expire, future, event.value, wait)
            else:
                timer = Deadline(loop, future, event.value, wait)
                bind(timer)
            try:
                return await future
            finally:
                timer.cancel()
        finally:
            self._pending.discard(future)

    def fail_pending(self, error: Exception) -> None:
        """Fail every request still waiting for its ack with ``error``."""
        for future in list(self._pending):
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
