"""The Agent's half of the progress extension (docs/compatibility.md).

A call made with ``on_progress`` carries ``a2c_progress: true``; the Server then sends
``notify:tool_call_progress`` for it, to this Agent only. Each report goes to the call's
callback (a plain function or a coroutine function; its failures are logged, never
raised into the call) and, with ``timeout_resets_on_progress``, restarts the call's
timeout. Reports for calls that did not ask, or that already ended, are ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol, TypeAlias

import attrs

from a2c_protocol import InvalidPayloadError, ToolCallProgress, from_wire

__all__ = ["ProgressCallback", "ProgressWaits"]

logger = logging.getLogger("a2c_agent")

ProgressCallback: TypeAlias = Callable[[ToolCallProgress], Awaitable[None] | None]


class Restartable(Protocol):
    """A call's deadline: :class:`._deadline.Deadline`, or an ``asyncio.Timeout``."""

    def when(self) -> float | None: ...
    def expired(self) -> bool: ...
    def reschedule(self, when: float | None) -> None: ...


@attrs.define
class _Wait:
    computer: str
    callback: ProgressCallback
    resets: bool
    timeout: float
    scope: Restartable | None = None


class ProgressWaits:
    """req_id → the callback and timeout of a call that asked for progress."""

    def __init__(self, spawn: Callable[[Awaitable[Any]], object]) -> None:
        self._spawn = spawn
        self._waits: dict[str, _Wait] = {}

    @contextlib.contextmanager
    def waiting(
        self, req_id: str, computer: str, callback: ProgressCallback, resets: bool, timeout: float
    ) -> Iterator[Callable[[Restartable], None]]:
        """Route reports for ``req_id`` while the block runs; yields the timeout binder."""
        wait = _Wait(computer, callback, resets, timeout)
        self._waits[req_id] = wait

        def bind(scope: Restartable) -> None:
            wait.scope = scope

        try:
            yield bind
        finally:
            if self._waits.get(req_id) is wait:
                del self._waits[req_id]

    def on_notify(self, data: object) -> None:
        try:
            report = from_wire(ToolCallProgress, data)
        except InvalidPayloadError as exc:
            logger.debug("dropped a malformed progress report: %s", exc)
            return
        wait = self._waits.get(report.req_id)
        if wait is None or wait.computer != report.computer:
            return
        if wait.resets and wait.scope is not None:
            _restart(wait.scope, wait.timeout)
        try:
            outcome = wait.callback(report)
        except Exception:
            logger.exception("on_progress callback failed for %s", report.req_id)
            return
        if inspect.isawaitable(outcome):
            self._spawn(_guarded(outcome, report.req_id))


def _restart(scope: Restartable, timeout: float) -> None:
    # A scope that already expired or exited (the answer is being read) stays as it is.
    with contextlib.suppress(RuntimeError):
        if scope.when() is not None and not scope.expired():
            scope.reschedule(asyncio.get_running_loop().time() + timeout)


async def _guarded(outcome: Awaitable[None], req_id: str) -> None:
    try:
        await outcome
    except Exception:
        logger.exception("on_progress callback failed for %s", req_id)
