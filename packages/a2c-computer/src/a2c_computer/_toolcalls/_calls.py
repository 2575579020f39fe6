"""The call runner of the core: dispatch, confirmation, timeout, cancel and their answers.

:class:`CallRunner` alone holds the calls in flight, the cancels asked for them, the
history, the confirmation policy and the VRL programs. A call by exposed name is looked
up (forbidden, unknown, waiting for a sign-in, its server down: each its own answer),
checked (encodable arguments, a unique ``req_id``), confirmed when its ToolMeta asks for
it, run as one in-flight task that a cancel or the timeout ends, logged once and recorded
in the history. A call that may ask for input runs its rounds through the
:class:`~a2c_computer._asks._relay.InputRelay`; a retry of such a call (a resumed ask)
skips the lookup and the confirmation. Both end in :meth:`CallRunner._finish`, the one
place a tool call is finished: the in-flight task, its cancel answer, the server's VRL
program and the history record.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeAlias

from a2c_computer._asks._call import AskingCall, Resume
from a2c_computer._asks._relay import InputRelay
from a2c_computer._catalog import ToolCatalog
from a2c_computer._config import did_you_mean
from a2c_computer._desk._desktop import CallRecord
from a2c_computer._mcp import MODERN, McpServer
from a2c_computer._oauth._hints import needs_auth_owner, needs_auth_result
from a2c_computer._observe._logging import call_outcome, log_tool_call
from a2c_computer._registry import LookupKind, ToolEntry
from a2c_computer._servers import Fleet
from a2c_protocol import (
    CANCEL_REASON_AGENT_REQUESTED,
    CallToolResult,
    ErrorCode,
    InputCapabilities,
    JsonObject,
    MCPServerConfig,
    cancelled_result,
)

from ._confirm import (
    ConfirmCallback,
    ConfirmRequest,
    ask_confirmation,
    error_result,
    needs_confirmation,
)
from ._down import down_note, down_owner, down_result
from ._encoding import unencodable_field
from ._extensions import CallExtras, InputAnswer, InputAsk
from ._invoke import McpInputRequired, invoke_tool
from ._vrl import VrlProgram

__all__ = ["CallRunner", "ResultFinisher"]

logger = logging.getLogger("a2c_computer")

#: Turns a tool call's result into the answer sent (e.g. the sideband and size check).
ResultFinisher: TypeAlias = Callable[[CallToolResult], Awaitable[CallToolResult]]
#: The MCP server and its own tool name a finished call is recorded under.
_Owner: TypeAlias = Callable[[], tuple[str | None, str]]

_NOTHING = InputCapabilities(form=False, url=False, sampling=False, sampling_tools=False)


class CallRunner:
    """Run tool calls by exposed name; every failure is an answer with a code."""

    def __init__(
        self,
        *,
        catalog: ToolCatalog,
        fleet: Fleet,
        servers: Callable[[], Mapping[str, MCPServerConfig]],
        relay: InputRelay,
        confirm: ConfirmCallback | None,
        confirm_policy: Literal["allow", "deny"],
        history_size: int,
    ) -> None:
        self._catalog = catalog
        self._fleet = fleet
        self._configured = servers
        self._relay = relay
        self._confirm = confirm
        self._confirm_policy = confirm_policy
        self._vrl: dict[str, VrlProgram] = {}
        self._history: deque[CallRecord] = deque(maxlen=history_size)
        self._inflight: dict[str, asyncio.Task[Any]] = {}
        self._cancelled: dict[str, str] = {}  # req_id → a2c_cancel_reason
        self._invoked: set[str] = set()
        self._warned_unconfirmed: set[str] = set()

    # -- reading -------------------------------------------------------------

    @property
    def history(self) -> list[CallRecord]:
        return list(self._history)

    def in_flight(self) -> list[str]:
        return [req_id for req_id, task in self._inflight.items() if not task.done()]

    # -- changing ------------------------------------------------------------

    def use_vrl(self, programs: dict[str, VrlProgram]) -> None:
        """The VRL program of each server from now on (a reload changed them)."""
        self._vrl = programs

    def cancel(self, req_id: str, reason: str = CANCEL_REASON_AGENT_REQUESTED) -> bool:
        task = self._inflight.get(req_id)
        if task is None or task.done():
            return False
        if req_id in self._cancelled:  # already being cancelled: the first reason stands
            return False
        self._cancelled[req_id] = reason
        task.cancel()
        return True

    def cancel_all(self) -> None:
        """Cancel every call in flight (the Computer stops)."""
        for task in list(self._inflight.values()):
            task.cancel()

    async def call_tool_round(
        self,
        tool_name: str,
        params: JsonObject | None,
        *,
        timeout: float,
        req_id: str | None,
        agent: str | None,
        finish: ResultFinisher | None,
        extras: CallExtras | None,
    ) -> CallToolResult | InputAnswer:
        """One round of a call (see ``ComputerCore.call_tool_round``), logged once."""
        req_id = req_id or uuid.uuid4().hex
        started = time.monotonic()
        outcome = "cancelled"
        try:
            result = await self._call_tool(tool_name, params, timeout, req_id, agent, extras)
            if isinstance(result, InputAnswer):
                outcome = result.outcome
                return result
            if finish is not None:
                result = await finish(result)
            outcome = call_outcome(result.is_error, result.meta)
            return result
        except Exception as exc:
            outcome = f"failed: {type(exc).__name__}"
            raise
        finally:
            entry = self._catalog.lookup(tool_name).entry
            log_tool_call(
                agent=agent,
                tool=tool_name,
                server=entry.server if entry is not None else "-",
                duration=time.monotonic() - started,
                outcome=outcome,
                req_id=req_id,
            )

    # -- one call --------------------------------------------------------------

    async def _call_tool(
        self,
        tool_name: str,
        params: JsonObject | None,
        timeout: float,
        req_id: str,
        agent: str | None,
        extras: CallExtras | None = None,
    ) -> CallToolResult | InputAnswer:
        ask = extras.ask if extras is not None else None
        if ask is not None and (ask.state is not None or ask.responses is not None):
            assert extras is not None
            return await self._resume(tool_name, params or {}, ask, timeout, req_id, extras)
        lookup = self._catalog.lookup(tool_name)
        if lookup.kind is LookupKind.FORBIDDEN:
            return error_result(
                ErrorCode.TOOL_DISABLED,
                f"Tool {tool_name!r} is forbidden by this Computer's configuration",
                mcp_server=lookup.server,
            )
        if lookup.kind is LookupKind.NEEDS_TASKS:
            return error_result(
                ErrorCode.MCP_CAPABILITY_NOT_SUPPORTED,
                f"Tool {tool_name!r} of MCP server {lookup.server!r} can only run as an MCP "
                "task (execution.taskSupport: required), which this Computer does not support",
                mcp_server=lookup.server,
            )
        if lookup.kind is LookupKind.UNKNOWN or lookup.entry is None:
            return self._not_found(tool_name)
        entry = lookup.entry
        server = self._fleet.server(entry.server)
        if server is None:
            return error_result(
                ErrorCode.TOOL_NOT_FOUND, f"Tool {tool_name!r} not found on this Computer"
            )
        unencodable = unencodable_field(params or {})
        if unencodable is not None:
            return error_result(
                ErrorCode.TOOL_EXECUTION_FAILED,
                f"Tool {tool_name!r} was not called: {unencodable}",
                mcp_server=entry.server,
            )
        if req_id in self._inflight:
            return error_result(
                ErrorCode.TOOL_EXECUTION_FAILED, f"a call with req_id {req_id!r} is already running"
            )
        # The confirmation runs inside the in-flight task, so a cancel or the call's
        # timeout withdraws an open question instead of leaving it to run the tool later.
        asking: ConfirmRequest | None = None
        if needs_confirmation(entry.meta):
            asking = ConfirmRequest(
                req_id, agent, entry.server, entry.original, tool_name, dict(params or {})
            )
        work = self._confirm_then_invoke(
            req_id, asking, server, entry, params or {}, timeout, extras, agent
        )
        return await self._finish(
            req_id,
            tool_name,
            params or {},
            work,
            owner=lambda: (entry.server, entry.original),
            extra={"mcp_server": entry.server},
        )

    def _not_found(self, tool_name: str) -> CallToolResult:
        configured = self._configured()
        listed = self._catalog.last_listed
        waiting = {s.name: listed(s.name) for s in self._fleet.waiting_for_sign_in()}
        owner = needs_auth_owner(tool_name, waiting, configured)
        if owner is not None:
            server = self._fleet.server(owner)
            assert server is not None
            return needs_auth_result(tool_name, owner, lost=server.sign_in_lost)
        down = self._fleet.down(configured)
        owner = down_owner(tool_name, down, {n: listed(n) for n in down}, configured)
        if owner is not None:
            return down_result(tool_name, owner, down[owner])
        return error_result(
            ErrorCode.TOOL_NOT_FOUND,
            f"Tool {tool_name!r} not found on this Computer"
            + (down_note(down) or did_you_mean(tool_name, self._catalog.registry.names())),
        )

    async def _resume(
        self,
        tool_name: str,
        params: JsonObject,
        ask: InputAsk,
        timeout: float,
        req_id: str,
        extras: CallExtras,
    ) -> CallToolResult | InputAnswer:
        """A retry of a call that asked, run as an in-flight call of its own (a cancel of
        ``req_id`` ends it); its final result is finished as a call that never asked."""
        if req_id in self._inflight:
            return InputAnswer(
                {"code": 400, "message": f"a call with req_id {req_id!r} is already running"},
                "refused: duplicate req_id",
            )

        async def resumed() -> CallToolResult | InputAnswer:
            result = await self._relay.resume(ask, timeout, extras.progress)
            if isinstance(result, CallToolResult):  # the tool ran to its end: recorded
                self._invoked.add(req_id)
            return result

        def owner() -> tuple[str | None, str]:
            # Looked up at the end: the retry names the tool as the Agent sees it.
            lookup = self._catalog.lookup(tool_name)
            entry = lookup.entry
            return (entry.server, entry.original) if entry else (lookup.server, tool_name)

        return await self._finish(req_id, tool_name, params, resumed(), owner=owner, extra=None)

    async def _finish(
        self,
        req_id: str,
        tool_name: str,
        params: JsonObject,
        work: Awaitable[CallToolResult | InputAnswer],
        *,
        owner: _Owner,
        extra: JsonObject | None,
    ) -> CallToolResult | InputAnswer:
        """Run ``work`` as the in-flight call ``req_id`` and finish it: a ``client:cancel``
        becomes its answer, the server's VRL program transforms its result, and a call
        whose tool ran (``req_id`` in ``_invoked``) is recorded once in the history."""
        task = asyncio.ensure_future(work)
        self._inflight[req_id] = task
        success = False
        try:
            result = await task
            if isinstance(result, InputAnswer):  # the MCP call goes on, asking the Agent
                self._invoked.discard(req_id)
                return result
            success = not result.is_error
            program = self._vrl.get(owner()[0] or "")
            if program is not None:
                result = program.apply(result, tool_name, params)
            return result
        except asyncio.CancelledError:
            answer = self._cancel_answer(req_id, tool_name, task, extra)
            if answer is not None:
                return answer
            raise
        finally:
            self._inflight.pop(req_id, None)
            self._cancelled.pop(req_id, None)
            if req_id in self._invoked:  # calls refused before running do not count
                self._invoked.discard(req_id)
                server, tool = owner()
                self._history.append(CallRecord(server or "-", tool, req_id, time.time(), success))

    def _cancel_answer(
        self, req_id: str, tool_name: str, task: asyncio.Task[Any], extra: JsonObject | None
    ) -> CallToolResult | None:
        """The answer of an in-flight call that ``client:cancel`` cancelled (None: it was
        cancelled from outside, and the cancellation goes on)."""
        if req_id not in self._cancelled or not task.cancelled():
            return None
        reason = self._cancelled[req_id]
        logger.info("tool call %s (%s) cancelled (reason %s)", req_id, tool_name, reason)
        # 0.2.3: cancellation has no error code, only the result-level marker.
        return cancelled_result(
            f"Tool call {tool_name!r} was cancelled", reason=reason, extra=extra
        )

    async def _confirm_then_invoke(
        self,
        req_id: str,
        asking: ConfirmRequest | None,
        server: McpServer,
        entry: ToolEntry,
        params: JsonObject,
        timeout: float,
        extras: CallExtras | None = None,
        agent: str | None = None,
    ) -> CallToolResult | InputAnswer:
        if asking is not None:
            loop = asyncio.get_running_loop()
            started = loop.time()
            refusal = await ask_confirmation(
                self._confirm, self._confirm_policy, asking, timeout, self._warned_unconfirmed
            )
            if refusal is not None:
                return refusal
            timeout -= loop.time() - started
        self._invoked.add(req_id)
        relay = self._relay
        # A plain call takes rounds only where a 2026-07-28 input_required may ask for roots
        # (the handshake era answers roots/list in the session's callback).
        if (extras is not None and extras.ask is not None) or (
            server.name in relay.rooted and server.era == MODERN
        ):
            return await self._first_round(server, entry, params, timeout, extras, agent, req_id)
        # Who is running on the server: an MCP server's request is its call's (_asks).
        relay.enter(server.name, req_id)
        try:
            return await invoke_tool(server, entry.original, entry.exposed, params, timeout, extras)
        finally:
            relay.leave(server.name, req_id)

    # -- calls that may ask ----------------------------------------------------

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
        call = _asking_call(server, entry, params, extras, takes, agent or "-", req_id)
        progress = extras.progress if extras is not None else None
        return await self._relay.first_round(call, ask, timeout, progress)


def _asking_call(
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
