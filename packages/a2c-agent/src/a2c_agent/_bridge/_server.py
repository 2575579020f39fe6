"""The MCP side of the bridge: a low-level ``mcp`` server whose handlers ask the office.

Thin by design: names, the merged list, results and URIs come from the pure modules of
this package; here each MCP request becomes one Agent call.

* ``tools/list`` serves the merged catalog of the Agent's tool cache;
* ``tools/call`` relays to the Computer; a progress token in the request turns the progress
  extension on and each report becomes ``notifications/progress``; an MCP
  ``notifications/cancelled`` cancels the handler, and cancelling the Agent's call sends
  ``server:tool_call_cancel``;
* ``resources/list`` / ``resources/read`` serve each Computer's desktop windows;
* ``notifications/tools/list_changed`` goes out when the served list changes,
  ``notifications/resources/list_changed`` when a Computer enters or leaves or its desktop
  changes, to every handshake-era MCP session that has made a request (hosts list tools
  first), and to every 2026-07-28 ``subscriptions/listen`` stream that asked for them
  (mcp 2's server serves both eras: a host's first request chooses).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Collection
from typing import Any

import attrs
from mcp import MCPError, types
from mcp.server import Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from a2c_agent._version import __version__
from a2c_protocol import A2CError, ToolCallProgress

from ._catalog import Catalog, build_catalog
from ._names import DEFAULT_SEPARATOR
from ._office import Office
from ._results import error_result, mcp_result, progress_fields, unreachable_result
from ._uris import parse_uri, served_uri, split_entry

__all__ = ["Bridge", "BridgeOptions"]

logger = logging.getLogger("a2c_agent.bridge")
#: how long a first tools/list or tools/call waits for the bridge to join its office
_FIRST_TRY_WAIT = 15.0
#: handshake-era connections told of list changes (an HTTP bridge may see many hosts)
_MAX_SESSIONS = 256

SERVER_NAME = "a2c-agent-bridge"


@attrs.frozen(kw_only=True)
class BridgeOptions:
    """What ``a2c-agent mcp`` was asked to serve."""

    computers: Collection[str] = ()
    separator: str = DEFAULT_SEPARATOR
    tool_timeout: float = 300.0


class Bridge:
    """The MCP server in front of one :class:`Office`."""

    def __init__(self, options: BridgeOptions) -> None:
        self.options = options
        self.office: Office | None = None
        #: 2026-07-28 hosts hear of list changes on their subscriptions/listen streams.
        self._bus = InMemorySubscriptionBus()
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        #: Handshake-era connections that made a request: one ``ServerSession`` each (mcp 2
        #: builds one per request; any of them reaches the connection's standalone
        #: channel), keyed by the connection's ``initialize`` params, the same object for
        #: all its requests; the oldest are forgotten past _MAX_SESSIONS.
        self._sessions: OrderedDict[int, tuple[object, ServerSession]] = OrderedDict()
        self._served: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def init_options(self) -> InitializationOptions:
        """The capabilities announced to MCP clients."""
        return InitializationOptions(
            server_name=SERVER_NAME,
            server_version=__version__,
            capabilities=types.ServerCapabilities(
                tools=types.ToolsCapability(list_changed=True),
                resources=types.ResourcesCapability(subscribe=False, list_changed=True),
            ),
            instructions=(
                "Tools of the Computers of an A2C-SMCP office. Each tool name starts with "
                "the Computer that serves it; its description names that Computer."
            ),
        )

    # ------------------------------------------------------------- notifications

    def _remember_session(self, ctx: ServerRequestContext[Any]) -> None:
        # A 2026-07-28 request has no session to push to (its host listens instead).
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return
        session = ctx.session
        key = session.client_params
        self._sessions[id(key)] = (key, session)  # the key is held: its id stays unique
        self._sessions.move_to_end(id(key))
        while len(self._sessions) > _MAX_SESSIONS:
            self._sessions.popitem(last=False)

    def catalog(self) -> Catalog:
        """The tool list served now (empty while the office is unreachable)."""
        agent = self.office.agent if self.office is not None else None
        tools = agent.tools if agent is not None else {}
        return build_catalog(
            tools, computers=self.options.computers, separator=self.options.separator
        )

    def tools_changed(self) -> None:
        """The tool cache or the connection changed: tell the sessions if the list did."""
        signature = json.dumps(self.catalog().tools, sort_keys=True, default=str)
        if signature == self._served:
            return
        self._served = signature
        self._notify(lambda s: s.send_tool_list_changed(), ToolsListChanged())

    def resources_changed(self) -> None:
        """A Computer entered or left, or a desktop changed."""
        self._notify(lambda s: s.send_resource_list_changed(), ResourcesListChanged())

    def _notify(self, send: Any, event: ToolsListChanged | ResourcesListChanged) -> None:
        published = asyncio.get_running_loop().create_task(self._bus.publish(event))
        self._tasks.add(published)
        published.add_done_callback(self._tasks.discard)
        for key, (_, session) in list(self._sessions.items()):
            task = asyncio.get_running_loop().create_task(self._send(key, session, send))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, key: int, session: ServerSession, send: Any) -> None:
        try:
            await send(session)
        except Exception as exc:  # a session whose transport went away
            logger.debug("notification not delivered: %s", exc)
            self._sessions.pop(key, None)

    # ------------------------------------------------------------------- tools

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember_session(ctx)
        if self.office is not None:
            await self.office.first_try(_FIRST_TRY_WAIT)
        catalog = self.catalog()
        self._served = json.dumps(catalog.tools, sort_keys=True, default=str)
        tools: list[types.Tool] = []
        for entry in catalog.tools:
            try:
                tools.append(types.Tool.model_validate(entry))
            except ValidationError as exc:  # one odd tool must not hide the others
                logger.warning("tool %r left out of tools/list: %s", entry["name"], exc)
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._remember_session(ctx)
        answer = await self._call(ctx, params)
        try:
            return types.CallToolResult.model_validate(answer)
        except ValidationError as exc:  # a Computer's result MCP's types refuse
            logger.warning("tool %r: result not forwardable: %s", params.name, exc)
            text = f"the tool's result is not a valid MCP result: {exc.errors()[:3]}"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )

    async def _call(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        name = params.name
        assert self.office is not None
        await self.office.first_try(_FIRST_TRY_WAIT)
        agent = self.office.agent
        if agent is None:
            return unreachable_result(self.office.office, self.office.problem or "not joined")
        route = self.catalog().route(name)
        if route is None:
            text = f"no tool is served under the name {name!r} (list the tools again)"
            return {"content": [{"type": "text", "text": text}], "isError": True}
        meta: dict[str, Any] = dict(ctx.meta or {})
        on_progress = None
        if meta.get("progressToken", meta.get("progress_token")) is not None:
            session = ctx.session

            async def on_progress(report: ToolCallProgress) -> None:
                progress, total, message = progress_fields(report)
                # On the request's own stream, in either era.
                await session.report_progress(progress, total, message)

        try:
            result = await agent.call_tool(
                route.computer,
                route.tool,
                params.arguments or {},
                timeout=self.options.tool_timeout,
                on_progress=on_progress,
            )
        except A2CError as exc:
            logger.warning("tool %r on %r failed: %s", route.tool, route.computer, exc)
            return error_result(exc, computer=route.computer, tool=route.tool)
        return mcp_result(result, route.computer)

    # --------------------------------------------------------------- resources

    def _computers(self) -> list[str]:
        agent = self.office.agent if self.office is not None else None
        if agent is None:
            return []
        wanted = set(self.options.computers)
        return [c for c in sorted(agent.tools) if not wanted or c in wanted]

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._remember_session(ctx)
        agent = self.office.agent if self.office is not None else None
        resources: list[types.Resource] = []
        for computer in self._computers():
            if agent is None:
                break
            try:
                entries = await agent.get_desktop(computer)
            except A2CError as exc:
                logger.warning("could not read the desktop of %r: %s", computer, exc)
                continue
            for entry in entries:
                window, _ = split_entry(entry)
                resources.append(
                    types.Resource(
                        uri=served_uri(computer, window),
                        name=f"{computer}: {window}",
                        description=f"Desktop window {window} of A2C Computer '{computer}'",
                        mime_type="text/plain",
                    )
                )
        return types.ListResourcesResult(resources=resources)

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self._remember_session(ctx)
        uri = params.uri
        parsed = parse_uri(uri)
        if parsed is None:
            raise _failure(f"not a URI this bridge serves: {uri}", types.INVALID_PARAMS)
        computer, window = parsed
        agent = self.office.agent if self.office is not None else None
        if agent is None:
            assert self.office is not None
            problem = self.office.problem or "not joined"
            raise _failure(f"A2C office '{self.office.office}' is unreachable: {problem}")
        try:
            entries = await agent.get_desktop(computer, window=window)
        except A2CError as exc:
            raise _failure(f"A2C error: {exc}") from exc
        if not entries:
            message = f"no window {window} on the desktop of A2C Computer '{computer}'"
            raise _failure(message, types.INVALID_PARAMS)
        _, text = split_entry(entries[0])
        contents = types.TextResourceContents(uri=uri, text=text, mime_type="text/plain")
        return types.ReadResourceResult(contents=[contents])


def _failure(message: str, code: int = types.INTERNAL_ERROR) -> MCPError:
    return MCPError(code=code, message=message)
