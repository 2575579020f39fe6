"""Live configuration reload, the plan: what a new configuration changes.

:func:`plan_reload` is pure: it compares two validated configurations and says which MCP
servers to start, stop or restart and which only change in place. Only a change of a
server's own connection (transport, parameters, an input its parameters use, enabling)
restarts it; ``tool_meta``, ``default_tool_meta``, ``forbidden_tools`` and ``vrl`` are
applied to the running server, so its calls in flight are not disturbed.

The Computer applies a plan (:meth:`ComputerCore.update_config`); when to re-read the
file is :mod:`a2c_computer._reloader`'s business. This module imports neither.
"""

from __future__ import annotations

import json
from typing import Final

import attrs

from a2c_protocol import ComputerConfig, MCPServerConfig, to_wire

__all__ = ["ReloadPlan", "plan_reload"]

#: Fields applied to a running server without restarting it.
IN_PLACE_FIELDS: Final = ("tool_meta", "default_tool_meta", "forbidden_tools", "vrl")


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
