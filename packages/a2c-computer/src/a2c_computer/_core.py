"""The shared base of :class:`~a2c_computer._computer.ComputerCore`: state and plumbing.

Every part of the core (MCP server lifecycle, tool list, windows, tool calls) builds on
:class:`CoreBase`: the state they share, the listeners told about ``server:update_*``
worthy changes, the server observers, background tasks and the per-server locks. It
decides nothing about servers, tools or calls itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from a2c_protocol import CallToolResult, ComputerConfig, Event, JsonObject, cancelled_result

from ._asks._relay import InputRelay
from ._config import InputResolver
from ._desk._desktop import CallRecord, WindowInfo
from ._mcp import McpServer
from ._observers import ServerObserver
from ._registry import Clash, ToolEntry, ToolRegistry
from ._toolcalls._confirm import ConfirmCallback
from ._toolcalls._extensions import CallExtras, InputAnswer, InputAsk
from ._toolcalls._vrl import VrlProgram

__all__ = ["CoreBase", "UpdateListener"]

logger = logging.getLogger("a2c_computer")


#: Called with ``Event.UPDATE_CONFIG`` / ``UPDATE_TOOL_LIST`` / ``UPDATE_DESKTOP``.
UpdateListener: TypeAlias = Callable[[Event], Awaitable[None] | None]


class CoreBase:
    """The state every part of :class:`~a2c_computer._computer.ComputerCore` shares.

    ``ComputerCore.__init__`` sets every attribute declared here.
    """

    _config: ComputerConfig
    _vrl: dict[str, VrlProgram]
    _confirm: ConfirmCallback | None
    _confirm_policy: Literal["allow", "deny"]
    _resolver: InputResolver
    _restart: bool
    _start_timeout: float
    _servers: dict[str, McpServer]
    _tools: dict[str, list[JsonObject]]
    _last_listed: dict[str, frozenset[str]]
    _windows: dict[str, list[WindowInfo]]
    _window_sets: dict[str, frozenset[str]]
    _registry: ToolRegistry
    _history: deque[CallRecord]
    _inflight: dict[str, asyncio.Task[Any]]
    _cancelled: dict[str, str]  # req_id → a2c_cancel_reason
    _invoked: set[str]
    _warned_clashes: set[Clash]
    _warned_task_only: set[tuple[str, str]]
    _listeners: list[UpdateListener]
    _side: set[asyncio.Task[Any]]
    _locks: dict[str, asyncio.Lock]
    _running: bool
    _warned_unconfirmed: set[str]
    _holding_tool_list: bool
    _observers: list[ServerObserver]
    _asks: InputRelay

    if TYPE_CHECKING:  # the tool calls that may ask (a2c_computer._asks._mixin)

        async def _first_round(
            self,
            server: McpServer,
            entry: ToolEntry,
            params: JsonObject,
            timeout: float,
            extras: CallExtras | None,
            agent: str | None,
            req_id: str,
        ) -> CallToolResult | InputAnswer: ...

        async def _resume_asking(
            self,
            tool_name: str,
            params: JsonObject,
            ask: InputAsk,
            timeout: float,
            req_id: str,
            extras: CallExtras,
        ) -> CallToolResult | InputAnswer: ...

    def _cancel_answer(
        self, req_id: str, tool_name: str, task: asyncio.Task[Any], extra: JsonObject | None = None
    ) -> CallToolResult | None:
        """The answer of an in-flight call that ``client:cancel`` cancelled (None: it was
        cancelled from outside, and the cancellation goes on)."""
        if req_id not in self._cancelled or not task.cancelled():
            return None
        reason = self._cancelled[req_id]
        logger.info("tool call %s (%s) cancelled (reason %s)", req_id, tool_name, reason)
        # 0.2.3: cancellation has no error code, only the result-level marker.
        return cancelled_result(
            f"Tool call {tool_name!r} was cancelled", reason=reason, extra=extra
        )

    def add_server_observer(self, observer: ServerObserver) -> None:
        """Tell ``observer`` when MCP servers come, go and change their resources."""
        self._observers.append(observer)

    async def _tell(self, event: str, *args: Any, **kwargs: Any) -> None:
        for observer in list(self._observers):
            try:
                await getattr(observer, event)(*args, **kwargs)
            except Exception as exc:
                logger.warning("server observer %s failed: %s", event, exc)

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

    # One lock per MCP server: its tools and windows are re-listed one refresh at a time.
    def _lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())
