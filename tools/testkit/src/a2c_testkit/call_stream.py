"""A stream of tool calls kept up through a fault, each call's outcome kept for the verdict.

The fault tests (a Redis restart, a node's SIGTERM behind nginx) start a call of the
scene's ``slow`` tool every 50 ms until told to stop. The tool writes each call's id to
the ``runs`` file when it runs, so afterwards each id that ran can be matched with what
its caller was told: an answer, "may have run", or "never sent".
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

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

__all__ = ["CallStream", "Outcome"]


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
