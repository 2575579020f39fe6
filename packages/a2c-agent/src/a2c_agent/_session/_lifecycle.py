"""The agent's connection lifecycle as one transition table (no I/O).

Rules:

* An agent is opened once: ``IDLE → CONNECTING → CONNECTED``; a failed first connect goes
  straight to ``CLOSED`` (the caller gets the exception; nothing retries it).
* A connection that drops while ``CONNECTED`` goes to ``RECONNECTING`` when reconnects are
  enabled, else to ``CLOSED``. ``RECONNECTING → CONNECTED`` after the transport is back and
  the office re-joined.
* A refusal carrying the Server's flat ErrorPayload (a version refusal 4008 / close 4900,
  a refused token 401, ...) seen while reconnecting ends the agent
  (``RECONNECTING → CLOSED``): such a refusal is never retried. So does a refused re-join
  that waiting cannot change, or one still refused after ``rejoin_budget``
  (:mod:`~a2c_agent._session._rejoin`); until then the agent stays ``RECONNECTING``.
* ``close`` is allowed from every state and is idempotent; ``CLOSED`` is final.
* Requests are allowed only while ``CONNECTED``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from enum import Enum
from typing import Final

from a2c_agent._exceptions import AgentConnectionError, AgentStateError
from a2c_agent._notify import Listeners

__all__ = ["AgentState", "Lifecycle", "Transition", "next_state", "require_connected"]

logger = logging.getLogger("a2c_agent")


class AgentState(Enum):
    """Where an :class:`~a2c_agent.AsyncAgent` is in its life."""

    IDLE = "idle"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    CLOSING = "closing"
    CLOSED = "closed"


class Transition(Enum):
    """What happened to the connection."""

    OPEN = "open"
    CONNECTED = "connected"
    CONNECT_FAILED = "connect_failed"
    LOST = "lost"
    GIVE_UP = "give_up"
    CLOSE = "close"
    CLOSED = "closed"


_S = AgentState
_T = Transition

_TABLE: Final[dict[tuple[AgentState, Transition], AgentState]] = {
    (_S.IDLE, _T.OPEN): _S.CONNECTING,
    (_S.CONNECTING, _T.CONNECTED): _S.CONNECTED,
    (_S.CONNECTING, _T.CONNECT_FAILED): _S.CLOSED,
    (_S.CONNECTED, _T.LOST): _S.RECONNECTING,
    (_S.RECONNECTING, _T.CONNECTED): _S.CONNECTED,
    (_S.RECONNECTING, _T.GIVE_UP): _S.CLOSED,
    # A loss reported again while already reconnecting changes nothing.
    (_S.RECONNECTING, _T.LOST): _S.RECONNECTING,
    (_S.IDLE, _T.CLOSE): _S.CLOSED,
    (_S.CONNECTING, _T.CLOSE): _S.CLOSING,
    (_S.CONNECTED, _T.CLOSE): _S.CLOSING,
    (_S.RECONNECTING, _T.CLOSE): _S.CLOSING,
    (_S.CLOSING, _T.CLOSE): _S.CLOSING,
    (_S.CLOSING, _T.CLOSED): _S.CLOSED,
    # While closing, the transport's own disconnect report is expected and harmless.
    (_S.CLOSING, _T.LOST): _S.CLOSING,
    (_S.CLOSING, _T.CONNECTED): _S.CLOSING,
    (_S.CLOSING, _T.CONNECT_FAILED): _S.CLOSING,
    (_S.CLOSING, _T.GIVE_UP): _S.CLOSING,
    (_S.CLOSED, _T.CLOSE): _S.CLOSED,
    (_S.CLOSED, _T.CLOSED): _S.CLOSED,
    (_S.CLOSED, _T.LOST): _S.CLOSED,
}


def next_state(state: AgentState, transition: Transition, *, reconnect: bool = True) -> AgentState:
    """The state after ``transition``; raises :class:`AgentStateError` for an illegal move.

    ``reconnect=False`` turns a lost connection into the end of the agent.
    """
    if transition is Transition.LOST and state is AgentState.CONNECTED and not reconnect:
        return AgentState.CLOSED
    try:
        return _TABLE[(state, transition)]
    except KeyError:
        if state is AgentState.CLOSED:
            raise AgentStateError("the agent is closed; create a new one") from None
        raise AgentStateError(
            f"cannot {transition.value} while the agent is {state.value}"
        ) from None


def require_connected(state: AgentState, why: str | None = None) -> None:
    """Raise unless requests may be sent in ``state``; ``why`` is what a reconnecting
    agent waits for (the connection, or its name in the office)."""
    if state is AgentState.CONNECTED:
        return
    if state is AgentState.RECONNECTING:
        raise AgentConnectionError(
            f"the agent is reconnecting: {why or 'the connection to the Server is down'}"
        )
    if state is AgentState.IDLE:
        raise AgentStateError("the agent is not connected; use 'async with AsyncAgent(...)'")
    raise AgentStateError(f"the agent is {state.value}; no requests can be sent")


class Lifecycle:
    """The one owner of an agent's state: it moves by the table above, counts the links
    (each new ``CONNECTED``), wakes those waiting for a change and tells the listeners."""

    __slots__ = ("_listeners", "_name", "_reconnect", "_why_not", "links", "state", "waiters")

    def __init__(
        self,
        name: str,
        *,
        reconnect: bool,
        listeners: Listeners,
        why_not: Callable[[], str | None],
    ) -> None:
        self.state = AgentState.IDLE
        #: How many times the agent became CONNECTED: a new number is a new link.
        self.links = 0
        self.waiters: list[asyncio.Future[None]] = []
        self._name, self._reconnect = name, reconnect
        self._listeners, self._why_not = listeners, why_not

    def now(self) -> AgentState:
        # A call, so type checkers do not carry a narrowed state across awaits.
        return self.state

    def require_connected(self) -> None:
        if self.state is not AgentState.CONNECTED:  # the reason only when it is said
            require_connected(self.state, self._why_not())

    def move(self, transition: Transition) -> None:
        old = self.state
        new = next_state(old, transition, reconnect=self._reconnect)
        if new is not old:
            self.state = new
            if new is AgentState.CONNECTED:
                self.links += 1
            logger.debug("agent %s: %s -> %s", self._name, old.value, new.value)
            waiters, self.waiters = self.waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._listeners.fire(old, new)

    def change(self) -> asyncio.Future[None]:
        """A future resolved at the next change of :attr:`state`."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        return waiter
