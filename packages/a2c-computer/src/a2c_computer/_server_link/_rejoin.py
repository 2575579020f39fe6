"""Back into the office after a transport loss: the wait while the Computer's name is held.

:class:`~a2c_computer._server_link._link.ComputerLink` reconnects with back-off and
re-joins; which refusals are waited out and which end the link is :mod:`._decisions`'s.
While the Computer's name is held, :class:`HeldName` keeps the log lines of the wait
around the core's ``HeldWait`` (its start, delays and budget).
"""

from __future__ import annotations

import logging
import time

from a2c_protocol._rejoin import HeldWait

__all__ = ["HeldName"]

logger = logging.getLogger("a2c_computer.link")


class HeldName:
    """The re-join schedule while the name is held (``_decisions``: it never gives up).

    One WARNING when it starts, one ERROR when the budget is spent (another client may
    hold the name for good), nothing per attempt in between.
    """

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.wait: HeldWait | None = None  # None until the name is first found held
        self._told_budget = False

    def next_delay(self, name: str, office: str, reason: str | None) -> float:
        now = time.monotonic()
        wait = self.wait
        if wait is None:
            wait = self.wait = HeldWait(now)
            logger.warning(
                "re-join of office %s refused (%s): the name may still be held by this "
                "Computer's session on a Server node that went away; trying again",
                office, reason,
            )  # fmt: skip
        elif not self._told_budget and wait.spent(self.budget, now):
            self._told_budget = True
            logger.error(
                "re-join of office %s as %s still refused after %.0f s (%s): another client "
                "may hold the name; still trying every few seconds (stop this Computer, or "
                "the other one, if that is meant)",
                office, name, wait.waited(now), reason,
            )  # fmt: skip
        return wait.next_delay()
