"""Tool calls of the core: dispatch, confirmation, timeout, cancel and their answers.

A call by exposed name is looked up (forbidden, unknown, waiting for a sign-in, its
server down: each its own answer), checked (encodable arguments, a unique ``req_id``),
confirmed when its ToolMeta asks for it, run as one in-flight task that a cancel or the
timeout ends, transformed by the server's VRL, logged once and recorded in the history.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from a2c_computer._config import did_you_mean, safe_error
from a2c_computer._core import CoreBase
from a2c_computer._desk._desktop import CallRecord
from a2c_computer._mcp import MODERN, McpServer, ServerStatus
from a2c_computer._oauth._hints import needs_auth_owner, needs_auth_result
from a2c_computer._observe._logging import call_outcome, log_tool_call
from a2c_computer._registry import LookupKind, ToolEntry
from a2c_protocol import (
    CANCEL_REASON_AGENT_REQUESTED,
    CallToolResult,
    ErrorCode,
    JsonObject,
)

from ._confirm import ConfirmRequest, ask_confirmation, error_result, needs_confirmation
from ._down import down_note, down_owner, down_result
from ._encoding import unencodable_field
from ._extensions import CallExtras, InputAnswer
from ._invoke import invoke_tool

__all__ = ["CallsMixin", "ResultFinisher"]


#: Turns a tool call's result into the answer sent (e.g. the sideband and size check).
ResultFinisher: TypeAlias = Callable[[CallToolResult], Awaitable[CallToolResult]]


class CallsMixin(CoreBase):
    """Run tool calls by exposed name; every failure is an answer with a code."""

    def in_flight(self) -> list[str]:
        """The ``req_id`` of every tool call running now."""
        return [req_id for req_id, task in self._inflight.items() if not task.done()]

    def cancel(self, req_id: str, reason: str = CANCEL_REASON_AGENT_REQUESTED) -> bool:
        """Cancel an in-flight call (best effort); False for an unknown ``req_id``.

        The call answers ``isError`` with ``meta.a2c_cancelled`` and ``reason`` as
        ``meta.a2c_cancel_reason`` (diagnostic only).
        """
        task = self._inflight.get(req_id)
        if task is None or task.done():
            return False
        if req_id in self._cancelled:  # already being cancelled: the first reason stands
            return False
        self._cancelled[req_id] = reason
        task.cancel()
        return True

    async def call_tool(
        self,
        tool_name: str,
        params: JsonObject | None = None,
        *,
        timeout: float = 60.0,
        req_id: str | None = None,
        agent: str | None = None,
        finish: ResultFinisher | None = None,
        extras: CallExtras | None = None,
    ) -> CallToolResult:
        """Run a tool by exposed name; every failure is an ``isError`` result with a code.

        ``finish`` (the link's sideband and size check) turns the result into the answer
        actually sent; the call's log line reports that answer's outcome. ``extras``
        carries the opt-in extensions of the call (progress, trace context).
        """
        result = await self.call_tool_round(
            tool_name, params, timeout=timeout, req_id=req_id, agent=agent, finish=finish,
            extras=extras,
        )  # fmt: skip
        if isinstance(result, InputAnswer):
            raise TypeError("a call that takes input is run with call_tool_round")
        return result

    async def call_tool_round(
        self,
        tool_name: str,
        params: JsonObject | None = None,
        *,
        timeout: float = 60.0,
        req_id: str | None = None,
        agent: str | None = None,
        finish: ResultFinisher | None = None,
        extras: CallExtras | None = None,
    ) -> CallToolResult | InputAnswer:
        """:meth:`call_tool`, for a call that may take input (``extras.ask``): one round,
        whose answer is the result or an :class:`InputAnswer` (see
        :mod:`a2c_computer._asks`)."""
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
            entry = self._registry.lookup(tool_name).entry
            log_tool_call(
                agent=agent,
                tool=tool_name,
                server=entry.server if entry is not None else "-",
                duration=time.monotonic() - started,
                outcome=outcome,
                req_id=req_id,
            )

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
            return await self._resume_asking(tool_name, params or {}, ask, timeout, req_id, extras)
        lookup = self._registry.lookup(tool_name)
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
            waiting = {
                n: self._last_listed.get(n, frozenset())
                for n, s in self._servers.items()
                if s.status is ServerStatus.NEEDS_AUTH
            }
            owner = needs_auth_owner(tool_name, waiting, self._config.servers)
            if owner is not None:
                return needs_auth_result(tool_name, owner, lost=self._servers[owner].sign_in_lost)
            down = self._down_servers()
            owner = down_owner(tool_name, down, self._last_listed, self._config.servers)
            if owner is not None:
                return down_result(tool_name, owner, down[owner])
            return error_result(
                ErrorCode.TOOL_NOT_FOUND,
                f"Tool {tool_name!r} not found on this Computer"
                + (down_note(down) or did_you_mean(tool_name, self._registry.names())),
            )
        entry = lookup.entry
        server = self._servers.get(entry.server)
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
        task = asyncio.ensure_future(
            self._confirm_then_invoke(
                req_id, asking, server, entry, params or {}, timeout, extras, agent
            )
        )
        self._inflight[req_id] = task
        success = False
        try:
            result = await task
            if isinstance(result, InputAnswer):  # the MCP call goes on, asking the Agent
                self._invoked.discard(req_id)
                return result
            success = not result.is_error
            program = self._vrl.get(entry.server)
            if program is not None:
                result = program.apply(result, tool_name, params or {})
            return result
        except asyncio.CancelledError:
            answer = self._cancel_answer(req_id, tool_name, task, {"mcp_server": entry.server})
            if answer is not None:
                return answer
            raise
        finally:
            self._inflight.pop(req_id, None)
            self._cancelled.pop(req_id, None)
            if req_id in self._invoked:  # calls refused before running do not count
                self._invoked.discard(req_id)
                self._history.append(
                    CallRecord(entry.server, entry.original, req_id, time.time(), success)
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
        relay = self._asks
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

    def _down_servers(self) -> dict[str, str | None]:
        """Enabled servers that are not ready, with their last error (none once stopped)."""
        if not self._running:
            return {}
        return {
            name: safe_error(server.last_error) or server.status.value
            for name, server in self._servers.items()
            if server.status is not ServerStatus.READY
            and not getattr(self._config.servers.get(name), "disabled", True)
        }
