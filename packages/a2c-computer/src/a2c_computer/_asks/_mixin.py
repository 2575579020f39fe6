"""The core's tool calls that may ask (a mixin of :class:`~a2c_computer._computer.ComputerCore`).

:mod:`a2c_computer._toolcalls._calls` hands a call here when its Agent declared
``a2c_input`` (the first round, after any confirmation) or brings answers (a retry, which
skips the lookup and the confirmation: its state says which call it continues), and a
plain call to a 2026-07-28 server with configured roots, so its ``roots/list`` is answered
(the handshake era answers it in the session's callback, no rounds needed).
"""

from __future__ import annotations

import asyncio
import time

from a2c_computer._core import CoreBase
from a2c_computer._desk._desktop import CallRecord
from a2c_computer._mcp import McpServer
from a2c_computer._registry import ToolEntry
from a2c_computer._toolcalls._extensions import CallExtras, InputAnswer, InputAsk
from a2c_computer._toolcalls._invoke import McpInputRequired, invoke_tool
from a2c_protocol import CallToolResult, InputCapabilities, JsonObject

from ._call import AskingCall, Resume

__all__ = ["AskingMixin"]


_NOTHING = InputCapabilities(form=False, url=False, sampling=False, sampling_tools=False)


class AskingMixin(CoreBase):
    """Tool calls whose MCP server may ask for input (docs/compatibility.md)."""

    def input_agent_left(self, agent: str) -> None:
        """``agent`` left the office: its calls waiting for its answers are cancelled."""
        self._asks.agent_left(agent)

    def _asking_call(
        self,
        server: McpServer,
        entry: ToolEntry,
        params: JsonObject,
        extras: CallExtras | None,
        takes: InputCapabilities,
        agent: str,
        req_id: str,
    ) -> AskingCall:
        first = True

        async def run(resume: Resume) -> CallToolResult | McpInputRequired:
            nonlocal first
            # The trace context rides the first MCP request only; progress every one.
            traced = extras if first else None
            first = False
            more = CallExtras(
                progress=call.progress,
                mcp_request=traced.mcp_request if traced is not None else None,
            )
            return await invoke_tool(
                server, entry.original, entry.exposed, params, None, more,
                resume=resume, take_input_required=True,
            )  # fmt: skip

        call = AskingCall(
            takes, server=server.name, tool=entry.exposed, agent=agent, runner=run, req_id=req_id
        )
        return call

    async def _first_round(
        self,
        server: McpServer,
        entry: ToolEntry,
        params: JsonObject,
        timeout: float,
        extras: CallExtras | None,
        agent: str | None,
        req_id: str,
    ) -> CallToolResult | InputAnswer:
        """A declared call's first round (or a plain call's, on a modern server with roots)."""
        ask = extras.ask if extras is not None else None
        takes = ask.takes if ask is not None else _NOTHING
        call = self._asking_call(server, entry, params, extras, takes, agent or "-", req_id)
        progress = extras.progress if extras is not None else None
        return await self._asks.first_round(call, ask, timeout, progress)

    async def _resume_asking(
        self,
        tool_name: str,
        params: JsonObject,
        ask: InputAsk,
        timeout: float,
        req_id: str,
        extras: CallExtras,
    ) -> CallToolResult | InputAnswer:
        """A retry, run as an in-flight call of its own (a cancel of ``req_id`` ends it).

        Its final result is finished as a call that never asked: the server's VRL program,
        and one history record under the server's own tool name.
        """
        if req_id in self._inflight:
            return InputAnswer(
                {"code": 400, "message": f"a call with req_id {req_id!r} is already running"},
                "refused: duplicate req_id",
            )
        task = asyncio.ensure_future(self._asks.resume(ask, timeout, extras.progress))
        self._inflight[req_id] = task
        try:
            result = await task
        except asyncio.CancelledError:
            answer = self._cancel_answer(req_id, tool_name, task)
            if answer is not None:
                return answer
            raise
        finally:
            self._inflight.pop(req_id, None)
            self._cancelled.pop(req_id, None)
        if not isinstance(result, CallToolResult):
            return result
        lookup = self._registry.lookup(tool_name)
        entry = lookup.entry
        server, tool = (entry.server, entry.original) if entry else (lookup.server, tool_name)
        self._history.append(
            CallRecord(server or "-", tool, req_id, time.time(), not result.is_error)
        )
        program = self._vrl.get(server) if server else None
        if program is not None:
            result = program.apply(result, tool_name, params)
        return result
