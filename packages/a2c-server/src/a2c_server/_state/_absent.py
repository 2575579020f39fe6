"""What an Agent is told when the Computer it named is not in its office (rule R3's 404).

Rules:

* A1 The answer stays ``404`` with ``details.computer_name``; only its message says more.
* A2 It names only what the caller may see anyway (``server:list_room`` shows it): its own
  office and that office's Computers. Nothing about other offices, so a name online
  elsewhere and a name nobody holds still get the same answer (R3).
* A3 When the office has Computers, it lists them (at most :data:`MAX_LISTED`, then how many
  more) and suggests the closest name when one is close (a typo of a Computer's name).
* A4 When the office has no Computer, it says so; when the office was empty as the caller
  joined it (so its join created it), it says that too: the usual cause is a misspelt
  office name, and an office exists from its first join.
* A5 :class:`NewOffices` remembers, per Agent session of this node, the office its join
  created, until that session leaves or disconnects.
* A6 A Computer whose name is kept for its return (its node shut down gracefully under it
  and it has not joined again yet, multi-node) is no 404: the answer is a ``503`` with
  ``details.reason: "computer_returning"`` and ``delivered: false`` (the request was not
  sent; the Agent SDK waits and sends it again), at most for the rest of the hold.
* A7 The hold lasts :func:`return_hold` seconds: ``--node-ttl``, but never less than
  :data:`MIN_RETURN_HOLD`, since a Computer whose first reconnects fail (its node still
  restarting, a balancer still skipping it) backs off up to 10 s between tries; a hold
  shorter than that turned its return into a 404 on a busy machine.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

from a2c_protocol import ErrorCode, Role

from ._rules import Member, Refusal

__all__ = [
    "MAX_LISTED",
    "MIN_RETURN_HOLD",
    "RETURNING",
    "NewOffices",
    "absent_computer",
    "return_hold",
    "returning_computer",
]

#: How many of the office's Computers the message names.
MAX_LISTED: Final = 10
#: ``details.reason`` of a call to a Computer whose name is kept for its return (A6).
RETURNING: Final = "computer_returning"
#: The shortest hold of a returning Computer's name (A7): two of its longest reconnect waits.
MIN_RETURN_HOLD: Final = 20.0
#: The flat code of A6: "try again", as for a registry that is away (never a 404).
_UNAVAILABLE: Final = 503


def return_hold(node_ttl: float) -> float:
    """A7: how long a Computer's name is kept for its return after a graceful shutdown."""
    return max(node_ttl, MIN_RETURN_HOLD)


def returning_computer(computer: str, seconds: float) -> Refusal:
    """A6: the answer for ``computer``, whose name is kept for its return ``seconds`` more."""
    return Refusal(
        code=_UNAVAILABLE,
        message=f"Computer {computer!r} is reconnecting (its Server node shut down; its name "
        f"is kept for its return for {seconds:.1f} s more): the request was not sent, "
        "try again in a moment",
        details={"computer_name": computer, "reason": RETURNING, "delivered": False},
    )


def absent_computer(
    computer: str, office_id: str, members: Iterable[Member], *, created_by_caller: bool
) -> Refusal:
    """The 404 for ``computer``, not in ``office_id`` (whose ``members`` are given)."""
    names = sorted(
        m.name for m in members if m.role is Role.COMPUTER and m.name and m.name != computer
    )
    message = f"Computer {computer!r} is not in office {office_id!r}"
    if names:
        listed = ", ".join(names[:MAX_LISTED])
        if len(names) > MAX_LISTED:
            listed += f" and {len(names) - MAX_LISTED} more"
        message += f" (its Computers: {listed})"
        close = difflib.get_close_matches(computer, names, n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
    elif created_by_caller:
        message += (
            ": the office has no Computer, and it was empty when you joined it (your join "
            "created it): is the office name right?"
        )
    else:
        message += ": the office has no Computer right now"
    return Refusal(code=ErrorCode.NOT_FOUND, message=message, details={"computer_name": computer})


class NewOffices:
    """A5: the office each Agent session's join created (sid -> office id)."""

    def __init__(self) -> None:
        self._created: dict[str, str] = {}

    def joined(self, sid: str, office_id: str, *, alone: bool) -> None:
        """``sid`` joined ``office_id``; ``alone``: nobody else was in it then."""
        if alone:
            self._created[sid] = office_id
        else:
            self._created.pop(sid, None)

    def created(self, sid: str, office_id: str) -> bool:
        return self._created.get(sid) == office_id

    def forget(self, sid: str) -> None:
        self._created.pop(sid, None)
