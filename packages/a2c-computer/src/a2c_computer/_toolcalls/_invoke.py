"""One ``tools/call`` on an MCP server, turned into the result an Agent gets.

Rules:

* every failure is an ``isError`` result with ``meta.error_code`` (4004 timeout, also
  marked ``meta.a2c_timeout``; 4006
  execution failed, 4010/4011 upstream authorization) and ``meta.mcp_server``;
* messages name the tool as the Agent called it (the alias, when there is one); the MCP
  server's own tool name is in ``meta.mcp_tool``, so an alias never hides which tool ran;
* an MCP server's own ``isError`` result keeps its content, gaining the same meta keys.
"""

from __future__ import annotations

import logging

import attrs

from a2c_computer._auth import classify_upstream_failure, default_auth_hint, sanitize_auth_hint
from a2c_computer._mcp import McpCallFailure, McpServer
from a2c_computer._oauth._hints import oauth_auth_hint
from a2c_protocol import (
    CallToolResult,
    ErrorCode,
    InvalidPayloadError,
    JsonObject,
    MCPServerConfig,
    SseServerConfig,
    StreamableServerConfig,
    from_wire,
    timeout_result,
)

from ._confirm import error_result
from ._extensions import CallExtras

__all__ = ["invoke_tool"]

logger = logging.getLogger("a2c_computer")


def _credentials_configured(config: MCPServerConfig) -> bool:
    if isinstance(config, StreamableServerConfig | SseServerConfig):
        headers = config.server_parameters.headers or {}
        return any(k.lower() in ("authorization", "x-api-key", "cookie") for k in headers)
    return True


async def invoke_tool(
    server: McpServer,
    tool: str,
    exposed: str,
    params: JsonObject,
    timeout: float,
    extras: CallExtras | None = None,
) -> CallToolResult:
    """Call MCP tool ``tool`` (exposed to Agents as ``exposed``) within ``timeout`` s."""
    where: JsonObject = {"mcp_tool": tool}

    def failed(code: int, message: str, extra: JsonObject | None = None) -> CallToolResult:
        return error_result(code, message, mcp_server=server.name, extra={**where, **(extra or {})})

    try:
        if extras is None:
            raw = await server.call_tool(tool, params, max(timeout, 0.001))
        elif extras.mcp_request is None:
            raw = await server.call_tool(tool, params, max(timeout, 0.001), extras.progress)
        else:
            with extras.mcp_request() as meta:
                raw = await server.call_tool(
                    tool, params, max(timeout, 0.001), extras.progress, meta
                )
    except TimeoutError:
        # 0.2.3: a2c_timeout next to 4004 tells a timeout from other failures.
        return timeout_result(
            f"Tool {exposed!r} timed out after {timeout:g} s",
            extra={"mcp_server": server.name, **where},
        )
    except McpCallFailure as exc:
        if exc.connection_lost:
            return failed(
                ErrorCode.TOOL_EXECUTION_FAILED,
                f"Tool {exposed!r} failed: the MCP server {server.name} stopped responding "
                "(it will be restarted)",
            )
        code = classify_upstream_failure(
            http_status=exc.http_status,
            credentials_configured=_credentials_configured(server.config),
            refresh_failed=exc.refresh_failed,
        )
        if code in (ErrorCode.TOOL_AUTHORIZATION_REQUIRED, ErrorCode.TOOL_AUTHORIZATION_FAILED):
            hint = sanitize_auth_hint(
                oauth_auth_hint(code, server.name, exc.scope, refresh_failed=exc.refresh_failed)
                if getattr(server.config, "auth", None) is not None
                else default_auth_hint(code, server.name)
            )
            return failed(code, hint["message"], {"auth_hint": hint})
        return failed(ErrorCode.TOOL_EXECUTION_FAILED, f"Tool {exposed!r} failed: {exc}")
    except Exception as exc:
        logger.warning("tool %s (%s on %s) failed: %s", exposed, tool, server.name, exc)
        return failed(
            ErrorCode.TOOL_EXECUTION_FAILED, f"Tool {exposed!r} failed: {type(exc).__name__}"
        )
    try:
        result = from_wire(CallToolResult, raw)
    except InvalidPayloadError as exc:
        return failed(
            ErrorCode.TOOL_EXECUTION_FAILED, f"Tool {exposed!r} returned an invalid result: {exc}"
        )
    if result.is_error:
        meta = dict(result.meta or {})
        meta.setdefault("error_code", int(ErrorCode.TOOL_EXECUTION_FAILED))
        meta.setdefault("mcp_server", server.name)
        meta.setdefault("mcp_tool", tool)
        result = attrs.evolve(result, meta=meta)
    return result
