"""The Computer: hosts MCP servers and answers for them (the I/O shell around the rules).

It owns one :class:`McpServer` per enabled configured server, keeps the tool registry and
the window lists current, runs tool calls (timeout, cancel, confirmation, error codes),
organizes the desktop, forwards ``resources/list`` pages, and reports changes to its
listeners (the Socket.IO link is one of them).

``ComputerCore`` is composed of its parts, one module each, on a shared base
(:mod:`._core`): the MCP servers' lifecycle (:mod:`._servers`), the tool list
(:mod:`._tools`), the windows and desktop (:mod:`._windows`) and tool calls
(:mod:`._calls`). Here live its construction from a configuration and the applying of a
new one (:meth:`ComputerCore.update_config`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Literal

from a2c_protocol import ComputerConfig, Event
from a2c_protocol._input import DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_REQUESTS_PER_ROUND

from ._asks._mixin import AskingMixin
from ._asks._relay import DEFAULT_INPUT_TIMEOUT, InputRelay
from ._bundles import Bundles
from ._config import InputResolver, PromptFn, load_config, plan_reload
from ._core import UpdateListener
from ._desk._desktop import CallRecord
from ._exceptions import ConfigError
from ._registry import build_registry
from ._servers import ServersMixin, ServerState
from ._toolcalls._calls import CallsMixin, ResultFinisher
from ._toolcalls._confirm import ConfirmCallback, ConfirmRequest, error_result
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


class ComputerCore(ServersMixin, CallsMixin, AskingMixin):
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
        self._vrl = _compile_vrl(self._config)
        self._confirm = confirm
        self._confirm_policy = confirm_policy
        self._resolver = InputResolver(
            self._config.inputs, env=env, prompt=prompt, interactive=interactive
        )
        self._restart = restart
        self._start_timeout = start_timeout
        self._servers = {}
        self._tools = {}
        self._last_listed = {}
        self._windows = {}
        self._window_sets = {}
        self._registry = build_registry({}, {})
        self._history = deque(maxlen=history_size)
        self._inflight = {}
        self._cancelled = {}
        self._invoked = set()
        self._warned_clashes = set()
        self._warned_task_only = set()
        self._listeners = []
        self._side = set()
        self._locks = {}
        self._running = False
        self._warned_unconfirmed = set()
        self._holding_tool_list = False
        self._observers = []
        self._asks = InputRelay(
            input_timeout,
            self._roots_of,
            per_round=max_input_requests_per_round,
            per_call=max_input_requests_per_call,
        )
        self._asks.rooted = _rooted(self._config)

    # -- reading -------------------------------------------------------------

    @property
    def config(self) -> ComputerConfig:
        """The configuration as authored (``${input:...}`` placeholders unresolved)."""
        return self._config

    @property
    def history(self) -> list[CallRecord]:
        """Recent tool calls, oldest first."""
        return list(self._history)

    def _roots_of(self, server: str) -> list[str] | None:
        entry = self._config.servers.get(server)
        return entry.roots if entry is not None else None

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
        # A changed bundle_id renames tools in 0.4 sessions, though not in our registry.
        renamed = Bundles.of(self._config) != Bundles.of(new)
        self._holding_tool_list = True
        try:
            self._vrl = _compile_vrl(new)
            self._config = new
            self._asks.rooted = _rooted(new)
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
        if self._registry.fingerprint() != before or renamed:
            await self._announce(Event.UPDATE_TOOL_LIST)


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
