"""What an :class:`~._server.McpServer` reports: its lifecycle status and the kinds of
notification it passes on (their own module: the server and its requests both read them)."""

from __future__ import annotations

import enum

__all__ = ["NotificationKind", "ServerStatus"]


class ServerStatus(enum.StrEnum):
    """Lifecycle of one MCP server."""

    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"
    DISABLED = "disabled"
    #: An OAuth server without a usable sign-in (``a2c-computer auth login``).
    NEEDS_AUTH = "needs_auth"


class NotificationKind(enum.StrEnum):
    TOOLS_CHANGED = "tools_changed"
    RESOURCES_CHANGED = "resources_changed"
    RESOURCE_UPDATED = "resource_updated"
