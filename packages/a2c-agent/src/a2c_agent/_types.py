"""Typed views the agent hands to its users, and helpers to read tool results.

Rules:

* A tool's ``meta["a2c_tool_meta"]`` is a JSON *string*; the agent parses it once into
  :class:`a2c_protocol.ToolMeta` (absent → None). A malformed string is a peer bug: the
  tool is kept, ``tool_meta`` is None and a WARN is logged.
* Tool failures are results (``isError: true``) whose code is ``meta.error_code``; 4006 /
  4007 carry ``meta.mcp_server`` and a user-safe ``meta.auth_hint``. The agent never
  retries them; :func:`tool_authorization` exposes them as typed information.
* A resource's window priority comes from ``annotations.priority`` (v0.2), never from the
  URI query.
"""

from __future__ import annotations

import logging
from typing import Any, TypeAlias

import attrs

from a2c_protocol import (
    A2CResource,
    AgentCallData,
    CallToolResult,
    EnterOfficeNotification,
    ErrorCode,
    Event,
    InvalidPayloadError,
    JsonObject,
    LeaveOfficeNotification,
    SMCPTool,
    ToolError,
    ToolMeta,
    UpdateComputerConfigReq,
    UpdateMCPConfigNotification,
    UpdateToolListNotification,
    read_priority,
    tool_error_from_result,
    tool_meta_of,
)

__all__ = [
    "AgentNotification",
    "AgentTool",
    "NotificationPayload",
    "ResourcePage",
    "ToolAuthorization",
    "raise_for_tool_error",
    "resource_priority",
    "result_error_code",
    "result_text",
    "tool_authorization",
]

logger = logging.getLogger("a2c_agent.types")


@attrs.frozen(kw_only=True)
class AgentTool:
    """One tool of one Computer, with its A2C metadata already parsed."""

    computer: str
    name: str
    description: str
    params_schema: JsonObject
    return_schema: JsonObject | None
    meta: dict[str, Any]
    tool_meta: ToolMeta | None

    @classmethod
    def from_smcp(cls, computer: str, tool: SMCPTool) -> AgentTool:
        """Wrap a decoded ``SMCPTool``, parsing its ``a2c_tool_meta`` JSON string."""
        try:
            parsed = tool_meta_of(tool)
        except InvalidPayloadError as exc:
            logger.warning(
                "tool %r of %r has an unreadable a2c_tool_meta: %s", tool.name, computer, exc
            )
            parsed = None
        return cls(
            computer=computer,
            name=tool.name,
            description=tool.description,
            params_schema=tool.params_schema,
            return_schema=tool.return_schema,
            meta=dict(tool.meta or {}),
            tool_meta=parsed,
        )

    @property
    def tags(self) -> tuple[str, ...]:
        """The tool's A2C tags (empty when none)."""
        return tuple(self.tool_meta.tags or ()) if self.tool_meta else ()

    @property
    def auto_apply(self) -> bool | None:
        """``ToolMeta.auto_apply`` (None: the Computer's default applies)."""
        return self.tool_meta.auto_apply if self.tool_meta else None


@attrs.frozen(kw_only=True)
class ResourcePage:
    """One page of ``client:get_resources``; ``next_cursor`` is None on the last page."""

    resources: tuple[A2CResource, ...]
    next_cursor: str | None


NotificationPayload: TypeAlias = (
    EnterOfficeNotification
    | LeaveOfficeNotification
    | UpdateMCPConfigNotification
    | UpdateToolListNotification
    | UpdateComputerConfigReq
    | AgentCallData
)


@attrs.frozen
class AgentNotification:
    """A decoded ``notify:*`` event: which one, and its typed payload."""

    event: Event
    payload: NotificationPayload

    @property
    def computer(self) -> str | None:
        """The Computer the notification is about, when it names one."""
        value = getattr(self.payload, "computer", None)
        return value if isinstance(value, str) else None


@attrs.frozen(kw_only=True)
class ToolAuthorization:
    """Upstream authorization needed (4006) or failed (4007) for a tool call.

    ``message`` is ``auth_hint.message``: one sentence that is safe to show the user. The
    agent never retries these; retry only when the user asks, after authorizing.
    """

    code: int
    mcp_server: str | None
    action: str | None
    message: str | None

    @property
    def first_time(self) -> bool:
        """4006: authorize (again); False means 4007: check permissions / re-authorize."""
        return self.code == ErrorCode.TOOL_AUTHORIZATION_REQUIRED


def result_error_code(result: CallToolResult) -> int | None:
    """``meta.error_code`` of a failed result (None on success or when absent)."""
    if not result.is_error:
        return None
    code = (result.meta or {}).get("error_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def result_text(result: CallToolResult) -> str:
    """The text blocks of a result joined by newlines."""
    return "\n".join(
        block["text"]
        for block in result.content
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def tool_authorization(result: CallToolResult) -> ToolAuthorization | None:
    """The 4006/4007 information of a result, or None when it is not an auth failure."""
    code = result_error_code(result)
    if code is None or code not in (
        ErrorCode.TOOL_AUTHORIZATION_REQUIRED,
        ErrorCode.TOOL_AUTHORIZATION_FAILED,
    ):
        return None
    meta = result.meta or {}
    hint = meta.get("auth_hint")
    hint = hint if isinstance(hint, dict) else {}
    server = meta.get("mcp_server")
    action = hint.get("action")
    message = hint.get("message")
    return ToolAuthorization(
        code=code,
        mcp_server=server if isinstance(server, str) else None,
        action=action if isinstance(action, str) else None,
        message=message if isinstance(message, str) else None,
    )


def raise_for_tool_error(result: CallToolResult) -> CallToolResult:
    """Return ``result`` if it succeeded, else raise the core's typed :class:`ToolError`.

    (4001 → ToolNotFoundError … 4006 → ToolAuthorizationRequiredError, whose
    ``hint_message`` is ``auth_hint.message``.)
    """
    error: ToolError | None = tool_error_from_result(result)
    if error is not None:
        raise error
    return result


def resource_priority(resource: A2CResource) -> float:
    """The v0.2 window priority in [0, 1] from ``annotations.priority`` (missing → 0.0)."""
    value = (resource.annotations or {}).get("priority")
    return read_priority(value, uri=resource.uri)
