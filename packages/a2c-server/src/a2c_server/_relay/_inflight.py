"""The tool calls this node is relaying, per Agent, so the Server can cancel them for it.

Rule A1 (ours): when an Agent leaves its office or disconnects (a crash
included) while ``client:tool_call`` requests of its are still waiting for their
Computers, the Server sends each of those Computers ``notify:tool_call_cancel`` for the
call, with the extra key ``a2c_cancel_reason: "agent_gone"`` (older peers ignore unknown
keys), so no tool keeps running for an Agent that can no longer read the answer.

The node that relays a call is the node the Agent is connected to, and it sees that
Agent's leave and disconnect first hand: the registry is per node and never shared.
Each call is handed out for cancelling at most once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from a2c_protocol import A2C_CANCEL_REASON, CANCEL_REASON_AGENT_GONE

__all__ = ["InFlightCall", "InFlightCalls", "cancel_notice"]


class InFlightCall(NamedTuple):
    """One relayed ``client:tool_call``: who asked, and the Computer session running it.

    A named tuple: built on every relayed call, where an attrs class costs several times more.
    """

    req_id: str
    agent: str
    computer: str
    computer_sid: str


class InFlightCalls:
    """Agent sid → its relayed tool calls still waiting for an answer."""

    def __init__(self) -> None:
        self._calls: dict[str, dict[str, InFlightCall]] = {}

    def add(self, agent_sid: str, call: InFlightCall) -> None:
        """Register ``call`` while its answer is awaited (:meth:`remove` when it ends)."""
        mine = self._calls.get(agent_sid)
        if mine is None:
            self._calls[agent_sid] = {call.req_id: call}
        else:
            mine[call.req_id] = call

    def remove(self, agent_sid: str, call: InFlightCall) -> None:
        """Forget ``call`` unless it was handed out or replaced meanwhile."""
        mine = self._calls.get(agent_sid)
        if mine is not None and mine.get(call.req_id) is call:
            del mine[call.req_id]
            if not mine:
                del self._calls[agent_sid]

    @contextlib.contextmanager
    def tracking(self, agent_sid: str, call: InFlightCall) -> Iterator[None]:
        """Register ``call`` for the duration of the block (the wait for its answer)."""
        self.add(agent_sid, call)
        try:
            yield
        finally:
            self.remove(agent_sid, call)

    def abandon(self, agent_sid: str) -> list[InFlightCall]:
        """The calls of ``agent_sid`` to cancel now; each is returned only once."""
        return list(self._calls.pop(agent_sid, {}).values())

    def settle(self, agent_sid: str, req_id: str) -> None:
        """Forget ``req_id`` of ``agent_sid`` (its Agent cancelled it itself)."""
        mine = self._calls.get(agent_sid)
        if mine is not None and mine.pop(req_id, None) is not None and not mine:
            del self._calls[agent_sid]

    def busy(self, sid: str) -> bool:
        """Whether ``sid`` has a tool call in flight, as its Agent or as its Computer.

        A scan: asked only while a session's token expiry waits for its calls to end.
        """
        if sid in self._calls:
            return True
        return any(c.computer_sid == sid for calls in self._calls.values() for c in calls.values())

    def __len__(self) -> int:
        return sum(len(calls) for calls in self._calls.values())


def cancel_notice(call: InFlightCall) -> dict[str, Any]:
    """The ``notify:tool_call_cancel`` payload the Server sends on an absent Agent's behalf."""
    return {"agent": call.agent, "req_id": call.req_id, A2C_CANCEL_REASON: CANCEL_REASON_AGENT_GONE}
