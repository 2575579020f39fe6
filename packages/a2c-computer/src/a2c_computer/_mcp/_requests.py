"""Requests over a ready MCP session: plain-JSON results, paging, tool calls with progress,
and the cancellation an abandoned call announces (a base class of
:class:`~._server.McpServer`, kept apart from its session lifecycle)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp import ClientSession, McpError, types
from mcp.shared.session import ProgressFnT
from pydantic import BaseModel, ConfigDict

from a2c_computer._toolcalls._extensions import ProgressFn
from a2c_computer._upstream import request_id_of
from a2c_protocol import JsonObject

from ._failures import McpCallFailure, _failure
from ._status import ServerStatus

__all__: list[str] = []

logger = logging.getLogger("a2c_computer.mcp")

_MAX_PAGES: Final = 10_000
#: Marks a waiting request whose session ended.
_LOST: Final = -1


class _Raw(BaseModel):
    """Any JSON-RPC result, kept as plain JSON."""

    model_config = ConfigDict(extra="allow")


class _Requests:
    """The request side of :class:`~._server.McpServer`; the session side sets its state."""

    name: str
    status: ServerStatus
    _session: ClientSession | None
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
        """Send one MCP request; the result as plain JSON (McpCallFailure on failure)."""
        session = self._require_session()
        payload: JsonObject = {"method": method}
        if params is not None:
            payload["params"] = params
        request = types.ClientRequest.model_validate(payload)
        try:
            return await self._send(session, request, timeout)
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
        timeout: float,
        progress: ProgressFn | None = None,
        meta: JsonObject | None = None,
    ) -> JsonObject:
        """Call a tool; on timeout or cancellation the MCP server is told to cancel.

        With ``progress`` the MCP server gets a progress token, each report is passed to
        ``progress`` and restarts ``timeout``. ``meta`` goes into ``params._meta``.
        Raises ``TimeoutError`` on expiry and :class:`McpCallFailure` on failure.
        """
        session = self._require_session()
        params = types.CallToolRequestParams(name=name, arguments=arguments)
        if meta:
            params = types.CallToolRequestParams.model_validate(
                {"name": name, "arguments": arguments, "_meta": meta}
            )
        request = types.ClientRequest(types.CallToolRequest(params=params))
        return await self._send(session, request, timeout, progress)

    async def _send(
        self,
        session: ClientSession,
        request: types.ClientRequest,
        timeout: float | None,
        progress: ProgressFn | None = None,
    ) -> JsonObject:
        # send_request takes the next id synchronously on entry; the mcp client does not
        # announce cancellations itself, so remember the id to do it.
        request_id = request_id_of(session)
        waiter: list[Any] = [asyncio.current_task(), None, None]
        self._waiting[request_id] = waiter
        try:
            async with asyncio.timeout(timeout) as scope:
                on_progress = None if progress is None else _restarting(scope, timeout, progress)
                result = await session.send_request(request, _Raw, progress_callback=on_progress)
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
            self._announce_cancel(session, request_id)
            raise
        except TimeoutError:
            self._announce_cancel(session, request_id)
            raise
        except McpError as exc:
            raise self._noted(_failure(exc, self.name)) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise McpCallFailure(
                f"MCP server {self.name}: connection lost", connection_lost=True
            ) from exc
        finally:
            self._waiting.pop(request_id, None)
        return result.model_dump()

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

    def _announce_cancel(self, session: ClientSession, request_id: int) -> None:
        async def send() -> None:
            notification = types.ClientNotification(
                types.CancelledNotification(
                    params=types.CancelledNotificationParams(
                        requestId=request_id, reason="cancelled by the caller"
                    )
                )
            )
            with contextlib.suppress(Exception):
                await session.send_notification(notification)

        task = asyncio.ensure_future(send())
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)


def _restarting(scope: asyncio.Timeout, timeout: float | None, report: ProgressFn) -> ProgressFnT:
    """``report`` that first restarts ``scope``: a tool that reports progress is alive."""

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if timeout is not None and not scope.expired():
            # An expired or exited scope (the call is ending) stays as it is.
            with contextlib.suppress(RuntimeError):
                scope.reschedule(asyncio.get_running_loop().time() + timeout)
        await report(progress, total, message)

    return on_progress
