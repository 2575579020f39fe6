"""When a tool call that never reached a Computer is sent again: the rules, no I/O.

A rolling restart of the Server nodes (docs/operations.md, "Rolling restart") refuses a
few calls in ways that prove they never reached a Computer; those are sent again by the
SDK, and so by ``a2c-agent call`` and the bridge, which call through it.

Rules:

* RS1 A call is sent again only when it provably never reached a Computer: it was not
  sent because the link was down (the agent was reconnecting, or the emit itself failed:
  :class:`ConnectionLostError` with ``may_have_run`` False), or the Server answered it
  with a flat error whose ``details.delivered`` is ``false`` (a node draining for
  shutdown, a registry that is away, a Computer whose name is kept for its return).
  Anything that may have reached a Computer is never sent again: a connection lost after
  the send, a timeout, ``delivered: true`` or no ``delivered`` at all.
* RS2 What the next try waits for: after a link that was down, or ``reason:
  server_shutdown`` (the node under the agent is going away: asking it again is
  pointless), the agent's next connection, back in its office; after any other
  ``delivered: false``, a short pause (:func:`resend_delays`: 0.1 s, doubling to 1 s)
  on the same link.
* RS3 Every try fits in the call's own timeout, counted from the first refusal: the next
  try is sent with the time left as its timeout, and when none is left the call ends with
  :class:`~a2c_agent.CallNotSentError`, naming the last cause.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterator
from typing import Final

from a2c_agent._exceptions import AgentConnectionError, ConnectionLostError
from a2c_protocol import RemoteError

__all__ = ["RESENT", "Resends", "Wait", "resend_delays", "resend_wait"]

#: The errors :func:`resend_wait` may answer for (the except clause of the call path).
RESENT: Final = (AgentConnectionError, RemoteError)
#: ``details.reason`` of a node that refuses calls because it is shutting down.
_SHUTDOWN: Final = "server_shutdown"
_MAX_DELAY: Final = 1.0


class Wait(enum.Enum):
    """What a call that may be sent again waits for first (RS2)."""

    #: The agent's next connection, back in its office (the link was down, or its
    #: Server is shutting down).
    NEXT_LINK = "next_link"
    #: A short pause, then the same link.
    PAUSE = "pause"


def resend_wait(exc: BaseException) -> Wait | None:
    """RS1/RS2: what ``exc``'s call waits for before it is sent again, or None when it
    must not be sent again (it may have reached a Computer, or waiting cannot help)."""
    if isinstance(exc, RemoteError):
        details = exc.details
        if not isinstance(details, dict) or details.get("delivered") is not False:
            return None
        return Wait.NEXT_LINK if details.get("reason") == _SHUTDOWN else Wait.PAUSE
    if isinstance(exc, ConnectionLostError):
        return None if exc.may_have_run else Wait.NEXT_LINK
    if isinstance(exc, AgentConnectionError):
        return Wait.NEXT_LINK  # refused before sending: the agent is reconnecting
    return None


def resend_delays() -> Iterator[float]:
    """RS2: the pauses before each try on the same link: 0.1, 0.2, 0.4, 0.8, 1, 1, ... s."""
    return itertools.chain((0.1, 0.2, 0.4, 0.8), itertools.repeat(_MAX_DELAY))


class Resends:
    """RS3 for one call: its deadline, the pauses still to come, the tries so far. No clock
    of its own: callers pass ``now`` (the loop's time), so the rule is tested without
    waiting."""

    __slots__ = ("_delays", "deadline", "timeout", "tries")

    def __init__(self, now: float, timeout: float) -> None:
        self.timeout = timeout
        self.deadline = now + timeout
        self.tries = 1  # the first one, refused
        self._delays = resend_delays()

    def left(self, now: float) -> float:
        """Seconds left of the call's timeout (0 when spent)."""
        return max(0.0, self.deadline - now)

    def pause(self, now: float) -> float:
        """The next pause on the same link, never past the deadline."""
        return min(next(self._delays), self.left(now))
