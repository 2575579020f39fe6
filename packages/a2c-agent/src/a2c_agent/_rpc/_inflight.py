"""The Agent's tool calls in flight, and leaving without abandoning them.

Rules:

* D1 every ``call_tool`` is registered from the moment it is sent until it ends;
* D2 each call is cancelled (``server:tool_call_cancel``) at most once, whoever notices
  first: its own task being cancelled, its timeout, or the agent leaving;
* D3 leaving (:meth:`AsyncAgent.close`, ``async with`` unwinding for any reason,
  :meth:`AsyncAgent.leave_office`) first sends the cancel of every call still in flight
  while the agent is still in its office, then does one acknowledged round trip (the
  leave itself) so the Server has handled those cancels before the connection goes:
  the Server handles each event of a connection as it arrives, so a cancel that was
  still in the transport when the disconnect came would find the Agent gone (4103) and
  the tool would run on. The Server cancels what is left itself (reason ``agent_gone``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

__all__ = ["TOOL_CALL_GRACE", "InFlightCalls", "depart"]

TOOL_CALL_GRACE: Final = 8.0
"""Seconds the Agent waits for a tool call's answer beyond its ``timeout`` (the default).

The timeout contract (docs/agent.md "Timeouts"): the Server answers a forwarded call by
``timeout`` + its ``--tool-call-buffer`` (5 s by default) at the latest, with a 408 or a
500 that says whether the call may have run. The Agent must still be listening then, or
that answer is lost and the caller only learns "no answer". The margin (3 s) is far above
the measured delay of that answer (milliseconds on one host, tens across a loaded pair of
nodes): it absorbs event-loop stalls, not the network.
"""


class _Tracking:
    """The ``with`` block of :meth:`InFlightCalls.tracking` (a class: it runs on every call,
    and a generator-based context manager costs several times more)."""

    __slots__ = ("_calls", "_req_id")

    def __init__(self, calls: dict[str, bool], req_id: str) -> None:
        self._calls = calls
        self._req_id = req_id

    def __enter__(self) -> None:
        self._calls[self._req_id] = False

    def __exit__(self, *exc: object) -> None:
        self._calls.pop(self._req_id, None)


class InFlightCalls:
    """``req_id`` of every tool call in flight, and whether its cancel went out (D1, D2)."""

    def __init__(self) -> None:
        self._calls: dict[str, bool] = {}  # req_id → its cancel was sent
        self._unflushed = False

    def tracking(self, req_id: str) -> _Tracking:
        """Register ``req_id`` while the block waits for its answer."""
        return _Tracking(self._calls, req_id)

    def claim(self, req_id: str) -> bool:
        """True when ``req_id``'s cancel should be sent now (once per call, D2).

        An id not registered here (a call of another agent, one that already ended) is
        claimed too: :meth:`AsyncAgent.cancel_tool_call` may name any id.
        """
        if self._calls.get(req_id) is True:
            return False
        if req_id in self._calls:
            self._calls[req_id] = True
        self._unflushed = True
        return True

    def claim_all(self) -> list[str]:
        """The calls whose cancel was not sent yet, now claimed (D3)."""
        ids = [req_id for req_id, sent in self._calls.items() if not sent]
        for req_id in ids:
            self.claim(req_id)
        return ids

    def take_unflushed(self) -> bool:
        """Whether a cancel went out since the last acknowledged round trip; resets it."""
        unflushed, self._unflushed = self._unflushed, False
        return unflushed

    def __len__(self) -> int:
        return len(self._calls)


async def depart(
    calls: InFlightCalls,
    send_cancel: Callable[[str], Awaitable[None]],
    round_trip: Callable[[], Awaitable[None]],
) -> None:
    """D3: cancel every call still in flight, then make sure the Server has seen it.

    ``round_trip`` is the acknowledged request that ends the stay (the leave); it is only
    needed (and only made) when a cancel went out since the last one.
    """
    for req_id in calls.claim_all():
        await send_cancel(req_id)
    if calls.take_unflushed():
        await round_trip()
