"""The Computer's core: hosts MCP servers and answers for them (the I/O shell around the rules).

:class:`ComputerCore` owns collaborators and no tables; each piece of state has one owner:

* the announcer (:mod:`._announcer`): update listeners, server observers, background tasks;
* the fleet (:mod:`._servers`): the MCP server handles, their locks, whether it runs;
* the tool catalog (:mod:`._catalog`): tool lists, the registry, clash warnings;
* the desk (:mod:`._desk._windows`): the windows, the desktop, ``resources/list`` pages;
* the call runner (:mod:`._toolcalls._calls`): calls in flight, cancels, history,
  confirmation, VRL; the one place a tool call is finished;
* the input relay (:mod:`._asks._relay`): MCP servers' input requests during calls.

The core wires them: what a server tells the fleet (ready, down, a notification) comes
up here, refreshes the catalog and the desk and tells the announcer. Here live also its
construction from a configuration and the applying of a new one
(:meth:`ComputerCore.update_config`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal, Self

from a2c_protocol import (
    CANCEL_REASON_AGENT_REQUESTED,
    CallToolResult,
    ComputerConfig,
    Event,
    JsonObject,
    MCPServerConfig,
    SMCPTool,
)
from a2c_protocol._input import DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_REQUESTS_PER_ROUND

from ._announcer import Announcer, UpdateListener
from ._asks._relay import DEFAULT_INPUT_TIMEOUT, InputRelay
from ._bundles import Bundles
from ._catalog import ToolCatalog
from ._config import InputResolver, PromptFn, load_config, plan_reload
from ._desk._desktop import CallRecord, WindowInfo, updated_needs_refresh
from ._desk._windows import Desk
from ._exceptions import ComputerStateError, ConfigError
from ._mcp import McpServer, NotificationKind, ServerStatus
from ._observers import ServerObserver
from ._registry import Clash
from ._servers import Fleet, ServerState
from ._toolcalls._calls import CallRunner, ResultFinisher
from ._toolcalls._confirm import ConfirmCallback, ConfirmRequest, error_result
from ._toolcalls._extensions import CallExtras, InputAnswer
from ._toolcalls._vrl import VrlProgram

__all__ = [
    "ComputerCore",
    "ConfirmCallback",
    "ConfirmRequest",
    "ResultFinisher",
    "ServerState",
    "UpdateListener",
    "error_result",
]

logger = logging.getLogger("a2c_computer")


class ComputerCore:
    """MCP servers, tools, windows and tool calls, without any Socket.IO."""

    def __init__(
        self,
        config: ComputerConfig | Mapping[str, Any] | str,
        *,
        confirm: ConfirmCallback | None = None,
        confirm_policy: Literal["allow", "deny"] = "allow",
        env: Mapping[str, str] | None = None,
        prompt: PromptFn | None = None,
        interactive: bool | None = None,
        restart: bool = True,
        start_timeout: float = 30.0,
        history_size: int = 10,
        input_timeout: float = DEFAULT_INPUT_TIMEOUT,
        max_input_requests_per_round: int = DEFAULT_MAX_REQUESTS_PER_ROUND,
        max_input_requests_per_call: int = DEFAULT_MAX_REQUESTS_PER_CALL,
    ) -> None:
        caps = {"max_input_requests_per_round": max_input_requests_per_round,
                "max_input_requests_per_call": max_input_requests_per_call}  # fmt: skip
        for name, cap in caps.items():
            if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
                raise ConfigError(f"{name} must be a positive integer, not {cap!r}")
        self._config = load_config(config)
        self._resolver = InputResolver(
            self._config.inputs, env=env, prompt=prompt, interactive=interactive
        )
        self._asks = InputRelay(
            input_timeout,
            self._roots_of,
            per_round=max_input_requests_per_round,
            per_call=max_input_requests_per_call,
        )
        self._asks.rooted = _rooted(self._config)
        self._announcer = Announcer()
        self._fleet = Fleet(
            resolver=self._resolver,
            inputs=self._asks.callbacks,
            on_ready=self._server_ready,
            on_down=self._server_down,
            on_notification=self._server_notification,
            restart=restart,
            start_timeout=start_timeout,
        )
        self._catalog = ToolCatalog(self._configured, self._fleet.names, self._announcer)
        self._runner = CallRunner(
            catalog=self._catalog,
            fleet=self._fleet,
            servers=self._configured,
            relay=self._asks,
            confirm=confirm,
            confirm_policy=confirm_policy,
            history_size=history_size,
        )
        self._runner.use_vrl(_compile_vrl(self._config))
        self._desk = Desk(self._fleet.server, self._configured, lambda: self._runner.history)

    # -- reading -------------------------------------------------------------

    @property
    def config(self) -> ComputerConfig:
        """The configuration as authored (``${input:...}`` placeholders unresolved)."""
        return self._config

    @property
    def history(self) -> list[CallRecord]:
        """Recent tool calls, oldest first."""
        return self._runner.history

    def _configured(self) -> Mapping[str, MCPServerConfig]:
        return self._config.servers

    def _roots_of(self, server: str) -> list[str] | None:
        entry = self._config.servers.get(server)
        return entry.roots if entry is not None else None

    def server_states(self) -> dict[str, ServerState]:
        """Status of every configured server (disabled ones included)."""
        out: dict[str, ServerState] = {}
        for name, config in self._config.servers.items():
            server = self._fleet.server(name)
            if server is None or config.disabled:
                out[name] = ServerState(name, ServerStatus.DISABLED.value, None, 0, 0, 0)
                continue
            out[name] = ServerState(
                name,
                server.status.value,
                server.last_error,
                server.restarts,
                self._catalog.count(name),
                self._desk.count(name),
                server.protocol_version,
            )
        return out

    def server(self, name: str) -> McpServer | None:
        return self._fleet.server(name)

    async def wait_ready(self, name: str, timeout: float = 30.0) -> None:
        server = self._fleet.server(name)
        if server is None:
            raise ComputerStateError(f"MCP server {name!r} is not running")
        await server.wait_ready(timeout)

    # -- tools ---------------------------------------------------------------

    def tools(self) -> list[SMCPTool]:
        """The tools an Agent sees."""
        return self._catalog.tools()

    def tool_server(self, exposed_name: str) -> str | None:
        """The MCP server owning an exposed tool name (None if not exposed)."""
        entry = self._catalog.lookup(exposed_name).entry
        return entry.server if entry is not None else None

    def task_only_tools(self) -> dict[str, str]:
        """Tools not offered because they need MCP task augmentation: name → MCP server."""
        return dict(self._catalog.registry.needs_tasks)

    def clashes(self) -> tuple[Clash, ...]:
        """Tools left out because another MCP server exposes the same name."""
        return self._catalog.registry.clashes

    # -- windows -------------------------------------------------------------

    def windows(self) -> list[WindowInfo]:
        """The discovered windows in enumeration order (servers alphabetically)."""
        return self._desk.windows()

    async def desktop(self, size: int | None = None, window: str | None = None) -> list[str]:
        """The organized desktop; ``window`` keeps only the windows with exactly that URI.

        Only the selected windows are read (their current content).
        """
        return await self._desk.desktop(size, window)

    async def list_resources(
        self, mcp_server: str, cursor: str | None = None
    ) -> tuple[list[JsonObject], str | None]:
        """One page of the server's ``resources/list``, unchanged.

        Raises :class:`McpServerNotFoundError` (4014) for an unknown, disabled or not
        running server and :class:`CapabilityNotSupportedError` (4015) without ``resources``.
        """
        return await self._desk.list_resources(mcp_server, cursor)

    # -- tool calls ------------------------------------------------------------

    def in_flight(self) -> list[str]:
        """The ``req_id`` of every tool call running now."""
        return self._runner.in_flight()

    def cancel(self, req_id: str, reason: str = CANCEL_REASON_AGENT_REQUESTED) -> bool:
        """Cancel an in-flight call (best effort); False for an unknown ``req_id``.

        The call answers ``isError`` with ``meta.a2c_cancelled`` and ``reason`` as
        ``meta.a2c_cancel_reason`` (diagnostic only).
        """
        return self._runner.cancel(req_id, reason)

    async def call_tool(
        self,
        tool_name: str,
        params: JsonObject | None = None,
        *,
        timeout: float = 60.0,
        req_id: str | None = None,
        agent: str | None = None,
        finish: ResultFinisher | None = None,
        extras: CallExtras | None = None,
    ) -> CallToolResult:
        """Run a tool by exposed name; every failure is an ``isError`` result with a code.

        ``finish`` (the link's sideband and size check) turns the result into the answer
        actually sent; the call's log line reports that answer's outcome. ``extras``
        carries the opt-in extensions of the call (progress, trace context).
        """
        result = await self.call_tool_round(
            tool_name, params, timeout=timeout, req_id=req_id, agent=agent, finish=finish,
            extras=extras,
        )  # fmt: skip
        if isinstance(result, InputAnswer):
            raise TypeError("a call that takes input is run with call_tool_round")
        return result

    async def call_tool_round(
        self,
        tool_name: str,
        params: JsonObject | None = None,
        *,
        timeout: float = 60.0,
        req_id: str | None = None,
        agent: str | None = None,
        finish: ResultFinisher | None = None,
        extras: CallExtras | None = None,
    ) -> CallToolResult | InputAnswer:
        """:meth:`call_tool`, for a call that may take input (``extras.ask``): one round,
        whose answer is the result or an :class:`InputAnswer` (see
        :mod:`a2c_computer._asks`)."""
        return await self._runner.call_tool_round(
            tool_name, params, timeout=timeout, req_id=req_id, agent=agent, finish=finish,
            extras=extras,
        )  # fmt: skip

    def input_agent_left(self, agent: str) -> None:
        """``agent`` left the office: its calls waiting for its answers are cancelled."""
        self._asks.agent_left(agent)

    # -- listeners -----------------------------------------------------------

    def add_server_observer(self, observer: ServerObserver) -> None:
        """Tell ``observer`` when MCP servers come, go and change their resources."""
        self._announcer.add_observer(observer)

    def add_update_listener(self, listener: UpdateListener) -> None:
        """Be told about ``server:update_*`` worthy changes."""
        self._announcer.add_listener(listener)

    def remove_update_listener(self, listener: UpdateListener) -> None:
        self._announcer.remove_listener(listener)

    # -- lifecycle -----------------------------------------------------------

    async def start(self, *, wait: float | None = None) -> None:
        """Start every enabled server; wait (up to ``wait`` s) for each first attempt.

        Starting a running Computer starts nothing more: it only waits like the first call.
        """
        if not self._fleet.start(self._config.servers):
            # Launching again would replace each server's handle and orphan its process.
            logger.debug("start() on a running Computer: its servers keep running")
        await self.wait_settled(wait if wait is not None else self._fleet.start_timeout + 5)

    async def wait_settled(self, timeout: float) -> None:
        """Wait until every server's first start attempt has finished."""
        await self._fleet.wait_settled(timeout)

    async def stop(self) -> None:
        """Stop every server (kills stdio children) and cancel in-flight calls."""
        self._asks.close()  # calls waiting for an Agent's answer: cancelled
        self._runner.cancel_all()
        await self._fleet.stop()
        await self._announcer.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- what the servers tell (the fleet's callbacks) -------------------------

    async def _server_ready(self, server: McpServer) -> None:
        async with self._fleet.lock(server.name):
            await self._catalog.refresh(server)
            await self._desk.refresh(server, initial=True)
        self._catalog.rebuild_and_announce()
        # A (re)started server with windows changes the desktop (desktop-and-windows.md §6).
        if self._desk.count(server.name):
            await self._announcer.announce(Event.UPDATE_DESKTOP)
        await self._announcer.tell("server_ready", server)

    async def _server_down(self, server: McpServer) -> None:
        self._catalog.forget(server.name)
        had_windows = self._desk.forget(server.name)
        self._catalog.rebuild_and_announce()
        if had_windows:
            await self._announcer.announce(Event.UPDATE_DESKTOP)
        await self._announcer.tell("server_down", server.name, stopped=server.stopping)

    def _server_notification(
        self, server: McpServer, kind: NotificationKind, uri: str | None
    ) -> None:
        self._announcer.spawn(self._handle_notification(server, kind, uri))

    async def _handle_notification(
        self, server: McpServer, kind: NotificationKind, uri: str | None
    ) -> None:
        announcer = self._announcer
        try:
            if kind is NotificationKind.TOOLS_CHANGED:
                async with self._fleet.lock(server.name):
                    await self._catalog.refresh(server)
                self._catalog.rebuild()
                await announcer.announce(Event.UPDATE_TOOL_LIST)
            elif kind is NotificationKind.RESOURCES_CHANGED:
                await announcer.tell("resources_changed", server)
                async with self._fleet.lock(server.name):
                    changed = await self._desk.refresh(server)
                if changed:
                    await announcer.announce(Event.UPDATE_DESKTOP)
                else:
                    logger.debug(
                        "MCP server %s: resource list changed, window set did not", server.name
                    )
            elif kind is NotificationKind.RESOURCE_UPDATED and uri is not None:
                await announcer.tell("resource_updated", server, uri)
                if updated_needs_refresh(uri):
                    await announcer.announce(Event.UPDATE_DESKTOP)
        except Exception as exc:
            # While stopping, a notification racing the shutdown is expected to fail.
            level = logging.WARNING if self._fleet.running else logging.DEBUG
            logger.log(level, "MCP server %s: handling %s failed: %s", server.name, kind, exc)

    # -- runtime configuration -------------------------------------------------

    async def update_config(self, config: ComputerConfig | Mapping[str, Any] | str) -> None:
        """Apply a new configuration (see :func:`plan_reload`): start added servers, stop
        removed ones, restart those whose connection changed, update tool metadata, aliases,
        forbidden tools and VRL in place. Announces one ``UPDATE_CONFIG`` when anything
        changed and, once the started servers settled, one ``UPDATE_TOOL_LIST`` when the
        exposed tools differ. Servers the change does not touch keep running undisturbed."""
        new = load_config(config)
        plan = plan_reload(self._config, new)
        before = self._catalog.registry.fingerprint()
        # A changed bundle_id renames tools in 0.4 sessions, though not in our registry.
        renamed = Bundles.of(self._config) != Bundles.of(new)
        fleet = self._fleet
        with self._catalog.holding():
            self._runner.use_vrl(_compile_vrl(new))
            self._config = new
            self._asks.rooted = _rooted(new)
            self._resolver.update_inputs(new.inputs)
            for name in sorted(plan.stopping & set(fleet.names())):
                await fleet.remove(name)
                self._catalog.forget(name)
                self._desk.forget(name)
                await self._announcer.tell("server_removed", name)
            if fleet.running:
                for name, server_config in new.servers.items():
                    if fleet.server(name) is None and not server_config.disabled:
                        fleet.launch(name, server_config)
            if plan.config_changed:
                await self._announcer.announce(Event.UPDATE_CONFIG)
            if fleet.running:
                await self.wait_settled(fleet.start_timeout + 5)
        if self._catalog.registry.fingerprint() != before or renamed:
            await self._announcer.announce(Event.UPDATE_TOOL_LIST)


def _rooted(config: ComputerConfig) -> frozenset[str]:
    """The servers whose ``roots/list`` this Computer answers (see ``_asks/_roots.py``)."""
    return frozenset(name for name, server in config.servers.items() if server.roots is not None)


def _compile_vrl(config: ComputerConfig) -> dict[str, VrlProgram]:
    """One compiled VRL program per server that configures a script (load_config vetted them)."""
    return {
        name: VrlProgram.compile(server.vrl)
        for name, server in config.servers.items()
        if server.vrl is not None
    }
