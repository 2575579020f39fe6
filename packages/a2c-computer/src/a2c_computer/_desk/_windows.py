"""The desk of the core: the ``window://`` resources each MCP server lists, and the desktop.

:class:`Desk` alone holds the window lists. Re-listing a server's windows (subscribing to
new ones, warning about shared hosts), the organized desktop (reading only the selected
windows) and one page of a server's ``resources/list``. The rules of the desktop are
pure, in :mod:`._desktop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence

from a2c_computer._mcp import McpServer, ServerStatus
from a2c_protocol import (
    CapabilityNotSupportedError,
    JsonObject,
    MCPServerConfig,
    McpServerNotFoundError,
)

from ._desktop import (
    CallRecord,
    WindowInfo,
    describe_window,
    host_collisions,
    list_changed_needs_refresh,
    organize,
    select_window,
    window_uri_set,
)

__all__ = ["Desk"]

logger = logging.getLogger("a2c_computer")


class Desk:
    """Keep the windows current and organize them into the desktop.

    ``server`` finds a running MCP server by name, ``servers`` gives the configured ones
    and ``history`` the recent tool calls (the desktop orders windows by them).
    """

    def __init__(
        self,
        server: Callable[[str], McpServer | None],
        servers: Callable[[], Mapping[str, MCPServerConfig]],
        history: Callable[[], Sequence[CallRecord]],
    ) -> None:
        self._server = server
        self._configured = servers
        self._history = history
        self._windows: dict[str, list[WindowInfo]] = {}
        self._window_sets: dict[str, frozenset[str]] = {}

    def count(self, server: str) -> int:
        """How many windows ``server`` listed last."""
        return len(self._windows.get(server, []))

    def forget(self, server: str) -> bool:
        """Drop ``server``'s windows (it went down or left); True if it had any."""
        self._window_sets.pop(server, None)
        return bool(self._windows.pop(server, None))

    async def refresh(self, server: McpServer, *, initial: bool = False) -> bool:
        """Re-list the server's windows; True when its window URI set changed."""
        if not server.can_subscribe:
            if initial and server.has_resources:
                logger.info(
                    "MCP server %s has resources but no resources.subscribe; no windows",
                    server.name,
                )
            self._windows[server.name] = []
            return False
        resources = await server.list_all("resources/list", "resources")
        infos = [i for r in resources if (i := describe_window(server.name, r)) is not None]
        current = window_uri_set(resources)
        old = self._window_sets.get(server.name)
        self._windows[server.name] = infos
        self._window_sets[server.name] = current
        new_uris = current - (old or frozenset())
        for info in infos:
            if info.key in new_uris:
                with contextlib.suppress(Exception):
                    await server.request(
                        "resources/subscribe", {"uri": info.resource["uri"]}, timeout=10
                    )
        if initial or new_uris:
            self._warn_host_collisions(server.name)
        return list_changed_needs_refresh(old, current) and not (initial and not current)

    def _warn_host_collisions(self, name: str) -> None:
        hosts = {s: {w.uri.host for w in ws} for s, ws in self._windows.items()}
        for host, servers in host_collisions(hosts).items():
            if name in servers:
                logger.warning(
                    "window host %r of MCP server %s is also used by %s (hosts SHOULD be unique)",
                    host,
                    name,
                    ", ".join(s for s in servers if s != name),
                )

    def windows(self) -> list[WindowInfo]:
        """The discovered windows in enumeration order (servers alphabetically)."""
        return [w for name in sorted(self._windows) for w in self._windows[name]]

    async def desktop(self, size: int | None = None, window: str | None = None) -> list[str]:
        """The organized desktop; ``window`` keeps only the windows with exactly that URI.

        Only the selected windows are read (their current content).
        """
        if size is not None and size <= 0:
            return []
        infos = select_window(self.windows(), window)
        contents = await asyncio.gather(*(self._read_window(w) for w in infos))
        shown = list(zip(infos, contents, strict=True))
        return organize(shown, size, list(self._history()), window)

    async def _read_window(self, info: WindowInfo) -> list[JsonObject] | None:
        server = self._server(info.server)
        if server is None or server.status is not ServerStatus.READY:
            return None
        try:
            result = await server.request(
                "resources/read", {"uri": info.resource["uri"]}, timeout=30
            )
        except Exception as exc:
            logger.warning("window %s: resources/read failed: %s", info.key, exc)
            return None
        contents = result.get("contents")
        return [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else None

    async def list_resources(
        self, mcp_server: str, cursor: str | None = None
    ) -> tuple[list[JsonObject], str | None]:
        """One page of the server's ``resources/list``, unchanged.

        Raises :class:`McpServerNotFoundError` (4014) for an unknown, disabled or not
        running server and :class:`CapabilityNotSupportedError` (4015) without ``resources``.
        """
        server = self._server(mcp_server)
        config = self._configured().get(mcp_server)
        if (
            server is None
            or config is None
            or config.disabled
            or server.status is not ServerStatus.READY
        ):
            raise McpServerNotFoundError(
                f"MCP server {mcp_server!r} is not registered or not running on this Computer",
                mcp_server_name=mcp_server,
            )
        if not server.has_resources:
            raise CapabilityNotSupportedError(
                f"MCP server {mcp_server!r} lacks the 'resources' capability",
                mcp_server_name=mcp_server,
                capability="resources",
            )
        page = await server.request("resources/list", {"cursor": cursor} if cursor else None)
        resources = [r for r in page.get("resources") or [] if isinstance(r, dict)]
        next_cursor = page.get("nextCursor")
        return resources, next_cursor if isinstance(next_cursor, str) and next_cursor else None
