"""The Agent's protocol rules: answers in, typed values or errors out; no I/O.

Rules:

* An ack of a ``client:*`` or ``server:list_room`` request is one JSON value. If it is a
  flat ErrorPayload (top-level int ``code`` + str ``message``) it becomes the core's typed
  :class:`~a2c_protocol.RemoteError` (404, 403, 4103, 4104, 408, 400, 4014, 4015 …);
  otherwise it must decode into the response model, else :class:`InvalidResponseError`.
* An event newer than protocol 0.2.0 (``EVENTS[event].since``) that gets no answer in
  time or an empty ack raises :class:`EventUnsupportedError`: that is how a peer of an
  older PATCH level shows (spec delta, compatibility matrix).
* ``client:tool_call`` answers with a ``CallToolResult`` even for tool failures
  (``isError``); only protocol/routing failures arrive as an ErrorPayload.
* ``server:join_office`` / ``server:leave_office`` answer with two values
  ``(success, reason)``; ``false`` becomes JoinOfficeError / LeaveOfficeError.
* Notifications drive the tool cache (events.md §3.3): a Computer entering the office, or
  announcing a new tool list or config, means "fetch its tools"; a Computer leaving means
  "drop its tools"; ``notify:update_desktop`` means "refresh its desktop" when someone
  listens for desktops. Notifications about the agent itself are ignored.
* A tool fetch only lands in the cache if nothing newer happened to that Computer since it
  started (a later fetch or a leave), so a slow answer can never resurrect stale tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import attrs

from a2c_protocol import (
    EVENTS,
    Event,
    EventKind,
    GetToolsRet,
    InvalidPayloadError,
    from_wire,
    remote_error_of,
)

from ._exceptions import (
    AckTimeoutError,
    EventUnsupportedError,
    InvalidResponseError,
    JoinOfficeError,
    LeaveOfficeError,
)
from ._types import AgentNotification, AgentTool

__all__ = [
    "DropTools",
    "FetchTools",
    "PerComputerCache",
    "RefreshDesktop",
    "ToolCache",
    "actions_for",
    "decode_ack",
    "decode_notification",
    "decode_office_ack",
    "tools_from_ret",
    "unanswered",
]

T = TypeVar("T")


def _newer_than_0_2_0(event: Event) -> str | None:
    """The version that added ``event``, when a PATCH release did (0.2.1 and later)."""
    spec = EVENTS.get(event)
    return spec.since if spec is not None and spec.added_in_patch else None


def unanswered(event: Event, timeout: AckTimeoutError) -> EventUnsupportedError | None:
    """For a request that got no answer in time: the error to raise instead, if any.

    None for 0.2.0 events: their silence is a plain :class:`AckTimeoutError`.
    """
    since = _newer_than_0_2_0(event)
    if since is None:
        return None
    return EventUnsupportedError(event.value, since, "no_answer", timeout.timeout)


def _single(event: Event, args: Sequence[Any]) -> Any:
    since = _newer_than_0_2_0(event)
    if since is not None and (not args or (len(args) == 1 and args[0] is None)):
        raise EventUnsupportedError(event.value, since, "empty_answer")
    if len(args) != 1:
        raise InvalidResponseError(f"{event.value} answer: expected one value, got {len(args)}")
    return args[0]


def decode_ack(event: Event, response: type[T], args: Sequence[Any]) -> T:
    """Decode the ack values of ``event`` into ``response``, raising typed errors."""
    data = _single(event, args)
    error = remote_error_of(data)
    if error is not None:
        raise error
    try:
        return from_wire(response, data)
    except InvalidPayloadError as exc:
        raise InvalidResponseError(f"{event.value} answer", exc.errors) from exc


def decode_office_ack(event: Event, office_id: str, args: Sequence[Any]) -> None:
    """Check a ``(success, reason)`` join/leave ack; raise on ``false``.

    A flat ErrorPayload is accepted too (some servers answer that way) and raised typed.
    """
    error = remote_error_of(args[0]) if len(args) == 1 else None
    if error is not None:
        raise error
    values = list(args[0]) if len(args) == 1 and isinstance(args[0], list | tuple) else list(args)
    if not values or not isinstance(values[0], bool):
        raise InvalidResponseError(f"{event.value} answer: expected [success, reason]")
    if values[0]:
        return
    reason = values[1] if len(values) > 1 and isinstance(values[1], str) else None
    if event is Event.JOIN_OFFICE:
        raise JoinOfficeError(office_id, reason)
    raise LeaveOfficeError(office_id, reason)


def tools_from_ret(computer: str, ret: GetToolsRet) -> tuple[AgentTool, ...]:
    """The typed tools of one ``GetToolsRet``."""
    return tuple(AgentTool.from_smcp(computer, tool) for tool in ret.tools)


def decode_notification(event: Event, data: object) -> AgentNotification:
    """Decode a ``notify:*`` payload with the model the event registry names."""
    spec = EVENTS[event]
    if spec.kind is not EventKind.NOTIFY:
        raise ValueError(f"{event.value} is not a notification")
    try:
        payload = from_wire(spec.request, data)
    except InvalidPayloadError as exc:
        raise InvalidResponseError(f"{event.value} notification", exc.errors) from exc
    return AgentNotification(event, payload)


# ----------------------------------------------------------------- decisions


@attrs.frozen
class FetchTools:
    """Fetch ``computer``'s tools and replace its cache entry."""

    computer: str


@attrs.frozen
class DropTools:
    """Forget ``computer``'s tools."""

    computer: str


@attrs.frozen
class RefreshDesktop:
    """Fetch ``computer``'s desktop for the desktop listeners."""

    computer: str


Action = FetchTools | DropTools | RefreshDesktop

_FETCH_ON = frozenset(
    {Event.NOTIFY_ENTER_OFFICE, Event.NOTIFY_UPDATE_TOOL_LIST, Event.NOTIFY_UPDATE_CONFIG}
)


def actions_for(
    notification: AgentNotification,
    *,
    tool_cache: bool,
    desktop_listeners: bool,
) -> list[Action]:
    """What the agent should do about one notification."""
    computer = notification.computer
    if computer is None:
        # Agent membership changes and tool_call_cancel need no action on the agent side.
        return []
    event = notification.event
    if event in _FETCH_ON:
        return [FetchTools(computer)] if tool_cache else []
    if event is Event.NOTIFY_LEAVE_OFFICE:
        return [DropTools(computer)] if tool_cache else []
    if event is Event.NOTIFY_UPDATE_DESKTOP:
        return [RefreshDesktop(computer)] if desktop_listeners else []
    return []


class PerComputerCache(Generic[T]):
    """Entries per Computer, with a generation per Computer so stale fetches are discarded."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[T, ...]] = {}
        self._generation: dict[str, int] = {}

    def begin_fetch(self, computer: str) -> int:
        """Start a fetch for ``computer``; returns the token to complete it with."""
        token = self._generation.get(computer, 0) + 1
        self._generation[computer] = token
        return token

    def complete_fetch(self, computer: str, token: int, entries: Sequence[T]) -> bool:
        """Store ``entries`` if no newer fetch or drop happened since ``token``; say if stored."""
        if self._generation.get(computer) != token:
            return False
        self._entries[computer] = tuple(entries)
        return True

    def drop(self, computer: str) -> bool:
        """Forget ``computer`` (and invalidate its in-flight fetches); say if it was cached."""
        self._generation[computer] = self._generation.get(computer, 0) + 1
        return self._entries.pop(computer, None) is not None

    def clear(self) -> None:
        """Forget everything and invalidate every in-flight fetch."""
        for computer in list(self._generation):
            self._generation[computer] += 1
        self._entries.clear()

    def view(self) -> Mapping[str, tuple[T, ...]]:
        """A read-only snapshot: Computer name → its entries."""
        return MappingProxyType(dict(self._entries))


class ToolCache(PerComputerCache[AgentTool]):
    """Tools per Computer (see :class:`PerComputerCache`)."""

    def find(self, name: str) -> list[AgentTool]:
        """Every cached tool called ``name``, across Computers."""
        return [tool for tools in self._entries.values() for tool in tools if tool.name == name]
