"""What a Computer's link answers: the ``client:*`` requests and the two notifications.

:class:`LinkHandlers` is the inbound half of :class:`~a2c_computer._server_link._link.ComputerLink`,
which holds it and installs its bound methods on each Socket.IO client (no extra hop per
call). It owns who may ask (``--allow-agent``) and the blob-served counter; what it needs
of the link (the current client, the protocol line) comes in as callables. Each
``client:*`` handler runs under :meth:`LinkHandlers._guarded`: the ``--allow-agent``
check, then an answer that is a model or a flat ErrorPayload, never an exception and never
a missing ack, sized to fit the Server's message limit. ``notify:tool_call_cancel`` cancels
one call; ``notify:leave_office`` cancels the calls of the Agent that left. Connecting,
re-joining and ``server:update_*`` stay in :mod:`~a2c_computer._server_link._link`; a new
``client:*`` event only touches this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import socketio

from a2c_computer._blobs import BlobStore, serve_get_blob
from a2c_computer._bundles import Bundles, config_for_02
from a2c_computer._config import agent_view, states_view
from a2c_computer._exceptions import ComputerError
from a2c_computer._landing import LandingStore
from a2c_computer._observe import _otel as otel
from a2c_computer._skills import SkillManager, serve_get_skill, serve_get_skills
from a2c_computer._toolcalls._extensions import CallExtras, InputAnswer, ProgressForward, input_ask
from a2c_protocol import (
    NAMESPACE,
    AgentCallData,
    CallToolResult,
    CapabilityNotSupportedError,
    ErrorCode,
    ErrorPayload,
    Event,
    GetBlobReq,
    GetComputerConfigReq,
    GetDeskTopReq,
    GetDeskTopRet,
    GetResourcesReq,
    GetResourcesRet,
    GetSkillReq,
    GetSkillsReq,
    GetToolsReq,
    GetToolsRet,
    InvalidPayloadError,
    McpServerNotFoundError,
    PutBlobReq,
    ToolCallReq,
    from_wire,
    to_wire,
)
from a2c_protocol._lines import LINE_0_2, Line

from ._agent_allowlist import AgentAllowList
from ._answers import fit_answer, fit_tool_result
from ._line04 import Session04
from ._link_calls import LinkCalls, notice_reason
from ._port import CorePort

__all__ = ["LinkHandlers"]

logger = logging.getLogger("a2c_computer.link")


def _error(code: int, message: str) -> dict[str, Any]:
    data: dict[str, Any] = to_wire(ErrorPayload(code=code, message=message))
    return data


class LinkHandlers:
    """The handlers of what the Server sends a Computer (held by ``ComputerLink``).

    ``client`` gives the link's current Socket.IO client and ``line`` the protocol line
    it speaks now.
    """

    def __init__(
        self,
        core: CorePort,
        *,
        blobs: BlobStore,
        landing: LandingStore,
        skills: SkillManager | None,
        calls: LinkCalls,
        name: str,
        office_id: str,
        client: Callable[[], socketio.AsyncClient | None],
        line: Callable[[], Line],
    ) -> None:
        self._core = core
        self._blobs = blobs
        self._landing = landing
        self._skills = skills
        self._calls = calls
        self.name = name
        self.office_id = office_id
        self._client = client
        self._line = line
        #: Told the raw size of every blob chunk served (the Computer's metrics).
        self.on_blob_served: Callable[[int], None] | None = None
        #: When set, only these Agents get answers (``--allow-agent``).
        self.allowed_agents: AgentAllowList | None = None

    def register(self, sio: socketio.AsyncClient) -> None:
        """Install the ``client:*`` handlers and the two notifications on ``sio``."""
        handlers: dict[Event, Callable[[Any], Awaitable[Any]]] = {
            Event.TOOL_CALL: self._on_tool_call,
            Event.GET_TOOLS: self._on_get_tools,
            Event.GET_DESKTOP: self._on_get_desktop,
            Event.GET_RESOURCES: self._on_get_resources,
            Event.GET_CONFIG: self._on_get_config,
            Event.GET_BLOB: self._on_get_blob,
            Event.PUT_BLOB: self._on_put_blob,
        }
        if self._skills is not None:
            handlers[Event.GET_SKILLS] = self._on_get_skills
            handlers[Event.GET_SKILL] = self._on_get_skill
        for event, handler in handlers.items():
            sio.on(event.value, self._guarded(event, handler), namespace=NAMESPACE)
        sio.on(Event.NOTIFY_TOOL_CALL_CANCEL.value, self._on_cancel, namespace=NAMESPACE)
        sio.on(Event.NOTIFY_LEAVE_OFFICE.value, self._on_leave_notice, namespace=NAMESPACE)

    def _progress_forward(self, req: ToolCallReq) -> ProgressForward:
        async def emit(event: str, data: Any) -> None:
            sio = self._client()
            if sio is not None and sio.connected:
                await sio.emit(event, data, namespace=NAMESPACE)

        return ProgressForward(emit, agent=req.agent, req_id=req.req_id, computer=self.name)

    def _guarded(
        self, event: Event, handler: Callable[[Any], Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def run(*args: Any) -> Any:
            data = args[0] if args else None
            refused = self.allowed_agents and self.allowed_agents.refusal(event.value, data)
            if refused:
                return refused
            if self._line() != LINE_0_2 and event is not Event.PUT_BLOB:
                return await in_04_shapes(data)
            return await answered(data)

        async def in_04_shapes(data: Any) -> Any:
            # A 0.4 session: the Server and Agent speak 0.4 shapes, where each MCP server
            # is its bundle_id (``_line04``); we answer in them.
            session = Session04(Bundles.of(self._core.config), self._core.tool_server)
            ours, at_once = session.request(event, data)
            if at_once is not None:
                return at_once
            return session.answer(event, await answered(ours), data)

        async def answered(data: Any) -> Any:
            try:
                answer = await handler(data)
                if event in _SIZED_BY_HANDLER:
                    return answer
                return fit_answer(event.value, answer, self._blobs.settings)
            except InvalidPayloadError as exc:
                return to_wire(exc.to_payload())
            except _WrongComputer as exc:
                return _error(ErrorCode.FORBIDDEN, str(exc))
            except Exception:
                logger.exception("handling %s failed", event)
                return _error(
                    ErrorCode.INTERNAL_ERROR, f"the Computer failed to handle {event.value}"
                )

        return run

    def _check_target(self, computer: str) -> None:
        if computer != self.name:
            raise _WrongComputer(f"this is Computer {self.name!r}, not {computer!r}")

    async def _on_tool_call(self, data: Any) -> Any:
        req = from_wire(ToolCallReq, data)
        self._check_target(req.computer)
        if req.timeout <= 0:
            return _error(ErrorCode.BAD_REQUEST, "timeout must be a positive number of seconds")
        mcp_server = self._core.tool_server(req.tool_name)

        async def finish(result: CallToolResult) -> CallToolResult:
            # Spooling hashes and writes megabytes: keep it off the event loop.
            return await asyncio.to_thread(
                fit_tool_result, result, tool=req.tool_name, store=self._blobs,
                mcp_server=mcp_server,
            )  # fmt: skip

        forward = self._progress_forward(req) if req.a2c_progress is True else None
        ask = None
        if (req.a2c_input is not None or req.a2c_request_state is not None
                or req.a2c_input_responses is not None):  # fmt: skip
            ask = input_ask(req, self.name, self.office_id)
        traced: contextlib.AbstractContextManager[otel.CallTrace | None] = contextlib.nullcontext(
            None
        )
        if otel.STATE.active and req.a2c_trace is not None:
            traced = otel.traced_call(req, self.name, self.office_id)
        try:
            # The sideband runs inside the call, so its log line and metrics see the answer sent.
            with self._calls.running(req.req_id, req.agent), traced as trace:
                extras = None
                if forward is not None or trace is not None or ask is not None:
                    extras = CallExtras(
                        progress=forward,
                        mcp_request=trace.mcp_request if trace is not None else None,
                        ask=ask,
                    )
                result = await self._core.call_tool_round(
                    req.tool_name, req.params, timeout=req.timeout, req_id=req.req_id,
                    agent=req.agent, finish=finish, extras=extras,
                )  # fmt: skip
                if isinstance(result, InputAnswer):
                    return result.wire
                if trace is not None:
                    trace.finished(result, mcp_server)
        finally:
            if forward is not None:
                forward.close()
        return to_wire(result)

    async def _on_get_tools(self, data: Any) -> Any:
        req = from_wire(GetToolsReq, data)
        self._check_target(req.computer)
        return to_wire(GetToolsRet(tools=self._core.tools(), req_id=req.req_id))

    async def _on_get_desktop(self, data: Any) -> Any:
        req = from_wire(GetDeskTopReq, data)
        self._check_target(req.computer)
        desktops = await self._core.desktop(req.desktop_size, req.window)
        return to_wire(GetDeskTopRet(desktops=desktops, req_id=req.req_id))

    async def _on_get_resources(self, data: Any) -> Any:
        req = from_wire(GetResourcesReq, data)
        self._check_target(req.computer)
        try:
            resources, cursor = await self._core.list_resources(req.mcp_server, req.cursor)
        except (McpServerNotFoundError, CapabilityNotSupportedError) as exc:
            return to_wire(exc.to_payload())
        except ComputerError as exc:
            return _error(ErrorCode.INTERNAL_ERROR, f"resources/list failed: {exc}")
        ret = to_wire(GetResourcesRet(resources=resources, req_id=req.req_id, next_cursor=cursor))
        return _both_mime_spellings(ret)

    async def _on_get_config(self, data: Any) -> Any:
        req = from_wire(GetComputerConfigReq, data)
        self._check_target(req.computer)
        view = agent_view(to_wire(self._core.config))
        if self._line() == LINE_0_2:  # 0.4 sessions show bundle_ids and names (``_line04``)
            view = config_for_02(view)
        return {**view, "a2c_server_states": states_view(self._core.server_states())}

    async def _on_get_blob(self, data: Any) -> Any:
        req = from_wire(GetBlobReq, data)
        self._check_target(req.computer)
        # One chunk read from the spool (page cache) is cheaper than a thread hop.
        answer = serve_get_blob(self._blobs, req)
        chunk = answer.get("blob")
        if isinstance(chunk, str) and self.on_blob_served is not None:
            self.on_blob_served(_decoded_size(chunk))
        return answer

    async def _on_put_blob(self, data: Any) -> Any:
        req = from_wire(PutBlobReq, data)
        self._check_target(req.computer)
        return await self._landing.put(req)

    async def _on_get_skills(self, data: Any) -> Any:
        req = from_wire(GetSkillsReq, data)
        self._check_target(req.computer)
        assert self._skills is not None  # only registered with a skill manager
        return serve_get_skills(self._skills, req)

    async def _on_get_skill(self, data: Any) -> Any:
        req = from_wire(GetSkillReq, data)
        self._check_target(req.computer)
        assert self._skills is not None
        return await serve_get_skill(self._skills, req)

    async def _on_leave_notice(self, *args: Any) -> None:
        data = args[0] if args else None
        agent = data.get("agent") if isinstance(data, dict) else None
        if isinstance(agent, str):
            self._calls.agent_left(agent)
            self._landing.agent_left(agent)
            self._core.input_agent_left(agent)

    async def _on_cancel(self, *args: Any) -> None:
        data = args[0] if args else None
        try:
            req = from_wire(AgentCallData, data)
        except InvalidPayloadError as exc:
            logger.warning("ignoring a malformed tool_call_cancel: %s", exc)
            return
        if self.allowed_agents is not None and not self.allowed_agents.allows(req.agent):
            logger.warning("ignoring a tool_call_cancel from Agent %r: not allowed", req.agent)
            return
        caller = self._calls.caller(req.req_id)
        if caller != req.agent:  # C4: only the calling Agent (or the Server for it) cancels
            logger.info(
                "ignoring a tool_call_cancel of %s from Agent %r: %s", req.req_id, req.agent,
                "no such call over this link" if caller is None else "another Agent's call",
            )  # fmt: skip
            return
        reason = notice_reason(data)
        if self._core.cancel(req.req_id, reason=reason):
            logger.info("cancelling tool call %s of %s (reason %s)", req.req_id, req.agent, reason)


#: Handlers that size their own answers (sideband, chunk clamping): no second measure.
_SIZED_BY_HANDLER = frozenset({Event.TOOL_CALL, Event.GET_BLOB})


def _decoded_size(b64: str) -> int:
    """Bytes a base64 text decodes to, without decoding it."""
    return len(b64) * 3 // 4 - (len(b64[-2:]) - len(b64[-2:].rstrip("=")))


class _WrongComputer(Exception):
    pass


def _both_mime_spellings(ret: Any) -> Any:
    """Each resource's ``mimeType`` (MCP's key, ours) also as ``mime_type``.

    The official Agents read only ``mime_type``; ours reads either (docs/compatibility.md).
    """
    for item in ret.get("resources", ()):
        if isinstance(item, dict) and "mimeType" in item:
            item.setdefault("mime_type", item["mimeType"])
    return ret
