"""Offices and sessions: roles, joining and leaving, the room list, and the change
notifications the Server broadcasts to an office."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeAlias

import attrs

from ._fields import _opt

__all__ = [
    "EnterOfficeNotification",
    "EnterOfficeReq",
    "LeaveOfficeNotification",
    "LeaveOfficeReq",
    "ListRoomReq",
    "ListRoomRet",
    "Role",
    "SessionInfo",
    "UpdateComputerConfigReq",
    "UpdateDesktopNotification",
    "UpdateMCPConfigNotification",
    "UpdateSkillsNotification",
    "UpdateToolListNotification",
]


class Role(StrEnum):
    """The two client roles (``auth.role`` and ``EnterOfficeReq.role``)."""

    AGENT = "agent"
    COMPUTER = "computer"


# ----------------------------------------------------------- offices and sessions


@attrs.frozen(kw_only=True)
class EnterOfficeReq:
    """``server:join_office`` request."""

    role: Role
    name: str
    office_id: str


@attrs.frozen(kw_only=True)
class LeaveOfficeReq:
    """``server:leave_office`` request."""

    office_id: str


@attrs.frozen(kw_only=True)
class EnterOfficeNotification:
    """``notify:enter_office``: exactly one of ``computer`` / ``agent`` is set."""

    office_id: str
    computer: str | None = _opt()
    agent: str | None = _opt()


@attrs.frozen(kw_only=True)
class LeaveOfficeNotification:
    """``notify:leave_office``: exactly one of ``computer`` / ``agent`` is set."""

    office_id: str
    computer: str | None = _opt()
    agent: str | None = _opt()


@attrs.frozen(kw_only=True)
class ListRoomReq:
    agent: str
    req_id: str
    office_id: str


@attrs.frozen(kw_only=True)
class SessionInfo:
    """One member of an office, as listed by ``server:list_room``."""

    sid: str
    name: str
    role: Role
    office_id: str
    a2c_version: str


@attrs.frozen(kw_only=True)
class ListRoomRet:
    sessions: list[SessionInfo]
    req_id: str


# ---------------------------------------------------------- change notifications


@attrs.frozen(kw_only=True)
class UpdateComputerConfigReq:
    """The ``{"computer": name}`` shape of update_config / update_desktop events."""

    computer: str


@attrs.frozen(kw_only=True)
class UpdateMCPConfigNotification:
    """``notify:update_config``."""

    computer: str


@attrs.frozen(kw_only=True)
class UpdateToolListNotification:
    """``server:update_tool_list`` and ``notify:update_tool_list``."""

    computer: str


UpdateDesktopNotification: TypeAlias = UpdateComputerConfigReq
#: ``server:update_skills`` and ``notify:update_skills`` (0.2.1): ``{"computer": name}``.
UpdateSkillsNotification: TypeAlias = UpdateComputerConfigReq
