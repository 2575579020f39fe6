"""Pending input requests on a Computer: whose they are and how long they live.

Pure (no clock, no randomness, no I/O): the Computer passes ``now`` and the state token it
made, and performs the effects the answers call for. Rules:

1. A state is bound to the call that was asked: the Agent's name, the office, the Computer,
   the tool name (as the Computer received it) and the digest of the call's ``params``
   (:func:`params_digest`). A retry is accepted only when all five are equal.
2. A state is used once: an accepted claim removes it (a new round gets a new state);
   :meth:`PendingInputs.peek` reads it without using it (the caller's answers may still
   be refused, and the state then stays for a corrected retry).
3. A claim that does not match is refused and leaves the state to its caller (so a wrong
   caller cannot spoil it); the refusal names what differed, except whose the state is.
4. A state lives ``ttl`` seconds from the answer that issued it. :meth:`PendingInputs.expire`
   hands back the lapsed ones for cancelling; a claim on a lapsed state is refused as
   *expired* (the latest ``remember`` lapsed states are remembered), on a state never
   issued, or already used, as *unknown*.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Generic, Literal, TypeVar

import attrs

__all__ = ["InputBinding", "PendingInputs", "StateRefusal", "params_digest"]

T = TypeVar("T")

RefusalReason = Literal["input_state_unknown", "input_state_expired", "input_state_mismatch"]
# Each field of InputBinding (rule 1), as a mismatch names it.
_SHOWN: Final = {"agent": "Agent", "office": "office", "computer": "Computer", "tool": "tool",
                 "params_digest": "params"}  # fmt: skip


def params_digest(params: object) -> str:
    """A stable digest of a call's params (canonical JSON: sorted keys, no spaces)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@attrs.frozen(kw_only=True)
class InputBinding:
    """The call an input request belongs to (rule 1)."""

    agent: str
    office: str | None
    computer: str
    tool: str
    params_digest: str


@attrs.frozen(kw_only=True)
class StateRefusal:
    """Why a retry's state was refused; ``reason`` goes to ``details.reason``."""

    reason: RefusalReason
    message: str


@attrs.define
class _Entry(Generic[T]):
    binding: InputBinding
    item: T
    deadline: float


class PendingInputs(Generic[T]):
    """State token → the pending item (whatever the Computer must resume) and its binding."""

    def __init__(self, ttl: float, *, remember: int = 1024) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.ttl = ttl
        self._remember = remember
        self._entries: dict[str, _Entry[T]] = {}
        self._lapsed: OrderedDict[str, None] = OrderedDict()  # the latest lapsed states

    def __len__(self) -> int:
        return len(self._entries)

    def open(self, state: str, binding: InputBinding, item: T, now: float) -> float:
        """Keep ``item`` under ``state`` until its deadline (returned)."""
        if state in self._entries or state in self._lapsed:
            raise ValueError("a state token must be new")
        deadline = now + self.ttl
        self._entries[state] = _Entry(binding, item, deadline)
        return deadline

    def claim(self, state: str, binding: InputBinding, now: float) -> T | StateRefusal:
        """The item of ``state`` for the caller ``binding`` (removed), or why not."""
        item = self.peek(state, binding, now)
        if not isinstance(item, StateRefusal):
            del self._entries[state]
        return item

    def peek(self, state: str, binding: InputBinding, now: float) -> T | StateRefusal:
        """Like :meth:`claim`, but the state stays (its answers may still be refused)."""
        entry = self._entries.get(state)
        if entry is None or entry.deadline <= now:
            if entry is not None or state in self._lapsed:
                return StateRefusal(
                    reason="input_state_expired",
                    message=f"the input request expired (it waits {self.ttl:g} s at most) "
                    "and the tool call was cancelled: call the tool again",
                )
            return StateRefusal(
                reason="input_state_unknown",
                message="unknown request state: it was never issued here, or already used",
            )
        differing = [
            shown for field, shown in _SHOWN.items()
            if getattr(entry.binding, field) != getattr(binding, field)
        ]  # fmt: skip
        if differing:
            return StateRefusal(
                reason="input_state_mismatch",
                message="the request state belongs to another call (different "
                + ", ".join(differing) + ")",
            )  # fmt: skip
        return entry.item

    def take(self, state: str) -> None:
        """Remove ``state`` after a :meth:`peek` that handed out its item."""
        self._entries.pop(state, None)

    def expire(self, now: float) -> list[tuple[str, InputBinding, T]]:
        """Remove and return every state past its deadline; forget old lapsed ones."""
        lapsed = [(s, e) for s, e in self._entries.items() if e.deadline <= now]
        for state, _ in lapsed:
            del self._entries[state]
            self._lapsed[state] = None
        while len(self._lapsed) > self._remember:
            self._lapsed.popitem(last=False)
        return [(state, entry.binding, entry.item) for state, entry in lapsed]

    def next_deadline(self) -> float | None:
        """When :meth:`expire` next has something to do (None: nothing pending)."""
        return min((e.deadline for e in self._entries.values()), default=None)

    def drop(self, which: Callable[[InputBinding], bool]) -> list[tuple[str, InputBinding, T]]:
        """Remove and return the states whose binding ``which`` selects (an Agent left)."""
        chosen = [(s, e) for s, e in self._entries.items() if which(e.binding)]
        for state, _ in chosen:
            del self._entries[state]
        return [(state, entry.binding, entry.item) for state, entry in chosen]

    def items(self) -> list[tuple[str, InputBinding, Any]]:
        """Every pending state (for status views and shutdown)."""
        return [(s, e.binding, e.item) for s, e in self._entries.items()]
