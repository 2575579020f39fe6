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

import contextlib
import logging
from typing import Literal, overload

import attrs

from a2c_computer._auth import classify_upstream_failure, default_auth_hint, sanitize_auth_hint
from a2c_computer._mcp import INPUT_REQUIRED, McpCallFailure, McpServer
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

__all__ = ["McpInputRequired", "invoke_tool"]

logger = logging.getLogger("a2c_computer")


def _credentials_configured(config: MCPServerConfig) -> bool:
    if isinstance(config, StreamableServerConfig | SseServerConfig):
        headers = config.server_parameters.headers or {}
        return any(k.lower() in ("authorization", "x-api-key", "cookie") for k in headers)
    return True


@attrs.frozen
class McpInputRequired:
    """A 2026-07-28 ``input_required`` result, returned only to a caller that takes one."""

    raw: JsonObject


@overload
async def invoke_tool(
    server: McpServer,
    tool: str,
    exposed: str,
    params: JsonObject,
    timeout: float | None,
    extras: CallExtras | None = None,
    *,
    resume: tuple[JsonObject | None, str | None] | None = None,
    take_input_required: Literal[False] = False,
) -> CallToolResult: ...


@overload
async def invoke_tool(
    server: McpServer,
    tool: str,
    exposed: str,
    params: JsonObject,
    timeout: float | None,
    extras: CallExtras | None = None,
    *,
    resume: tuple[JsonObject | None, str | None] | None = None,
    take_input_required: Literal[True],
) -> CallToolResult | McpInputRequired: ...


async def invoke_tool(
    server: McpServer,
    tool: str,
    exposed: str,
    params: JsonObject,
    timeout: float | None,
    extras: CallExtras | None = None,
    *,
    resume: tuple[JsonObject | None, str | None] | None = None,
    take_input_required: bool = False,
) -> CallToolResult | McpInputRequired:
    """Call MCP tool ``tool`` (exposed to Agents as ``exposed``) within ``timeout`` s (None:
    no limit here). With ``take_input_required`` a 2026-07-28 ``input_required`` result
    comes back as :class:`McpInputRequired`; ``resume`` is the ``inputResponses`` and
    ``requestState`` answering the previous one (docs/compatibility.md, input requests)."""
    where: JsonObject = {"mcp_tool": tool}

    def failed(code: int, message: str, extra: JsonObject | None = None) -> CallToolResult:
        return error_result(code, message, mcp_server=server.name, extra={**where, **(extra or {})})

    limit = None if timeout is None else max(timeout, 0.001)
    try:
        if extras is None and resume is None and not take_input_required:
            raw = await server.call_tool(tool, params, limit)
        else:
            progress = extras.progress if extras is not None else None
            responses, state = resume if resume is not None else (None, None)
            with (
                extras.mcp_request()
                if extras is not None and extras.mcp_request is not None
                else contextlib.nullcontext({})
            ) as meta:
                raw = await server.call_tool(
                    tool, params, limit, progress, meta or None, input_responses=responses,
                    request_state=state, allow_input_required=take_input_required,
                )  # fmt: skip
    except TimeoutError:
        # 0.2.3: a2c_timeout next to 4004 tells a timeout from other failures.
        return timeout_result(
            f"Tool {exposed!r} timed out after {limit:g} s",
            extra={"mcp_server": server.name, **where},
        )
    except McpCallFailure as exc:
        if exc.connection_lost:
            return failed(
                ErrorCode.TOOL_EXECUTION_FAILED,
                f"Tool {exposed!r} failed: the MCP server {server.name} stopped responding "
                "(it will be restarted)",
            )
        # Only an HTTP refusal or a refused sign-in is an authorization matter: a JSON-RPC
        # error the MCP server answered itself (a tool that let a refused question escape,
        # "no back-channel") is that server's failure, whatever its credentials.
        code = (
            classify_upstream_failure(
                http_status=exc.http_status,
                credentials_configured=_credentials_configured(server.config),
                refresh_failed=exc.refresh_failed,
            )
            if exc.http_status is not None or exc.refresh_failed
            else ErrorCode.TOOL_EXECUTION_FAILED
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
    if take_input_required and raw.get("resultType") == INPUT_REQUIRED:
        return McpInputRequired(raw)
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
