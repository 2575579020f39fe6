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
  changes, to every MCP session that has made a request (hosts list tools first).
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Collection
from typing import Any

import attrs
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.exceptions import McpError
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
        self.server: Server[Any, Any] = Server(SERVER_NAME, version=__version__)
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._served: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        handlers = self.server.request_handlers
        handlers[types.ListToolsRequest] = self._list_tools
        handlers[types.CallToolRequest] = self._call_tool
        handlers[types.ListResourcesRequest] = self._list_resources
        handlers[types.ReadResourceRequest] = self._read_resource

    def init_options(self) -> InitializationOptions:
        """The capabilities announced to MCP clients."""
        return InitializationOptions(
            server_name=SERVER_NAME,
            server_version=__version__,
            capabilities=types.ServerCapabilities(
                tools=types.ToolsCapability(listChanged=True),
                resources=types.ResourcesCapability(subscribe=False, listChanged=True),
            ),
            instructions=(
                "Tools of the Computers of an A2C-SMCP office. Each tool name starts with "
                "the Computer that serves it; its description names that Computer."
            ),
        )

    # ------------------------------------------------------------- notifications

    def _remember_session(self) -> None:
        self._sessions.add(self.server.request_context.session)

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
        self._notify(lambda s: s.send_tool_list_changed())

    def resources_changed(self) -> None:
        """A Computer entered or left, or a desktop changed."""
        self._notify(lambda s: s.send_resource_list_changed())

    def _notify(self, send: Any) -> None:
        for session in list(self._sessions):
            task = asyncio.get_running_loop().create_task(self._send(session, send))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, session: ServerSession, send: Any) -> None:
        try:
            await send(session)
        except Exception as exc:  # a session whose transport went away
            logger.debug("notification not delivered: %s", exc)
            self._sessions.discard(session)

    # ------------------------------------------------------------------- tools

    async def _list_tools(self, request: types.ListToolsRequest) -> types.ServerResult:
        self._remember_session()
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
        return types.ServerResult(types.ListToolsResult(tools=tools))

    async def _call_tool(self, request: types.CallToolRequest) -> types.ServerResult:
        self._remember_session()
        answer = await self._call(request)
        try:
            return types.ServerResult(types.CallToolResult.model_validate(answer))
        except ValidationError as exc:  # a Computer's result MCP's types refuse
            logger.warning("tool %r: result not forwardable: %s", request.params.name, exc)
            text = f"the tool's result is not a valid MCP result: {exc.errors()[:3]}"
            return types.ServerResult(
                types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)], isError=True
                )
            )

    async def _call(self, request: types.CallToolRequest) -> dict[str, Any]:
        name = request.params.name
        assert self.office is not None
        await self.office.first_try(_FIRST_TRY_WAIT)
        agent = self.office.agent
        if agent is None:
            return unreachable_result(self.office.office, self.office.problem or "not joined")
        route = self.catalog().route(name)
        if route is None:
            text = f"no tool is served under the name {name!r} (list the tools again)"
            return {"content": [{"type": "text", "text": text}], "isError": True}
        context = self.server.request_context
        token = context.meta.progressToken if context.meta is not None else None
        on_progress = None
        if token is not None:
            session, related = context.session, str(context.request_id)

            async def on_progress(report: ToolCallProgress) -> None:
                progress, total, message = progress_fields(report)
                await session.send_progress_notification(
                    token, progress, total, message, related_request_id=related
                )

        try:
            result = await agent.call_tool(
                route.computer,
                route.tool,
                request.params.arguments or {},
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

    async def _list_resources(self, request: types.ListResourcesRequest) -> types.ServerResult:
        self._remember_session()
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
                        uri=served_uri(computer, window),  # type: ignore[arg-type]
                        name=f"{computer}: {window}",
                        description=f"Desktop window {window} of A2C Computer '{computer}'",
                        mimeType="text/plain",
                    )
                )
        return types.ServerResult(types.ListResourcesResult(resources=resources))

    async def _read_resource(self, request: types.ReadResourceRequest) -> types.ServerResult:
        self._remember_session()
        uri = str(request.params.uri)
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
        contents = types.TextResourceContents(
            uri=request.params.uri, text=text, mimeType="text/plain"
        )
        return types.ServerResult(types.ReadResourceResult(contents=[contents]))


def _failure(message: str, code: int = types.INTERNAL_ERROR) -> McpError:
    return McpError(types.ErrorData(code=code, message=message))
