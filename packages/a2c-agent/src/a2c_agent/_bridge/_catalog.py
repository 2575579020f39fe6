"""The one tool list the MCP host sees, merged from every Computer's tools.

Rules:

* Computers are taken in name order, each Computer's tools in its own order; with a filter
  (``--computer``, repeatable) only the named Computers count;
* each tool is served under the name :func:`~a2c_agent._bridge._names.tool_names` gives
  it; its description starts by naming the Computer (and the MCP server when the Computer
  says which one owns it), so a host, and its model, can tell two ``search`` tools apart;
* the input schema passes through unchanged (an object schema is added when a Computer
  sends none: MCP requires one); the return schema becomes ``outputSchema``;
* the MCP annotations the Computer forwards (``meta["MCP_TOOL_ANNOTATION"]``, a JSON
  string) become the tool's ``annotations``: read-only and destructive hints, title;
  an unreadable string is dropped with a WARN, the tool is kept;
* ``_meta`` says where the tool lives (``a2c_computer``, ``a2c_tool``, ``a2c_mcp_server``);
* the route table maps each served name back to (computer, tool); a name that leads
  nowhere gets the closest served name as a suggestion (a typo of the host's model);
* the filter applies to everything the bridge serves of a Computer: its tools, its
  windows, a window read by URI (:func:`serves`);
* a name served before whose Computer has left the list since still leads to it
  (:meth:`CatalogCache.known_route`): a Computer between two Server nodes (a rolling
  restart) is back within seconds, and a call meanwhile gets the SDK's answer (the
  result once it is back, or the 404 saying it is not in the office) rather than "no
  tool is served" for a tool the host still lists.
* a Computer missing from the Agent's tool cache keeps its last known tools
  (:class:`CatalogCache`) until it leaves the office: the Agent empties its cache to
  refresh it after a reconnect, and a refresh that fails (a Server node died, its
  Computer was not back yet) must not make its tools vanish from the host, whose next
  call would then be "no tool is served under that name".
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from a2c_agent._types import AgentTool
from a2c_protocol import MCP_TOOL_ANNOTATION_KEY

from ._names import DEFAULT_SEPARATOR, tool_names

__all__ = ["Catalog", "CatalogCache", "Route", "build_catalog", "serves"]

logger = logging.getLogger("a2c_agent.bridge")

#: ``SMCPTool.meta`` key naming the MCP server that owns a tool (set by our Computer).
_OWNER_KEY = "a2c_mcp_server"
#: How many routes served before are remembered (past it, only the current ones).
_KNOWN_ROUTES = 10_000


@attrs.frozen
class Route:
    """Where a served tool name leads."""

    computer: str
    tool: str


@attrs.frozen
class Catalog:
    """The merged tool list (MCP ``Tool`` dicts) and the route of each served name."""

    tools: tuple[dict[str, Any], ...]
    routes: Mapping[str, Route]
    schemas: Mapping[str, dict[str, Any]] = attrs.field(factory=dict)

    def route(self, name: str) -> Route | None:
        """Where ``name`` leads, or None when no tool is served under it."""
        return self.routes.get(name)

    def suggestion(self, name: str) -> str | None:
        """The served name closest to ``name`` (a typo), or None when none is close."""
        close = difflib.get_close_matches(name, list(self.routes), n=1, cutoff=0.6)
        return close[0] if close else None

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema served for ``name`` (None when no tool is served under it)."""
        schema = self.schemas.get(name)
        return None if schema is None else dict(schema)


def serves(computer: str, computers: Collection[str]) -> bool:
    """Whether the bridge serves ``computer`` under the ``--computer`` filter (empty: all)."""
    return not computers or computer in computers


def _annotations(tool: AgentTool) -> dict[str, Any] | None:
    raw = tool.meta.get(MCP_TOOL_ANNOTATION_KEY)
    if raw is None:
        return None
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        value = None
    if not isinstance(value, dict):
        logger.warning("tool %r of %r: unreadable annotations dropped", tool.name, tool.computer)
        return None
    return value


def describe(tool: AgentTool) -> str:
    """The tool's description, prefixed with the Computer (and MCP server) serving it."""
    owner = tool.meta.get(_OWNER_KEY)
    where = f"A2C Computer '{tool.computer}'"
    if isinstance(owner, str) and owner:
        where += f", MCP server '{owner}'"
    text = tool.description.strip()
    return f"[{where}] {text}" if text else f"[{where}] tool '{tool.name}'"


def _schema(tool: AgentTool) -> dict[str, Any]:
    schema = dict(tool.params_schema or {})
    if "type" not in schema:
        schema["type"] = "object"
    return schema


def _mcp_tool(tool: AgentTool, name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"a2c_computer": tool.computer, "a2c_tool": tool.name}
    owner = tool.meta.get(_OWNER_KEY)
    if isinstance(owner, str):
        meta["a2c_mcp_server"] = owner
    entry: dict[str, Any] = {
        "name": name,
        "description": describe(tool),
        "inputSchema": _schema(tool),
        "_meta": meta,
    }
    annotations = _annotations(tool)
    if annotations is not None:
        entry["annotations"] = annotations
        if isinstance(annotations.get("title"), str):
            entry["title"] = f"{annotations['title']} ({tool.computer})"
    if isinstance(tool.return_schema, dict) and tool.return_schema.get("type") == "object":
        entry["outputSchema"] = dict(tool.return_schema)
    return entry


def build_catalog(
    tools: Mapping[str, Sequence[AgentTool]],
    *,
    computers: Collection[str] = (),
    separator: str = DEFAULT_SEPARATOR,
) -> Catalog:
    """Merge ``tools`` (Computer → its tools) into one list (see module rules)."""
    wanted = frozenset(computers)
    ordered = [
        tool for computer in sorted(tools) if serves(computer, wanted) for tool in tools[computer]
    ]
    names = tool_names(((t.computer, t.name) for t in ordered), separator)
    served: list[dict[str, Any]] = []
    routes: dict[str, Route] = {}
    schemas: dict[str, dict[str, Any]] = {}
    for tool in ordered:
        name = names[(tool.computer, tool.name)]
        if name in routes:  # names are unique per pair: the same tool twice in one list
            continue
        routes[name] = Route(tool.computer, tool.name)
        entry = _mcp_tool(tool, name)
        schemas[name] = entry["inputSchema"]
        served.append(entry)
    return Catalog(tools=tuple(served), routes=routes, schemas=schemas)


class CatalogCache:
    """The last catalog built, rebuilt only when a Computer's tool tuple is another object.

    The Agent's tool cache hands out a new mapping each time but keeps each Computer's
    tuple while its tools are unchanged, so comparing the tuples by identity is exact; the
    held mapping keeps them alive, so an identity is never reused while compared.
    """

    def __init__(self, computers: Collection[str], separator: str) -> None:
        self._computers = tuple(computers)
        self._separator = separator
        self._tools: Mapping[str, Sequence[AgentTool]] = {}
        self._catalog = Catalog(tools=(), routes={})
        self._served_routes: dict[str, Route] = {}  # every route served so far (bounded below)
        #: Each Computer's last tools seen in the Agent's cache, until it leaves.
        self._known: dict[str, Sequence[AgentTool]] = {}
        #: Computers served from ``_known`` now (logged once each time it starts).
        self._stale: set[str] = set()
        #: Computers whose leave notice came while the Agent's cache still lists them (it
        #: drops them a moment later): not kept when they drop out.
        self._leaving: set[str] = set()

    def forget(self, computer: str | None = None) -> None:
        """``computer`` left the office (None: every Computer, the office was left)."""
        if computer is None:
            self._known.clear()
            self._stale.clear()
            self._leaving.clear()
        else:
            self._known.pop(computer, None)
            self._stale.discard(computer)
            self._leaving.add(computer)

    def get(self, tools: Mapping[str, Sequence[AgentTool]]) -> Catalog:
        """The catalog of ``tools`` and of the Computers kept (the cached one when nothing
        changed)."""
        tools = self._keep(tools)
        held = self._tools
        if held.keys() != tools.keys() or any(held[c] is not tools[c] for c in tools):
            self._catalog = build_catalog(
                tools, computers=self._computers, separator=self._separator
            )
            self._tools = tools
            if len(self._served_routes) > _KNOWN_ROUTES:
                self._served_routes.clear()
            self._served_routes.update(self._catalog.routes)
        return self._catalog

    def known_route(self, name: str) -> Route | None:
        """Where ``name`` led when it was last served (its Computer may have left the list
        since), or None when it never was."""
        return self._served_routes.get(name)

    def _keep(self, tools: Mapping[str, Sequence[AgentTool]]) -> Mapping[str, Sequence[AgentTool]]:
        known, leaving = self._known, self._leaving
        for computer, listed in tools.items():
            if computer not in leaving:
                known[computer] = listed
                self._stale.discard(computer)
        if leaving:
            leaving.intersection_update(tools.keys())  # gone from the cache: left for good
        missing = known.keys() - tools.keys()
        if not missing:
            return tools
        for computer in sorted(missing - self._stale):
            self._stale.add(computer)
            logger.info(
                "the tools of %r are not in the Agent's cache (its refresh is under way or "
                "failed): serving the last known ones until it answers or leaves",
                computer,
            )
        return {**tools, **{c: known[c] for c in missing}}
