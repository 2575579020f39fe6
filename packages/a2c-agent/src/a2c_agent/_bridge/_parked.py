"""Calls of 2026-07-28 hosts waiting for the host's answers to input requests (pure).

A 2026-07-28 host cannot be asked in the middle of a call: the bridge answers the call with
an ``InputRequiredResult`` and the host calls again with ``inputResponses`` and the
``requestState`` it got. Meanwhile the office call waits, parked here. Rules:

* a parked call's ``requestState`` is a fresh random token (256 bits, URL-safe); a token is
  used once: claiming it takes the call out, and the next question parks it anew under a
  new token;
* a token is bound to the tool name and the arguments (a digest) of the call that was
  asked: a retry with others is refused and the call stays parked for its own host;
* a call waits at most ``ttl`` seconds for its host, then :meth:`ParkingLot.expired` hands
  it back to be given up; its token is then unknown, as is one never issued;
* at most ``capacity`` calls are parked at once (:meth:`ParkingLot.full`): past it, the
  bridge declines a call's requests rather than park it.
"""

from __future__ import annotations

import enum
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

import attrs

from a2c_protocol._input import params_digest

__all__ = ["Binding", "ParkingLot", "Refusal", "binding_of"]

T = TypeVar("T")


@attrs.frozen
class Binding:
    """What a token was issued for: the served tool name and a digest of the arguments."""

    tool: str
    digest: str


def binding_of(tool: str, arguments: Mapping[str, Any] | None) -> Binding:
    """The binding of a call of ``tool`` with ``arguments`` (key order does not matter;
    the digest is the one a Computer binds its own input states with)."""
    return Binding(tool, params_digest(dict(arguments or {})))


class Refusal(enum.Enum):
    """Why a token cannot be claimed."""

    #: never issued here, used already, or its call was given up (expired)
    UNKNOWN = "unknown"
    #: issued for another tool or other arguments
    MISMATCH = "mismatch"


@attrs.define
class _Slot(Generic[T]):
    item: T
    binding: Binding
    deadline: float


class ParkingLot(Generic[T]):
    """The parked calls, by token (see module rules)."""

    def __init__(
        self, *, ttl: float, capacity: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self._clock = clock
        self._slots: dict[str, _Slot[T]] = {}

    def __len__(self) -> int:
        return len(self._slots)

    def full(self) -> bool:
        """Whether no call may be parked now."""
        return len(self._slots) >= self.capacity

    def park(self, item: T, binding: Binding) -> str:
        """Park ``item`` and return its new token."""
        token = secrets.token_urlsafe(32)
        self._slots[token] = _Slot(item, binding, self._clock() + self.ttl)
        return token

    def claim(self, token: str, binding: Binding) -> T | Refusal:
        """Take the call parked under ``token`` out, when ``binding`` is the one it has."""
        slot = self._slots.get(token)
        if slot is None or slot.deadline <= self._clock():
            return Refusal.UNKNOWN
        if slot.binding != binding:
            return Refusal.MISMATCH
        del self._slots[token]
        return slot.item

    def expired(self) -> list[T]:
        """Take out and return the calls whose host did not answer in time."""
        now = self._clock()
        gone = [token for token, slot in self._slots.items() if slot.deadline <= now]
        return [self._slots.pop(token).item for token in gone]

    def take_all(self) -> list[T]:
        """Take out every parked call."""
        items = [slot.item for slot in self._slots.values()]
        self._slots.clear()
        return items

    def drop(self, item: T) -> None:
        """Forget ``item`` wherever it is parked (its call ended another way)."""
        for token in [t for t, slot in self._slots.items() if slot.item is item]:
            del self._slots[token]
