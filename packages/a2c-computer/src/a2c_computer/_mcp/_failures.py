"""How an MCP request or session fails: :class:`McpCallFailure` and the one-line, secret-free
descriptions of what went wrong (shared by the session loop, the requests and the streams)."""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.types import CONNECTION_CLOSED

from a2c_computer._auth import redact_text
from a2c_computer._exceptions import ComputerError
from a2c_computer._observe._logging import SECRETS
from a2c_protocol import MCPServerConfig, StdioServerConfig

__all__ = ["McpCallFailure", "closed_message", "describe_error", "failure_of", "http_status_of"]


class McpCallFailure(ComputerError):
    """An MCP request failed; ``http_status`` is set for an HTTP refusal upstream
    (``scope``: what a 403 ``insufficient_scope`` asked for)."""

    def __init__(
        self,
        message: str,
        *,
        http_status: int | None = None,
        connection_lost: bool = False,
        scope: str | None = None,
    ) -> None:
        self.http_status = http_status
        self.connection_lost = connection_lost
        self.scope = scope
        #: An OAuth refresh was refused (errors.md §4.1: 4007, not 4006).
        self.refresh_failed = False
        super().__init__(message)


def http_status_of(exc: MCPError) -> int | None:
    """The HTTP status of a refusal the Computer's HTTP transport turned into ``exc``."""
    data: Any = exc.error.data
    status = data.get("a2c_http_status") if isinstance(data, dict) else None
    return status if isinstance(status, int) else None


def failure_of(exc: MCPError, server: str) -> McpCallFailure:
    if exc.code == CONNECTION_CLOSED:
        return McpCallFailure(f"MCP server {server}: connection closed", connection_lost=True)
    status = http_status_of(exc)
    if status is not None:
        data = exc.error.data
        scope = data.get("a2c_scope") if isinstance(data, dict) else None
        return McpCallFailure(
            f"MCP server {server}: upstream answered HTTP {status}",
            http_status=status,
            scope=scope if isinstance(scope, str) else None,
        )
    return McpCallFailure(f"MCP server {server}: {exc.message}")


def closed_message(config: MCPServerConfig) -> str:
    if isinstance(config, StdioServerConfig):
        return "the MCP server closed the connection (process exited?)"
    return "the MCP server's HTTP stream ended (server restarted or connection dropped)"


def describe_error(exc: BaseException) -> str:
    """A one-line, secret-free description (URLs may carry resolved credentials)."""
    return redact_text(SECRETS.redact(_explain(exc)))


def _explain(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_explain(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"
