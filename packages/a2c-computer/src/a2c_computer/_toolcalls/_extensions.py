"""What a tool call carries beyond protocol 0.2, when its Agent asked (docs/compatibility.md).

* Progress: with ``a2c_progress`` the MCP server is given a progress token and each of its
  ``notifications/progress`` goes to the Server as ``server:tool_call_progress``, passed
  through :class:`~a2c_protocol.ProgressGate` (≤ 10 per second, the latest of a burst kept)
  and sent without ever blocking the MCP session's reader. Each report also restarts the
  call's timeout: a tool that reports progress is alive.
* Trace context: ``mcp_request`` is entered around the MCP request itself (only when one is
  sent: a call refused before reaching the MCP server has no MCP span) and yields what is
  merged into the request's ``params._meta``.
* Input requests: with ``a2c_input`` (and, on a retry, the answers and the state) the call
  is one that may ask the Agent (:class:`InputAsk`; the rounds are :mod:`a2c_computer._asks`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

import attrs

from a2c_protocol import (
    ExtensionEvent,
    InputCapabilities,
    JsonObject,
    ProgressGate,
    ToolCallProgress,
    ToolCallReq,
    to_wire,
)
from a2c_protocol._input import (
    InputBinding,
    params_digest,
)

__all__ = ["CallExtras", "InputAnswer", "InputAsk", "ProgressFn", "ProgressForward", "input_ask"]

logger = logging.getLogger("a2c_computer")

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
Emit = Callable[[str, Any], Awaitable[None]]


@attrs.frozen(kw_only=True)
class InputAsk:
    """A call that takes input: what it declared, whose it is, and on a retry its answers."""

    takes: InputCapabilities
    binding: InputBinding
    responses: dict[str, JsonObject] | None = None
    state: str | None = None


def input_ask(req: ToolCallReq, computer: str, office: str | None) -> InputAsk:
    """The input side of a ``client:tool_call`` that carries the extension's keys."""
    return InputAsk(
        takes=InputCapabilities.from_wire(req.a2c_input),
        binding=InputBinding(
            agent=req.agent, office=office, computer=computer, tool=req.tool_name,
            params_digest=params_digest(req.params),
        ),
        responses=req.a2c_input_responses,
        state=req.a2c_request_state,
    )  # fmt: skip


@attrs.frozen
class InputAnswer:
    """A round's answer that is not the tool's result: input required, or a refusal (the
    JSON sent as the ack, and how the call's log line reads)."""

    wire: JsonObject
    outcome: str


@attrs.frozen(kw_only=True)
class CallExtras:
    """Per-call extension inputs handed from the link down to the MCP request."""

    progress: ProgressFn | None = None
    mcp_request: Callable[[], AbstractContextManager[dict[str, Any]]] | None = None
    ask: InputAsk | None = None


class ProgressForward:
    """One call's progress reports, forwarded to the Server as they may pass the gate."""

    def __init__(self, emit: Emit, *, agent: str, req_id: str, computer: str) -> None:
        self._emit = emit
        self._agent, self._req_id, self._computer = agent, req_id, computer
        self._gate: ProgressGate[ToolCallProgress] = ProgressGate()
        self._timer: asyncio.TimerHandle | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self._closed = False

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self._closed:
            return
        report = ToolCallProgress(agent=self._agent, req_id=self._req_id,
                                  computer=self._computer, progress=float(progress),
                                  total=None if total is None else float(total),
                                  message=message)  # fmt: skip
        loop = asyncio.get_running_loop()
        if self._gate.offer(report, loop.time()):
            self._send(report)
            return
        due = self._gate.due()
        if self._timer is None and due is not None:
            self._timer = loop.call_at(due, self._flush)

    def _flush(self) -> None:
        self._timer = None
        if self._closed:
            return
        report = self._gate.take(asyncio.get_running_loop().time())
        if report is not None:
            self._send(report)

    def _send(self, report: ToolCallProgress) -> None:
        task = asyncio.ensure_future(
            self._emit(ExtensionEvent.TOOL_CALL_PROGRESS.value, to_wire(report))
        )
        self._sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._sending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Progress is advisory: a lost report is not worth failing the call for.
            logger.debug("progress report not sent: %s", task.exception())

    def close(self) -> None:
        """The call ended: its answer follows, a held report would only arrive after it."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
