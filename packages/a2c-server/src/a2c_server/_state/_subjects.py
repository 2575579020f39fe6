"""How many sessions one identity (a token's subject) holds: the cap's rule and its count.

The rule (:func:`subject_refusal`) is pure; a :class:`SubjectCounts` keeps the count and
applies the rule in the same step as it adds a session, so two admissions of one subject
at once can never both pass the last free place. :class:`MemorySubjectCounts` counts one
node; with ``--redis`` the deployment counts together
(:class:`a2c_server._cluster._redis_subjects.RedisSubjectCounts`), or the cap would be per node.
"""

from __future__ import annotations

from typing import Protocol

from ._ratelimit import TOO_MANY_REQUESTS
from ._rules import Refusal

__all__ = ["MemorySubjectCounts", "SubjectCounts", "subject_refusal"]


def subject_refusal(held: int, cap: int, *, per_address: bool = False) -> Refusal | None:
    """Why one more session of a subject that already holds ``held`` is refused, or None
    (``per_address``: the count is the subject's from one client address)."""
    if held >= cap:
        where = " from one address" if per_address else ""
        return Refusal(
            code=TOO_MANY_REQUESTS,
            message=f"Too many connections: this identity may hold {cap}{where}",
        )
    return None


class SubjectCounts(Protocol):
    """The sessions each subject holds."""

    async def hold(self, subject: str, sid: str, cap: int) -> int:
        """How many sessions ``subject`` held; ``sid`` now counts too unless the rule refuses.

        Raises :class:`~a2c_server.StoreUnavailableError` when the count cannot be read.
        """
        ...

    async def release(self, sid: str) -> None:
        """``sid`` no longer counts (a no-op when it never did). Never raises."""
        ...


class MemorySubjectCounts:
    """A :class:`SubjectCounts` of one node."""

    def __init__(self) -> None:
        self._held: dict[str, int] = {}  # subject → sessions counted
        self._subject_of: dict[str, str] = {}  # sid → its subject

    async def hold(self, subject: str, sid: str, cap: int) -> int:
        held = self._held.get(subject, 0)
        if subject_refusal(held, cap) is None:
            self._held[subject] = held + 1
            self._subject_of[sid] = subject
        return held

    async def release(self, sid: str) -> None:
        subject = self._subject_of.pop(sid, None)
        if subject is None:
            return
        left = self._held[subject] - 1
        if left:
            self._held[subject] = left
        else:
            del self._held[subject]
