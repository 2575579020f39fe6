"""Graceful shutdown: drain routed calls on SIGTERM/SIGINT before uvicorn closes sockets.

On the first signal the Server stops listening (existing connections stay up), tells
every session it is about to be cut (``announce``: the namespace's extension notice, so
our clients send nothing new on this connection), answers new ``client:*`` requests with
a flat 500 (``details.reason: "server_shutdown"``, ``delivered: false``), and lets the
routed calls already in flight finish for up to the grace period, and for at least
:data:`SETTLE` seconds after the notice: a request a client sent before the notice
reached it is read and answered (not sent, so safe to send again) instead of being lost
in a closing connection, where its client could not tell whether it ran. Calls still
waiting then are answered with the same flat error; then the HTTP requests still open
(long-polls, bodies never finished) are answered 503 and the long-polling sessions
closed (``after_drain``), and only then does uvicorn close the connections (clients see
a transport loss and reconnect, to another node if there is one) and run the lifespan
shutdown. A second signal skips the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any

import uvicorn

from a2c_server._observe._logs import log

__all__ = ["SETTLE", "Drain", "DrainingServer"]

_log = logging.getLogger("a2c_server.shutdown")

#: ``details.reason`` of the flat error a call gets when the Server stops under it.
SHUTDOWN_REASON = "server_shutdown"
#: The least time between the notice of a shutdown and the closing of the connections.
SETTLE = 0.5


class Drain:
    """Shared by the namespace (which tracks its routed calls) and the shutdown sequence."""

    def __init__(self) -> None:
        self.draining = False
        self._calls = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._expired: asyncio.Future[None] | None = None
        #: Tells the sessions they are about to be cut (set by the namespace), or None.
        self.announce: Callable[[], Awaitable[None]] | None = None

    @property
    def in_flight(self) -> int:
        return self._calls

    def expired(self) -> asyncio.Future[None]:
        """Resolved when the grace period is over: calls still waiting give up then."""
        if self._expired is None:
            self._expired = asyncio.get_running_loop().create_future()
        return self._expired

    def enter(self) -> None:
        """Count one routed call until :meth:`leave` (plain calls: the relay's hot path)."""
        self._calls += 1
        if self._calls == 1:
            self._idle.clear()

    def leave(self) -> None:
        self._calls -= 1
        if self._calls == 0:
            self._idle.set()

    @contextlib.contextmanager
    def tracking(self) -> Iterator[None]:
        """Count one routed call for as long as the block runs."""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    async def drain(self, grace: float) -> None:
        """Refuse new calls, wait up to ``grace`` s for the running ones, then expire them."""
        self.draining = True
        loop = asyncio.get_running_loop()
        settled = loop.time() + min(SETTLE, grace)
        log(_log, logging.INFO, "shutting down: draining routed calls",
            in_flight=self._calls, grace=grace)  # fmt: skip
        if self.announce is not None:
            try:
                await self.announce()
            except Exception as exc:  # a courtesy: the drain goes on without it
                log(_log, logging.WARNING, "shutdown notice not sent", reason=exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace)
        # Requests sent before the notice arrived are answered before the connections close.
        await asyncio.sleep(max(0.0, settled - loop.time()))
        left = self._calls
        expired = self.expired()
        if not expired.done():
            expired.set_result(None)
        if left:
            log(_log, logging.WARNING, "grace period over: answering unfinished calls with an "
                "error", unfinished=left)  # fmt: skip
            # The expired calls answer at once; give their acks a moment to leave.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), 5)
            await asyncio.sleep(0.2)
        log(_log, logging.INFO, "drained; closing connections")


class DrainingServer(uvicorn.Server):
    """``uvicorn.Server`` whose first SIGTERM/SIGINT drains before the usual shutdown."""

    def __init__(
        self, config: uvicorn.Config, *, drain: Drain, grace: float,
        after_drain: Callable[[], Awaitable[None]] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(config)
        self._drain = drain
        self._grace = grace
        self._after_drain = after_drain  # ends the requests still open (the app's)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining: asyncio.Task[None] | None = None

    async def startup(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._loop is None or self._draining is not None:
            # Not started yet, or a second signal: exit now (uvicorn's own behaviour). The
            # signal is not recorded for re-raising, so a signal-driven exit stays status 0.
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True
            return
        self._loop.call_soon_threadsafe(self._begin, sig)

    def _begin(self, sig: int) -> None:
        if self._draining is None:
            log(_log, logging.INFO, "signal received", signal=signal.Signals(sig).name)
            self._draining = asyncio.ensure_future(self._drain_then_exit())

    async def _drain_then_exit(self) -> None:
        try:
            for server in self.servers:
                server.close()  # stop listening; open connections stay
            await self._drain.drain(self._grace)
            if self._after_drain is not None:
                await self._after_drain()
        finally:
            self.should_exit = True
