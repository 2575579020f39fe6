"""Confirmation of tools without ``auto_apply: true`` (computer-config.md §4.2).

Rules:

* only a merged ``auto_apply`` of exactly ``true`` skips confirmation;
* without a callback, policy ``allow`` runs the tool (one WARN per tool) and ``deny``
  answers 4005 with the fix (set ``auto_apply``);
* the confirmation counts against the call's timeout: a question still open at the
  timeout is withdrawn and the call answers 4004 at once; a cancelled call withdraws its
  question the same way. A withdrawn question's late answer never runs the tool;
* a callback that raises declines (4005), with a WARN naming the tool; one that raises
  :class:`CannotAsk` (no one to ask: ``--confirm ask`` without a foreground terminal)
  refuses with 4005 and the way to allow the tool — never runs it (fail closed).

:class:`ConsoleConfirmer` is the terminal prompt of ``a2c-computer run --confirm ask``. It
asks only while stdin is the *foreground* terminal: a read from the background would stop
the whole process (SIGTTIN), pings included, and the Server would drop the Computer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Literal, TextIO, TypeAlias

import attrs

from a2c_protocol import CallToolResult, ErrorCode, JsonObject, ToolMeta

__all__ = [
    "ALLOW_HINT",
    "CannotAsk",
    "ConfirmCallback",
    "ConfirmRequest",
    "ConsoleConfirmer",
    "ask_confirmation",
    "error_result",
    "foreground_terminal",
    "needs_confirmation",
]

logger = logging.getLogger("a2c_computer")


@attrs.frozen
class ConfirmRequest:
    """What a confirmation callback is asked about."""

    req_id: str
    agent: str | None
    mcp_server: str
    tool: str
    exposed_name: str
    arguments: JsonObject


#: How to let a tool run when nobody can confirm it (part of every such 4005).
ALLOW_HINT = (
    "to allow a tool, set auto_apply: true for it in the configuration, or run the "
    "Computer with --confirm allow"
)


class CannotAsk(Exception):
    """Raised by a confirmation callback that has nobody to ask; the call gets 4005."""


#: ``async confirm(request) -> bool``: True runs the tool, False declines it (4005).
ConfirmCallback: TypeAlias = Callable[[ConfirmRequest], Awaitable[bool]]


def error_result(
    code: int, message: str, *, mcp_server: str | None = None, extra: JsonObject | None = None
) -> CallToolResult:
    """An ``isError`` tool result with ``meta.error_code`` (and ``meta.mcp_server``)."""
    meta: JsonObject = {"error_code": int(code)}
    if mcp_server is not None:
        meta["mcp_server"] = mcp_server
    meta.update(extra or {})
    return CallToolResult(content=[{"type": "text", "text": message}], is_error=True, meta=meta)


async def ask_confirmation(
    confirm: ConfirmCallback | None,
    policy: Literal["allow", "deny"],
    request: ConfirmRequest,
    timeout: float,
    warned: set[str],
) -> CallToolResult | None:
    """None to run the tool, else the refusal (4005 declined, 4004 timed out)."""
    exposed, server = request.exposed_name, request.mcp_server
    if confirm is None:
        if policy == "allow":
            if exposed not in warned:
                warned.add(exposed)
                logger.warning(
                    "tool %s lacks auto_apply: true and no confirmation callback is set; "
                    "running it (confirm_policy='allow')",
                    exposed,
                )
            return None
        return error_result(
            ErrorCode.TOOL_REQUIRES_CONFIRMATION,
            f"Tool {exposed!r} requires confirmation, but this Computer has no confirmation "
            "handler; set auto_apply: true for it in the configuration",
            mcp_server=server,
        )
    try:
        async with asyncio.timeout(timeout):
            approved = await confirm(request)
    except TimeoutError:
        logger.info(
            "tool call %s (%s): no confirmation within %g s; question withdrawn, call timed out",
            request.req_id,
            exposed,
            timeout,
        )
        return error_result(
            ErrorCode.TOOL_TIMEOUT,
            f"Tool {exposed!r} timed out after {timeout:g} s waiting for confirmation on the "
            "Computer",
            mcp_server=server,
            extra={"confirmation": "timed_out"},
        )
    except CannotAsk as exc:
        logger.info("tool call %s (%s) refused: %s", request.req_id, exposed, exc)
        return error_result(
            ErrorCode.TOOL_REQUIRES_CONFIRMATION,
            f"Tool {exposed!r} needs confirmation, but the Computer cannot ask: {exc}; "
            f"{ALLOW_HINT}",
            mcp_server=server,
        )
    except Exception as exc:
        logger.warning("confirmation callback failed for %s: %s", exposed, exc)
        approved = False
    if approved:
        return None
    return error_result(
        ErrorCode.TOOL_REQUIRES_CONFIRMATION,
        f"The call of tool {exposed!r} was declined on the Computer",
        mcp_server=server,
    )


def foreground_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is a terminal whose foreground process group is ours."""
    try:
        fd = stream.fileno()
        return os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp()
    except (OSError, ValueError, AttributeError):
        return False


#: Reads one answer line after showing the question (``input`` is the default).
ReadLine: TypeAlias = Callable[[str], str]


class ConsoleConfirmer:
    """A :data:`ConfirmCallback` asking ``[y/N]`` on a line-based console.

    One question at a time. When a call is cancelled or times out while its question is
    open, a line says the question is withdrawn; the line the user types next answers
    that withdrawn question and is ignored (said so on ``out``) — it never runs the tool
    and never answers a later question. ``read_line`` is injectable (tests script it); it
    runs on a daemon thread, so a question left open never blocks the process exit.

    ``can_ask`` is checked before each question (the CLI passes "stdin is the foreground
    terminal"); when it says no, the question is not asked: with ``fallback`` None (the
    default) the call is refused with 4005 and the way to allow it (:class:`CannotAsk`),
    else ``fallback`` is the answer, with a WARN.
    """

    def __init__(
        self,
        read_line: ReadLine | None = None,
        out: TextIO | None = None,
        *,
        can_ask: Callable[[], bool] | None = None,
        fallback: bool | None = None,
    ) -> None:
        self._read_line = read_line or input
        self._out = out
        self._can_ask = can_ask
        self._fallback = fallback
        self._lock = asyncio.Lock()
        self._orphan: asyncio.Future[str | None] | None = None

    def _say(self, text: str) -> None:
        import sys

        print(text, file=self._out or sys.stderr, flush=True)

    def _read(self, question: str) -> asyncio.Future[str | None]:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str | None] = loop.create_future()

        def settle(value: str | None) -> None:
            if not answer.done():
                answer.set_result(value)

        def run() -> None:
            try:
                line: str | None = self._read_line(question)
            except (EOFError, OSError, ValueError):
                line = None
            with contextlib.suppress(RuntimeError):  # the loop may be closed by now
                loop.call_soon_threadsafe(settle, line)

        threading.Thread(target=run, name="a2c-confirm", daemon=True).start()
        return answer

    def _withdraw(self, answer: asyncio.Future[str | None]) -> None:
        self._orphan = answer

        def ignored(done: asyncio.Future[str | None]) -> None:
            late = None if done.cancelled() else done.result()
            self._say(f"[a2c-computer] answer {late!r} ignored: that call had already ended")

        answer.add_done_callback(ignored)

    async def __call__(self, request: ConfirmRequest) -> bool:
        if self._can_ask is not None and not self._can_ask():
            if self._fallback is None:
                raise CannotAsk("stdin is not the foreground terminal (--confirm ask)")
            logger.warning(
                "cannot ask about tool %s: stdin is not the foreground terminal (running in "
                "the background?); %s it as the non-interactive policy says",
                request.exposed_name,
                "running" if self._fallback else "declining",
            )
            return self._fallback
        async with self._lock:
            orphan = self._orphan
            if orphan is not None:
                # An earlier question was withdrawn; its pending line belongs to it (and
                # is reported as ignored the moment it is typed, see _withdraw).
                await asyncio.shield(orphan)
                self._orphan = None
            question = (
                f"Run tool {request.exposed_name} ({request.mcp_server}) for agent "
                f"{request.agent} with {request.arguments}? [y/N] "
            )
            answer = self._read(question)
            try:
                line = await asyncio.shield(answer)
            except asyncio.CancelledError:
                self._withdraw(answer)
                self._say(
                    f"\n[a2c-computer] call {request.req_id} of tool {request.exposed_name} "
                    "was cancelled or timed out: question withdrawn (press Enter; the answer "
                    "is ignored)"
                )
                raise
            return line is not None and line.strip().lower() in ("y", "yes")


def needs_confirmation(meta: ToolMeta | None) -> bool:
    """Whether a call of a tool with this merged ``tool_meta`` is asked about first.

    Only ``auto_apply: true`` skips the question; anything else (absent, false) asks.
    """
    return meta is None or meta.auto_apply is not True
