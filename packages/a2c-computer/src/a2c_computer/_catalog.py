"""The tool catalog of the core: what each MCP server lists, merged into one registry.

It alone holds the tool lists, the registry built from them, what each server exposed
when last listed (for the answers about a server that is down) and the clashes already
warned about. It announces ``UPDATE_TOOL_LIST`` when the exposed tools change, except
while :meth:`ToolCatalog.holding` (a reload announces once, at its end). The merging rules
themselves are pure, in :mod:`._registry`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Collection, Iterator, Mapping

from a2c_protocol import Event, JsonObject, MCPServerConfig, SMCPTool

from ._announcer import Announcer
from ._mcp import McpServer
from ._registry import Clash, Lookup, ToolRegistry, build_registry, clash_advice

__all__ = ["ToolCatalog"]

logger = logging.getLogger("a2c_computer")


class ToolCatalog:
    """Keep the registry of exposed tools current.

    ``servers`` gives the configured servers and ``running`` the names of the servers
    running now, both read at each rebuild.
    """

    def __init__(
        self,
        servers: Callable[[], Mapping[str, MCPServerConfig]],
        running: Callable[[], Collection[str]],
        announcer: Announcer,
    ) -> None:
        self._configured = servers
        self._running = running
        self._announcer = announcer
        self._tools: dict[str, list[JsonObject]] = {}
        self._last_listed: dict[str, frozenset[str]] = {}
        self._registry = build_registry({}, {})
        self._warned_clashes: set[Clash] = set()
        self._warned_task_only: set[tuple[str, str]] = set()
        self._holding = False

    # -- reading -------------------------------------------------------------

    @property
    def registry(self) -> ToolRegistry:
        return self._registry

    def lookup(self, exposed_name: str) -> Lookup:
        return self._registry.lookup(exposed_name)

    def count(self, server: str) -> int:
        """How many tools ``server`` listed last."""
        return len(self._tools.get(server, []))

    def last_listed(self, server: str) -> frozenset[str]:
        """What ``server`` exposed when last listed (empty if never)."""
        return self._last_listed.get(server, frozenset())

    def tools(self) -> list[SMCPTool]:
        return self._registry.tools()

    # -- changing ------------------------------------------------------------

    async def refresh(self, server: McpServer) -> None:
        """Re-list ``server``'s tools (the registry is rebuilt by the caller)."""
        caps = server.capabilities
        if caps is None or caps.tools is None:
            self._tools[server.name] = []
            return
        self._tools[server.name] = await server.list_all("tools/list", "tools")

    def forget(self, server: str) -> None:
        """Drop ``server``'s tool list (it went down or left)."""
        self._tools.pop(server, None)

    def rebuild(self) -> None:
        """Rebuild the registry from the tool lists of the running servers."""
        configured = self._configured()
        live = set(self._running())
        running = {n: t for n, t in self._tools.items() if n in live}
        registry = build_registry(configured, running)
        # What each server exposed when last listed: a call to one of these while the
        # server is down (or waiting for a sign-in) is answered 4014 (4006), not "not found".
        for name in running:
            self._last_listed[name] = frozenset(
                e.exposed for e in registry.entries.values() if e.server == name
            )
        for name in set(self._last_listed) - set(configured):
            del self._last_listed[name]
        # Each clash is warned about once, not at every rebuild of the tool list.
        fresh = [c for c in registry.clashes if c not in self._warned_clashes]
        self._warned_clashes.update(fresh)
        for line in clash_advice(fresh, configured):
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
        self._registry = registry

    def rebuild_and_announce(self) -> None:
        """Rebuild; announce ``UPDATE_TOOL_LIST`` in the background when the tools changed."""
        before = self._registry.fingerprint()
        self.rebuild()
        if self._registry.fingerprint() != before and not self._holding:
            self._announcer.spawn(self._announcer.announce(Event.UPDATE_TOOL_LIST))

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """No ``UPDATE_TOOL_LIST`` from :meth:`rebuild_and_announce` inside; the registry is
        rebuilt on the way out (the caller announces the change once)."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            self.rebuild()
