"""Which MCP protocol era a session speaks to one server: :func:`open_session`.

The eras: the *handshake* era (``initialize``, protocol 2024-11-05 .. 2025-11-25, a session
per process or per ``Mcp-Session-Id``) and the *modern* era (2026-07-28: no handshake,
``server/discover``, every request carries its version, identity and capabilities in
``_meta``). mcp 2's client speaks both; its servers (``MCPServer``, FastMCP 4) serve both
and let the client's first request choose.

Rules, per server (config key ``mcp_era``):

* ``"handshake"``: ``initialize`` only.
* ``"modern"``: ``server/discover`` only (retried once at a version the server names in a
  -32022 answer).
* ``"auto"`` (the default): ``initialize`` first, and a server that answers it is spoken
  to in the handshake era even when it also speaks 2026-07-28. Only there can a tool ask
  the user or the model with a server-initiated request (``ctx.elicit``,
  ``ctx.session.create_message``, ``list_roots``): with mcp 2.3 and FastMCP 4.1.6 such a
  tool fails on a 2026-07-28 connection ("no back-channel for server-initiated
  requests"), while tools written with the era-agnostic resolvers (``Elicit``, ``Sample``,
  ``ListRoots``) work in both; most servers today use ``ctx.elicit``. A server that
  refuses ``initialize`` with a JSON-RPC error (a modern-only one: -32022 naming its
  versions, or any other code, which the 2026-07-28 spec leaves to the implementation)
  is asked ``server/discover``; when that fails too the start fails naming both answers.
  (``mcp``'s own ``Client(mode="auto")`` probes ``server/discover`` first and so lands
  on 2026-07-28 with every mcp 2 server, breaking those tools: measured, see
  docs/computer.md.)
* an HTTP refusal (401/403/5xx, which the Computer's transports turn into an error that
  carries the status) and a lost transport are no era verdict: they fail the start as
  they are, so a server that needs a sign-in stays ``needs_auth``.
* SSE speaks the handshake era only (2026-07-28 has no SSE transport; the config check
  refuses ``"modern"`` there).
"""

from __future__ import annotations

from typing import Final

from mcp import ClientSession, MCPError
from mcp.types import CONNECTION_CLOSED
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from a2c_protocol import McpEra

from ._failures import McpCallFailure, http_status_of

__all__ = ["HANDSHAKE", "MODERN", "era_of", "open_session"]

HANDSHAKE: Final = "handshake"
MODERN: Final = "modern"


def era_of(protocol_version: str | None) -> str | None:
    """``"handshake"`` or ``"modern"`` for a negotiated version (None before one is)."""
    if protocol_version is None:
        return None
    return HANDSHAKE if protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else MODERN


async def open_session(session: ClientSession, era: McpEra | None, server: str) -> None:
    """Negotiate ``session`` in the era the rules above choose; raises on failure."""
    if era == MODERN:
        await _discover(session, server)
        return
    if era == HANDSHAKE:
        await session.initialize()
        return
    try:
        await session.initialize()
    except MCPError as refused:
        if _no_verdict(refused):
            raise
        try:
            await session.discover()
        except (MCPError, RuntimeError) as also:
            raise McpCallFailure(
                f"MCP server {server} answers neither initialize ({_said(refused)}) nor "
                f"server/discover ({_said(also)})"
            ) from also


async def _discover(session: ClientSession, server: str) -> None:
    """``mcp_era: modern``: ``server/discover`` only."""
    try:
        await session.discover()
    except (MCPError, RuntimeError) as exc:
        if isinstance(exc, MCPError) and _no_verdict(exc):
            raise
        raise McpCallFailure(
            f"MCP server {server} does not speak MCP 2026-07-28 (mcp_era: modern): "
            f"server/discover answered {_said(exc)}"
        ) from exc


def _no_verdict(exc: MCPError) -> bool:
    """A lost transport or an HTTP refusal (sign-in, outage): no verdict on the era."""
    return exc.code == CONNECTION_CLOSED or http_status_of(exc) is not None


def _said(exc: Exception) -> str:
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    return str(exc)
