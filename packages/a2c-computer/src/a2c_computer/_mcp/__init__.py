"""The MCP client side of the Computer: one :class:`McpServer` per configured MCP server.

The room holds the thin adapter around the ``mcp`` client library: transports, the session
loop, requests and their failures. Other modules import from here, never from its modules.
"""

from ._server import McpCallFailure, McpServer, NotificationKind, ServerStatus
from ._server import _describe as _describe  # the tests check its redaction

__all__ = [
    "McpCallFailure",
    "McpServer",
    "NotificationKind",
    "ServerStatus",
]
