"""Which tool calls a Server link is running, and how they end when they cannot be answered.

Rules:

* C1 a ``notify:tool_call_cancel`` cancels with reason ``agent_requested``, unless it
  carries our Server's extension key ``a2c_cancel_reason: "agent_gone"`` (the Server
  cancels for an Agent that left or disconnected); no other value is taken from the wire;
* C4 a ``notify:tool_call_cancel`` cancels only a call that came over this link from the
  Agent it names (the Server stamps that name; its own ``agent_gone`` cancel names the
  call's Agent too): another Agent's cancel, or one naming a call made locally, is ignored;
* C3 a ``notify:leave_office`` naming an Agent cancels the calls that Agent made over this
  link (reason ``agent_gone``): it covers what the Server cannot do itself (a Server node
  that died with the Agent's connection, a Server without rule A1); with ours the Server
  has usually cancelled them already, and the first reason stands;
* C2 when the link drops, every call that came over it is cancelled with reason
  ``server_gone``: the Server answers its Agent at once when a Computer disconnects, and
  the ack of the call belongs to the lost connection, so no reconnect can deliver it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from a2c_protocol import (
    A2C_CANCEL_REASON,
    CANCEL_REASON_AGENT_GONE,
    CANCEL_REASON_AGENT_REQUESTED,
    CANCEL_REASON_SERVER_GONE,
)

from ._port import CorePort

__all__ = ["LinkCalls", "notice_reason"]

logger = logging.getLogger("a2c_computer.link")


def notice_reason(data: Any) -> str:
    """C1: the cancel reason of a ``notify:tool_call_cancel`` payload."""
    reason = data.get(A2C_CANCEL_REASON) if isinstance(data, dict) else None
    if reason == CANCEL_REASON_AGENT_GONE:
        return CANCEL_REASON_AGENT_GONE
    return CANCEL_REASON_AGENT_REQUESTED


class LinkCalls:
    """The ``req_id`` of every tool call received over one link and still running."""

    def __init__(self, core: CorePort) -> None:
        self._core = core
        self._running: dict[str, str] = {}  # req_id → the calling Agent

    @contextlib.contextmanager
    def running(self, req_id: str, agent: str) -> Iterator[None]:
        self._running[req_id] = agent
        try:
            yield
        finally:
            self._running.pop(req_id, None)

    def caller(self, req_id: str) -> str | None:
        """C4: the Agent that made call ``req_id`` over this link, None if none did."""
        return self._running.get(req_id)

    def agent_left(self, agent: str) -> int:
        """C3: cancel the calls ``agent`` made over this link; returns how many."""
        mine = [req_id for req_id, caller in self._running.items() if caller == agent]
        cancelled = [r for r in mine if self._core.cancel(r, reason=CANCEL_REASON_AGENT_GONE)]
        if cancelled:
            logger.info(
                "agent %s left the office: cancelled its tool call(s) %s",
                agent, ", ".join(sorted(cancelled)),
            )  # fmt: skip
        return len(cancelled)

    def cancel_undeliverable(self, why: object) -> int:
        """C2: cancel every call of the lost link; returns how many were cancelled."""
        in_flight = set(self._core.in_flight())
        # A call already being cancelled (shutdown grace over, its Agent's cancel) keeps
        # that reason: core.cancel() refuses a second one.
        cancelled = [
            req_id
            for req_id in sorted(self._running)
            if req_id in in_flight and self._core.cancel(req_id, reason=CANCEL_REASON_SERVER_GONE)
        ]
        if cancelled:
            logger.warning(
                "lost the Server (%s): cancelled %d tool call(s) whose answers cannot be "
                "delivered any more: %s", why, len(cancelled), ", ".join(cancelled),
            )  # fmt: skip
        return len(cancelled)
