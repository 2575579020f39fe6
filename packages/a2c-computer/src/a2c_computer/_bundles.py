"""Our MCP servers as 0.4 bundles: one bundle_id per configured server. No I/O.

Rules:

* a server's ``bundle_id`` is its explicit ``bundle_id`` when the config gives one (valid by
  the 0.4 rule, :func:`a2c_protocol._lines.bundle_id_problem`, checked at load); otherwise
  its name made a valid 0.4 bundle id (characters outside ``A-Z a-z 0-9 _ -`` become ``-``,
  a ``__`` becomes ``_``, empty is ``server``);
* bundle ids are unique on a Computer: two servers with the same one is a config error at
  load (:func:`duplicate_bundle_ids`), whatever the session's line, since a Computer may
  switch to 0.4 at its next connection;
* inside the Computer a server is known by its ``servers`` key (its name, or its explicit
  bundle_id); 0.4 sessions show the bundle_id instead (:class:`Bundles` maps both ways),
  0.2 sessions the key (:func:`config_for_02`);
* a tool is exposed in 0.4 as ``{bundle_id}__{tool}``. A ``tool_name`` coming back is split
  at its first ``__`` and resolved only when the bundle is that tool's own; anything else is
  passed on unchanged, so the Computer answers it as an unknown tool (4001).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from a2c_computer._registry import OWNER_META_KEY
from a2c_protocol import ComputerConfig, FieldError, MCPServerConfig
from a2c_protocol._lines import BUNDLE_SEPARATOR

__all__ = [
    "Bundles",
    "bundle_id_of",
    "config_for_02",
    "duplicate_bundle_ids",
    "server_bundle_id",
    "tool_name_from_04",
    "tools_for_04",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

#: ``server_of(tool_name) -> MCP server key or None``.
ServerOf = Callable[[str], "str | None"]


def bundle_id_of(server: str) -> str:
    """The bundle_id derived from a server name (used when the config gives none)."""
    bundle = _UNSAFE.sub("-", server)
    while BUNDLE_SEPARATOR in bundle:
        bundle = bundle.replace(BUNDLE_SEPARATOR, "_")
    return bundle or "server"


def server_bundle_id(server: MCPServerConfig) -> str:
    """A configured server's bundle_id: the explicit one wins, else derived from its name."""
    return server.bundle_id if server.bundle_id is not None else bundle_id_of(server.name)


def duplicate_bundle_ids(config: ComputerConfig) -> list[FieldError]:
    """One error per server whose bundle_id an earlier server already has."""
    first: dict[str, str] = {}
    errors: list[FieldError] = []
    for key, server in config.servers.items():
        bundle = server_bundle_id(server)
        if bundle in first:
            how = "its bundle_id"
            if server.bundle_id is None:
                how = "the bundle_id derived from its name"
            errors.append(
                FieldError(
                    f"$.servers[{key!r}]",
                    f"{how} {bundle!r} is also server {first[bundle]!r}'s: bundle_ids must be "
                    "unique (give one of them an explicit, different bundle_id)",
                )
            )
        else:
            first[bundle] = key
    return errors


@attrs.frozen
class Bundles:
    """One configuration's servers by bundle_id and back (unique: checked at load)."""

    by_server: Mapping[str, str]
    by_bundle: Mapping[str, str]

    @classmethod
    def of(cls, config: ComputerConfig) -> Bundles:
        by_server = {key: server_bundle_id(server) for key, server in config.servers.items()}
        return cls(by_server, {bundle: key for key, bundle in by_server.items()})

    def bundle(self, server: str) -> str:
        """The bundle_id of the server ``server`` (a key); derived from it when unknown."""
        return self.by_server.get(server) or bundle_id_of(server)

    def server(self, bundle: str) -> str | None:
        """The key of the server whose bundle_id is ``bundle`` (None: no such bundle)."""
        return self.by_bundle.get(bundle)


def config_for_02(view: dict[str, Any]) -> dict[str, Any]:
    """A ``get_config`` view as a 0.2 peer sees it: each server named by its key.

    0.2 has neither bundle ids nor display names apart from the key (its rule: ``name`` =
    key), so an explicit ``bundle_id`` is left out and ``name`` becomes the key. A config
    with no explicit bundle_id passes unchanged (the same object).
    """
    servers = view.get("servers")
    if not isinstance(servers, dict) or not any(
        isinstance(entry, dict) and ("bundle_id" in entry or entry.get("name") != key)
        for key, entry in servers.items()
    ):
        return view
    shown = {
        key: {k: (key if k == "name" else v) for k, v in entry.items() if k != "bundle_id"}
        if isinstance(entry, dict)
        else entry
        for key, entry in servers.items()
    }
    return {**view, "servers": shown}


def tools_for_04(tools: Any, server_of: ServerOf, bundles: Bundles) -> Any:
    """A 0.2 ``tools`` list (wire dicts) as 0.4 shows it: ``bundle_id`` and qualified names."""
    if not isinstance(tools, list):
        return tools
    out: list[Any] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        server = server_of(name) if isinstance(name, str) else None
        if server is None:
            out.append(tool)
            continue
        bundle = bundles.bundle(server)
        shown = {**tool, "name": f"{bundle}{BUNDLE_SEPARATOR}{name}", "bundle_id": bundle}
        meta = tool.get("meta")
        if isinstance(meta, dict) and OWNER_META_KEY in meta:
            shown["meta"] = {**meta, OWNER_META_KEY: bundle}
        out.append(shown)
    return out


def tool_name_from_04(name: Any, server_of: ServerOf, bundles: Bundles) -> Any:
    """A 0.4 ``tool_name`` back to this Computer's own tool name (see the rules)."""
    if not isinstance(name, str) or BUNDLE_SEPARATOR not in name:
        return name
    bundle, tool = name.split(BUNDLE_SEPARATOR, 1)
    server = server_of(tool)
    if server is not None and bundles.bundle(server) == bundle:
        return tool
    return name
