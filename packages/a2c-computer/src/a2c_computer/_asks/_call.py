"""One tool call that may ask: its MCP call, and the requests it made that wait for answers.

An :class:`AskingCall` outlives the Agent's round that started it: its MCP ``tools/call``
runs as a task of its own, and each round of the Agent waits (:meth:`AskingCall.next`) for
the first of: the tool's result, a 2026-07-28 ``input_required`` result, or requests the
MCP server made meanwhile (handshake era, through :meth:`AskingCall.ask`, called by the MCP
session's callbacks). A round waits at most its ``timeout``, which each progress report of
the tool restarts; the time the Agent takes to answer is bounded by the state's expiry
instead (:mod:`._relay`). :meth:`AskingCall.end` stops it all: the MCP call is cancelled
and every waiting request is answered with an error naming why.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeAlias

import attrs
from mcp import types

from a2c_computer._toolcalls._extensions import ProgressFn
from a2c_computer._toolcalls._invoke import McpInputRequired
from a2c_protocol import CallToolResult, InputCapabilities, JsonObject
from a2c_protocol._input import ELICIT, SAMPLE

from ._answers import HandshakeAnswer

__all__ = ["AskingCall", "Outcome", "Resume", "Runner"]

#: ``inputResponses`` and ``requestState`` of a 2026-07-28 retry (None: the first call).
Resume: TypeAlias = tuple[JsonObject, str | None] | None
#: Starts the MCP ``tools/call`` (again, with ``Resume``).
Runner: TypeAlias = Callable[[Resume], Awaitable[CallToolResult | McpInputRequired]]
#: What a round ends with: the result, a 2026-07-28 ask, handshake requests by key, or
#: why the call was ended meanwhile (a ``str``: a bound passed, the Agent gave up).
Outcome: TypeAlias = CallToolResult | McpInputRequired | dict[str, JsonObject] | str

_SHORT: Final = {ELICIT: "elicit", SAMPLE: "sample"}


@attrs.define
class _Ask:
    key: str
    request: JsonObject
    answer: asyncio.Future[HandshakeAnswer]


class AskingCall:
    """A declared call's MCP tool call and its waiting requests (see the module doc)."""

    def __init__(
        self,
        takes: InputCapabilities,
        *,
        server: str,
        tool: str,
        agent: str,
        runner: Runner,
        req_id: str = "-",
    ) -> None:
        self.takes = takes
        self.server, self.tool, self.agent, self.req_id = server, tool, agent, req_id
        self.runner = runner
        self.task: asyncio.Task[CallToolResult | McpInputRequired] | None = None
        self.ended: str | None = None
        self._queued: list[_Ask] = []
        self._sent: dict[str, _Ask] = {}
        self._changed = asyncio.Event()
        self._forward: ProgressFn | None = None
        self._scope: asyncio.Timeout | None = None
        self._round_timeout = 0.0
        self._numbers = itertools.count(1)
        #: Requests the MCP server asked during the whole call (every round, both eras).
        self.asked_total = 0
        #: Wall-clock time its Agent's answer is waited for until (None: not waiting).
        self.waiting_until: float | None = None
        #: The Agent cancelled or refused every request of the last round it answered.
        self.given_up = False

    # ------------------------------------------------------------ the MCP side

    def start(self, resume: Resume = None) -> None:
        """Run the MCP ``tools/call`` (again) as a task of its own."""
        self.task = asyncio.ensure_future(self.runner(resume))
        self.task.add_done_callback(lambda _: self._changed.set())

    @property
    def waiting(self) -> int:
        """Handshake-era requests the MCP server waits on now (one round's worth)."""
        return len(self._queued) + len(self._sent)

    async def ask(self, request: JsonObject) -> HandshakeAnswer:
        """A handshake-era request of the MCP server: wait for the Agent's answer."""
        if self.ended is not None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=self.ended)
        self.asked_total += 1
        key = f"{_SHORT.get(str(request.get('method')), 'ask')}-{next(self._numbers)}"
        future: asyncio.Future[HandshakeAnswer] = asyncio.get_running_loop().create_future()
        self._queued.append(_Ask(key, request, future))
        self._changed.set()
        return await future

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The tool's progress: it is alive (the round's wait restarts), and it is reported."""
        scope = self._scope
        if scope is not None and not scope.expired():
            with contextlib.suppress(RuntimeError):  # the scope is being left
                scope.reschedule(asyncio.get_running_loop().time() + self._round_timeout)
        forward = self._forward
        if forward is not None:
            await forward(progress, total, message)

    def describe(self) -> str:
        """Which call this is, and what holds it, for a refusal naming it."""
        who = f"call {self.req_id} of tool {self.tool} (Agent {self.agent})"
        if self.waiting_until is None:
            return f"{who}, running"
        until = time.strftime("%H:%M:%S", time.gmtime(self.waiting_until))
        return f"{who}, waiting for its Agent's answer until {until} UTC"

    # ----------------------------------------------------------- the Agent side

    async def next(self, timeout: float, forward: ProgressFn | None) -> Outcome:
        """Wait for the round's outcome; ``TimeoutError`` after ``timeout`` s of silence."""
        assert self.task is not None
        self._forward, self._round_timeout = forward, timeout
        try:
            async with asyncio.timeout(timeout) as scope:
                self._scope = scope
                while True:
                    if self.ended is not None:
                        return self.ended
                    if self._queued:
                        await asyncio.sleep(0)  # requests made together go out together
                        batch, self._queued = self._queued, []
                        self._sent.update((ask.key, ask) for ask in batch)
                        return {ask.key: ask.request for ask in batch}
                    if self.task.done():
                        return self.task.result()
                    self._changed.clear()
                    await self._changed.wait()
        finally:
            self._scope, self._forward = None, None

    def answer(self, answers: dict[str, HandshakeAnswer]) -> None:
        """Hand the Agent's answers to the MCP server's waiting requests."""
        for key, value in answers.items():
            ask = self._sent.pop(key, None)
            if ask is not None and not ask.answer.done():
                ask.answer.set_result(value)

    def end(self, reason: str) -> None:
        """Stop: cancel the MCP call, answer every waiting request with ``reason``."""
        if self.ended is None:
            self.ended = reason
        for ask in (*self._sent.values(), *self._queued):
            if not ask.answer.done():
                ask.answer.set_result(types.ErrorData(code=types.INVALID_REQUEST, message=reason))
        self._sent.clear()
        self._queued.clear()
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self._changed.set()  # a round waiting on this call hears why it ended
