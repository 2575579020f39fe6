"""The Computer: hosts MCP servers and answers for them (the I/O shell around the rules).

It owns one :class:`McpServer` per enabled configured server, keeps the tool registry and
the window lists current, runs tool calls (timeout, cancel, confirmation, error codes),
organizes the desktop, forwards ``resources/list`` pages, and reports changes to its
listeners (the Socket.IO link is one of them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Literal, Self, TypeAlias

import attrs

from a2c_protocol import (
    CANCEL_REASON_AGENT_REQUESTED,
    CallToolResult,
    CapabilityNotSupportedError,
    ComputerConfig,
    ErrorCode,
    Event,
    JsonObject,
    MCPServerConfig,
    McpServerNotFoundError,
    SMCPTool,
    cancelled_result,
    to_wire,
)

from ._config import load_config
from ._config_view import safe_error
from ._confirm import (
    ConfirmCallback,
    ConfirmRequest,
    ask_confirmation,
    error_result,
    needs_confirmation,
)
from ._desktop import (
    CallRecord,
    WindowInfo,
    describe_window,
    host_collisions,
    list_changed_needs_refresh,
    organize,
    select_window,
    updated_needs_refresh,
    window_uri_set,
)
from ._down import down_note, down_owner, down_result
from ._encoding import unencodable_field
from ._exceptions import ComputerStateError
from ._extensions import CallExtras
from ._foreign import did_you_mean
from ._inputs import InputResolver, PromptFn
from ._invoke import invoke_tool
from ._logging import call_outcome, log_tool_call
from ._mcp import McpServer, NotificationKind, ServerStatus
from ._oauth._hints import needs_auth_owner, needs_auth_result
from ._observers import ServerObserver
from ._registry import (
    Clash,
    LookupKind,
    ToolEntry,
    ToolRegistry,
    build_registry,
    clash_advice,
)
from ._reload import plan_reload
from ._vrl import VrlProgram

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


#: Called with ``Event.UPDATE_CONFIG`` / ``UPDATE_TOOL_LIST`` / ``UPDATE_DESKTOP``.
UpdateListener: TypeAlias = Callable[[Event], Awaitable[None] | None]
#: Turns a tool call's result into the answer sent (e.g. the sideband and size check).
ResultFinisher: TypeAlias = Callable[[CallToolResult], Awaitable[CallToolResult]]


@attrs.frozen
class ServerState:
    """Status of one configured MCP server."""

    name: str
    status: str
    last_error: str | None
    restarts: int
    tools: int
    windows: int


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
    ) -> None:
        self._config = load_config(config)
        self._vrl = _compile_vrl(self._config)
        self._confirm = confirm
        self._confirm_policy = confirm_policy
        self._resolver = InputResolver(
            self._config.inputs, env=env, prompt=prompt, interactive=interactive
        )
        self._restart = restart
        self._start_timeout = start_timeout
        self._servers: dict[str, McpServer] = {}
        self._tools: dict[str, list[JsonObject]] = {}
        self._last_listed: dict[str, frozenset[str]] = {}
        self._windows: dict[str, list[WindowInfo]] = {}
        self._window_sets: dict[str, frozenset[str]] = {}
        self._registry = build_registry({}, {})
        self._history: deque[CallRecord] = deque(maxlen=history_size)
        self._inflight: dict[str, asyncio.Task[CallToolResult]] = {}
        self._cancelled: dict[str, str] = {}  # req_id → a2c_cancel_reason
        self._invoked: set[str] = set()
        self._warned_clashes: set[Clash] = set()
        self._listeners: list[UpdateListener] = []
        self._side: set[asyncio.Task[Any]] = set()
        self._locks: dict[str, asyncio.Lock] = {}
        self._running = False
        self._warned_unconfirmed: set[str] = set()
        self._holding_tool_list = False
        self._observers: list[ServerObserver] = []

    def add_server_observer(self, observer: ServerObserver) -> None:
        """Tell ``observer`` when MCP servers come, go and change their resources."""
        self._observers.append(observer)

    async def _tell(self, event: str, *args: Any, **kwargs: Any) -> None:
        for observer in list(self._observers):
            try:
                await getattr(observer, event)(*args, **kwargs)
            except Exception as exc:
                logger.warning("server observer %s failed: %s", event, exc)

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
        servers = list(self._servers.values())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(s.wait_settled() for s in servers)), timeout)

    async def stop(self) -> None:
        """Stop every server (kills stdio children) and cancel in-flight calls."""
        self._running = False
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
            params=params,
            on_ready=self._server_ready,
            on_down=self._server_down,
            on_notification=self._server_notification,
            restart=self._restart,
            start_timeout=self._start_timeout,
        )
        self._servers[name] = server
        server.start()

    # -- listeners -----------------------------------------------------------

    def add_update_listener(self, listener: UpdateListener) -> None:
        """Be told about ``server:update_*`` worthy changes."""
        self._listeners.append(listener)

    def remove_update_listener(self, listener: UpdateListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    async def _announce(self, event: Event) -> None:
        logger.debug("change: %s", event)
        for listener in list(self._listeners):
            try:
                outcome = listener(event)
                if outcome is not None:
                    await outcome
            except Exception:
                logger.exception("update listener failed for %s", event)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._side.add(task)
        task.add_done_callback(self._side.discard)

    # -- server callbacks ------------------------------------------------------

    def _lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())

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

    async def _refresh_tools(self, server: McpServer) -> None:
        caps = server.capabilities
        if caps is None or caps.tools is None:
            self._tools[server.name] = []
            return
        self._tools[server.name] = await server.list_all("tools/list", "tools")

    async def _refresh_windows(self, server: McpServer, *, initial: bool = False) -> bool:
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
        return registry

    def clashes(self) -> tuple[Clash, ...]:
        """Tools left out because another MCP server exposes the same name."""
        return self._registry.clashes

    def _rebuild_and_announce(self) -> None:
        before = self._registry.fingerprint()
        self._registry = self._build_registry()
        # During update_config the tool list is announced once, at its end.
        if self._registry.fingerprint() != before and not self._holding_tool_list:
            self._spawn(self._announce(Event.UPDATE_TOOL_LIST))

    # -- reading -------------------------------------------------------------

    @property
    def config(self) -> ComputerConfig:
        """The configuration as authored (``${input:...}`` placeholders unresolved)."""
        return self._config

    @property
    def history(self) -> list[CallRecord]:
        """Recent tool calls, oldest first."""
        return list(self._history)

    def tools(self) -> list[SMCPTool]:
        """The tools an Agent sees."""
        return self._registry.tools()

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
            )
        return out

    def _down_servers(self) -> dict[str, str | None]:
        """Enabled servers that are not ready, with their last error (none once stopped)."""
        if not self._running:
            return {}
        return {
            name: safe_error(server.last_error) or server.status.value
            for name, server in self._servers.items()
            if server.status is not ServerStatus.READY
            and not getattr(self._config.servers.get(name), "disabled", True)
        }

    def tool_server(self, exposed_name: str) -> str | None:
        """The MCP server owning an exposed tool name (None if not exposed)."""
        entry = self._registry.lookup(exposed_name).entry
        return entry.server if entry is not None else None

    def server(self, name: str) -> McpServer | None:
        return self._servers.get(name)

    async def wait_ready(self, name: str, timeout: float = 30.0) -> None:
        server = self._servers.get(name)
        if server is None:
            raise ComputerStateError(f"MCP server {name!r} is not running")
        await server.wait_ready(timeout)

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
        return organize(list(zip(infos, contents, strict=True)), size, list(self._history), window)

    async def _read_window(self, info: WindowInfo) -> list[JsonObject] | None:
        server = self._servers.get(info.server)
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
        server = self._servers.get(mcp_server)
        config = self._config.servers.get(mcp_server)
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

    # -- tool calls ----------------------------------------------------------

    def in_flight(self) -> list[str]:
        """The ``req_id`` of every tool call running now."""
        return [req_id for req_id, task in self._inflight.items() if not task.done()]

    def cancel(self, req_id: str, reason: str = CANCEL_REASON_AGENT_REQUESTED) -> bool:
        """Cancel an in-flight call (best effort); False for an unknown ``req_id``.

        The call answers ``isError`` with ``meta.a2c_cancelled`` and ``reason`` as
        ``meta.a2c_cancel_reason`` (diagnostic only).
        """
        task = self._inflight.get(req_id)
        if task is None or task.done():
            return False
        if req_id in self._cancelled:  # already being cancelled: the first reason stands
            return False
        self._cancelled[req_id] = reason
        task.cancel()
        return True

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
        req_id = req_id or uuid.uuid4().hex
        started = time.monotonic()
        outcome = "cancelled"
        try:
            result = await self._call_tool(tool_name, params, timeout, req_id, agent, extras)
            if finish is not None:
                result = await finish(result)
            outcome = call_outcome(result.is_error, result.meta)
            return result
        except Exception as exc:
            outcome = f"failed: {type(exc).__name__}"
            raise
        finally:
            entry = self._registry.lookup(tool_name).entry
            log_tool_call(
                agent=agent,
                tool=tool_name,
                server=entry.server if entry is not None else "-",
                duration=time.monotonic() - started,
                outcome=outcome,
                req_id=req_id,
            )

    async def _call_tool(
        self,
        tool_name: str,
        params: JsonObject | None,
        timeout: float,
        req_id: str,
        agent: str | None,
        extras: CallExtras | None = None,
    ) -> CallToolResult:
        lookup = self._registry.lookup(tool_name)
        if lookup.kind is LookupKind.FORBIDDEN:
            return error_result(
                ErrorCode.TOOL_DISABLED,
                f"Tool {tool_name!r} is forbidden by this Computer's configuration",
                mcp_server=lookup.server,
            )
        if lookup.kind is LookupKind.UNKNOWN or lookup.entry is None:
            waiting = {
                n: self._last_listed.get(n, frozenset())
                for n, s in self._servers.items()
                if s.status is ServerStatus.NEEDS_AUTH
            }
            owner = needs_auth_owner(tool_name, waiting, self._config.servers)
            if owner is not None:
                return needs_auth_result(tool_name, owner, lost=self._servers[owner].sign_in_lost)
            down = self._down_servers()
            owner = down_owner(tool_name, down, self._last_listed, self._config.servers)
            if owner is not None:
                return down_result(tool_name, owner, down[owner])
            return error_result(
                ErrorCode.TOOL_NOT_FOUND,
                f"Tool {tool_name!r} not found on this Computer"
                + (down_note(down) or did_you_mean(tool_name, self._registry.names())),
            )
        entry = lookup.entry
        server = self._servers.get(entry.server)
        if server is None:
            return error_result(
                ErrorCode.TOOL_NOT_FOUND, f"Tool {tool_name!r} not found on this Computer"
            )
        unencodable = unencodable_field(params or {})
        if unencodable is not None:
            return error_result(
                ErrorCode.TOOL_EXECUTION_FAILED,
                f"Tool {tool_name!r} was not called: {unencodable}",
                mcp_server=entry.server,
            )
        if req_id in self._inflight:
            return error_result(
                ErrorCode.TOOL_EXECUTION_FAILED, f"a call with req_id {req_id!r} is already running"
            )
        # The confirmation runs inside the in-flight task, so a cancel or the call's
        # timeout withdraws an open question instead of leaving it to run the tool later.
        asking: ConfirmRequest | None = None
        if needs_confirmation(entry.meta):
            asking = ConfirmRequest(
                req_id, agent, entry.server, entry.original, tool_name, dict(params or {})
            )
        task = asyncio.ensure_future(
            self._confirm_then_invoke(req_id, asking, server, entry, params or {}, timeout, extras)
        )
        self._inflight[req_id] = task
        success = False
        try:
            result = await task
            success = not result.is_error
            program = self._vrl.get(entry.server)
            if program is not None:
                result = program.apply(result, tool_name, params or {})
            return result
        except asyncio.CancelledError:
            if req_id in self._cancelled and task.cancelled():
                logger.info(
                    "tool call %s (%s) cancelled (reason %s)",
                    req_id, tool_name, self._cancelled[req_id],
                )  # fmt: skip
                # 0.2.3: cancellation has no error code, only the result-level marker.
                return cancelled_result(
                    f"Tool call {tool_name!r} was cancelled",
                    reason=self._cancelled[req_id],
                    extra={"mcp_server": entry.server},
                )
            raise
        finally:
            self._inflight.pop(req_id, None)
            self._cancelled.pop(req_id, None)
            if req_id in self._invoked:  # calls refused before running do not count
                self._invoked.discard(req_id)
                self._history.append(
                    CallRecord(entry.server, entry.original, req_id, time.time(), success)
                )

    async def _confirm_then_invoke(
        self,
        req_id: str,
        asking: ConfirmRequest | None,
        server: McpServer,
        entry: ToolEntry,
        params: JsonObject,
        timeout: float,
        extras: CallExtras | None = None,
    ) -> CallToolResult:
        if asking is not None:
            loop = asyncio.get_running_loop()
            started = loop.time()
            refusal = await ask_confirmation(
                self._confirm, self._confirm_policy, asking, timeout, self._warned_unconfirmed
            )
            if refusal is not None:
                return refusal
            timeout -= loop.time() - started
        self._invoked.add(req_id)
        return await invoke_tool(server, entry.original, entry.exposed, params, timeout, extras)

    # -- runtime configuration -------------------------------------------------

    async def update_config(self, config: ComputerConfig | Mapping[str, Any] | str) -> None:
        """Apply a new configuration (see :func:`plan_reload`): start added servers, stop
        removed ones, restart those whose connection changed, update tool metadata, aliases,
        forbidden tools and VRL in place. Announces one ``UPDATE_CONFIG`` when anything
        changed and, once the started servers settled, one ``UPDATE_TOOL_LIST`` when the
        exposed tools differ. Servers the change does not touch keep running undisturbed."""
        new = load_config(config)
        plan = plan_reload(self._config, new)
        before = self._registry.fingerprint()
        self._holding_tool_list = True
        try:
            self._vrl = _compile_vrl(new)
            self._config = new
            self._resolver.update_inputs(new.inputs)
            for name in sorted(plan.stopping & self._servers.keys()):
                await self._servers.pop(name).stop()
                for table in (self._tools, self._windows, self._window_sets):
                    table.pop(name, None)
                await self._tell("server_removed", name)
            if self._running:
                for name, server_config in new.servers.items():
                    if name not in self._servers and not server_config.disabled:
                        self._launch(name, server_config)
            if plan.config_changed:
                await self._announce(Event.UPDATE_CONFIG)
            if self._running:
                await self.wait_settled(self._start_timeout + 5)
        finally:
            self._holding_tool_list = False
            self._registry = self._build_registry()
        if self._registry.fingerprint() != before:
            await self._announce(Event.UPDATE_TOOL_LIST)


def _compile_vrl(config: ComputerConfig) -> dict[str, VrlProgram]:
    """One compiled VRL program per server that configures a script (load_config vetted them)."""
    return {
        name: VrlProgram.compile(server.vrl)
        for name, server in config.servers.items()
        if server.vrl is not None
    }
