"""The MCP side of the bridge: a low-level ``mcp`` server whose handlers ask the office.

Thin by design: names, the merged list, results and URIs come from the pure modules of
this package; here each MCP request becomes one Agent call. mcp 2's server serves both
eras on both transports (a host's first request, or an HTTP request's
``MCP-Protocol-Version``, chooses); the handlers are the same for both.

* every era and transport announces the same capabilities and instructions: tools and
  resources with ``listChanged`` (handshake: pushed on the connection; 2026-07-28: on
  ``subscriptions/listen`` streams, see :mod:`._notify`);
* ``tools/list`` serves the merged catalog of the Agent's tool cache; while the office
  cannot be used (not reached, the Agent seat taken, a refusal) it is an MCP error naming
  the cause, which the host shows: an empty list would hide it;
* ``tools/call`` relays to the Computer; a name nobody serves gets the closest served
  name as a suggestion; a progress token in the request turns the progress extension on
  and each report becomes ``notifications/progress`` on the request's own stream; an MCP
  cancellation cancels the handler, and cancelling the Agent's call sends
  ``server:tool_call_cancel``;
* ``resources/list`` / ``resources/read`` serve each served Computer's desktop windows (the
  ``--computer`` filter applies to a URI read too);
* the first ``tools/*`` and ``resources/*`` requests wait (bounded) for the bridge's
  first connect-and-join, so a host starting with the bridge does not get a race's answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from mcp import MCPError, types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from pydantic import ValidationError

from a2c_agent._version import __version__
from a2c_protocol import A2CError, ErrorCode, RemoteError, ToolCallProgress

from ._catalog import Catalog, CatalogCache, serves
from ._input import HostInputs, ask_handshake_host, host_capabilities, is_handshake
from ._names import DEFAULT_SEPARATOR
from ._notify import ListChanges
from ._office import Office
from ._parked import binding_of
from ._results import error_result, mcp_result, progress_fields, unreachable_result
from ._uris import parse_uri, served_uri, split_entry

if TYPE_CHECKING:
    from a2c_agent._agent import AsyncAgent
    from a2c_agent._rpc._input import InputHandler
    from a2c_agent._rpc._progress import ProgressCallback

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "Bridge", "BridgeOptions"]

logger = logging.getLogger("a2c_agent.bridge")
#: how long a first request waits for the bridge to join its office
_FIRST_TRY_WAIT = 15.0
#: How long a tool call waits for an Agent that is reconnecting (a node's rolling restart
#: costs it about a second) before it is answered "office unreachable".
_RECONNECT_WAIT = 10.0

SERVER_NAME = "a2c-agent-bridge"
INSTRUCTIONS = (
    "Tools of the Computers of an A2C-SMCP office. Each tool name starts with "
    "the Computer that serves it; its description names that Computer."
)
_NOTIFICATIONS = NotificationOptions(tools_changed=True, resources_changed=True)


@attrs.frozen(kw_only=True)
class BridgeOptions:
    """What ``a2c-agent mcp`` was asked to serve."""

    computers: Collection[str] = ()
    separator: str = DEFAULT_SEPARATOR
    tool_timeout: float = 300.0
    #: how long a tool's question waits for the host's answer
    input_timeout: float = 300.0


class _BridgeServer(Server[Any]):
    """mcp's server, announcing the bridge's list-change capabilities wherever asked.

    The streamable HTTP session manager answers ``initialize`` from
    ``create_initialization_options()`` called without arguments (stdio is handed the
    options): with the base class's default, HTTP hosts were told ``listChanged: false``.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or _NOTIFICATIONS, experimental_capabilities, extensions
        )


class Bridge:
    """The MCP server in front of one :class:`Office`."""

    def __init__(self, options: BridgeOptions) -> None:
        self.options = options
        self.office: Office | None = None
        self._changes = ListChanges()
        self._catalogs = CatalogCache(options.computers, options.separator)
        self._inputs = HostInputs(timeout=options.input_timeout)
        self.server: Server[Any] = _BridgeServer(
            SERVER_NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            # A 2026-07-28 HTTP call's Mcp-Param headers are checked against this schema;
            # without it mcp 2 would run the whole tools/list for every such call.
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=self._changes.listen,
        )
        self._served: str | None = None

    def init_options(self) -> InitializationOptions:
        """The capabilities and instructions announced to handshake-era MCP clients."""
        return self.server.create_initialization_options()

    # ------------------------------------------------------------- the office

    def catalog(self) -> Catalog:
        """The tool list served now (empty while the office is unreachable)."""
        agent = self.office.agent if self.office is not None else None
        return self._catalogs.get(agent.tools if agent is not None else {})

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        return self.catalog().input_schema(name)

    async def _agent(self, *, reconnecting: float = 0.0) -> AsyncAgent:
        """The Agent in its office, or an MCP error saying why there is none; one that is
        reconnecting is waited for up to ``reconnecting`` seconds."""
        assert self.office is not None
        await self.office.first_try(_FIRST_TRY_WAIT)
        agent = self.office.agent
        if agent is None and reconnecting > 0:
            agent = await self.office.back(reconnecting)
        if agent is None:
            problem = self.office.problem or "not joined"
            message = f"A2C office '{self.office.office}' is unreachable: {problem}"
            raise MCPError(code=types.INTERNAL_ERROR, message=message)
        return agent

    def tools_changed(self) -> None:
        """The tool cache or the connection changed: tell the hosts if the list did."""
        signature = json.dumps(self.catalog().tools, sort_keys=True, default=str)
        if signature == self._served:
            return
        self._served = signature
        self._changes.tools()

    def resources_changed(self) -> None:
        """A Computer entered or left, or a desktop changed."""
        self._changes.resources()

    def computer_left(self, computer: str | None) -> None:
        """``computer`` left the office (None: the bridge's Agent did): drop its tools."""
        self._catalogs.forget(computer)
        self.tools_changed()

    # ------------------------------------------------------------------- tools

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._changes.remember(ctx)
        await self._agent()
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
    ) -> types.CallToolResult | types.InputRequiredResult:
        self._changes.remember(ctx)
        answer = await self._call(ctx, params)
        if isinstance(answer, types.InputRequiredResult):
            return answer
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
    ) -> dict[str, Any] | types.InputRequiredResult:
        name = params.name
        try:
            # A call made while the Agent moves to another node (a rolling restart) waits
            # for it; the SDK sends again what a Server refused unsent.
            wait = min(_RECONNECT_WAIT, self.options.tool_timeout)
            agent = await self._agent(reconnecting=wait)
        except MCPError as exc:
            assert self.office is not None
            return unreachable_result(self.office.office, self.office.problem or exc.error.message)
        catalog = self.catalog()
        # A tool the host still lists whose Computer left the list a moment ago (it is
        # moving to another Server node) is called anyway: the SDK waits for it.
        route = catalog.route(name) or self._catalogs.known_route(name)
        if route is None:
            hint = catalog.suggestion(name)
            text = f"no tool is served under the name {name!r}" + (
                f"; did you mean {hint!r}?" if hint else " (list the tools again)"
            )
            return {"content": [{"type": "text", "text": text}], "isError": True}
        if params.request_state is not None:  # a 2026-07-28 host answers the input asked
            resumed: dict[str, Any] | types.InputRequiredResult = await self._inputs.resume(
                params.request_state, binding_of(name, params.arguments), _responses(params)
            )
            return resumed
        on_progress = _progress_to(ctx)
        # The office hears only what the host declared: a kind it cannot answer is
        # declined by the Computer (or, from a hostile one, by the SDK) without asking it.
        taken = host_capabilities(ctx)

        async def office(on_input: InputHandler | None) -> dict[str, Any]:
            try:
                result = await agent.call_tool(
                    route.computer,
                    route.tool,
                    params.arguments or {},
                    timeout=self.options.tool_timeout,
                    on_progress=on_progress,
                    on_input=on_input,
                    input_capabilities=taken,
                )
            except A2CError as exc:
                logger.warning("tool %r on %r failed: %s", route.tool, route.computer, exc)
                if isinstance(exc, RemoteError) and exc.code == ErrorCode.NOT_FOUND:
                    # Not in the office (it left while this bridge was away): its kept
                    # tools go too.
                    self.computer_left(route.computer)
                return error_result(exc, computer=route.computer, tool=route.tool)
            return mcp_result(result, route.computer)

        if taken is None:  # the host answers nothing: the Computer declines, as before
            return await office(None)
        if is_handshake(ctx):
            return await office(ask_handshake_host(ctx, taken, self.options.input_timeout))
        return await self._inputs.start(ctx, name, params.arguments, taken, office)

    def close(self) -> None:
        """Cancel the calls parked for their host's answers (the bridge stops)."""
        self._inputs.close()

    # --------------------------------------------------------------- resources

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._changes.remember(ctx)
        agent = await self._agent()
        resources: list[types.Resource] = []
        for computer in sorted(agent.tools):
            if not serves(computer, self.options.computers):
                continue
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
        self._changes.remember(ctx)
        uri = params.uri
        parsed = parse_uri(uri)
        if parsed is None:
            raise _failure(f"not a URI this bridge serves: {uri}", types.INVALID_PARAMS)
        computer, window = parsed
        if not serves(computer, self.options.computers):
            logger.warning("read of %s refused: Computer %r is not served", uri, computer)
            message = f"not a URI this bridge serves: {uri} (its Computer is not served here)"
            raise _failure(message, types.INVALID_PARAMS)
        agent = await self._agent()
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


def _responses(params: types.CallToolRequestParams) -> dict[str, Any] | None:
    """A 2026-07-28 retry's ``inputResponses`` as JSON."""
    if params.input_responses is None:
        return None
    return {
        key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key, value in params.input_responses.items()
    }


def _progress_to(ctx: ServerRequestContext[Any]) -> ProgressCallback | None:
    """Progress reports of the call, to the request's own stream when it has a token."""
    meta: dict[str, Any] = dict(ctx.meta or {})
    if meta.get("progressToken", meta.get("progress_token")) is None:
        return None
    session = ctx.session

    async def on_progress(report: ToolCallProgress) -> None:
        progress, total, message = progress_fields(report)
        try:  # in either era; a 2026-07-28 host's call may outlive the request it came in
            await session.report_progress(progress, total, message)
        except Exception as exc:
            logger.debug("progress not delivered: %s", exc)

    return on_progress
