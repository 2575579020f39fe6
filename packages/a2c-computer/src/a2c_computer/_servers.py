"""The fleet of the core: the MCP servers, their lifecycle and their locks.

:class:`Fleet` alone holds the running :class:`McpServer` handles, whether the Computer is
running, and one lock per server (its tools and windows are re-listed one refresh at a
time). It launches a server (its parameters resolved just in time) and stops them; what a
server tells (ready, down, a notification) goes up through the callbacks it is given. Also
:class:`ServerState`, the status of one configured server as the metrics and
``client:get_config`` show it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from a2c_protocol import JsonObject, MCPServerConfig, to_wire

from ._config import InputResolver, safe_error
from ._mcp import InputCallbacks, McpServer, NotificationKind, ServerStatus

__all__ = ["Fleet", "ServerState"]


@attrs.frozen
class ServerState:
    """Status of one configured MCP server."""

    name: str
    status: str
    last_error: str | None
    restarts: int
    tools: int
    windows: int
    #: The MCP protocol version its session negotiated (``"2025-11-25"``: the handshake
    #: era; ``"2026-07-28"``: the modern one); None until a session started.
    protocol: str | None = None


class Fleet:
    """Start, stop and hold the MCP servers; what they tell goes to the callbacks."""

    def __init__(
        self,
        *,
        resolver: InputResolver,
        inputs: Callable[[str], InputCallbacks],
        on_ready: Callable[[McpServer], Awaitable[None]],
        on_down: Callable[[McpServer], Awaitable[None]],
        on_notification: Callable[[McpServer, NotificationKind, str | None], None],
        restart: bool,
        start_timeout: float,
    ) -> None:
        self._resolver = resolver
        self._inputs = inputs
        self._on_ready = on_ready
        self._on_down = on_down
        self._on_notification = on_notification
        self._restart = restart
        self.start_timeout = start_timeout
        self._servers: dict[str, McpServer] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._running = False

    # -- reading -------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Started and not stopped since."""
        return self._running

    def server(self, name: str) -> McpServer | None:
        return self._servers.get(name)

    def names(self) -> list[str]:
        """The servers launched and not removed (whatever their status)."""
        return list(self._servers)

    def waiting_for_sign_in(self) -> list[McpServer]:
        return [s for s in self._servers.values() if s.status is ServerStatus.NEEDS_AUTH]

    def down(self, configured: Mapping[str, MCPServerConfig]) -> dict[str, str | None]:
        """Enabled servers that are not ready, with their last error (none once stopped)."""
        if not self._running:
            return {}
        return {
            name: safe_error(server.last_error) or server.status.value
            for name, server in self._servers.items()
            if server.status is not ServerStatus.READY
            and not getattr(configured.get(name), "disabled", True)
        }

    def lock(self, name: str) -> asyncio.Lock:
        """The lock of server ``name``: its tools and windows are re-listed one at a time."""
        return self._locks.setdefault(name, asyncio.Lock())

    # -- lifecycle -----------------------------------------------------------

    def start(self, configured: Mapping[str, MCPServerConfig]) -> bool:
        """Launch every enabled server; False (nothing launched) when already running."""
        if self._running:
            return False
        self._running = True
        for name, config in configured.items():
            if not config.disabled:
                self.launch(name, config)
        return True

    def launch(self, name: str, config: MCPServerConfig) -> None:
        async def params() -> Mapping[str, Any]:
            authored: JsonObject = to_wire(config.server_parameters)
            return await self._resolver.resolve_params(authored, server=name)

        server = McpServer(
            config,
            name=name,
            params=params,
            on_ready=self._on_ready,
            on_down=self._on_down,
            on_notification=self._on_notification,
            restart=self._restart,
            start_timeout=self.start_timeout,
            inputs=self._inputs(name),
        )
        self._servers[name] = server
        server.start()

    async def remove(self, name: str) -> None:
        """Stop server ``name`` and forget its handle."""
        await self._servers.pop(name).stop()

    async def wait_settled(self, timeout: float) -> None:
        """Wait until every server's first start attempt has finished."""
        waits = [asyncio.ensure_future(s.wait_settled()) for s in self._servers.values()]
        if not waits:
            return
        # Not wait_for(gather(...)): cancelled (a start given up, see Computer.__aenter__),
        # that leaves a gathering future whose CancelledError nobody reads, logged at exit.
        try:
            await asyncio.wait(waits, timeout=timeout)
        finally:
            for wait in waits:
                wait.cancel()

    async def stop(self) -> None:
        """Not running any more; stop every server (kills stdio children)."""
        self._running = False
        await asyncio.gather(*(s.stop() for s in self._servers.values()), return_exceptions=True)
