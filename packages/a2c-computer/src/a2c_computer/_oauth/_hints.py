"""What an Agent is told about an OAuth server that cannot serve a call (pure).

Rules:

* 4006 (a sign-in is needed: none yet, or the token was refused), 4007 for a sign-in that
  stopped working (its refresh was refused: a revoked or expired grant, errors.md §4.1) and
  4007 for a 403 ``insufficient_scope``, which names the scope asked for; each carries an
  ``auth_hint`` whose message says what to run on the Computer's host;
* a tool of a server that is ``needs_auth`` has left the tool list, but a call naming it
  (a name it exposed before, a ``tool_meta`` alias or its ``tool_prefix``) is answered 4006
  for that server, not "tool not found".
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from a2c_computer._toolcalls._confirm import error_result
from a2c_protocol import CallToolResult, ErrorCode, MCPServerConfig

from ._provider import sign_in_hint

__all__ = ["needs_auth_owner", "needs_auth_result", "oauth_auth_hint"]


def oauth_auth_hint(
    code: int, server: str, scope: str | None = None, *, refresh_failed: bool = False
) -> dict[str, str]:
    """The ``auth_hint`` of a 4006 / 4007 from OAuth server ``server``."""
    if code == ErrorCode.TOOL_AUTHORIZATION_FAILED and refresh_failed:
        return {
            "action": "user_authorization_required",
            "message": f"The sign-in to MCP server {server} is no longer valid (revoked or "
            f"expired); on the Computer's host run `{sign_in_hint(server)}`, then retry.",
        }
    if code == ErrorCode.TOOL_AUTHORIZATION_FAILED:
        wanted = f" the scope {scope!r}" if scope else " more permissions"
        # The scope comes from the MCP server: quoted, so a hostile one cannot smuggle a
        # second command into the line a user is told to paste into a shell.
        extra = f" --scope {shlex.quote(scope.split()[0])}" if scope and scope.split() else ""
        return {
            "action": "scope_step_up_required",
            "message": f"MCP server {server} needs{wanted} that its sign-in lacks; on the "
            f"Computer's host run `a2c-computer auth login {shlex.quote(server)}{extra}`, "
            "then retry.",
        }
    return {
        "action": "user_authorization_required",
        "message": f"MCP server {server} needs a sign-in; on the Computer's host run "
        f"`{sign_in_hint(server)}`, then retry.",
    }


def needs_auth_owner(
    tool: str,
    waiting: Mapping[str, frozenset[str]],
    configs: Mapping[str, MCPServerConfig],
) -> str | None:
    """The ``needs_auth`` server (``waiting``: name → names it exposed) ``tool`` is of."""
    for name in sorted(waiting):
        if tool in waiting[name]:
            return name
    for name in sorted(waiting):
        config = configs.get(name)
        if config is None:
            continue
        if any(meta is not None and meta.alias == tool for meta in config.tool_meta.values()):
            return name
        if config.tool_prefix and tool.startswith(config.tool_prefix):
            return name
    return None


def needs_auth_result(tool: str, server: str, *, lost: bool = False) -> CallToolResult:
    """The answer to a call of ``tool`` whose OAuth server ``server`` needs a sign-in:
    4006, or 4007 when its sign-in was ``lost`` (refresh refused)."""
    code = ErrorCode.TOOL_AUTHORIZATION_FAILED if lost else ErrorCode.TOOL_AUTHORIZATION_REQUIRED
    hint = oauth_auth_hint(code, server, refresh_failed=lost)
    return error_result(
        code,
        f"Tool {tool!r} was not called: " + hint["message"],
        mcp_server=server,
        extra={"auth_hint": hint},
    )
