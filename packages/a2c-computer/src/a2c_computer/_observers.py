"""What a part of the Computer implements to follow its MCP servers (e.g. the skills)."""

from __future__ import annotations

from typing import Protocol

from ._mcp import McpServer

__all__ = ["ServerObserver"]


class ServerObserver(Protocol):
    """Told by the Computer, in order, as MCP servers come, go and change.

    Each method is awaited; an exception is logged and does not affect the Computer.
    """

    async def server_ready(self, server: McpServer) -> None:
        """``server`` (re)connected and its tools and windows were listed."""

    async def server_down(self, server_name: str, *, stopped: bool = False) -> None:
        """``server_name`` lost its session (it may come back); ``stopped``: it was stopped
        on purpose (the Computer is stopping, or a reload stopped it)."""

    async def server_removed(self, server_name: str) -> None:
        """``server_name`` left the configuration."""

    async def resources_changed(self, server: McpServer) -> None:
        """``server`` sent ``notifications/resources/list_changed``."""

    async def resource_updated(self, server: McpServer, uri: str) -> None:
        """``server`` sent ``notifications/resources/updated`` for ``uri``."""
