"""Outcomes of a call that was sent to a Computer on another node (multi-node mode).

Once a call is sent, the Computer may be running it: a registry outage after that point
must never be answered "try again" (503). The call waits for its answer; when something
else ends it (its timeout, its Computer leaving) after the registry was lost meanwhile,
the answer says the call may have run (``details.delivered: true``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, Protocol

__all__ = ["MAY_HAVE_RUN", "RemoteWatch", "delivered_details"]


class RemoteWatch(Protocol):
    """Multi-node: watches a Computer hosted by another node while a call to it is out."""

    def watch(self, sid: str) -> asyncio.Future[None]:
        """A future resolved when ``sid`` leaves the registry."""

    def release(self, future: asyncio.Future[None]) -> bool:
        """Stop watching; True when the registry was lost or reset meanwhile."""


#: Appended to the message of an outcome whose call may have run although no answer came.
MAY_HAVE_RUN: Final = (
    "; the registry was lost while the call was out, so it may have run: "
    "retry only an idempotent call"
)


def delivered_details(disrupted: bool) -> dict[str, Any]:
    """``details.delivered``: set when the Computer may have run a call nobody answered.

    The call was sent before the registry was lost, so a 503 ("try again") would be
    wrong: this field tells the caller that a retry may run the tool twice.
    """
    return {"delivered": True} if disrupted else {}
