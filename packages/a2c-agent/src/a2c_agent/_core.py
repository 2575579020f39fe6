"""The shared core of the Agent: its state, background tasks and decoded requests.

The link, membership, events and calls of :class:`~a2c_agent.AsyncAgent` each hold the one
:class:`AgentCore`; it decides nothing about the protocol itself. Sending is the
:class:`~a2c_agent._channel.Channel`'s.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from a2c_protocol import (
    A2CError,
    AgentCallData,
    Event,
    to_wire,
)

from ._channel import Channel
from ._exceptions import (
    AckTimeoutError,
)
from ._notify import Listeners
from ._rpc._inflight import InFlightCalls
from ._rules import (
    decode_ack,
    unanswered,
)
from ._session._lifecycle import Lifecycle

logger = logging.getLogger("a2c_agent")

T = TypeVar("T")


def new_req_id() -> str:
    """A fresh request id: 32 hex digits, unique per request of this process."""
    return uuid.uuid4().hex


class AgentCore:
    """What every owner of :class:`~a2c_agent.AsyncAgent` shares: its name, channel,
    lifecycle, background tasks, the calls in flight, and one decoded request.

    Each owner (the link, the membership, the events, the calls) is handed this object;
    the state each one keeps is its own.
    """

    def __init__(
        self,
        name: str,
        channel: Channel,
        request_timeout: float,
        *,
        reconnect: bool,
        why_not: Callable[[], str | None],
    ) -> None:
        self.name = name
        self.channel = channel
        self.request_timeout = request_timeout
        self.tasks: set[asyncio.Task[Any]] = set()
        self.calls = InFlightCalls()
        self.state_listeners = Listeners(self.spawn)
        self.life = Lifecycle(
            name, reconnect=reconnect, listeners=self.state_listeners, why_not=why_not
        )

    def spawn(self, awaitable: Awaitable[Any]) -> None:
        async def run() -> None:
            await awaitable

        task = asyncio.ensure_future(run())
        self.tasks.add(task)
        task.add_done_callback(self.task_done)

    def task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("agent background task failed", exc_info=task.exception())

    async def ask(self, event: Event, payload: Any, response: type[T]) -> T:
        self.life.require_connected()
        try:
            args = await self.channel.request(event, payload)
        except AckTimeoutError as exc:
            unsupported = unanswered(event, exc)
            if unsupported is None:
                raise
            raise unsupported from exc
        return decode_ack(event, response, args)

    async def send_cancel(self, req_id: str) -> None:
        try:
            await self.channel.emit(
                Event.TOOL_CALL_CANCEL, to_wire(AgentCallData(agent=self.name, req_id=req_id))
            )
        except A2CError as exc:
            logger.warning("could not send tool_call_cancel for %s: %s", req_id, exc)

    async def cancel_once(self, req_id: str) -> None:
        if self.calls.claim(req_id):
            await self.send_cancel(req_id)
