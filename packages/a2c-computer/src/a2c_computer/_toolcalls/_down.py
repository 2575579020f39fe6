"""Tool calls that name a tool of an MCP server that is down (pure).

Rules:

* while an MCP server is down its tools leave the tool list, but the Computer remembers
  the names it exposed at its last successful listing; a call to one of them is answered
  ``isError`` with ``meta.error_code`` 4014 (MCP Server Not Found: the server is not
  available, the tool did not run), ``meta.mcp_server`` / ``meta.mcp_server_name``,
  ``meta.reason = "mcp_server_down"`` and the server's last error: never a "did you mean"
  pointing at another server's tool;
* a server that was never up has no remembered names: a name that its configuration
  would expose (a ``tool_meta`` alias, or its ``tool_prefix``) is attributed to it too;
* an unknown name while some server is down stays 4001, but its message names the down
  servers (the tool may be one of theirs) instead of only suggesting a near name.
"""

from __future__ import annotations

from collections.abc import Mapping

from a2c_protocol import CallToolResult, ErrorCode, MCPServerConfig

from ._confirm import error_result

__all__ = ["REASON_SERVER_DOWN", "down_note", "down_owner", "down_result"]

REASON_SERVER_DOWN = "mcp_server_down"


def down_owner(
    tool: str,
    down: Mapping[str, str | None],
    last_listed: Mapping[str, frozenset[str]],
    configs: Mapping[str, MCPServerConfig],
) -> str | None:
    """The down server (a key of ``down``: name → last error) ``tool`` belongs to, or None."""
    for name in sorted(down):
        if tool in last_listed.get(name, ()):
            return name
    for name in sorted(down):
        config = configs.get(name)
        if config is None:
            continue
        if any(meta.alias == tool for meta in config.tool_meta.values() if meta is not None):
            return name
        if config.tool_prefix and tool.startswith(config.tool_prefix):
            return name
    return None


def down_result(tool: str, server: str, reason: str | None) -> CallToolResult:
    """The answer to a call of ``tool`` whose MCP server ``server`` is down."""
    why = f" ({reason})" if reason else ""
    return error_result(
        ErrorCode.MCP_SERVER_NOT_FOUND,
        f"Tool {tool!r} was not called: its MCP server {server!r} is down{why}; "
        "retry once it is back (the config view shows its state)",
        mcp_server=server,
        extra={
            "mcp_server_name": server,
            "reason": REASON_SERVER_DOWN,
            "server_error": reason,
        },
    )


def down_note(down: Mapping[str, str | None]) -> str:
    """``"; MCP server(s) … down: the tool may be one of theirs"`` or ``""``."""
    if not down:
        return ""
    names = ", ".join(repr(n) for n in sorted(down))
    plural = "s" if len(down) > 1 else ""
    return f"; MCP server{plural} {names} {'are' if plural else 'is'} down: it may be one of theirs"
