"""Frozen attrs models for every payload of protocol 0.2 (data-structures.md).

The models know nothing about JSON; :mod:`a2c_protocol._wire` owns every wire
spelling. Field metadata carries the two facts the converter needs:

* ``wire``: the JSON key when it differs from the attribute (``_meta``, ``isError``...);
* ``omit``: an optional field that is left out of the JSON when it is ``None``, so
  optional fields absent on input stay absent on output.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal, TypeAlias

import attrs

__all__ = [
    "DEFAULT_SKILL_REL_PATH",
    "A2CResource",
    "A2CSkillRef",
    "AgentCallData",
    "AttributeValue",
    "Attributes",
    "CallToolResult",
    "CapabilityNotSupportedPayload",
    "CommandInput",
    "ComputerConfig",
    "ComputerConfigView",
    "EnterOfficeNotification",
    "EnterOfficeReq",
    "ErrorPayload",
    "GetBlobReq",
    "GetBlobRet",
    "GetComputerConfigReq",
    "GetComputerConfigRet",
    "GetDeskTopReq",
    "GetDeskTopRet",
    "GetResourcesReq",
    "GetResourcesRet",
    "GetSkillReq",
    "GetSkillRet",
    "GetSkillsReq",
    "GetSkillsRet",
    "GetToolsReq",
    "GetToolsRet",
    "JsonObject",
    "LeaveOfficeNotification",
    "LeaveOfficeReq",
    "ListRoomReq",
    "ListRoomRet",
    "MCPSSEParameters",
    "MCPServerConfig",
    "MCPServerInput",
    "MCPServerStdioParameters",
    "MCPServerStreamableHttpParameters",
    "McpServerNotFoundPayload",
    "McpServerState",
    "PickStringInput",
    "PromptStringInput",
    "Role",
    "SMCPTool",
    "SessionInfo",
    "SseServerConfig",
    "StdioServerConfig",
    "StreamableServerConfig",
    "ToolCallProgress",
    "ToolCallReq",
    "ToolMeta",
    "UpdateComputerConfigReq",
    "UpdateDesktopNotification",
    "UpdateMCPConfigNotification",
    "UpdateSkillsNotification",
    "UpdateToolListNotification",
    "VersionMismatchPayload",
]

JsonObject: TypeAlias = dict[str, Any]
AttributeValue: TypeAlias = str | int | float | bool | list[str] | None
Attributes: TypeAlias = dict[str, AttributeValue]


def _opt(**kwargs: Any) -> Any:
    """An optional field: defaults to None and is omitted from the JSON when None."""
    metadata = {"omit": True, **kwargs.pop("metadata", {})}
    return attrs.field(default=None, metadata=metadata, **kwargs)


def _wire(name: str, **kwargs: Any) -> Any:
    metadata = {"wire": name, **kwargs.pop("metadata", {})}
    return attrs.field(metadata=metadata, **kwargs)


class Role(StrEnum):
    """The two client roles (``auth.role`` and ``EnterOfficeReq.role``)."""

    AGENT = "agent"
    COMPUTER = "computer"


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


# ---------------------------------------------------------------- configuration


@attrs.frozen(kw_only=True)
class MCPServerStdioParameters:
    command: str
    args: list[str] = attrs.Factory(list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    encoding: str = "utf-8"
    encoding_error_handler: Literal["strict", "ignore", "replace"] = "strict"


@attrs.frozen(kw_only=True)
class MCPServerStreamableHttpParameters:
    """Streamable HTTP parameters; timeouts are ISO 8601 durations (``"PT30S"``)."""

    url: str
    headers: dict[str, Any] | None = None
    timeout: str = "PT30S"
    sse_read_timeout: str = "PT5M"
    terminate_on_close: bool = True


@attrs.frozen(kw_only=True)
class MCPSSEParameters:
    """SSE parameters; timeouts are float seconds (unlike Streamable HTTP)."""

    url: str
    headers: dict[str, Any] | None = None
    timeout: float = 5.0
    sse_read_timeout: float = 300.0


@attrs.frozen(kw_only=True)
class OAuthSettings:
    """SDK extension: ``"auth"`` of a ``streamable``/``sse`` server behind OAuth 2.1.

    Without ``client_id`` the Computer registers itself (dynamic client registration);
    ``client_metadata`` adds fields to the client metadata it registers or presents.
    """

    type: Literal["oauth"] = "oauth"
    client_id: str | None = _opt()
    scopes: list[str] = attrs.Factory(list)
    client_metadata: dict[str, Any] | None = _opt()


@attrs.frozen(kw_only=True)
class _ServerConfigBase:
    """Fields every MCP server entry has, whatever its transport."""

    name: str
    disabled: bool = False
    forbidden_tools: list[str] = attrs.Factory(list)
    tool_meta: dict[str, ToolMeta] = attrs.Factory(dict)
    default_tool_meta: ToolMeta | None = None
    vrl: str | None = None
    #: SDK extension (not a protocol field): prepended to every tool name of this server
    #: that has no ``alias``, so copies of one server can live side by side.
    tool_prefix: str | None = _opt()


@attrs.frozen(kw_only=True)
class StdioServerConfig(_ServerConfigBase):
    """An MCP server run as a subprocess (``type: "stdio"``)."""

    server_parameters: MCPServerStdioParameters


@attrs.frozen(kw_only=True)
class StreamableServerConfig(_ServerConfigBase):
    """An MCP server over Streamable HTTP (``type: "streamable"``)."""

    server_parameters: MCPServerStreamableHttpParameters
    #: SDK extension: sign in with OAuth (see :class:`OAuthSettings`).
    auth: OAuthSettings | None = _opt()


@attrs.frozen(kw_only=True)
class SseServerConfig(_ServerConfigBase):
    """An MCP server over Server-Sent Events (``type: "sse"``)."""

    server_parameters: MCPSSEParameters
    #: SDK extension: sign in with OAuth (see :class:`OAuthSettings`).
    auth: OAuthSettings | None = _opt()


MCPServerConfig: TypeAlias = StdioServerConfig | StreamableServerConfig | SseServerConfig


@attrs.frozen(kw_only=True)
class PromptStringInput:
    """``type: "promptString"``: free text; ``password`` hides and never logs it."""

    id: str
    description: str
    default: str | None = _opt()
    password: bool | None = _opt()


@attrs.frozen(kw_only=True)
class PickStringInput:
    """``type: "pickString"``: one of ``options``."""

    id: str
    description: str
    options: list[str]
    default: str | None = _opt()


@attrs.frozen(kw_only=True)
class CommandInput:
    """``type: "command"``: the value is the trimmed stdout of ``command``."""

    id: str
    description: str
    command: str
    args: dict[str, str] | None = _opt()


MCPServerInput: TypeAlias = PromptStringInput | PickStringInput | CommandInput


@attrs.frozen(kw_only=True)
class GetComputerConfigReq:
    agent: str
    req_id: str
    computer: str


@attrs.frozen(kw_only=True)
class GetComputerConfigRet:
    """``client:get_config`` answer; also the shape of a Computer's config file."""

    servers: dict[str, MCPServerConfig]
    inputs: list[MCPServerInput] | None = _opt()


@attrs.frozen(kw_only=True)
class McpServerState:
    """One MCP server's state as our Computer reports it next to its config.

    ``status``: ``ready``, ``starting``, ``failed``, ``stopped`` or ``disabled``; ``error``:
    why it is not ready (secrets masked); ``tools``: how many tools it listed.
    """

    status: str
    error: str | None = _opt()
    tools: int | None = _opt()


@attrs.frozen(kw_only=True)
class ComputerConfigView(GetComputerConfigRet):
    """``client:get_config`` answer as our Agent reads it: the config and, from our
    Computer, each MCP server's state (``a2c_server_states``, an extension other peers
    ignore and do not send)."""

    server_states: dict[str, McpServerState] | None = _opt(metadata={"wire": "a2c_server_states"})


#: A Computer configuration document has exactly the shape of ``GetComputerConfigRet``.
ComputerConfig: TypeAlias = GetComputerConfigRet


# ---------------------------------------------------------------------- desktop


@attrs.frozen(kw_only=True)
class GetDeskTopReq:
    agent: str
    req_id: str
    computer: str
    desktop_size: int | None = _opt()
    window: str | None = _opt()


@attrs.frozen(kw_only=True)
class GetDeskTopRet:
    desktops: list[str]
    req_id: str


# -------------------------------------------------------------------- resources


@attrs.frozen(kw_only=True)
class GetResourcesReq:
    agent: str
    req_id: str
    computer: str
    mcp_server: str
    cursor: str | None = _opt()


@attrs.frozen(kw_only=True)
class GetResourcesRet:
    """One page of MCP ``resources/list``; ``resources`` are MCP JSON objects, unchanged."""

    resources: list[JsonObject]
    req_id: str
    next_cursor: str | None = _opt()


@attrs.frozen(kw_only=True)
class A2CResource:
    """Typed view of an MCP ``Resource`` (any scheme).

    On the wire it keeps MCP's spelling (``mimeType``, ``_meta``); ``mime_type`` is
    accepted on input too.
    """

    uri: str
    name: str | None = _opt()
    title: str | None = _opt()
    description: str | None = _opt()
    mime_type: str | None = _opt(metadata={"wire": "mimeType"})
    size: int | None = _opt()
    annotations: JsonObject | None = _opt()
    meta: JsonObject | None = _opt(metadata={"wire": "_meta"})


# ------------------------------------------------------------- skills (0.2.1+)

#: The file ``client:get_skill`` reads when the request has no ``rel_path``.
DEFAULT_SKILL_REL_PATH: Final = "SKILL.md"


@attrs.frozen(kw_only=True)
class A2CSkillRef:
    """One installed skill, as listed by ``client:get_skills`` (spec delta §4.7).

    ``name`` is opaque to Agents: copy it verbatim into ``GetSkillReq.name`` and learn the
    origin from ``source``. ``path`` is a directory on the *Computer's* host (for Agent SDK
    use, never for the LLM, and not necessarily reachable from the Agent). The four
    required fields are always sent; consumers must not assume any optional one. Unknown
    keys from newer peers are ignored.
    """

    name: str
    source: str
    path: str
    description: str
    uri: str | None = _opt()
    license: str | None = _opt()
    compatibility: str | None = _opt()
    allowed_tools: list[str] | None = _opt()
    skill_metadata: JsonObject | None = _opt()
    version: str | None = _opt()


@attrs.frozen(kw_only=True)
class GetSkillsReq:
    """``client:get_skills`` request."""

    agent: str
    req_id: str
    computer: str


@attrs.frozen(kw_only=True)
class GetSkillsRet:
    """``client:get_skills`` answer: usable skills in discovery order (not sorted)."""

    skills: list[A2CSkillRef]
    req_id: str


@attrs.frozen(kw_only=True)
class GetSkillReq:
    """``client:get_skill`` request: one file of one skill package.

    ``rel_path`` is a POSIX path relative to the package root; absent means
    :data:`DEFAULT_SKILL_REL_PATH` (see :attr:`effective_rel_path`).
    """

    agent: str
    req_id: str
    computer: str
    name: str
    rel_path: str | None = _opt()

    @property
    def effective_rel_path(self) -> str:
        """``rel_path``, or ``"SKILL.md"`` when the request left it out."""
        return DEFAULT_SKILL_REL_PATH if self.rel_path is None else self.rel_path


def _one_carrier(instance: Any, attribute: Any, value: str | None) -> None:
    if (instance.body is None) == (value is None):
        raise ValueError("exactly one of body and blob_handle must be present")


@attrs.frozen(kw_only=True)
class GetSkillRet:
    """``client:get_skill`` answer.

    Exactly one of ``body`` (inline text) and ``blob_handle`` (pull the bytes with
    ``client:get_blob``) is set. ``total_size`` and ``sha256`` describe the resource
    bytes (for ``SKILL.md``: the text after its YAML frontmatter); ``mime_type`` comes
    from the deterministic table (:func:`a2c_protocol.mime_type_for`).
    """

    name: str
    rel_path: str
    mime_type: str
    total_size: int
    sha256: str
    req_id: str
    body: str | None = _opt()
    blob_handle: str | None = _opt(validator=_one_carrier)


@attrs.frozen(kw_only=True)
class GetBlobReq:
    """``client:get_blob`` request: one chunk of the resource behind ``blob_handle``.

    ``chunk_offset`` is an absolute byte offset (absent: 0); ``max_chunk_bytes`` is the
    Agent's suggestion in raw (not base64) bytes, clamped by the Computer.
    """

    agent: str
    req_id: str
    computer: str
    blob_handle: str
    chunk_offset: int | None = _opt()
    max_chunk_bytes: int | None = _opt()


@attrs.frozen(kw_only=True)
class GetBlobRet:
    """``client:get_blob`` answer: one chunk, base64 in ``blob``.

    ``total_size`` and ``sha256`` describe the whole resource and are identical in every
    chunk of one logical read (a change means the source was rewritten: restart at 0).
    ``eof`` is true exactly when ``chunk_offset`` + the decoded chunk length equals
    ``total_size``. The structure is open: unknown keys (``etag``, ...) are ignored.
    """

    blob_handle: str
    mime_type: str
    total_size: int
    sha256: str
    chunk_offset: int
    eof: bool
    blob: str
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


# ---------------------------------------------------------------- error payloads


@attrs.frozen(kw_only=True)
class _FlatError:
    """``code`` and ``message``: what every flat ErrorPayload starts with."""

    code: int
    message: str


@attrs.frozen(kw_only=True)
class ErrorPayload(_FlatError):
    """Flat protocol error: ``{code, message, [code-specific fields], [details]}``."""

    details: JsonObject | None = _opt()


@attrs.frozen(kw_only=True)
class VersionMismatchPayload(_FlatError):
    """4008: the handshake's HTTP 400 body. All six fields are required."""

    server_version: str
    client_version: str
    min_supported: str
    max_supported: str
    details: JsonObject | None = _opt()


@attrs.frozen(kw_only=True)
class McpServerNotFoundPayload(_FlatError):
    """4014: ``mcp_server`` is not registered (or not running) on the Computer.

    Since 0.2.1 4014 also answers ``client:get_skill`` for an unknown skill name, with the
    name in ``details.name`` and no ``mcp_server_name``; so that field is optional.
    """

    mcp_server_name: str | None = _opt()
    details: JsonObject | None = _opt()


@attrs.frozen(kw_only=True)
class CapabilityNotSupportedPayload(_FlatError):
    """4015: the MCP server did not declare ``capability``."""

    mcp_server_name: str
    capability: str
    details: JsonObject | None = _opt()
