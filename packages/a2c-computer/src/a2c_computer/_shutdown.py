"""Graceful shutdown of a running Computer (SIGTERM/SIGINT in ``a2c-computer run``).

The Computer first leaves its office, so the Server routes it nothing new and the Agent is
told (``notify:leave_office``), while the connection stays up for the answers it still
owes. Tool calls in flight may finish for up to the grace period; the rest are cancelled
and answered as cancelled (``isError`` with ``meta.a2c_cancelled: true`` and
``meta.a2c_cancel_reason: "computer_shutdown"``, no error code), never left without an
answer. Then the caller disconnects and stops the MCP servers (``Computer.__aexit__``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Final

from a2c_protocol import CANCEL_REASON_COMPUTER_SHUTDOWN

from ._app import Computer

__all__ = ["drain"]

logger = logging.getLogger("a2c_computer.shutdown")

_POLL: Final = 0.05
#: After the last call finished: time for its answer to be queued before disconnecting.
_FLUSH: Final = 0.2
#: ``meta.a2c_cancel_reason`` of calls cut off by the end of the grace period (the protocol
#: only defines "agent_requested"; the reason is diagnostic, so an own value is allowed).
SHUTDOWN_CANCEL_REASON: Final = CANCEL_REASON_COMPUTER_SHUTDOWN


async def _settled(computer: Computer, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while computer.in_flight():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


async def drain(computer: Computer, grace: float) -> None:
    """Leave the office, let in-flight calls finish up to ``grace`` s, cancel the rest."""
    running = computer.in_flight()
    logger.info("shutting down: leaving the office; %d call(s) in flight, grace %g s",
                len(running), grace)  # fmt: skip
    if computer.link is not None:
        with contextlib.suppress(Exception):
            await computer.link.leave()
    if not await _settled(computer, grace):
        left = computer.in_flight()
        logger.warning("grace period over: cancelling %d unfinished call(s)", len(left))
        for req_id in left:
            computer.cancel(req_id, reason=SHUTDOWN_CANCEL_REASON)
        await _settled(computer, 5)
    await asyncio.sleep(_FLUSH)
    logger.info("drained")
