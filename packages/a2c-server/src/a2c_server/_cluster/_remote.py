"""Outcomes of a call that was sent to a Computer on another node (multi-node mode).

Once a call is sent, the Computer may be running it: a registry outage after that point
must never be answered "try again" (503). The call waits for its answer; when something
else ends it (its timeout, its Computer leaving) after the registry was lost meanwhile,
the answer says the call may have run (``details.delivered: true``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, Protocol

from a2c_server._state._rules import Member

__all__ = ["MAY_HAVE_RUN", "RemoteWatch", "delivered_details", "may_have_run_note"]


class RemoteWatch(Protocol):
    """Multi-node: watches a Computer hosted by another node while a call to it is out."""

    def watch(self, sid: str) -> asyncio.Future[None]:
        """A future resolved when ``sid`` leaves the registry."""

    def release(self, future: asyncio.Future[None]) -> bool:
        """Stop watching; True when the registry was lost or reset meanwhile."""

    async def confirm_absent(self) -> None:
        """Raise ``StoreUnavailableError`` while a missing name may only be recovering."""

    async def hold(self, office_id: str, name: str, seconds: float) -> None:
        """Keep a Computer's name for its return for ``seconds`` (a graceful shutdown of
        the node under it): calls to it meanwhile are told to wait instead of 404."""

    async def held_for(self, office_id: str, name: str) -> float | None:
        """Seconds left of a name kept for its Computer's return, or None."""

    def unheard(self, sid: str) -> bool:
        """Whether ``sid``'s node is not known to listen (it may have died). No I/O."""

    async def follow(self, office_id: str, name: str, target: Member, wait: float) -> Member | None:
        """The session to route to once ``target``'s node is heard again, or its name's
        next holder (a Computer that reconnected elsewhere), or None when the name left."""


#: Appended to the message of an outcome whose call may have run although no answer came.
MAY_HAVE_RUN: Final = (
    "; the registry was lost while the call was out, so it may have run: "
    "retry only an idempotent call"
)

#: The same, when only the Computer's answer is missing (its timeout, it disconnected).
SENT_MAY_HAVE_RUN: Final = "; the call was sent, so it may have run: retry only an idempotent call"


def delivered_details(disrupted: bool, sent: bool = False) -> dict[str, Any]:
    """``details.delivered``: set when the Computer may have run a call nobody answered.

    ``sent``: a tool call was handed to its Computer (every outcome after that but its
    answer: a 408, the Computer leaving); ``disrupted``: the registry was lost while it
    was out (multi-node). A 503 ("try again") would be wrong for either: this field tells
    the caller that a retry may run the tool twice.
    """
    return {"delivered": True} if disrupted or sent else {}


def may_have_run_note(disrupted: bool, sent: bool) -> str:
    """What the message of such an outcome adds (empty when the call did not go out)."""
    return MAY_HAVE_RUN if disrupted else SENT_MAY_HAVE_RUN if sent else ""
