"""Requests over a ready MCP session: plain-JSON results, paging, tool calls with progress,
the cancellation an abandoned call announces, and, in 2026-07-28, resource subscriptions on
the change stream (a base class of :class:`~._server.McpServer`, kept apart from its session
lifecycle)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp import ClientSession, MCPError
from mcp.shared.dispatcher import CallOptions, Dispatcher, ProgressFnT

from a2c_computer._toolcalls._extensions import ProgressFn
from a2c_computer._upstream import send_raw
from a2c_protocol import JsonObject

from ._failures import McpCallFailure, _failure
from ._inputs import INPUT_REQUIRED, NO_INPUT, input_kinds
from ._listen import ChangeStream
from ._status import ServerStatus

__all__: list[str] = []

logger = logging.getLogger("a2c_computer.mcp")

_MAX_PAGES: Final = 10_000
#: Marks a waiting request whose session ended.
_LOST: Final = -1
#: Request ids the Computer chooses itself (SSE only, to match a refusal to its call):
#: far from the dispatcher's own, which count from 1 for initialize and pings.
_OWN_IDS: Final = 1 << 32


class _Requests:
    """The request side of :class:`~._server.McpServer`; the session side sets its state."""

    name: str
    status: ServerStatus
    _session: ClientSession | None
    _dispatcher: Dispatcher[Any] | None
    #: 2026-07-28 sessions: their change stream (None in the handshake era).
    _changes: ChangeStream | None
    #: SSE: requests carry ids the Computer chose (refusals arrive out of band, by id).
    _own_ids: bool
    _next_id: int
    _waiting: dict[Any, list[Any]]
    _side_tasks: set[asyncio.Task[None]]
    _signed_out: asyncio.Event

    if TYPE_CHECKING:

        @property
        def sign_in_lost(self) -> bool: ...

        def _sign_in_needed(self) -> str | None: ...

    def _require_session(self) -> ClientSession:
        session = self._session
        if session is None or self.status is not ServerStatus.READY:
            raise McpCallFailure(f"MCP server {self.name} is not running", connection_lost=True)
        return session

    async def request(
        self, method: str, params: JsonObject | None = None, *, timeout: float | None = 60.0
    ) -> JsonObject:
        """Send one MCP request; the result as plain JSON (McpCallFailure on failure).

        On a 2026-07-28 session ``resources/subscribe`` / ``unsubscribe`` (removed there)
        change what the session's ``subscriptions/listen`` stream asks for instead.
        """
        session = self._require_session()
        changes = self._changes
        if changes is not None and method in ("resources/subscribe", "resources/unsubscribe"):
            uri = (params or {}).get("uri")
            if isinstance(uri, str):
                (changes.watch if method == "resources/subscribe" else changes.forget)(uri)
            return {}
        try:
            return await self._send(session, method, dict(params) if params else None, timeout)
        except TimeoutError as exc:
            raise McpCallFailure(f"MCP server {self.name}: {method} timed out") from exc

    async def list_all(self, method: str, key: str) -> list[JsonObject]:
        """Every item of a paginated list (following ``nextCursor``)."""
        items: list[JsonObject] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self.request(method, {"cursor": cursor} if cursor else None)
            got = page.get(key)
            if isinstance(got, list):
                items.extend(i for i in got if isinstance(i, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return items
        logger.warning(
            "MCP server %s: stopped paging %s after %d pages", self.name, method, _MAX_PAGES
        )
        return items

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject,
        timeout: float | None,
        progress: ProgressFn | None = None,
        meta: JsonObject | None = None,
        *,
        input_responses: JsonObject | None = None,
        request_state: str | None = None,
        allow_input_required: bool = False,
    ) -> JsonObject:
        """Call a tool; on timeout or cancellation the MCP server is told to cancel.

        With ``progress`` the MCP server gets a progress token, each report is passed to
        ``progress`` and restarts ``timeout``. ``meta`` goes into ``params._meta``.
        2026-07-28: ``input_responses`` and ``request_state`` answer an earlier
        ``input_required`` result (:mod:`._inputs`); such a result is returned only with
        ``allow_input_required``, else the call fails saying what the tool asked for.
        Raises ``TimeoutError`` on expiry and :class:`McpCallFailure` on failure.
        """
        session = self._require_session()
        params: JsonObject = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = dict(meta)
        if input_responses is not None:
            params["inputResponses"] = input_responses
        if request_state is not None:
            params["requestState"] = request_state
        result = await self._send(session, "tools/call", params, timeout, progress)
        if result.get("resultType") == INPUT_REQUIRED and not allow_input_required:
            raise McpCallFailure(
                f"MCP server {self.name}: " + NO_INPUT.format(kinds=input_kinds(result))
            )
        return result

    async def _send(
        self,
        session: ClientSession,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressFn | None = None,
    ) -> JsonObject:
        dispatcher = self._dispatcher
        if dispatcher is None:
            raise McpCallFailure(f"MCP server {self.name} is not running", connection_lost=True)
        opts: CallOptions = {}
        key: Any
        if self._own_ids:
            # An SSE refusal arrives out of band, naming the JSON-RPC id: choose it.
            self._next_id += 1
            key = opts["request_id"] = _OWN_IDS + self._next_id
        else:
            key = object()
        waiter: list[Any] = [asyncio.current_task(), None, None]
        self._waiting[key] = waiter
        try:
            # The dispatcher sends notifications/cancelled itself when this wait is
            # abandoned (timeout or cancel), unless the request was never written.
            async with asyncio.timeout(timeout) as scope:
                if progress is not None:
                    opts["on_progress"] = _restarting(scope, timeout, progress)
                return await send_raw(session, dispatcher, method, params, opts)
        except asyncio.CancelledError:
            status, task = waiter[1], waiter[0]
            if status is not None and task is not None and task.uncancel() == 0:
                if status == _LOST:
                    raise McpCallFailure(
                        f"MCP server {self.name}: connection lost", connection_lost=True
                    ) from None
                raise self._noted(
                    McpCallFailure(
                        f"MCP server {self.name}: upstream answered HTTP {status}",
                        http_status=status,
                        scope=waiter[2],
                    )
                ) from None
            raise
        except MCPError as exc:
            raise self._noted(_failure(exc, self.name)) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise McpCallFailure(
                f"MCP server {self.name}: connection lost", connection_lost=True
            ) from exc
        finally:
            self._waiting.pop(key, None)

    def _noted(self, failure: McpCallFailure) -> McpCallFailure:
        """A refused token mid-session ends the session: the server now needs a sign-in."""
        if failure.http_status == 401 and self._sign_in_needed() is not None:
            self._signed_out.set()
            failure.refresh_failed = self.sign_in_lost
        return failure

    def _fail_pending(self) -> None:
        """The session ended: every request still waiting fails now (not at its timeout)."""
        for waiter in list(self._waiting.values()):
            if waiter[1] is None and waiter[0] is not None:
                waiter[1] = _LOST
                waiter[0].cancel()

    def _refused(self, request_id: Any, status: int, scope: str | None = None) -> None:
        """An HTTP transport refused ``request_id`` out of band: fail the waiting call."""
        waiter = self._waiting.get(request_id)
        if waiter is None or waiter[1] is not None or waiter[0] is None:
            return
        waiter[1], waiter[2] = status, scope
        waiter[0].cancel()


def _restarting(scope: asyncio.Timeout, timeout: float | None, report: ProgressFn) -> ProgressFnT:
    """``report`` that first restarts ``scope``: a tool that reports progress is alive."""

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if timeout is not None and not scope.expired():
            # An expired or exited scope (the call is ending) stays as it is.
            with contextlib.suppress(RuntimeError):
                scope.reschedule(asyncio.get_running_loop().time() + timeout)
        await report(progress, total, message)

    return on_progress
