"""Tool models: listing tools, calling one, cancelling it, its progress and its result.

``CallToolResult`` keeps MCP's own JSON spelling (``isError``, ``structuredContent``).
"""

from __future__ import annotations

import attrs

from ._fields import Attributes, JsonObject, _opt, _wire

__all__ = [
    "AgentCallData",
    "CallToolResult",
    "GetToolsReq",
    "GetToolsRet",
    "InputRequiredResult",
    "SMCPTool",
    "ToolCallProgress",
    "ToolCallReq",
    "ToolMeta",
]


# --------------------------------------------------------------------------- base


@attrs.frozen(kw_only=True)
class AgentCallData:
    """Base of every Agent-originated request; also ``server:tool_call_cancel``."""

    agent: str
    req_id: str


# -------------------------------------------------------------------------- tools


@attrs.frozen(kw_only=True)
class ToolCallReq:
    """``client:tool_call`` request."""

    agent: str
    req_id: str
    computer: str
    tool_name: str
    params: JsonObject
    timeout: int
    # Extensions (docs/compatibility.md): absent unless the Agent asks; peers that do not
    # know them ignore unknown keys, so an official 0.2 peer never sees a difference.
    a2c_progress: bool | None = _opt()
    a2c_trace: dict[str, str] | None = _opt()
    # Input requests (docs/compatibility.md): what the Agent can answer (MCP's client
    # capabilities spelling), and on a retry its answers with the state it was given.
    a2c_input: JsonObject | None = _opt()
    a2c_input_responses: dict[str, JsonObject] | None = _opt()
    a2c_request_state: str | None = _opt()


@attrs.frozen(kw_only=True)
class ToolCallProgress:
    """Extension ``server:tool_call_progress`` / ``notify:tool_call_progress``.

    One MCP ``notifications/progress`` of the call ``req_id`` that ``agent`` made on
    ``computer``; ``progress``/``total``/``message`` are MCP's own fields.
    """

    agent: str
    req_id: str
    computer: str
    progress: float
    total: float | None = _opt()
    message: str | None = _opt()


@attrs.frozen(kw_only=True)
class ToolMeta:
    """A2C tool metadata; on the wire it is a JSON *string* in ``meta["a2c_tool_meta"]``.

    All four keys are always emitted (null when unset), as the protocol's examples do.
    """

    auto_apply: bool | None = None
    ret_object_mapper: dict[str, str] | None = None
    alias: str | None = None
    tags: list[str] | None = None


@attrs.frozen(kw_only=True)
class SMCPTool:
    """A tool as exposed to Agents by ``client:get_tools``."""

    name: str
    description: str
    params_schema: JsonObject
    return_schema: JsonObject | None
    meta: Attributes | None = _opt()


@attrs.frozen(kw_only=True)
class GetToolsReq:
    agent: str
    req_id: str
    computer: str


@attrs.frozen(kw_only=True)
class GetToolsRet:
    tools: list[SMCPTool]
    req_id: str


# ------------------------------------------------------------------ tool result


@attrs.frozen(kw_only=True)
class CallToolResult:
    """MCP ``CallToolResult`` as relayed by ``client:tool_call`` (MCP JSON spelling).

    ``meta`` is emitted as ``meta`` (the protocol's spelling); ``_meta`` is accepted.
    """

    content: list[JsonObject]
    is_error: bool = _wire("isError", default=False)
    meta: JsonObject | None = None
    structured_content: JsonObject | None = _opt(metadata={"wire": "structuredContent"})


@attrs.frozen(kw_only=True)
class InputRequiredResult:
    """Extension: the answer to a ``client:tool_call`` whose MCP server asks for input.

    MCP 2026-07-28's ``InputRequiredResult`` spelling (``resultType: "input_required"``);
    only a call that carried ``a2c_input`` is answered with it. ``input_requests`` maps a
    key to an MCP request object (``{"method", "params"}``); ``request_state`` is opaque
    and comes back unchanged on the retry. ``meta`` (``_meta``) carries ``a2c_mcp_server``
    and ``a2c_expires_in``. Typed reading: :func:`a2c_protocol.parse_input_required`.
    """

    result_type: str = _wire("resultType")
    input_requests: dict[str, JsonObject] = _wire("inputRequests")
    request_state: str = _wire("requestState")
    meta: JsonObject | None = _opt(metadata={"wire": "_meta"})
