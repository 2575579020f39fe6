"""The tool list of the core: what each MCP server lists, merged into one registry.

Re-listing a server's tools, rebuilding the registry (what each server exposed when last
listed is remembered for the answers about a server that is down, and each name clash is
warned about once), and announcing ``UPDATE_TOOL_LIST`` when the exposed tools change.
The merging rules themselves are pure, in :mod:`._registry`.
"""

from __future__ import annotations

import logging

from a2c_protocol import Event, SMCPTool

from ._core import CoreBase
from ._mcp import McpServer
from ._registry import Clash, ToolRegistry, build_registry, clash_advice

__all__ = ["ToolsMixin"]

logger = logging.getLogger("a2c_computer")


class ToolsMixin(CoreBase):
    """Keep the registry of exposed tools current."""

    async def _refresh_tools(self, server: McpServer) -> None:
        caps = server.capabilities
        if caps is None or caps.tools is None:
            self._tools[server.name] = []
            return
        self._tools[server.name] = await server.list_all("tools/list", "tools")

    def _build_registry(self) -> ToolRegistry:
        running = {n: t for n, t in self._tools.items() if n in self._servers}
        registry = build_registry(self._config.servers, running)
        # What each server exposed when last listed: a call to one of these while the
        # server is down (or waiting for a sign-in) is answered 4014 (4006), not "not found".
        for name in running:
            self._last_listed[name] = frozenset(
                e.exposed for e in registry.entries.values() if e.server == name
            )
        for name in set(self._last_listed) - set(self._config.servers):
            del self._last_listed[name]
        # Each clash is warned about once, not at every rebuild of the tool list.
        fresh = [c for c in registry.clashes if c not in self._warned_clashes]
        self._warned_clashes.update(fresh)
        for line in clash_advice(fresh, self._config.servers):
            logger.warning("tool name clash: %s", line)
        for name, server in registry.needs_tasks.items():
            if (name, server) not in self._warned_task_only:
                self._warned_task_only.add((name, server))
                logger.warning(
                    "tool %s of MCP server %s is not offered: it can only run as an MCP task "
                    "(execution.taskSupport: required), which this Computer does not support",
                    name,
                    server,
                )
        return registry

    def task_only_tools(self) -> dict[str, str]:
        """Tools not offered because they need MCP task augmentation: name → MCP server."""
        return dict(self._registry.needs_tasks)

    def clashes(self) -> tuple[Clash, ...]:
        """Tools left out because another MCP server exposes the same name."""
        return self._registry.clashes

    def _rebuild_and_announce(self) -> None:
        before = self._registry.fingerprint()
        self._registry = self._build_registry()
        # During update_config the tool list is announced once, at its end.
        if self._registry.fingerprint() != before and not self._holding_tool_list:
            self._spawn(self._announce(Event.UPDATE_TOOL_LIST))

    def tools(self) -> list[SMCPTool]:
        """The tools an Agent sees."""
        return self._registry.tools()

    def tool_server(self, exposed_name: str) -> str | None:
        """The MCP server owning an exposed tool name (None if not exposed)."""
        entry = self._registry.lookup(exposed_name).entry
        return entry.server if entry is not None else None
