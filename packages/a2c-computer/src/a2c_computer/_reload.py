"""Live configuration reload: what a new configuration changes, and when to re-read it.

:func:`plan_reload` is pure: it compares two validated configurations and says which MCP
servers to start, stop or restart and which only change in place. Only a change of a
server's own connection (transport, parameters, an input its parameters use, enabling)
restarts it; ``tool_meta``, ``default_tool_meta``, ``forbidden_tools`` and ``vrl`` are
applied to the running server, so its calls in flight are not disturbed.

:class:`ConfigReloader` re-reads the file (on SIGHUP, or when ``--watch-config`` sees it
change), validates it completely first (a bad file changes nothing and the log says why)
and hands it to :meth:`ComputerCore.update_config`, which applies the plan and tells the
office once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from a2c_protocol import ComputerConfig, MCPServerConfig, to_wire

from ._config import load_config
from ._exceptions import ConfigError

if TYPE_CHECKING:
    from ._computer import ComputerCore

__all__ = ["ConfigReloader", "ReloadPlan", "plan_reload"]

logger = logging.getLogger("a2c_computer.reload")

#: Fields applied to a running server without restarting it.
IN_PLACE_FIELDS: Final = ("tool_meta", "default_tool_meta", "forbidden_tools", "vrl")
_WATCH_INTERVAL: Final = 1.0


@attrs.frozen
class ReloadPlan:
    """What applying a new configuration does (server names, sorted)."""

    start: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()
    restart: tuple[str, ...] = ()
    in_place: tuple[str, ...] = ()
    config_changed: bool = False

    @property
    def stopping(self) -> frozenset[str]:
        """Servers whose running instance goes away (stopped or restarted)."""
        return frozenset(self.stop) | frozenset(self.restart)

    def summary(self) -> str:
        parts = [
            f"{label}={','.join(names)}"
            for label, names in (
                ("started", self.start),
                ("stopped", self.stop),
                ("restarted", self.restart),
                ("updated", self.in_place),
            )
            if names
        ]
        return " ".join(parts) or "no server changed"


def _connection(entry: MCPServerConfig) -> MCPServerConfig:
    """The entry without its in-place fields (IN_PLACE_FIELDS)."""
    return attrs.evolve(entry, tool_meta={}, default_tool_meta=None, forbidden_tools=[], vrl=None)


def _uses_inputs(entry: MCPServerConfig, ids: set[str]) -> bool:
    text = json.dumps(to_wire(entry.server_parameters))
    return any(f"${{input:{input_id}}}" in text for input_id in ids)


def plan_reload(old: ComputerConfig, new: ComputerConfig) -> ReloadPlan:
    """Compare two validated configurations (see module doc)."""
    old_inputs = {i.id: i for i in old.inputs or []}
    new_inputs = {i.id: i for i in new.inputs or []}
    changed_inputs = {k for k in old_inputs.keys() | new_inputs.keys()
                      if old_inputs.get(k) != new_inputs.get(k)}  # fmt: skip
    start, stop, restart, in_place = [], [], [], []
    for name in sorted(old.servers.keys() | new.servers.keys()):
        before, after = old.servers.get(name), new.servers.get(name)
        was_on = before is not None and not before.disabled
        is_on = after is not None and not after.disabled
        if not was_on and is_on:
            start.append(name)
        elif was_on and not is_on:
            stop.append(name)
        elif before is None or after is None or not is_on:
            continue
        elif _connection(before) != _connection(after) or _uses_inputs(after, changed_inputs):
            restart.append(name)
        elif before != after:
            in_place.append(name)
    return ReloadPlan(
        start=tuple(start),
        stop=tuple(stop),
        restart=tuple(restart),
        in_place=tuple(in_place),
        config_changed=old != new,
    )


class ConfigReloader:
    """Re-reads ``path`` into ``computer`` on demand (SIGHUP) or when it changes (watch)."""

    def __init__(
        self,
        computer: ComputerCore,
        path: str | os.PathLike[str],
        *,
        on_outcome: Callable[[str], None] | None = None,
    ) -> None:
        self._computer = computer
        self._path = Path(path)
        self._on_outcome = on_outcome
        self._lock = asyncio.Lock()
        self._seen = self._digest()
        self._tasks: set[asyncio.Task[None]] = set()

    def _digest(self) -> str | None:
        try:
            return hashlib.sha256(self._path.read_bytes()).hexdigest()
        except OSError:
            return None

    async def reload(self) -> bool:
        """Validate the file, then apply it; False (and nothing changed) when it is bad."""
        async with self._lock:
            self._seen = self._digest()
            try:
                new = await asyncio.to_thread(load_config, self._path)
            except ConfigError as exc:
                logger.error("config reload rejected, nothing changed: %s", exc)
                self._report("rejected")
                return False
            plan = plan_reload(self._computer.config, new)
            logger.info("config reload: %s", plan.summary())
            await self._computer.update_config(new)
            self._report("applied")
            return True

    def _report(self, outcome: str) -> None:
        if self._on_outcome is not None:
            self._on_outcome(outcome)

    def request(self) -> None:
        """Schedule a reload (safe to call from a signal handler run by the loop)."""
        task = asyncio.ensure_future(self._guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self) -> None:
        try:
            await self.reload()
        except Exception:
            logger.exception("config reload failed")

    async def watch(self, interval: float = _WATCH_INTERVAL) -> None:
        """Reload whenever the file's content changes (polling; runs until cancelled)."""
        while True:
            await asyncio.sleep(interval)
            digest = self._digest()
            if digest is not None and digest != self._seen:
                await self._guarded()

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks, return_exceptions=True)
