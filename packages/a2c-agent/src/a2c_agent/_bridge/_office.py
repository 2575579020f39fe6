"""The bridge's hold on its office: one :class:`~a2c_agent.AsyncAgent`, kept connected.

Rules:

* the first connect is retried with backoff (1 s doubling to 30 s) while the Server cannot
  be reached or refuses the join (another Agent may hold the office): a desktop host starts
  the bridge whenever it likes, the Server may come later;
* once in, the Agent's own reconnect takes over (re-join, waiting out a name or seat still
  held by its session on a Server node that died, tool refresh); if the Agent closes
  anyway, the bridge starts over with a new one;
* a refusal of the connection itself (a bad token, a protocol version the Server does not
  accept) is not retried: it will not change until someone fixes the configuration;
* :attr:`Office.problem` is None while the Agent is in the office, else the cause in one
  sentence, which every tool call answers while it lasts;
* every change of the tool cache and of the connection calls ``on_tools``; a Computer
  entering or leaving and ``notify:update_desktop`` call ``on_resources``, and a
  Computer leaving calls ``on_left`` with its name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from a2c_agent._exceptions import JoinOfficeError
from a2c_agent._session._lifecycle import AgentState
from a2c_protocol import A2CError, Event, RemoteError
from a2c_protocol._rejoin import seat_held_refusal

if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent
    from a2c_agent._types import AgentNotification

__all__ = ["Office"]

logger = logging.getLogger("a2c_agent.bridge")

_FIRST_DELAY = 1.0
_MAX_DELAY = 30.0
_RESOURCE_EVENTS = (
    Event.NOTIFY_ENTER_OFFICE,
    Event.NOTIFY_LEAVE_OFFICE,
    Event.NOTIFY_UPDATE_DESKTOP,
)


class Office:
    """Connects an Agent to ``office`` and keeps it there (see module rules)."""

    def __init__(
        self,
        make_agent: Callable[[], AsyncAgent],
        office: str,
        server_url: str,
        *,
        on_tools: Callable[[], None],
        on_resources: Callable[[], None],
        on_left: Callable[[str], None] | None = None,
        first_delay: float = _FIRST_DELAY,
        max_delay: float = _MAX_DELAY,
    ) -> None:
        self._make_agent = make_agent
        self.office = office
        self._server_url = server_url
        self._on_tools = on_tools
        self._on_resources = on_resources
        self._on_left = on_left
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._agent: AsyncAgent | None = None
        self._problem = f"not connected to {server_url} yet"
        # Set once the first connect-and-join has ended either way: a host that asks for
        # tools right after starting the bridge must not get an empty list for a race.
        self._first_try = asyncio.Event()

    async def first_try(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until the first connect-and-join has ended."""
        if not self._first_try.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._first_try.wait()

    @property
    def agent(self) -> AsyncAgent | None:
        """The Agent while it is in the office and connected, else None."""
        agent = self._agent
        if agent is None or agent.state is not AgentState.CONNECTED:
            return None
        return agent

    async def back(self, timeout: float) -> AsyncAgent | None:
        """The Agent once it is connected and in its office again, waiting at most
        ``timeout`` s while it reconnects (a Server node's restart costs it about a second);
        None when it is not back by then."""
        agent = self._agent
        if agent is None or agent.state is AgentState.CONNECTED:
            return agent
        changed = asyncio.Event()
        remove = agent.add_state_listener(lambda old, new: changed.set())
        try:
            async with asyncio.timeout(timeout):
                while agent.state is AgentState.RECONNECTING:
                    changed.clear()
                    await changed.wait()
        except TimeoutError:
            pass
        finally:
            remove()
        return self.agent if agent is self._agent else None  # CONNECTED, or None

    @property
    def problem(self) -> str | None:
        """Why the office cannot be used now (None when it can)."""
        agent = self._agent
        if agent is None:
            return self._problem
        if agent.state is AgentState.RECONNECTING:
            # Connected again is not enough: the Agent may wait for its name or seat.
            why = agent.reconnecting_reason or "the connection is down"
            return f"the connection to {self._server_url} was lost; reconnecting: {why}"
        if agent.state is not AgentState.CONNECTED:
            return self._problem
        return None

    async def run(self) -> None:
        """Connect, stay, start over when the Agent closes; returns only on a refusal."""
        delay = self._first_delay
        while True:
            agent = self._make_agent()
            try:
                await agent.open()
                await agent.join_office(self.office)
            except asyncio.CancelledError:  # the bridge stops while connecting
                await agent.close()
                raise
            except RemoteError as exc:
                await agent.close()
                self._problem = (
                    f"the Server {self._server_url} refused the connection: error {exc.code}: "
                    f"{exc.message} (not retried: fix the configuration and restart the bridge)"
                )
                logger.error("%s", self._problem)
                self._first_try.set()
                self._on_tools()
                return
            except (A2CError, OSError) as exc:
                await agent.close()
                self._problem = self._cause(exc)
                logger.warning("%s; retrying in %.0f s", self._problem, delay)
                self._first_try.set()
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_delay)
                continue
            delay = self._first_delay
            await self._stay(agent)

    def _cause(self, exc: BaseException) -> str:
        if not isinstance(exc, JoinOfficeError):
            return f"cannot reach office {self.office!r} on {self._server_url}: {exc}"
        cause = f"cannot join office {self.office!r} on {self._server_url}: {exc.reason}"
        if seat_held_refusal(exc.reason):
            cause += (
                " (an office seats one Agent: another Agent, bridge or `a2c-agent watch` "
                "holds it; this bridge joins once it is free)"
            )
        return cause

    async def _stay(self, agent: AsyncAgent) -> None:
        closed = asyncio.Event()

        def state_changed(old: AgentState, new: AgentState) -> None:
            if new is AgentState.CLOSED:
                closed.set()
            self._on_tools()

        def tools_changed(*_: Any) -> None:
            self._on_tools()

        def notified(notification: AgentNotification) -> None:
            computer = notification.computer
            left = notification.event is Event.NOTIFY_LEAVE_OFFICE
            if left and computer is not None and self._on_left is not None:
                self._on_left(computer)
            self._on_resources()

        agent.add_state_listener(state_changed)
        agent.add_tools_listener(tools_changed)
        agent.add_notification_listener(notified, *_RESOURCE_EVENTS)
        self._agent = agent
        self._first_try.set()
        logger.info("joined office %r on %s as %r", self.office, self._server_url, agent.name)
        self._on_tools()
        self._on_resources()
        try:
            if agent.state is not AgentState.CLOSED:
                await closed.wait()
            last = agent.last_error
            self._problem = f"the connection to {self._server_url} ended" + (
                f": {last}" if last is not None else ""
            )
            logger.warning("%s; connecting again", self._problem)
        finally:
            self._agent = None
            await agent.close()
            self._on_tools()
            self._on_resources()

    async def close(self) -> None:
        """Leave the office and disconnect (idempotent)."""
        agent = self._agent
        self._agent = None
        if agent is not None:
            await agent.close()
