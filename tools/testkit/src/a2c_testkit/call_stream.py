"""Streams of tool calls kept up through a fault, each call's outcome kept for the verdict.

The fault tests (a Redis restart, a node's SIGTERM behind nginx) start a call of the
scene's ``slow`` tool every 50 ms until told to stop (:class:`CallStream`). The tool writes
each call's id to the ``runs`` file when it runs, so afterwards each id that ran can be
matched with what its caller was told: an answer, "may have run", or "never sent".

The failover tests and benches that only ask *when* calls were answered again use
:class:`Probe`: a call every 0.1 s, abandoned (cancelled) when the probe stops.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from a2c_agent import (
    AgentConnectionError,
    AsyncAgent,
    CallNotSentError,
    ConnectionLostError,
    RemoteError,
    ToolCallTimeoutError,
    result_text,
)
from a2c_protocol import A2CError

__all__ = ["CallStream", "Outcome", "Probe"]


@attrs.define
class Outcome:
    """One call: when it started and ended, whether it was answered, what it raised."""

    started: float
    ended: float = 0.0
    ok: bool = False
    error: BaseException | None = None

    @property
    def may_have_run(self) -> bool:
        """The caller was told the call may have run (so a run is not hidden from it)."""
        exc = self.error
        if isinstance(exc, ToolCallTimeoutError | ConnectionLostError):
            return exc.may_have_run is True
        if isinstance(exc, RemoteError):
            return (exc.details or {}).get("delivered") is True and "may have run" in exc.message
        return False

    @property
    def not_sent(self) -> bool:
        """The answer says the call never reached a Computer (so it did not run)."""
        exc = self.error
        if isinstance(exc, RemoteError):
            details = exc.details or {}
            # A routing refusal (the Computer is between two nodes) was never sent either.
            return details.get("delivered") is False or (
                exc.code == 404 and "computer_name" in details
            )
        if isinstance(exc, CallNotSentError):  # the SDK's own verdict after waiting
            return True
        if isinstance(exc, ConnectionLostError):
            return exc.may_have_run is False
        return isinstance(exc, AgentConnectionError)  # refused while reconnecting


class CallStream:
    """Calls of ``computer``'s ``slow`` tool (``seconds`` each) until :meth:`stop`.

    ``caught`` are the errors a call may end in; any other one ends :meth:`run` (and the
    test) with it.
    """

    def __init__(
        self,
        agent: AsyncAgent,
        runs: Path,
        *,
        seconds: float,
        timeout: float,
        caught: tuple[type[BaseException], ...] = (A2CError,),
        computer: str = "box",
        every: float = 0.05,
    ) -> None:
        self.agent = agent
        self.runs = runs
        self.seconds = seconds
        self.timeout = timeout
        self.caught = caught
        self.computer = computer
        self.every = every
        self.outcomes: dict[str, Outcome] = {}
        self._stop = asyncio.Event()

    async def run(self) -> None:
        """Start a call every ``every`` seconds until :meth:`stop`; then wait for them all."""
        calls: list[asyncio.Task[None]] = []
        n = 0
        while not self._stop.is_set():
            n += 1
            calls.append(asyncio.create_task(self._one(f"c{n}")))
            await asyncio.sleep(self.every)
        await asyncio.gather(*calls)

    def stop(self) -> None:
        self._stop.set()

    async def _one(self, call_id: str) -> None:
        outcome = self.outcomes[call_id] = Outcome(started=time.monotonic())
        args = {"seconds": self.seconds, "runs": str(self.runs), "id": call_id}
        try:
            result = await self.agent.call_tool(self.computer, "slow", args, timeout=self.timeout)
            outcome.ok = not result.is_error and result_text(result) == "slept"
            if not outcome.ok:
                outcome.error = RuntimeError(result_text(result))
        except self.caught as exc:
            outcome.error = exc
        outcome.ended = time.monotonic()

    def answered_after(self, moment: float) -> bool:
        """Whether a call started after ``moment`` (monotonic) was answered."""
        return any(o.ok and o.started > moment for o in self.outcomes.values())

    def ran(self) -> list[str]:
        """The ids of the calls that ran, in order, once per run."""
        return self.runs.read_text().split()

    def error_kinds(self) -> dict[str, int]:
        """How many calls ended in each kind of error (``RemoteError[503]``...)."""
        kinds: dict[str, int] = {}
        for o in self.outcomes.values():
            if o.error is not None:
                kind = type(o.error).__name__ + (
                    f"[{o.error.code}]" if isinstance(o.error, RemoteError) else ""
                )
                kinds[kind] = kinds.get(kind, 0) + 1
        return kinds


class Probe:
    """Calls ``computer``'s ``tool`` every ``every`` seconds from :meth:`start` to :meth:`stop`.

    A call is answered when its result's text is ``expect``. :attr:`calls` holds, per call,
    its start (monotonic), whether it was answered, and the result's text or, for a call
    that raised one of ``caught``, ``describe(error)``.
    """

    def __init__(
        self,
        agent: AsyncAgent,
        computer: str,
        *,
        expect: str,
        timeout: float,
        tool: str = "echo",
        args: dict[str, Any] | None = None,
        every: float = 0.1,
        caught: tuple[type[BaseException], ...] = (A2CError, OSError),
        describe: Callable[[BaseException], str] = repr,
    ) -> None:
        self.agent, self.computer, self.tool = agent, computer, tool
        self.args = args or {}
        self.expect, self.timeout, self.every = expect, timeout, every
        self.caught, self.describe = caught, describe
        self.calls: list[tuple[float, bool, str]] = []
        self._task: asyncio.Task[None] | None = None

    async def _one(self) -> None:
        started = time.monotonic()
        try:
            result = await self.agent.call_tool(
                self.computer, self.tool, self.args, timeout=self.timeout
            )
            text = result_text(result)
            self.calls.append((started, text == self.expect, text))
        except self.caught as exc:
            self.calls.append((started, False, self.describe(exc)))

    async def _run(self) -> None:
        running: set[asyncio.Task[None]] = set()
        try:
            while True:
                task = asyncio.ensure_future(self._one())
                running.add(task)
                task.add_done_callback(running.discard)
                await asyncio.sleep(self.every)
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def start(self) -> None:
        """Start calling (in the running loop)."""
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop calling; calls still under way are cancelled."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def first_ok_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the start of the first answered call after it."""
        later = [t for t, ok, _ in self.calls if ok and t > moment]
        return min(later) - moment if later else None
