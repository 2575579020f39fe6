"""Sending again a tool call that never reached a Computer: the waits of :mod:`._resend`.

Only the error path of a call comes here (the plain call's ``except`` clause), so a call
that goes through pays nothing for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from a2c_agent._exceptions import CallNotSentError
from a2c_agent._session._lifecycle import AgentState, Lifecycle

from ._resend import RESENT, Resends, Wait, resend_wait

__all__ = ["resend", "until_sendable"]

logger = logging.getLogger("a2c_agent")

T = TypeVar("T")


async def resend(
    life: Lifecycle,
    exc: BaseException,
    attempt: Callable[..., Awaitable[T]],
    computer: str,
    tool_name: str,
    timeout: float,
) -> T:
    """Send a refused call again (``attempt(timeout=...)``) within its timeout (RS1-RS3);
    raises :class:`CallNotSentError` when the time runs out, the error itself when it
    may have reached a Computer."""
    loop = asyncio.get_running_loop()
    resends = Resends(loop.time(), timeout)
    link = life.links  # the link that refused it
    while True:
        wait = resend_wait(exc)
        if wait is None:
            raise exc
        if wait is Wait.PAUSE:
            await asyncio.sleep(resends.pause(loop.time()))
            ready = True
        else:
            ready = await until_sendable(life, link, resends.left(loop.time()))
        left = resends.left(loop.time())
        if not ready or left <= 0:
            raise CallNotSentError(computer, tool_name, timeout, resends.tries, exc) from exc
        resends.tries += 1
        logger.debug("tool %r on %r sent again (try %d, %.1f s left): not delivered: %s",
                     tool_name, computer, resends.tries, left, exc)  # fmt: skip
        link = life.links
        try:
            return await attempt(timeout=left)
        except RESENT as again:
            exc = again


async def until_sendable(life: Lifecycle, link: int, timeout: float) -> bool:
    """Wait until the agent of ``life`` is connected and in its office on a link newer than ``link``
    (the one that refused the call, or was down: every way back to CONNECTED is a new
    link, and an emit that failed while the state still said CONNECTED must not be tried
    again at once); False after ``timeout``. Raises the state error when the agent closes
    meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        state = life.state
        if state is AgentState.CONNECTED and life.links > link:
            return True
        if state is not AgentState.CONNECTED and state is not AgentState.RECONNECTING:
            life.require_connected()  # closed or closing: raises
        left = deadline - loop.time()
        if left <= 0:
            return False
        change = life.change()
        await asyncio.wait((change,), timeout=left)
        change.cancel()
