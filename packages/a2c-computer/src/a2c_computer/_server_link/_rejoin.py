"""Re-joining while the Computer's name is held (issue 48): the schedule and what it logs.

The decision that a refusal is worth waiting out is :mod:`._decisions`'s; this keeps the
time, the delays (``a2c_protocol.rejoin_delays``) and the log lines of one wait.
"""

from __future__ import annotations

import logging
import time

from a2c_protocol import rejoin_delays

__all__ = ["HeldName"]

logger = logging.getLogger("a2c_computer.link")


class HeldName:
    """The re-join schedule while the name is held (``_decisions``: it never gives up).

    One WARNING when it starts, one ERROR when the budget is spent (another client may
    hold the name for good), nothing per attempt in between.
    """

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.since: float | None = None
        self._delays = rejoin_delays()
        self._told_budget = False

    def waited(self) -> float:
        return 0.0 if self.since is None else time.monotonic() - self.since

    def next_delay(self, name: str, office: str, reason: str | None) -> float:
        if self.since is None:
            self.since = time.monotonic()
            logger.warning(
                "re-join of office %s refused (%s): the name may still be held by this "
                "Computer's session on a Server node that went away; trying again",
                office, reason,
            )  # fmt: skip
        elif not self._told_budget and self.waited() > self.budget:
            self._told_budget = True
            logger.error(
                "re-join of office %s as %s still refused after %.0f s (%s): another client "
                "may hold the name; still trying every few seconds (stop this Computer, or "
                "the other one, if that is meant)",
                office, name, self.waited(), reason,
            )  # fmt: skip
        return next(self._delays)
