"""The event registry: every event of protocol 0.2 (up to 0.2.3) with its models and sender.

Routing rules by prefix (events.md §1): ``client:*`` go Agent → Server → one Computer and
are answered by the Computer; ``server:*`` are handled by the Server; ``notify:*`` are
broadcast by the Server to one office. This table is the only place event names are
spelled; everything else refers to :class:`Event` members.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

import attrs

from ._models import (
    AgentCallData,
    CallToolResult,
    EnterOfficeNotification,
    EnterOfficeReq,
    GetBlobReq,
    GetBlobRet,
    GetComputerConfigReq,
    GetComputerConfigRet,
    GetDeskTopReq,
    GetDeskTopRet,
    GetResourcesReq,
    GetResourcesRet,
    GetSkillReq,
    GetSkillRet,
    GetSkillsReq,
    GetSkillsRet,
    GetToolsReq,
    GetToolsRet,
    LeaveOfficeNotification,
    LeaveOfficeReq,
    ListRoomReq,
    ListRoomRet,
    PutBlobReq,
    PutBlobRet,
    Role,
    ToolCallReq,
    UpdateComputerConfigReq,
    UpdateMCPConfigNotification,
    UpdateSkillsNotification,
    UpdateToolListNotification,
)

__all__ = [
    "CLIENT_EVENTS",
    "EVENTS",
    "NAMESPACE",
    "UPDATE_EVENTS",
    "Event",
    "EventKind",
    "EventSpec",
    "ExtensionEvent",
]

#: The Socket.IO namespace every protocol event travels in.
NAMESPACE: Final = "/smcp"


class Event(StrEnum):
    """Every event name of protocol 0.2 (0.2.0 plus the five of 0.2.1) and ``client:put_blob``
    of 0.4 (which a 0.2 session only sends or receives when it announced it)."""

    TOOL_CALL = "client:tool_call"
    GET_CONFIG = "client:get_config"
    GET_TOOLS = "client:get_tools"
    GET_DESKTOP = "client:get_desktop"
    GET_RESOURCES = "client:get_resources"
    GET_SKILLS = "client:get_skills"
    GET_SKILL = "client:get_skill"
    GET_BLOB = "client:get_blob"
    #: Protocol 0.4; in 0.2 sessions an extension both ends announce (docs/compatibility.md).
    PUT_BLOB = "client:put_blob"

    JOIN_OFFICE = "server:join_office"
    LEAVE_OFFICE = "server:leave_office"
    UPDATE_CONFIG = "server:update_config"
    UPDATE_TOOL_LIST = "server:update_tool_list"
    UPDATE_DESKTOP = "server:update_desktop"
    TOOL_CALL_CANCEL = "server:tool_call_cancel"
    LIST_ROOM = "server:list_room"
    UPDATE_SKILLS = "server:update_skills"

    NOTIFY_ENTER_OFFICE = "notify:enter_office"
    NOTIFY_LEAVE_OFFICE = "notify:leave_office"
    NOTIFY_UPDATE_CONFIG = "notify:update_config"
    NOTIFY_UPDATE_TOOL_LIST = "notify:update_tool_list"
    NOTIFY_UPDATE_DESKTOP = "notify:update_desktop"
    NOTIFY_TOOL_CALL_CANCEL = "notify:tool_call_cancel"
    NOTIFY_UPDATE_SKILLS = "notify:update_skills"


class ExtensionEvent(StrEnum):
    """Events of this implementation's opt-in extensions (docs/compatibility.md).

    Not part of protocol 0.2, so kept out of :class:`Event` and :data:`EVENTS`: a peer only
    ever sees them after asking for them in its own request (``a2c_progress``), except
    :attr:`NOTIFY_SESSION_EXPIRED`, which a client without a handler ignores. The progress
    pair carries :class:`~a2c_protocol.ToolCallProgress`; the Computer sends the first to
    the Server, the Server sends the second to the Agent that made the call, and to no one
    else.
    """

    TOOL_CALL_PROGRESS = "server:tool_call_progress"
    NOTIFY_TOOL_CALL_PROGRESS = "notify:tool_call_progress"
    #: Sent by the Server to one session just before it cuts it because its token expired
    #: (``{"reason": "token expired"}``), so the client can say why it reconnects.
    NOTIFY_SESSION_EXPIRED = "notify:a2c_session_expired"


class EventKind(StrEnum):
    CLIENT = "client"
    SERVER = "server"
    NOTIFY = "notify"


@attrs.frozen
class EventSpec:
    """What travels with one event.

    ``response`` is the ack model (None when the event has no ack); ``senders`` are the
    roles allowed to emit it (empty for ``notify:*``, which only the Server emits);
    ``notifies`` is the broadcast a ``server:*`` event triggers; ``since`` is the protocol
    version that introduced the event (a peer of an older PATCH level may not know it:
    every 0.2.x passes every 0.2.x version gate, so this is the only hint there is).
    """

    event: Event
    request: type[Any]
    response: type[Any] | None
    senders: frozenset[Role]
    notifies: Event | None = None
    since: str = "0.2.0"

    @property
    def kind(self) -> EventKind:
        return EventKind(self.event.value.split(":", 1)[0])

    @property
    def added_in_patch(self) -> bool:
        """Whether the event came after 0.2.0 (a 0.2 PATCH, or 0.4's ``client:put_blob``), so
        a 0.2.0 peer may not know it: its silence or empty ack then means "not implemented"."""
        return self.since != "0.2.0"


_AGENT = frozenset({Role.AGENT})
_COMPUTER = frozenset({Role.COMPUTER})
_BOTH = frozenset({Role.AGENT, Role.COMPUTER})
_NOBODY: frozenset[Role] = frozenset()

_SPECS = (
    EventSpec(Event.TOOL_CALL, ToolCallReq, CallToolResult, _AGENT),
    EventSpec(Event.GET_CONFIG, GetComputerConfigReq, GetComputerConfigRet, _AGENT),
    EventSpec(Event.GET_TOOLS, GetToolsReq, GetToolsRet, _AGENT),
    EventSpec(Event.GET_DESKTOP, GetDeskTopReq, GetDeskTopRet, _AGENT),
    EventSpec(Event.GET_RESOURCES, GetResourcesReq, GetResourcesRet, _AGENT),
    EventSpec(Event.GET_SKILLS, GetSkillsReq, GetSkillsRet, _AGENT, since="0.2.1"),
    EventSpec(Event.GET_SKILL, GetSkillReq, GetSkillRet, _AGENT, since="0.2.1"),
    EventSpec(Event.GET_BLOB, GetBlobReq, GetBlobRet, _AGENT, since="0.2.1"),
    EventSpec(Event.PUT_BLOB, PutBlobReq, PutBlobRet, _AGENT, since="0.4.0"),
    # The join/leave ack is the two-argument tuple (success, error message or None).
    EventSpec(Event.JOIN_OFFICE, EnterOfficeReq, tuple, _BOTH, Event.NOTIFY_ENTER_OFFICE),
    EventSpec(Event.LEAVE_OFFICE, LeaveOfficeReq, tuple, _BOTH, Event.NOTIFY_LEAVE_OFFICE),
    EventSpec(
        Event.UPDATE_CONFIG, UpdateComputerConfigReq, None, _COMPUTER, Event.NOTIFY_UPDATE_CONFIG
    ),
    EventSpec(
        Event.UPDATE_TOOL_LIST,
        UpdateToolListNotification,
        None,
        _COMPUTER,
        Event.NOTIFY_UPDATE_TOOL_LIST,
    ),
    EventSpec(
        Event.UPDATE_DESKTOP, UpdateComputerConfigReq, None, _COMPUTER, Event.NOTIFY_UPDATE_DESKTOP
    ),
    EventSpec(Event.TOOL_CALL_CANCEL, AgentCallData, None, _AGENT, Event.NOTIFY_TOOL_CALL_CANCEL),
    EventSpec(Event.LIST_ROOM, ListRoomReq, ListRoomRet, _AGENT),
    EventSpec(
        Event.UPDATE_SKILLS,
        UpdateSkillsNotification,
        None,
        _COMPUTER,
        Event.NOTIFY_UPDATE_SKILLS,
        since="0.2.1",
    ),
    EventSpec(Event.NOTIFY_ENTER_OFFICE, EnterOfficeNotification, None, _NOBODY),
    EventSpec(Event.NOTIFY_LEAVE_OFFICE, LeaveOfficeNotification, None, _NOBODY),
    EventSpec(Event.NOTIFY_UPDATE_CONFIG, UpdateMCPConfigNotification, None, _NOBODY),
    EventSpec(Event.NOTIFY_UPDATE_TOOL_LIST, UpdateToolListNotification, None, _NOBODY),
    EventSpec(Event.NOTIFY_UPDATE_DESKTOP, UpdateComputerConfigReq, None, _NOBODY),
    EventSpec(Event.NOTIFY_TOOL_CALL_CANCEL, AgentCallData, None, _NOBODY),
    EventSpec(Event.NOTIFY_UPDATE_SKILLS, UpdateSkillsNotification, None, _NOBODY, since="0.2.1"),
)

#: Event → its spec; covers every member of :class:`Event`.
EVENTS: Final[Mapping[Event, EventSpec]] = MappingProxyType({s.event: s for s in _SPECS})

#: The ``client:*`` events (eight of 0.2, ``client:put_blob`` of 0.4), in catalogue order.
CLIENT_EVENTS: Final = tuple(e for e in Event if EVENTS[e].kind is EventKind.CLIENT)

#: The ``server:update_*`` events: a Computer's change report, broadcast to its office as
#: the paired ``notify:*`` on behalf of the sender's registered name.
UPDATE_EVENTS: Final = tuple(
    e
    for e in Event
    if EVENTS[e].kind is EventKind.SERVER
    and EVENTS[e].senders == _COMPUTER
    and EVENTS[e].notifies is not None
)
