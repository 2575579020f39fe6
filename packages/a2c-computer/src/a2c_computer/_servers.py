"""The MCP servers of the core: their lifecycle and what they tell it.

Starting and stopping every configured server, launching one (its parameters resolved
just in time), and the callbacks of a server that became ready, went down or sent a
notification: each refreshes the tool list and the windows and tells the listeners. Also
the status of every configured server, as the metrics and ``client:get_config`` show it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import attrs

from a2c_protocol import Event, JsonObject, MCPServerConfig, to_wire

from ._desk._desktop import updated_needs_refresh
from ._desk._windows import WindowsMixin
from ._exceptions import ComputerStateError
from ._mcp import McpServer, NotificationKind, ServerStatus
from ._tools import ToolsMixin

__all__ = ["ServerState", "ServersMixin"]

logger = logging.getLogger("a2c_computer")


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


class ServersMixin(ToolsMixin, WindowsMixin):
    """Start, stop and follow the MCP servers; report their states."""

    # -- lifecycle -----------------------------------------------------------

    async def start(self, *, wait: float | None = None) -> None:
        """Start every enabled server; wait (up to ``wait`` s) for each first attempt.

        Starting a running Computer starts nothing more: it only waits like the first call.
        """
        if self._running:
            # Launching again would replace each server's handle and orphan its process.
            logger.debug("start() on a running Computer: its servers keep running")
        else:
            self._running = True
            for name, config in self._config.servers.items():
                if not config.disabled:
                    self._launch(name, config)
        await self.wait_settled(wait if wait is not None else self._start_timeout + 5)

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
        """Stop every server (kills stdio children) and cancel in-flight calls."""
        self._running = False
        self._asks.close()  # calls waiting for an Agent's answer: cancelled
        for task in list(self._inflight.values()):
            task.cancel()
        await asyncio.gather(*(s.stop() for s in self._servers.values()), return_exceptions=True)
        for task in list(self._side):
            task.cancel()
        await asyncio.gather(*self._side, return_exceptions=True)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def _launch(self, name: str, config: MCPServerConfig) -> None:
        async def params() -> Mapping[str, Any]:
            authored: JsonObject = to_wire(config.server_parameters)
            return await self._resolver.resolve_params(authored, server=name)

        server = McpServer(
            config,
            name=name,
            params=params,
            on_ready=self._server_ready,
            on_down=self._server_down,
            on_notification=self._server_notification,
            restart=self._restart,
            start_timeout=self._start_timeout,
            inputs=self._asks.callbacks(name),
        )
        self._servers[name] = server
        server.start()

    # -- server callbacks ------------------------------------------------------

    async def _server_ready(self, server: McpServer) -> None:
        async with self._lock(server.name):
            await self._refresh_tools(server)
            await self._refresh_windows(server, initial=True)
        self._rebuild_and_announce()
        # A (re)started server with windows changes the desktop (desktop-and-windows.md §6).
        if self._windows.get(server.name):
            await self._announce(Event.UPDATE_DESKTOP)
        await self._tell("server_ready", server)

    async def _server_down(self, server: McpServer) -> None:
        self._tools.pop(server.name, None)
        had_windows = bool(self._windows.pop(server.name, None))
        self._window_sets.pop(server.name, None)
        self._rebuild_and_announce()
        if had_windows:
            await self._announce(Event.UPDATE_DESKTOP)
        await self._tell("server_down", server.name, stopped=server.stopping)

    def _server_notification(
        self, server: McpServer, kind: NotificationKind, uri: str | None
    ) -> None:
        self._spawn(self._handle_notification(server, kind, uri))

    async def _handle_notification(
        self, server: McpServer, kind: NotificationKind, uri: str | None
    ) -> None:
        try:
            if kind is NotificationKind.TOOLS_CHANGED:
                async with self._lock(server.name):
                    await self._refresh_tools(server)
                self._registry = self._build_registry()
                await self._announce(Event.UPDATE_TOOL_LIST)
            elif kind is NotificationKind.RESOURCES_CHANGED:
                await self._tell("resources_changed", server)
                async with self._lock(server.name):
                    changed = await self._refresh_windows(server)
                if changed:
                    await self._announce(Event.UPDATE_DESKTOP)
                else:
                    logger.debug(
                        "MCP server %s: resource list changed, window set did not", server.name
                    )
            elif kind is NotificationKind.RESOURCE_UPDATED and uri is not None:
                await self._tell("resource_updated", server, uri)
                if updated_needs_refresh(uri):
                    await self._announce(Event.UPDATE_DESKTOP)
        except Exception as exc:
            # While stopping, a notification racing the shutdown is expected to fail.
            level = logging.WARNING if self._running else logging.DEBUG
            logger.log(level, "MCP server %s: handling %s failed: %s", server.name, kind, exc)

    # -- reading -------------------------------------------------------------

    def server_states(self) -> dict[str, ServerState]:
        """Status of every configured server (disabled ones included)."""
        out: dict[str, ServerState] = {}
        for name, config in self._config.servers.items():
            server = self._servers.get(name)
            if server is None or config.disabled:
                out[name] = ServerState(name, ServerStatus.DISABLED.value, None, 0, 0, 0)
                continue
            out[name] = ServerState(
                name,
                server.status.value,
                server.last_error,
                server.restarts,
                len(self._tools.get(name, [])),
                len(self._windows.get(name, [])),
                server.protocol_version,
            )
        return out

    def server(self, name: str) -> McpServer | None:
        return self._servers.get(name)

    async def wait_ready(self, name: str, timeout: float = 30.0) -> None:
        server = self._servers.get(name)
        if server is None:
            raise ComputerStateError(f"MCP server {name!r} is not running")
        await server.wait_ready(timeout)
