"""The Agent's requests to Computers: ``client:get_*``, ``client:tool_call`` and its cancel."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from a2c_agent._core import AgentCore, new_req_id
from a2c_agent._exceptions import (
    AckTimeoutError,
    InvalidResponseError,
    ToolCallTimeoutError,
)
from a2c_agent._rules import tools_from_ret
from a2c_agent._session._lifecycle import AgentState
from a2c_agent._types import AgentTool, ResourcePage, result_error_code
from a2c_protocol import (
    A2CResource,
    AgentCallData,
    CallToolResult,
    ComputerConfigView,
    Event,
    GetComputerConfigReq,
    GetDeskTopReq,
    GetDeskTopRet,
    GetResourcesReq,
    GetResourcesRet,
    GetToolsReq,
    GetToolsRet,
    InputCapabilities,
    InputOrigin,
    InputRequired,
    InvalidPayloadError,
    RemoteError,
    RequestTimeoutError,
    WindowURI,
    from_wire,
    parse_input_required,
    to_wire,
)
from a2c_protocol._input import (
    is_input_required,
)

from ._blobdrain import drain_result, needs_drain
from ._blobpull import BlobData
from ._facades import ComputerFiles
from ._input import InputHandler, InputLimits, input_rounds
from ._otel import call_span, tracing_idle
from ._progress import ProgressCallback, ProgressWaits
from ._resend import RESENT, resend_wait
from ._resending import resend
from ._toolwire import tool_call_payload, tool_result_of

logger = logging.getLogger("a2c_agent")

_NO_PROGRESS: contextlib.nullcontext[None] = contextlib.nullcontext(None)  # reusable, stateless


class Calls:
    """The ``client:get_*`` requests, tool calls (their input rounds, resending and
    progress) and their cancellation."""

    def __init__(
        self,
        core: AgentCore,
        files: ComputerFiles,
        office: Callable[[], str | None],
        *,
        tool_call_grace: float,
        drain_blobs: bool,
        max_drained_bytes: int | None,
        input_handler: InputHandler | None,
        input_capabilities: InputCapabilities,
        input_limits: InputLimits,
        resend_unsent: bool,
    ) -> None:
        self._channel, self._life, self._name = core.channel, core.life, core.name
        self._calls, self._ask, self._cancel_once = core.calls, core.ask, core.cancel_once
        self._files = files
        self._office_now = office
        self._tool_call_grace = tool_call_grace
        self._drain_blobs = drain_blobs
        self._max_drained_bytes = max_drained_bytes
        self._input_handler = input_handler
        self._input_capabilities = input_capabilities
        self._input_limits = input_limits
        #: Send again a tool call that provably never reached a Computer (``_resend``).
        self._resend_unsent = resend_unsent
        self._progress = ProgressWaits(core.spawn)

    async def on_progress(self, data: object = None, *_: object) -> None:
        """``notify:tool_call_progress`` (an extension) for a call waiting on it."""
        self._progress.on_notify(data)

    # ----------------------------------------------------------------- client:get_*

    async def get_tools(self, computer: str) -> list[AgentTool]:
        """See :meth:`AsyncAgent.get_tools`."""
        ret = await self._ask(
            Event.GET_TOOLS,
            GetToolsReq(agent=self._name, req_id=new_req_id(), computer=computer),
            GetToolsRet,
        )
        return list(tools_from_ret(computer, ret))

    async def get_config(self, computer: str) -> ComputerConfigView:
        """See :meth:`AsyncAgent.get_config`."""
        return await self._ask(
            Event.GET_CONFIG,
            GetComputerConfigReq(agent=self._name, req_id=new_req_id(), computer=computer),
            ComputerConfigView,
        )

    async def get_desktop(
        self, computer: str, size: int | None = None, window: WindowURI | str | None = None
    ) -> list[str]:
        """See :meth:`AsyncAgent.get_desktop`."""
        window_text: str | None = None
        if isinstance(window, WindowURI):
            window_text = str(window)
        elif window is not None:
            WindowURI.parse(window)  # strict: raises on a query or fragment
            window_text = window
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
            raise ValueError(f"size must be an integer or None, got {size!r}")
        ret = await self._ask(
            Event.GET_DESKTOP,
            GetDeskTopReq(
                agent=self._name,
                req_id=new_req_id(),
                computer=computer,
                desktop_size=size,
                window=window_text,
            ),
            GetDeskTopRet,
        )
        return list(ret.desktops)

    async def get_resources(
        self, computer: str, mcp_server: str, cursor: str | None = None
    ) -> ResourcePage:
        """See :meth:`AsyncAgent.get_resources`."""
        ret = await self._ask(
            Event.GET_RESOURCES,
            GetResourcesReq(
                agent=self._name,
                req_id=new_req_id(),
                computer=computer,
                mcp_server=mcp_server,
                cursor=cursor,
            ),
            GetResourcesRet,
        )
        try:
            resources = tuple(from_wire(A2CResource, item) for item in ret.resources)
        except InvalidPayloadError as exc:
            raise InvalidResponseError("resource", exc.errors) from exc
        return ResourcePage(resources=resources, next_cursor=ret.next_cursor or None)

    async def iter_resources(self, computer: str, mcp_server: str) -> AsyncIterator[A2CResource]:
        """See :meth:`AsyncAgent.iter_resources`."""
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            page = await self.get_resources(computer, mcp_server, cursor)
            for resource in page.resources:
                yield resource
            if page.next_cursor is None:
                return
            if page.next_cursor in seen:
                raise InvalidResponseError(
                    f"resource paging: cursor {page.next_cursor!r} repeated (server loops)"
                )
            seen.add(page.next_cursor)
            cursor = page.next_cursor

    # ------------------------------------------------------------------ tool calls

    async def call_tool(
        self,
        computer: str,
        tool_name: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float = 60.0,
        req_id: str | None = None,
        drain_blobs: bool | None = None,
        on_progress: ProgressCallback | None = None,
        timeout_resets_on_progress: bool = False,
        on_input: InputHandler | None = None,
        input_capabilities: InputCapabilities | None = None,
    ) -> CallToolResult:
        """See :meth:`AsyncAgent.call_tool`."""
        handler = on_input if on_input is not None else self._input_handler
        if handler is None and tracing_idle():  # the plain call: as few frames as can be
            try:
                plain = await self._call_once(
                    computer, tool_name, params, timeout=timeout, req_id=req_id,
                    drain_blobs=drain_blobs, on_progress=on_progress,
                    timeout_resets_on_progress=timeout_resets_on_progress, trace=None,
                    extra=None,
                )  # fmt: skip
            except RESENT as exc:  # never sent to a Computer? then again (_resend RS1)
                if resend_wait(exc) is None or not self._resend_unsent:
                    raise
                plain = await resend(
                    self._life, exc, functools.partial(
                        self._call_once, computer, tool_name, params, req_id=req_id,
                        drain_blobs=drain_blobs, on_progress=on_progress,
                        timeout_resets_on_progress=timeout_resets_on_progress, trace=None,
                        extra=None,
                    ), computer, tool_name, timeout,
                )  # fmt: skip
            assert isinstance(plain, CallToolResult)  # only a call taking input gets another
            return plain
        run: Callable[..., Awaitable[CallToolResult | InputRequired]] = (
            functools.partial(self._call_resending, extra=None) if handler is None
            else functools.partial(
                self._call_tool, on_input=handler,
                capabilities=input_capabilities or self._input_capabilities,
            )
        )  # fmt: skip
        if tracing_idle():
            answer = await run(
                computer, tool_name, params, timeout=timeout, req_id=req_id,
                drain_blobs=drain_blobs, on_progress=on_progress,
                timeout_resets_on_progress=timeout_resets_on_progress, trace=None,
            )  # fmt: skip
            assert isinstance(answer, CallToolResult)  # the rounds end with the result
            return answer
        with call_span(self._office_now(), computer, tool_name) as span:
            try:
                result = await run(
                    computer, tool_name, params, timeout=timeout, req_id=req_id,
                    drain_blobs=drain_blobs, on_progress=on_progress,
                    timeout_resets_on_progress=timeout_resets_on_progress,
                    trace=span.carrier(),
                )  # fmt: skip
            except RemoteError as exc:
                span.outcome("error", exc.code)
                raise
            except ToolCallTimeoutError:
                span.outcome("timeout")
                raise
            assert isinstance(result, CallToolResult)
            code = result_error_code(result)
            span.outcome("error" if result.is_error else "ok", code)
            return result

    async def _call_tool(
        self,
        computer: str,
        tool_name: str,
        params: Mapping[str, Any] | None,
        *,
        timeout: float,
        req_id: str | None,
        drain_blobs: bool | None,
        on_progress: ProgressCallback | None,
        timeout_resets_on_progress: bool,
        trace: dict[str, str] | None,
        on_input: InputHandler,
        capabilities: InputCapabilities,
    ) -> CallToolResult:
        """A call with an input handler: its rounds (see :func:`._input.input_rounds`)."""
        if req_id is not None and not (isinstance(req_id, str) and req_id):
            raise ValueError("req_id must be a non-empty string")
        req_id = req_id or new_req_id()
        arguments = dict(params or {})

        async def once(rid: str, extra: dict[str, Any] | None) -> CallToolResult | InputRequired:
            return await self._call_resending(
                computer, tool_name, arguments, timeout=timeout, req_id=rid,
                drain_blobs=drain_blobs, on_progress=on_progress,
                timeout_resets_on_progress=timeout_resets_on_progress, trace=trace, extra=extra,
            )  # fmt: skip

        return await input_rounds(
            once, req_id, InputOrigin(computer=computer, tool=tool_name), on_input,
            capabilities=capabilities, limits=self._input_limits,
        )  # fmt: skip

    async def _call_resending(
        self,
        computer: str,
        tool_name: str,
        params: Mapping[str, Any] | None,
        *,
        timeout: float,
        **options: Any,
    ) -> CallToolResult | InputRequired:
        """:meth:`_call_once`, sent again while it provably never reached a Computer
        (:mod:`._resend`); the plain call does the same inline."""
        try:
            return await self._call_once(computer, tool_name, params, timeout=timeout, **options)
        except RESENT as exc:
            if resend_wait(exc) is None or not self._resend_unsent:
                raise
            attempt = functools.partial(self._call_once, computer, tool_name, params, **options)
            return await resend(self._life, exc, attempt, computer, tool_name, timeout)

    async def _call_once(
        self,
        computer: str,
        tool_name: str,
        params: Mapping[str, Any] | None,
        *,
        timeout: float,
        req_id: str | None,
        drain_blobs: bool | None,
        on_progress: ProgressCallback | None,
        timeout_resets_on_progress: bool,
        trace: dict[str, str] | None,
        extra: dict[str, Any] | None,
    ) -> CallToolResult | InputRequired:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if self._life.state is not AgentState.CONNECTED:
            # Reconnecting: never sent from outside the office; the error says what the
            # agent waits for (one compare on the plain path).
            self._life.require_connected()
        if req_id is not None and not (isinstance(req_id, str) and req_id):
            raise ValueError("req_id must be a non-empty string")
        req_id = req_id or new_req_id()
        request = tool_call_payload(
            self._name, req_id, computer, tool_name, dict(params or {}),
            max(1, math.ceil(timeout)), on_progress is not None, trace, extra,
        )  # fmt: skip
        progress = (
            _NO_PROGRESS
            if on_progress is None
            else self._progress.waiting(
                req_id,
                computer,
                on_progress,
                timeout_resets_on_progress,
                timeout + self._tool_call_grace,
            )
        )
        with self._calls.tracking(req_id), progress as bind:
            try:
                args = await self._channel.request(
                    Event.TOOL_CALL, request, timeout=timeout + self._tool_call_grace, bind=bind
                )
            except AckTimeoutError:
                await self._cancel_once(req_id)
                raise ToolCallTimeoutError(
                    computer, tool_name, req_id, timeout, timeout + self._tool_call_grace
                ) from None
            except asyncio.CancelledError:
                await asyncio.shield(self._cancel_once(req_id))
                raise
        if extra is not None and len(args) == 1 and is_input_required(args[0]):
            try:
                return parse_input_required(args[0], InputOrigin(computer=computer, tool=tool_name))
            except InvalidPayloadError as exc:
                raise InvalidResponseError("input-required answer", exc.errors) from exc
        try:
            result = tool_result_of(args)
        except RequestTimeoutError:
            await self._cancel_once(req_id)
            raise
        drain = self._drain_blobs if drain_blobs is None else drain_blobs
        if not (drain and needs_drain(result)):
            return result

        async def pull(handle: str, limit: int | None) -> BlobData:
            return await self._files.read_blob(computer, handle, limit, None)

        return await drain_result(result, pull, max_bytes=self._max_drained_bytes)

    async def cancel_tool_call(self, req_id: str) -> None:
        """See :meth:`AsyncAgent.cancel_tool_call`."""
        self._life.require_connected()
        self._calls.claim(req_id)  # sent now: leaving will not send it again
        await self._channel.emit(
            Event.TOOL_CALL_CANCEL, to_wire(AgentCallData(agent=self._name, req_id=req_id))
        )
