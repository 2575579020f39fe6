"""A small, real test Computer: a python-socketio ``AsyncClient`` with scripted answers.

It connects to ``/smcp`` as role ``computer`` (with ``a2c_version`` added by the core),
joins an office, answers every ``client:*`` event from a handler and records every request
and every ``notify:*`` it receives. It knows no MCP: tests script exactly what it says,
including malformed answers and ErrorPayloads.

Default answers come from plain attributes (``tools``, ``config``, ``desktops``,
``resources``, ``tool_results``); :meth:`ScriptedComputer.on` replaces the handler of one
event with any function ``payload -> answer`` (sync or async). Whatever the handler returns
is sent as the ack unchanged.

    async with ScriptedComputer(server.url, name="box", office_id="o1") as computer:
        computer.tools = [scripted_tool("echo", tags=["demo"])]
        ...
        note = await computer.wait_for_notification(Event.NOTIFY_TOOL_CALL_CANCEL)
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import socketio

from a2c_protocol import (
    NAMESPACE,
    CallToolResult,
    ErrorCode,
    Event,
    GetComputerConfigRet,
    Role,
    SMCPTool,
    ToolMeta,
    to_wire,
    with_tool_meta,
    with_version_query,
)

__all__ = ["ReceivedEvent", "ScriptedComputer", "ScriptedHandler", "scripted_tool"]

#: ``handler(payload) -> ack`` (sync or async); the return value is the ack, unchanged.
ScriptedHandler = Callable[[dict[str, Any]], Any]

_CLIENT_EVENTS = (
    Event.TOOL_CALL,
    Event.GET_CONFIG,
    Event.GET_TOOLS,
    Event.GET_DESKTOP,
    Event.GET_RESOURCES,
    Event.GET_SKILLS,
    Event.GET_SKILL,
    Event.GET_BLOB,
)
_ANNOUNCEMENTS = (
    Event.UPDATE_TOOL_LIST,
    Event.UPDATE_CONFIG,
    Event.UPDATE_DESKTOP,
    Event.UPDATE_SKILLS,
)
_NOTIFY_EVENTS = tuple(e for e in Event if e.value.startswith("notify:"))


@attrs.frozen
class ReceivedEvent:
    """One event the scripted Computer received: its name and raw payload."""

    event: Event
    payload: Any


class ScriptedComputer:
    """A test Computer with scripted ``client:*`` answers (an async context manager).

    ``office_id`` None: connect only, join later with :meth:`join`.
    ``page_size``: resources per ``client:get_resources`` page (cursor = next index).
    ``no_resources``: MCP server names answering 4015 (no ``resources`` capability).
    """

    def __init__(
        self,
        url: str,
        *,
        name: str,
        office_id: str | None = None,
        socketio_path: str = "socket.io",
        auth: dict[str, Any] | None = None,
        page_size: int = 2,
    ) -> None:
        self.url = url
        self.name = name
        self.office_id = office_id
        self.socketio_path = socketio_path
        self.auth = {**(auth or {}), "role": Role.COMPUTER.value}
        self.page_size = page_size
        self.tools: list[SMCPTool] = []
        self.config: GetComputerConfigRet = GetComputerConfigRet(servers={})
        self.desktops: list[str] = []
        #: MCP server name → MCP resource JSON objects.
        self.resources: dict[str, list[dict[str, Any]]] = {}
        self.no_resources: set[str] = set()
        #: tool name → result (a CallToolResult or a raw dict sent as is).
        self.tool_results: dict[str, CallToolResult | dict[str, Any]] = {}
        self.requests: list[ReceivedEvent] = []
        self.notifications: list[ReceivedEvent] = []
        self._handlers: dict[Event, ScriptedHandler] = {
            Event.GET_TOOLS: self._tools,
            Event.GET_CONFIG: self._config,
            Event.GET_DESKTOP: self._desktop,
            Event.GET_RESOURCES: self._resources,
            Event.TOOL_CALL: self._tool_call,
            Event.GET_SKILLS: self._unscripted,
            Event.GET_SKILL: self._unscripted,
            Event.GET_BLOB: self._unscripted,
        }
        self._changed = asyncio.Condition()
        self._released = asyncio.Event()
        self.sio = socketio.AsyncClient(reconnection=False, handle_sigint=False)
        for event in _CLIENT_EVENTS:
            self.sio.on(event.value, self._client_handler(event), namespace=NAMESPACE)
        for event in _NOTIFY_EVENTS:
            self.sio.on(event.value, self._notify_handler(event), namespace=NAMESPACE)

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> ScriptedComputer:
        await self.connect()
        if self.office_id is not None:
            await self.join(self.office_id)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Connect to the Server (polling first) without joining an office."""
        await self.sio.connect(
            with_version_query(self.url),
            auth=self.auth,
            namespaces=[NAMESPACE],
            socketio_path=self.socketio_path,
            wait_timeout=15,
        )

    async def close(self) -> None:
        """Release held handlers and disconnect."""
        self._released.set()
        if self.sio.connected:
            await self.sio.disconnect()

    async def join(self, office_id: str) -> None:
        """``server:join_office`` as a Computer; raises AssertionError if refused."""
        ack = await self.sio.call(
            Event.JOIN_OFFICE.value,
            {"role": Role.COMPUTER.value, "name": self.name, "office_id": office_id},
            namespace=NAMESPACE,
            timeout=30,
        )
        ok = ack[0] if isinstance(ack, list | tuple) else ack
        if ok is not True:
            raise AssertionError(f"scripted computer could not join {office_id!r}: {ack!r}")
        self.office_id = office_id

    async def leave(self) -> None:
        """``server:leave_office`` for the current office."""
        if self.office_id is None:
            raise AssertionError("not in an office")
        await self.sio.call(
            Event.LEAVE_OFFICE.value,
            {"office_id": self.office_id},
            namespace=NAMESPACE,
            timeout=30,
        )
        self.office_id = None

    async def announce(self, event: Event) -> None:
        """Emit ``server:update_tool_list`` / ``update_config`` / ``update_desktop`` /
        ``update_skills``."""
        if event not in _ANNOUNCEMENTS:
            raise ValueError(f"{event.value} is not a Computer announcement")
        await self.sio.emit(event.value, {"computer": self.name}, namespace=NAMESPACE)

    # ------------------------------------------------------------------- scripting

    def on(self, event: Event, handler: ScriptedHandler) -> None:
        """Answer ``event`` with ``handler(payload)`` (its return value is the ack)."""
        if event not in _CLIENT_EVENTS:
            raise ValueError(f"{event.value} is not a client:* event")
        self._handlers[event] = handler

    async def hold(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A handler that never answers until the computer closes (for timeout tests)."""
        await self._released.wait()
        answer: dict[str, Any] = to_wire(_text_result("released", is_error=True))
        return answer

    # ------------------------------------------------------------------- observing

    def received(self, event: Event) -> list[Any]:
        """Payloads received so far for ``event`` (requests or notifications)."""
        return [r.payload for r in (*self.requests, *self.notifications) if r.event is event]

    async def wait_for_notification(
        self,
        event: Event,
        predicate: Callable[[Any], bool] = lambda _: True,
        *,
        timeout: float = 30.0,
    ) -> Any:
        """The first payload of ``event`` matching ``predicate`` (waits if needed)."""
        return await self._wait(self.notifications, event, predicate, timeout)

    async def wait_for_request(
        self,
        event: Event,
        predicate: Callable[[Any], bool] = lambda _: True,
        *,
        timeout: float = 30.0,
    ) -> Any:
        """The first ``client:*`` payload of ``event`` matching ``predicate``."""
        return await self._wait(self.requests, event, predicate, timeout)

    async def _wait(
        self,
        log: Sequence[ReceivedEvent],
        event: Event,
        predicate: Callable[[Any], bool],
        timeout: float,
    ) -> Any:
        def find() -> ReceivedEvent | None:
            return next((r for r in log if r.event is event and predicate(r.payload)), None)

        async with self._changed:
            found = await asyncio.wait_for(self._changed.wait_for(find), timeout)
        assert found is not None
        return found.payload

    async def _record(self, log: list[ReceivedEvent], event: Event, payload: Any) -> None:
        async with self._changed:
            log.append(ReceivedEvent(event, payload))
            self._changed.notify_all()

    def _client_handler(self, event: Event) -> Callable[..., Any]:
        async def handler(payload: Any = None, *_: Any) -> Any:
            await self._record(self.requests, event, payload)
            answer = self._handlers[event](payload)
            if inspect.isawaitable(answer):
                answer = await answer
            return answer

        return handler

    def _notify_handler(self, event: Event) -> Callable[..., Any]:
        async def handler(payload: Any = None, *_: Any) -> None:
            await self._record(self.notifications, event, payload)

        return handler

    # ------------------------------------------------------------ default answers

    def _unscripted(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {"code": 404, "message": "this scripted Computer has no answer for that event"}

    def _tools(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {"tools": to_wire(self.tools), "req_id": payload["req_id"]}

    def _config(self, payload: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = to_wire(self.config)
        return data

    def _desktop(self, payload: dict[str, Any]) -> dict[str, Any]:
        desktops = list(self.desktops)
        window = payload.get("window")
        if window is not None:
            desktops = [d for d in desktops if d.split("\n\n", 1)[0] == window]
        size = payload.get("desktop_size")
        if isinstance(size, int):
            desktops = desktops[:size]
        return {"desktops": desktops, "req_id": payload["req_id"]}

    def _resources(self, payload: dict[str, Any]) -> dict[str, Any]:
        server = payload.get("mcp_server")
        if server in self.no_resources:
            return {
                "code": int(ErrorCode.MCP_CAPABILITY_NOT_SUPPORTED),
                "message": f"MCP server {server!r} lacks the 'resources' capability",
                "mcp_server_name": server,
                "capability": "resources",
            }
        if server not in self.resources:
            return {
                "code": int(ErrorCode.MCP_SERVER_NOT_FOUND),
                "message": "MCP server is not registered",
                "mcp_server_name": server,
            }
        items = self.resources[server]
        start = int(payload.get("cursor") or 0)
        end = start + self.page_size
        page: dict[str, Any] = {"resources": items[start:end], "req_id": payload["req_id"]}
        if end < len(items):
            page["next_cursor"] = str(end)
        return page

    def _tool_call(self, payload: dict[str, Any]) -> Any:
        result = self.tool_results.get(payload.get("tool_name", ""))
        if result is None:
            return to_wire(
                _text_result(
                    f"unknown tool {payload.get('tool_name')!r}",
                    is_error=True,
                    meta={"error_code": int(ErrorCode.TOOL_NOT_FOUND)},
                )
            )
        return to_wire(result) if isinstance(result, CallToolResult) else result


def _text_result(
    text: str, *, is_error: bool, meta: dict[str, Any] | None = None
) -> CallToolResult:
    return CallToolResult(content=[{"type": "text", "text": text}], is_error=is_error, meta=meta)


def scripted_tool(
    name: str,
    *,
    tags: list[str] | None = None,
    alias: str | None = None,
    auto_apply: bool | None = None,
) -> SMCPTool:
    """A tool for ``ScriptedComputer.tools``; with any ToolMeta field set it carries the
    ``a2c_tool_meta`` JSON string (as a real Computer sends it), plus a vendor meta key."""
    base = SMCPTool(
        name=name,
        description=f"the {name} tool",
        params_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        return_schema=None,
        meta={"vendor_key": "kept"},
    )
    if tags is None and alias is None and auto_apply is None:
        return base
    return with_tool_meta(base, ToolMeta(auto_apply=auto_apply, tags=tags, alias=alias))
