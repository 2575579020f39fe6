"""A Computer's configuration: MCP server entries per transport, inputs, and the
``client:get_config`` request and answer (the shape of a config file too).

Separate because it changes with the configuration format, not with the messages.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ._fields import _opt
from ._tools import ToolMeta

__all__ = [
    "CommandInput",
    "ComputerConfig",
    "ComputerConfigView",
    "GetComputerConfigReq",
    "GetComputerConfigRet",
    "MCPSSEParameters",
    "MCPServerConfig",
    "MCPServerInput",
    "MCPServerStdioParameters",
    "MCPServerStreamableHttpParameters",
    "McpEra",
    "McpServerState",
    "OAuthSettings",
    "PickStringInput",
    "PromptStringInput",
    "SseServerConfig",
    "StdioServerConfig",
    "StreamableServerConfig",
]


# ---------------------------------------------------------------- configuration

#: The MCP protocol era a Computer speaks to one MCP server (see ``mcp_era``).
McpEra: TypeAlias = Literal["auto", "handshake", "modern"]


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
    #: 0.4: the server's identity in tool names ``{bundle_id}__{tool}``, config keys and
    #: skill names; None derives it from ``name`` (``[A-Za-z0-9_-]``, no ``__``: checked by
    #: :func:`~a2c_protocol.config_from_json`). With it, the ``servers`` key may be the
    #: bundle_id and ``name`` only a display name that may repeat.
    bundle_id: str | None = _opt()
    disabled: bool = False
    forbidden_tools: list[str] = attrs.Factory(list)
    tool_meta: dict[str, ToolMeta] = attrs.Factory(dict)
    default_tool_meta: ToolMeta | None = None
    vrl: str | None = None
    #: SDK extension (not a protocol field): prepended to every tool name of this server
    #: that has no ``alias``, so copies of one server can live side by side.
    tool_prefix: str | None = _opt()
    #: SDK extension (not a protocol field): the MCP protocol era the Computer speaks to this
    #: server. ``"handshake"``: ``initialize`` (2025-11-25 and earlier); ``"modern"``:
    #: 2026-07-28 (``server/discover``, per-request metadata); ``"auto"`` or absent: the
    #: handshake when the server answers it (where its tools may ask the user or the model
    #: with server-initiated requests), else 2026-07-28. SSE speaks the handshake only.
    mcp_era: McpEra | None = _opt()
    #: SDK extension (not a protocol field): the directories this server's ``roots/list``
    #: is answered with (absolute paths or ``file://`` URIs on the Computer's machine).
    #: None: the Computer does not offer roots to it.
    roots: list[str] | None = _opt()


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
    why it is not ready (secrets masked); ``tools``: how many tools it listed;
    ``protocol``: the MCP protocol version its session negotiated (``"2025-11-25"``: the
    handshake era, ``"2026-07-28"``: the modern one), when it is ready.
    """

    status: str
    error: str | None = _opt()
    tools: int | None = _opt()
    protocol: str | None = _opt()


@attrs.frozen(kw_only=True)
class ComputerConfigView(GetComputerConfigRet):
    """``client:get_config`` answer as our Agent reads it: the config and, from our
    Computer, each MCP server's state (``a2c_server_states``, an extension other peers
    ignore and do not send)."""

    server_states: dict[str, McpServerState] | None = _opt(metadata={"wire": "a2c_server_states"})


#: A Computer configuration document has exactly the shape of ``GetComputerConfigRet``.
ComputerConfig: TypeAlias = GetComputerConfigRet
