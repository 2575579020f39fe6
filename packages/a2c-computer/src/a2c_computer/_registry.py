"""The tool registry: MCP tools → the tools a Computer exposes (computer-config.md §3-§4).

Rules:

* tools of a server are its MCP ``tools/list`` (all pages) minus ``forbidden_tools``; a
  forbidden entry matches the original name or the alias;
* the exposed name is ``tool_meta[original].alias`` when set, else the server's
  ``tool_prefix`` (an SDK extension, default none) followed by the original name;
* ToolMeta merge is shallow: each non-null field of the tool's own entry overrides
  ``default_tool_meta``; no entry and no default → no ``a2c_tool_meta`` key;
* ``SMCPTool.meta`` = the MCP tool's own ``_meta`` keys (complex values JSON-stringified),
  ``MCP_TOOL_ANNOTATION`` (JSON string of MCP annotations), ``a2c_tool_meta`` and
  ``a2c_mcp_server`` (:data:`OWNER_META_KEY`: the configured MCP server owning the tool,
  so an Agent can show it);
* an exposed-name clash between servers is resolved deterministically: servers are taken
  in alphabetical order and the first one keeps the name; the later tool is left out and
  recorded as a :class:`Clash` (the other tools of both servers stay); :func:`clash_advice`
  words each pair of servers once, with the fix (a ``tool_prefix``);
* a tool whose MCP ``execution.taskSupport`` is ``"required"`` is not offered: it can only
  be called with MCP task augmentation, which this Computer does not do, so every call
  would fail; it is kept aside (``needs_tasks``) so a call to it says why (4015) and
  ``check`` lists it;
* lookup: exposed name → (server, original tool); a forbidden name → "forbidden" (4002);
  a task-only tool → "needs_tasks" (4015); anything else → "unknown" (4001).
"""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from a2c_protocol import (
    A2C_TOOL_META_KEY,
    MCP_TOOL_ANNOTATION_KEY,
    Attributes,
    JsonObject,
    MCPServerConfig,
    SMCPTool,
    ToolMeta,
    encode_tool_meta,
)

__all__ = [
    "OWNER_META_KEY",
    "Clash",
    "Lookup",
    "LookupKind",
    "ToolEntry",
    "ToolRegistry",
    "build_registry",
    "clash_advice",
    "merge_tool_meta",
    "task_only",
]

#: ``SMCPTool.meta`` key naming the MCP server (its configured name) that owns the tool.
OWNER_META_KEY = "a2c_mcp_server"

logger = logging.getLogger("a2c_computer.tools")


def merge_tool_meta(default: ToolMeta | None, own: ToolMeta | None) -> ToolMeta | None:
    """Shallow merge: non-null fields of ``own`` override ``default``."""
    if own is None:
        return default
    if default is None:
        return own
    changes = {f.name: getattr(own, f.name) for f in attrs.fields(ToolMeta)}
    return attrs.evolve(default, **{k: v for k, v in changes.items() if v is not None})


def _attribute(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@attrs.frozen
class ToolEntry:
    """One exposed tool: where it lives and what the Agent sees."""

    exposed: str
    server: str
    original: str
    meta: ToolMeta | None
    tool: SMCPTool


class LookupKind(enum.Enum):
    FOUND = "found"
    FORBIDDEN = "forbidden"
    NEEDS_TASKS = "needs_tasks"
    UNKNOWN = "unknown"


@attrs.frozen
class Lookup:
    kind: LookupKind
    entry: ToolEntry | None = None
    server: str | None = None


@attrs.frozen
class Clash:
    """Tool ``original`` of ``lost`` would be exposed as ``name``, which ``kept`` has."""

    name: str
    kept: str
    lost: str
    original: str


def clash_advice(clashes: Sequence[Clash], configs: Mapping[str, MCPServerConfig]) -> list[str]:
    """One line per (losing server, keeping server) pair, naming the tools and the fix."""
    pairs: dict[tuple[str, str], list[Clash]] = {}
    for clash in clashes:
        pairs.setdefault((clash.lost, clash.kept), []).append(clash)
    lines = []
    for (lost, kept), group in sorted(pairs.items()):
        names = ", ".join(c.name for c in group)
        config = configs.get(lost)
        prefix = config.tool_prefix if config is not None else None
        fix = (
            f'add "tool_prefix": "{lost}_" to servers.{lost}'
            if not prefix
            else f"change the tool_prefix {prefix!r} of servers.{lost}"
        )
        lines.append(
            f"{len(group)} tool(s) of MCP server {lost} ({names}) have the names of tools of "
            f"{kept}, which keeps them; {lost}'s are left out. Fix: {fix} (or give each a "
            f"tool_meta alias)"
        )
    return lines


def _smcp_tool(
    exposed: str, raw: Mapping[str, Any], meta: ToolMeta | None, server: str
) -> SMCPTool:
    attributes: Attributes = {}
    own = raw.get("_meta")
    if isinstance(own, Mapping):
        for key, value in own.items():
            attributes[str(key)] = _attribute(value)
    annotations = raw.get("annotations")
    if isinstance(annotations, Mapping) and annotations:
        attributes[MCP_TOOL_ANNOTATION_KEY] = json.dumps(dict(annotations), ensure_ascii=False)
    if meta is not None:
        attributes[A2C_TOOL_META_KEY] = encode_tool_meta(meta)
    attributes[OWNER_META_KEY] = server
    schema = raw.get("inputSchema")
    output = raw.get("outputSchema")
    return SMCPTool(
        name=exposed,
        description=str(raw.get("description") or ""),
        params_schema=dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
        return_schema=dict(output) if isinstance(output, Mapping) else None,
        meta=attributes,
    )


@attrs.frozen
class ToolRegistry:
    """Immutable snapshot of the exposed tools; rebuilt whenever a server's tools change."""

    entries: Mapping[str, ToolEntry]
    forbidden: frozenset[str]
    forbidden_owner: Mapping[str, str]
    clashes: tuple[Clash, ...] = ()
    #: exposed name → MCP server, for tools that need MCP task augmentation (not offered)
    needs_tasks: Mapping[str, str] = attrs.field(factory=dict)

    def tools(self) -> list[SMCPTool]:
        return [entry.tool for entry in self.entries.values()]

    def names(self) -> frozenset[str]:
        return frozenset(self.entries)

    def lookup(self, name: str) -> Lookup:
        entry = self.entries.get(name)
        if entry is not None:
            return Lookup(LookupKind.FOUND, entry, entry.server)
        if name in self.forbidden:
            return Lookup(LookupKind.FORBIDDEN, None, self.forbidden_owner.get(name))
        if name in self.needs_tasks:
            return Lookup(LookupKind.NEEDS_TASKS, None, self.needs_tasks[name])
        return Lookup(LookupKind.UNKNOWN)

    def fingerprint(self) -> str:
        """A stable digest of what the Agent sees, to tell whether the tool list changed."""
        from a2c_protocol import to_wire

        return json.dumps([to_wire(e.tool) for e in self.entries.values()], sort_keys=True)


def build_registry(
    configs: Mapping[str, MCPServerConfig], tools: Mapping[str, Sequence[JsonObject]]
) -> ToolRegistry:
    """Build the registry from each running server's raw MCP tool objects."""
    entries: dict[str, ToolEntry] = {}
    clashes: list[Clash] = []
    forbidden: set[str] = set()
    owner: dict[str, str] = {}
    needs_tasks: dict[str, str] = {}
    for server in sorted(tools):
        config = configs.get(server)
        if config is None or config.disabled:
            continue
        banned = set(config.forbidden_tools)
        for name in banned:
            forbidden.add(name)
            owner.setdefault(name, server)
        for raw in tools[server]:
            original = raw.get("name")
            if not isinstance(original, str) or not original:
                logger.warning("MCP server %s listed a tool without a name; skipped", server)
                continue
            meta = merge_tool_meta(config.default_tool_meta, config.tool_meta.get(original))
            exposed = (
                meta.alias
                if meta is not None and meta.alias
                else f"{config.tool_prefix or ''}{original}"
            )
            if original in banned or exposed in banned:
                forbidden.update({original, exposed})
                owner.setdefault(exposed, server)
                continue
            if task_only(raw):
                needs_tasks.setdefault(exposed, server)
                continue
            previous = entries.get(exposed)
            if previous is not None:
                clashes.append(Clash(exposed, previous.server, server, original))
                continue
            entries[exposed] = ToolEntry(
                exposed, server, original, meta, _smcp_tool(exposed, raw, meta, server)
            )
    # A name that is exposed by some server is callable even if another server forbids it.
    return ToolRegistry(
        entries,
        frozenset(forbidden - set(entries)),
        owner,
        tuple(clashes),
        {n: s for n, s in needs_tasks.items() if n not in entries},
    )


def task_only(raw: Mapping[str, Any]) -> bool:
    """Whether an MCP tool can only be called as a task (``execution.taskSupport``)."""
    execution = raw.get("execution")
    return isinstance(execution, Mapping) and execution.get("taskSupport") == "required"
