"""The shared core of the Agent: its state, background tasks and decoded requests.

The link, membership, events and requests of :class:`~a2c_agent.AsyncAgent` build on
:class:`AgentCore`; it decides nothing about the protocol itself. Sending is the
:class:`~a2c_agent._channel.Channel`'s.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

from a2c_protocol import (
    A2CError,
    AgentCallData,
    Event,
    InputCapabilities,
    to_wire,
)

from ._channel import Channel
from ._exceptions import (
    AckTimeoutError,
)
from ._notify import Listeners, NotificationStream
from ._rpc._inflight import InFlightCalls
from ._rpc._input import InputHandler, InputLimits
from ._rpc._progress import ProgressWaits
from ._rules import (
    ToolCache,
    decode_ack,
    unanswered,
)
from ._session._connection import (
    AuthSource,
)
from ._session._lifecycle import Lifecycle
from ._skills import SkillTracker

logger = logging.getLogger("a2c_agent")

T = TypeVar("T")


def _req_id() -> str:
    return uuid.uuid4().hex


class AgentCore:
    """The state every part of :class:`~a2c_agent.AsyncAgent` shares, and the plumbing
    they all use: the lifecycle state, background tasks and one decoded request.

    ``AsyncAgent.__init__`` sets every attribute declared here.
    """

    _url: str
    _channel: Channel
    _server_url: str
    _line_pinned: bool
    _name: str
    _auth_source: AuthSource
    _socketio_path: str
    _request_timeout: float
    _tool_cache_enabled: bool
    _reconnect: bool
    _transports: tuple[str, ...]
    _connect_timeout: float
    _tool_call_grace: float
    _desktop_size: int | None
    _reconnect_delay: float
    _reconnect_max_delay: float
    _drain_blobs: bool
    _max_drained_bytes: int | None
    _blob_chunk_bytes: int
    _blob_max_in_flight: int
    _input_handler: InputHandler | None
    _input_capabilities: InputCapabilities
    _input_limits: InputLimits
    #: Send again a tool call that provably never reached a Computer (``_rpc/_resend``).
    _resend_unsent: bool

    _office: str | None
    _cache: ToolCache
    _calls: InFlightCalls
    _progress: ProgressWaits
    _tasks: set[asyncio.Task[Any]]
    _reconnect_task: asyncio.Task[None] | None
    _streams: set[NotificationStream]
    _notification_listeners: Listeners
    _tools_listeners: Listeners
    _desktop_listeners: Listeners
    _state_listeners: Listeners
    _skills: SkillTracker
    _connect_error: object
    _close_code: int | None
    _last_error: BaseException | None
    _cut_reason: str | None
    _last_cut: str | None
    _reclaim: str
    _life: Lifecycle
    #: The Server announced it is about to cut this connection (RECONNECTING until it does).
    _leaving: bool

    def _why_not_connected(self) -> str | None:
        """What a reconnecting agent waits for (see ``_session._rejoin``)."""
        return None

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        async def run() -> None:
            await awaitable

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("agent background task failed", exc_info=task.exception())

    async def _ask(self, event: Event, payload: Any, response: type[T]) -> T:
        self._life.require_connected()
        try:
            args = await self._channel.request(event, payload)
        except AckTimeoutError as exc:
            unsupported = unanswered(event, exc)
            if unsupported is None:
                raise
            raise unsupported from exc
        return decode_ack(event, response, args)

    async def _send_cancel(self, req_id: str) -> None:
        try:
            await self._channel.emit(
                Event.TOOL_CALL_CANCEL, to_wire(AgentCallData(agent=self._name, req_id=req_id))
            )
        except A2CError as exc:
            logger.warning("could not send tool_call_cancel for %s: %s", req_id, exc)

    async def _cancel_once(self, req_id: str) -> None:
        if self._calls.claim(req_id):
            await self._send_cancel(req_id)
