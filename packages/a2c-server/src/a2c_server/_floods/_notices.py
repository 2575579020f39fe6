"""Notices a client may send, coalesced per sender: the last one within an interval wins.

A Computer announces a change of its tools, desktop, config or skills with
``server:update_*``; the Server relays each as ``notify:update_*`` to the rest of the
office, and every member answers a tool-list notice by asking for the list again. Relayed
one for one, a Computer sending thousands a second stalls its whole office.
:class:`NoticeCoalescer` is the rule, with the clock passed in: per sender and notice
kind, the first notice after a quiet interval goes out at once (an honest Computer's
notice is not delayed), later ones within the interval are held, each replacing the one
held before, and the last is delivered when the interval ends. So an office hears at most
one notice per interval per sender and kind, and always the final state.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

__all__ = ["NoticeCoalescer"]


class _Slot:
    __slots__ = ("held", "sent_at")

    def __init__(self, sent_at: float) -> None:
        self.sent_at = sent_at
        self.held: Any = None


class NoticeCoalescer:
    """Per ``key`` (sender and notice kind), which notices go out now and which wait.

    :meth:`offer` answers ``None`` (send this notice now), or the time at which the adapter
    must call :meth:`due` (the notice is held; only the first held notice of an interval
    asks for a call, later ones answer ``-1.0`` and just replace it). ``interval`` 0 sends
    every notice at once.
    """

    __slots__ = ("_interval", "_slots")

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._slots: dict[Hashable, _Slot] = {}

    def offer(self, key: Hashable, notice: Any, now: float) -> float | None:
        """Whether ``notice`` for ``key`` goes out now (None), or when the held one is due."""
        slot = self._slots.get(key)
        if slot is None or (slot.held is None and now - slot.sent_at >= self._interval):
            if self._interval > 0:
                self._slots[key] = _Slot(now)
            return None
        first = slot.held is None
        slot.held = notice
        return slot.sent_at + self._interval if first else -1.0

    def due(self, key: Hashable, now: float) -> Any:
        """The notice held for ``key`` (to send now), or None; the next interval starts now."""
        slot = self._slots.get(key)
        if slot is None or slot.held is None:
            return None
        notice, slot.held, slot.sent_at = slot.held, None, now
        return notice

    def forget(self, owner: Any) -> None:
        """Drop every slot whose key is a tuple starting with ``owner`` (a sender gone)."""
        for key in [k for k in self._slots if isinstance(k, tuple) and k and k[0] == owner]:
            del self._slots[key]

    def prune(self, now: float) -> None:
        """Drop the slots of senders quiet for a whole interval (nothing held)."""
        stale = [k for k, s in self._slots.items()
                 if s.held is None and now - s.sent_at >= self._interval]  # fmt: skip
        for key in stale:
            del self._slots[key]

    def __len__(self) -> int:
        return len(self._slots)
