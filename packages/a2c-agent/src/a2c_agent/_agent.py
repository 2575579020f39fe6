"""``AsyncAgent``: the Socket.IO adapter of the Agent role.

This module only translates between python-socketio and the pure rules in
:mod:`a2c_agent._rules`, :mod:`a2c_agent._lifecycle` and :mod:`a2c_agent._connection`:
it owns the socket, the background tasks and the listeners, and decides nothing about the
protocol itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import aiohttp
import httpx
import socketio

from a2c_protocol import (
    DEFAULT_SKILL_REL_PATH,
    NAMESPACE,
    PROTOCOL_VERSION,
    WS_CLOSE_VERSION_REJECTED,
    A2CError,
    A2CResource,
    A2CSkillRef,
    AgentCallData,
    CallToolResult,
    ComputerConfigView,
    EnterOfficeReq,
    Event,
    EventKind,
    ExtensionEvent,
    GetBlobReq,
    GetBlobRet,
    GetComputerConfigReq,
    GetDeskTopReq,
    GetDeskTopRet,
    GetResourcesReq,
    GetResourcesRet,
    GetSkillReq,
    GetSkillRet,
    GetSkillsReq,
    GetSkillsRet,
    GetToolsReq,
    GetToolsRet,
    InvalidPayloadError,
    LeaveOfficeReq,
    ListRoomReq,
    ListRoomRet,
    ProtocolVersionError,
    RemoteError,
    RequestTimeoutError,
    Role,
    SessionInfo,
    ToolCallReq,
    WindowURI,
    from_wire,
    reconnect_delays,
    remote_error_of,
    to_wire,
    version_rejected_by_close,
)

from ._blobdrain import drain_result
from ._blobpull import DEFAULT_CHUNK_BYTES, DEFAULT_MAX_IN_FLIGHT, BlobData, ProgressFn, pull_blob
from ._connection import (
    DEFAULT_TRANSPORTS,
    AuthSource,
    build_auth,
    check_transports,
    connect_error_text,
    handshake_probe_url,
    handshake_refusal,
    refusal_is_final,
    resolve_auth,
    versioned_url,
)
from ._exceptions import (
    AckTimeoutError,
    AgentConnectionError,
    AgentStateError,
    ConnectionLostError,
    InvalidResponseError,
    ToolCallTimeoutError,
)
from ._inflight import InFlightCalls, depart
from ._lifecycle import AgentState, Transition, next_state, require_connected
from ._notify import Listeners, NotificationStream
from ._otel import call_span
from ._progress import ProgressCallback, ProgressWaits
from ._rules import (
    Action,
    DropTools,
    FetchTools,
    RefreshDesktop,
    ToolCache,
    actions_for,
    decode_ack,
    decode_notification,
    decode_office_ack,
    tools_from_ret,
    unanswered,
)
from ._skills import SkillFile, SkillsListener, SkillTracker, read_skill_file
from ._types import AgentNotification, AgentTool, ResourcePage, result_error_code

__all__ = [
    "AsyncAgent",
    "DesktopListener",
    "NotificationListener",
    "StateListener",
    "ToolsListener",
]

logger = logging.getLogger("a2c_agent")

T = TypeVar("T")

#: The longest close() waits for the Server to acknowledge the leave after cancelling.
_DEPART_TIMEOUT = 5.0

#: ``callback(notification)``; may be a coroutine function.
NotificationListener = Callable[[AgentNotification], Any]
#: ``callback(computer, tools)``; ``tools`` is None when the Computer's tools were dropped.
ToolsListener = Callable[[str, "tuple[AgentTool, ...] | None"], Any]
#: ``callback(computer, desktops)`` after an automatic desktop refresh.
DesktopListener = Callable[[str, "list[str]"], Any]
#: ``callback(old_state, new_state)``.
StateListener = Callable[[AgentState, AgentState], Any]

_NOTIFY_EVENTS = tuple(e for e in Event if e.value.startswith(EventKind.NOTIFY.value + ":"))


def _close_code_recorder(record: Callable[[int], None]) -> type[aiohttp.ClientWebSocketResponse]:
    """A WebSocket response class that reports the close code the server sent.

    python-engineio does not surface close codes (a close during the handshake shows up as
    a bare TypeError), yet close 4900 must be told apart from other failures (R4).
    """

    class _Recorder(aiohttp.ClientWebSocketResponse):
        async def receive(self, timeout: float | None = None) -> Any:
            message = await super().receive(timeout)
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and isinstance(
                message.data, int
            ):
                record(message.data)
            elif self.close_code is not None:
                record(self.close_code)
            return message

    return _Recorder


class AsyncAgent:
    """The Agent role of A2C-SMCP 0.2: call tools on Computers through a Server.

    Use it as an async context manager::

        async with AsyncAgent("http://hub:8000", name="bot", auth={"token": "..."}) as agent:
            await agent.join_office("office-1")
            tools = await agent.get_tools("build-box")
            result = await agent.call_tool("build-box", "word_count", {"text": "a b"})

    Parameters:
        server_url: ``http(s)://`` or ``ws(s)://`` URL of the Server; never include
            ``a2c_version`` (the SDK adds ``a2c_version=PROTOCOL_VERSION``).
        name: the agent's name in its office (routing name).
        auth: business ``auth`` fields (e.g. ``{"token": ...}``), or a callable (sync or
            async) returning them at every (re)connect, e.g. a token provider that hands
            out a fresh token; ``role: "agent"`` is always added.
        socketio_path: the Engine.IO mount path of the deployment.
        request_timeout: how long to wait for the answer of a ``client:get_*`` or
            ``server:*`` request (≥ 30 s recommended by the protocol).
        tool_cache: keep :attr:`tools` up to date from notifications.
        reconnect: reconnect with backoff after a transient disconnect and re-join the
            office. A refusal carrying the Server's ErrorPayload (a refused version or
            token) is never retried: the agent closes and :attr:`last_error` says why.
        transports: Socket.IO transports; polling first by default.
        connect_timeout: how long one connect attempt may take.
        tool_call_grace: extra seconds waited for a tool call's answer beyond its timeout
            before the agent cancels it.
        desktop_size: ``desktop_size`` for automatic desktop refreshes.
        reconnect_delay, reconnect_max_delay: backoff bounds in seconds.
        drain_blobs: restore the bytes of tool-result items that arrive by blob handle
            before :meth:`call_tool` returns (default; ``call_tool(drain_blobs=False)``
            opts out per call).
        max_drained_bytes: most bytes drained per tool call (None: no limit); items past
            it keep their handle and get ``_meta.a2c_blob_error``.
        blob_chunk_bytes, blob_max_in_flight: chunk size asked for and parallel chunk
            requests of :meth:`read_blob`.
    """

    def __init__(
        self,
        server_url: str,
        *,
        name: str,
        auth: AuthSource = None,
        socketio_path: str = "socket.io",
        request_timeout: float = 30.0,
        tool_cache: bool = True,
        reconnect: bool = True,
        transports: Sequence[str] = DEFAULT_TRANSPORTS,
        connect_timeout: float = 15.0,
        tool_call_grace: float = 3.0,
        desktop_size: int | None = None,
        reconnect_delay: float = 0.5,
        reconnect_max_delay: float = 10.0,
        drain_blobs: bool = True,
        max_drained_bytes: int | None = 256 * 1024 * 1024,
        blob_chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        blob_max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> None:
        if not name:
            raise ValueError("an agent needs a non-empty name")
        if request_timeout <= 0 or connect_timeout <= 0 or tool_call_grace < 0:
            raise ValueError("timeouts must be positive")
        self._url = versioned_url(server_url)
        self._server_url = server_url
        self._name = name
        self._auth_source = auth
        if not callable(auth):
            build_auth(auth)  # fail early on a wrong role
        self._socketio_path = socketio_path
        self._request_timeout = request_timeout
        self._tool_cache_enabled = tool_cache
        self._reconnect = reconnect
        self._transports = check_transports(transports)
        self._connect_timeout = connect_timeout
        self._tool_call_grace = tool_call_grace
        self._desktop_size = desktop_size
        self._reconnect_delay = reconnect_delay
        self._reconnect_max_delay = reconnect_max_delay
        self._drain_blobs = drain_blobs
        self._max_drained_bytes = max_drained_bytes
        self._blob_chunk_bytes = blob_chunk_bytes
        self._blob_max_in_flight = blob_max_in_flight

        self._state = AgentState.IDLE
        self._office: str | None = None
        self._cache = ToolCache()
        self._pending: set[asyncio.Future[tuple[Any, ...]]] = set()
        self._calls = InFlightCalls()
        self._progress = ProgressWaits(self._spawn)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reconnect_task: asyncio.Task[None] | None = None
        self._streams: set[NotificationStream] = set()
        self._notification_listeners = Listeners(self._spawn)
        self._tools_listeners = Listeners(self._spawn)
        self._desktop_listeners = Listeners(self._spawn)
        self._state_listeners = Listeners(self._spawn)
        self._skills = SkillTracker(self._fetch_skills, self._spawn)
        self._connect_error: object = None
        self._close_code: int | None = None
        self._last_error: BaseException | None = None
        self._emit_lock: asyncio.Lock | None = None
        self._sio: socketio.AsyncClient | None = None

    # ------------------------------------------------------------------ properties

    @property
    def name(self) -> str:
        """The agent's routing name."""
        return self._name

    @property
    def state(self) -> AgentState:
        """The current lifecycle state."""
        return self._state

    @property
    def office_id(self) -> str | None:
        """The office the agent has joined, or None."""
        return self._office

    @property
    def url(self) -> str:
        """The URL actually connected to (with ``a2c_version``)."""
        return self._url

    @property
    def tools(self) -> Mapping[str, tuple[AgentTool, ...]]:
        """The tool cache: Computer name → its tools (a read-only snapshot)."""
        return self._cache.view()

    @property
    def last_error(self) -> BaseException | None:
        """Why the agent stopped on its own: the Server's refusal while reconnecting.

        A :class:`RemoteError` such as :class:`ProtocolVersionError` or
        :class:`UnauthorizedError`; such refusals are never retried.
        """
        return self._last_error

    # ------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> AsyncAgent:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Connect to the Server (``async with`` calls this). Raises on refusal.

        Raises :class:`ProtocolVersionError` when the Server refuses our protocol version
        (after disconnecting; never retried), another :class:`RemoteError` for other
        handshake refusals, :class:`AgentConnectionError` when the Server is unreachable.
        """
        self._transition(Transition.OPEN)
        self._emit_lock = asyncio.Lock()
        self._sio = self._make_client()
        try:
            await self._open_transport()
        except BaseException:
            if self._state is AgentState.CONNECTING:
                self._transition(Transition.CONNECT_FAILED)
            raise
        if self._state is AgentState.CONNECTING:
            await self._mark_connected()

    async def close(self) -> None:
        """Disconnect and stop every background task; idempotent.

        Tool calls still in flight are cancelled first (``server:tool_call_cancel``, while
        the agent is still in its office), and the office is left before disconnecting,
        so no tool keeps running for a caller that is gone. ``async with`` calls this
        however the block ends (an exception, a cancelled task, Ctrl-C).
        """
        if self._state is AgentState.CLOSED:
            return
        try:
            if self._state is AgentState.CONNECTED and self._office is not None:
                await self._depart()
        finally:  # interrupted or not, the agent ends closed
            await self._close_now()

    async def _close_now(self) -> None:
        if self._state is AgentState.CLOSED:
            return
        self._transition(Transition.CLOSE)
        current = asyncio.current_task()
        if self._reconnect_task is not None and self._reconnect_task is not current:
            self._reconnect_task.cancel()
            await asyncio.gather(self._reconnect_task, return_exceptions=True)
        self._reconnect_task = None
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
        await asyncio.gather(*(t for t in self._tasks if t is not current), return_exceptions=True)
        if self._sio is not None:
            await self._safe_disconnect()
        self._fail_pending(AgentStateError("the agent was closed"))
        for stream in list(self._streams):
            stream.close()
        self._office = None
        self._cache.clear()
        self._skills.clear()
        self._transition(Transition.CLOSED)

    # ------------------------------------------------------------------- listeners

    def add_notification_listener(
        self, callback: NotificationListener, *events: Event
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for every ``notify:*`` (or only ``events``).

        Returns a function that removes the listener.
        """
        wanted = frozenset(events) if events else None

        def filtered(notification: AgentNotification) -> Any:
            if wanted is None or notification.event in wanted:
                return callback(notification)
            return None

        return self._notification_listeners.add(filtered)

    def notifications(self, *events: Event) -> NotificationStream:
        """A :class:`NotificationStream` of every ``notify:*`` (or only ``events``)."""
        stream: NotificationStream

        def forget() -> None:
            self._streams.discard(stream)

        stream = NotificationStream(frozenset(events) if events else None, forget)
        if self._state is AgentState.CLOSED:
            stream.close()
        else:
            self._streams.add(stream)
        return stream

    def add_tools_listener(self, callback: ToolsListener) -> Callable[[], None]:
        """Call ``callback(computer, tools_or_None)`` whenever the tool cache changes."""
        return self._tools_listeners.add(callback)

    def add_desktop_listener(self, callback: DesktopListener) -> Callable[[], None]:
        """Call ``callback(computer, desktops)`` after ``notify:update_desktop``.

        Registering one turns the automatic desktop refresh on.
        """
        return self._desktop_listeners.add(callback)

    def add_skills_listener(self, callback: SkillsListener) -> Callable[[], None]:
        """Call ``callback(computer, skills)`` after each skill-list fetch of ``computer``.

        ``skills`` is None when the entry was dropped (the Computer left, the agent left).
        """
        return self._skills.add_listener(callback)

    def add_state_listener(self, callback: StateListener) -> Callable[[], None]:
        """Call ``callback(old, new)`` on every lifecycle state change."""
        return self._state_listeners.add(callback)

    # -------------------------------------------------------------------- offices

    async def join_office(self, office_id: str) -> None:
        """Join ``office_id``; raises :class:`JoinOfficeError` on ``[false, reason]``.

        With the tool cache on, the tools of every Computer already in the office are
        fetched before this returns (failures are logged, not raised).
        """
        require_connected(self._state)
        if self._office is not None and self._office != office_id:
            await self.leave_office()
        await self._join(office_id)
        if self._tool_cache_enabled:
            await self._refresh_all_tools()

    async def leave_office(self) -> None:
        """Leave the current office; raises :class:`LeaveOfficeError` if refused."""
        require_connected(self._state)
        office = self._office
        if office is None:
            raise AgentStateError("the agent is not in an office")
        for req_id in self._calls.claim_all():  # cancelled while still in the office
            await self._send_cancel(req_id)
        args = await self._request(Event.LEAVE_OFFICE, LeaveOfficeReq(office_id=office))
        self._calls.take_unflushed()  # the leave's ack: the Server has seen those cancels
        decode_office_ack(Event.LEAVE_OFFICE, office, args)
        self._office = None
        self._drop_all_tools()

    async def list_room(self, office_id: str | None = None) -> list[SessionInfo]:
        """The members of ``office_id`` (default: the agent's office)."""
        office = office_id or self._office
        if office is None:
            raise AgentStateError("join an office first, or pass office_id")
        ret = await self._ask(
            Event.LIST_ROOM,
            ListRoomReq(agent=self._name, req_id=_req_id(), office_id=office),
            ListRoomRet,
        )
        return list(ret.sessions)

    # ----------------------------------------------------------------- client:get_*

    async def get_tools(self, computer: str) -> list[AgentTool]:
        """The tools of ``computer`` with their ``a2c_tool_meta`` parsed into ToolMeta."""
        ret = await self._ask(
            Event.GET_TOOLS,
            GetToolsReq(agent=self._name, req_id=_req_id(), computer=computer),
            GetToolsRet,
        )
        return list(tools_from_ret(computer, ret))

    async def get_config(self, computer: str) -> ComputerConfigView:
        """The MCP server configuration of ``computer`` (placeholders unresolved); from our
        Computer also each MCP server's state (``server_states``, None from others)."""
        return await self._ask(
            Event.GET_CONFIG,
            GetComputerConfigReq(agent=self._name, req_id=_req_id(), computer=computer),
            ComputerConfigView,
        )

    async def get_desktop(
        self, computer: str, size: int | None = None, window: WindowURI | str | None = None
    ) -> list[str]:
        """The rendered desktop of ``computer`` (one string per window).

        ``size`` caps the number of entries (``None``: all; ``<= 0``: none, per protocol).

        ``window`` restricts it to one window; a string is parsed strictly, so a query or
        fragment raises :class:`~a2c_protocol.InvalidWindowURIError` before anything is
        sent.
        """
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
                req_id=_req_id(),
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
        """One page of ``mcp_server``'s resources on ``computer``.

        Raises :class:`McpServerNotFoundError` (4014) for an unknown server and
        :class:`CapabilityNotSupportedError` (4015, with ``capability``) when it lacks
        resources.
        """
        ret = await self._ask(
            Event.GET_RESOURCES,
            GetResourcesReq(
                agent=self._name,
                req_id=_req_id(),
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
        """Every resource of ``mcp_server``, following ``next_cursor`` page by page."""
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
    ) -> CallToolResult:
        """Call ``tool_name`` on ``computer`` and return its ``CallToolResult``.

        Content items whose bytes travel by blob handle (``_meta.a2c_blob_handle``) are
        pulled and restored before returning (the ``a2c_*`` keys stay), unless
        ``drain_blobs`` (default: the agent's setting) is False; see :meth:`read_blob`.

        Tool failures are results (``is_error``; read them with :func:`result_error_code`,
        :func:`tool_authorization` or :func:`raise_for_tool_error`); they are never retried.
        Protocol failures raise the typed :class:`RemoteError` (404 unknown Computer, 4103,
        4104, 403, 408, 400 …).

        ``timeout`` (seconds) is sent to the Computer (rounded up to whole seconds). If no
        answer arrives within ``timeout`` plus the agent's grace period, the agent sends
        ``server:tool_call_cancel`` for this call's ``req_id`` and raises
        :class:`ToolCallTimeoutError`. A 408 from the Server is answered with the same
        cancel before :class:`RequestTimeoutError` is raised.

        ``req_id`` defaults to a fresh UUID; pass your own to be able to cancel the call
        from elsewhere with :meth:`cancel_tool_call` (cancelling the awaiting task does the
        same).

        ``on_progress`` (an extension, see docs/compatibility.md) asks for the MCP server's
        progress reports: each arrives as a :class:`~a2c_protocol.ToolCallProgress` (at most
        about 10 per second; a plain or a coroutine function). Without it nothing changes on
        the wire. With ``timeout_resets_on_progress`` each report restarts ``timeout`` here;
        the Server and the Computer restart their waits on progress in any case (the Server
        up to its ``--max-tool-timeout``).
        """
        with call_span(self._office, computer, tool_name) as span:
            try:
                result = await self._call_tool(
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
    ) -> CallToolResult:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if req_id is not None and not (isinstance(req_id, str) and req_id):
            raise ValueError("req_id must be a non-empty string")
        req_id = req_id or _req_id()
        request = ToolCallReq(
            agent=self._name,
            req_id=req_id,
            computer=computer,
            tool_name=tool_name,
            params=dict(params or {}),
            timeout=max(1, math.ceil(timeout)),
            a2c_progress=True if on_progress is not None else None,
            a2c_trace=trace,
        )
        progress = (
            contextlib.nullcontext(None)
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
                args = await self._request(
                    Event.TOOL_CALL, request, timeout=timeout + self._tool_call_grace, bind=bind
                )
            except AckTimeoutError:
                await self._cancel_once(req_id)
                raise ToolCallTimeoutError(computer, tool_name, req_id, timeout) from None
            except asyncio.CancelledError:
                await asyncio.shield(self._cancel_once(req_id))
                raise
        try:
            result = decode_ack(Event.TOOL_CALL, CallToolResult, args)
        except RequestTimeoutError:
            await self._cancel_once(req_id)
            raise
        if not (self._drain_blobs if drain_blobs is None else drain_blobs):
            return result

        async def pull(handle: str, limit: int | None) -> BlobData:
            return await self.read_blob(computer, handle, max_bytes=limit)

        return await drain_result(result, pull, max_bytes=self._max_drained_bytes)

    # ------------------------------------------------------------------ skills

    @property
    def skills(self) -> Mapping[str, tuple[A2CSkillRef, ...]]:
        """Computer name → its last fetched skills; refreshed on ``notify:update_skills``."""
        return self._skills.view()

    async def get_skills(self, computer: str) -> list[A2CSkillRef]:
        """The skills ``computer`` offers now, in its discovery order (also cached)."""
        return await self._skills.fetch(computer)

    async def get_skill(
        self,
        computer: str,
        name: str,
        rel_path: str = DEFAULT_SKILL_REL_PATH,
        *,
        max_bytes: int | None = None,
    ) -> SkillFile:
        """One file of skill ``name`` (copied from ``A2CSkillRef.name``), verified.

        Inline text and blob-handle answers both end as bytes checked against the answer's
        ``total_size`` and ``sha256`` (:class:`SkillIntegrityError` otherwise). Raises
        :class:`~a2c_protocol.InvalidSkillNameError` (4016),
        :class:`~a2c_protocol.SkillNotFoundError` (4014) and
        :class:`~a2c_protocol.SkillResourceError` (4017, ``reason``).
        """

        async def ask(skill: str, path: str) -> GetSkillRet:
            request = GetSkillReq(
                agent=self._name, req_id=_req_id(), computer=computer, name=skill, rel_path=path
            )
            return await self._ask(Event.GET_SKILL, request, GetSkillRet)

        async def pull(handle: str, limit: int | None) -> BlobData:
            return await self.read_blob(computer, handle, max_bytes=limit)

        return await read_skill_file(ask, pull, name, rel_path, max_bytes=max_bytes)

    async def _fetch_skills(self, computer: str) -> list[A2CSkillRef]:
        ret = await self._ask(
            Event.GET_SKILLS,
            GetSkillsReq(agent=self._name, req_id=_req_id(), computer=computer),
            GetSkillsRet,
        )
        return list(ret.skills)

    # ------------------------------------------------------------------ blobs

    async def get_blob(
        self,
        computer: str,
        handle: str,
        *,
        offset: int = 0,
        max_chunk_bytes: int | None = None,
    ) -> GetBlobRet:
        """One chunk of the blob behind ``handle`` (minted by ``computer``) at ``offset``.

        ``max_chunk_bytes`` is a suggestion in raw bytes; the Computer clamps it. Raises
        :class:`~a2c_protocol.BlobNotAccessibleError` (4018) with ``reason``
        ``invalid_handle``, ``forbidden``, ``gone`` or ``range``.
        """
        request = GetBlobReq(
            agent=self._name,
            req_id=_req_id(),
            computer=computer,
            blob_handle=handle,
            chunk_offset=offset,
            max_chunk_bytes=max_chunk_bytes,
        )
        return await self._ask(Event.GET_BLOB, request, GetBlobRet)

    async def read_blob(
        self,
        computer: str,
        handle: str,
        *,
        max_bytes: int | None = None,
        progress: ProgressFn | None = None,
    ) -> BlobData:
        """Every byte of the blob behind ``handle``, verified against its SHA-256.

        Chunks are fetched by absolute offset, ``blob_max_in_flight`` at a time. A source
        that changes during the read, a refused offset or a digest mismatch restarts the
        read from 0 (three reads at most, then :class:`BlobIntegrityError`); other 4018
        reasons raise :class:`~a2c_protocol.BlobNotAccessibleError` at once. ``max_bytes``
        refuses larger blobs with :class:`BlobLimitError`; ``progress(received, total)``
        is called after each chunk.
        """

        async def fetch(offset: int, size: int) -> GetBlobRet:
            return await self.get_blob(computer, handle, offset=offset, max_chunk_bytes=size)

        return await pull_blob(
            fetch,
            handle=handle,
            chunk_bytes=self._blob_chunk_bytes,
            max_in_flight=self._blob_max_in_flight,
            max_bytes=max_bytes,
            progress=progress,
        )

    async def cancel_tool_call(self, req_id: str) -> None:
        """Send ``server:tool_call_cancel`` for ``req_id`` (best effort, no answer)."""
        require_connected(self._state)
        self._calls.claim(req_id)  # sent now: leaving will not send it again
        await self._emit(
            Event.TOOL_CALL_CANCEL, to_wire(AgentCallData(agent=self._name, req_id=req_id))
        )

    # ================================================================= internals

    def _now(self) -> AgentState:
        # A call, so type checkers do not carry a narrowed state across awaits.
        return self._state

    def _transition(self, transition: Transition) -> None:
        old = self._state
        new = next_state(old, transition, reconnect=self._reconnect)
        if new is not old:
            self._state = new
            logger.debug("agent %s: %s -> %s", self._name, old.value, new.value)
            self._state_listeners.fire(old, new)

    def _spawn(self, awaitable: Awaitable[Any]) -> None:
        async def run() -> None:
            await awaitable

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("agent background task failed", exc_info=task.exception())

    def _make_client(self) -> socketio.AsyncClient:
        def record(code: int) -> None:
            self._close_code = code

        recorder = _close_code_recorder(record)
        sio = socketio.AsyncClient(
            reconnection=False,  # the agent reconnects itself so it can re-join and refresh
            handle_sigint=False,
            request_timeout=self._connect_timeout,  # Engine.IO handshake/POST wait
            http_session=lambda: aiohttp.ClientSession(ws_response_class=recorder),
            # The Server bounds every message (--max-message-bytes); aiohttp's own 4 MiB
            # default would drop the link of a deployment that raised that limit.
            websocket_extra_options={"max_msg_size": 0},
        )
        sio.on("connect", self._on_connect, namespace=NAMESPACE)
        sio.on("connect_error", self._on_connect_error, namespace=NAMESPACE)
        sio.on("disconnect", self._on_disconnect, namespace=NAMESPACE)
        for event in _NOTIFY_EVENTS:
            sio.on(event.value, self._notify_handler(event), namespace=NAMESPACE)
        sio.on(ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value, self._on_progress,
               namespace=NAMESPACE)  # fmt: skip
        return sio

    def _client(self) -> socketio.AsyncClient:
        if self._sio is None:
            raise AgentStateError("the agent is not open")
        return self._sio

    async def _auth(self) -> dict[str, Any]:
        return await resolve_auth(self._auth_source)

    # ---------------------------------------------------------------- connecting

    async def _open_transport(self) -> None:
        sio = self._client()
        self._connect_error = None
        self._close_code = None
        try:
            await sio.connect(
                self._url,
                auth=await self._auth(),
                transports=list(self._transports),
                namespaces=[NAMESPACE],
                socketio_path=self._socketio_path,
                wait_timeout=self._connect_timeout,
            )
        except Exception as exc:  # the library fails with several types; map them all here
            refused_namespace = bool(getattr(sio, "failed_namespaces", None))
            # C6: disconnect explicitly before raising, never rely on library defaults.
            await self._safe_disconnect()
            error = await self._diagnose(exc, refused_namespace)
            if isinstance(error, ProtocolVersionError):
                logger.error(
                    "a2c protocol version refused: this SDK speaks %s, the server runs %s "
                    "(accepts %s..%s); not retrying",
                    PROTOCOL_VERSION,
                    error.server_version or "?",
                    error.min_supported or "?",
                    error.max_supported or "?",
                )
            raise error from exc

    async def _diagnose(self, exc: Exception, refused_namespace: bool) -> A2CError:
        """The typed error for a failed connect (one plain GET for refused handshakes)."""
        captured = self._connect_error
        if refused_namespace:
            # The transport was accepted; the Server's connect handler refused us.
            return _error_from_refusal(captured) or AgentConnectionError(
                f"the server refused the connection: {captured or exc}"
            )
        probe = handshake_probe_url(self._url, self._socketio_path)
        try:
            async with httpx.AsyncClient(timeout=self._connect_timeout) as http:
                response = await http.get(probe)
        except httpx.HTTPError as http_exc:
            if self._close_code == WS_CLOSE_VERSION_REJECTED:
                return version_rejected_by_close()
            fallback = _error_from_refusal(captured)
            return fallback or AgentConnectionError(
                f"cannot connect to {self._server_url}: {connect_error_text(exc)} "
                f"({type(http_exc).__name__} on the handshake probe)"
            )
        error = handshake_refusal(response.status_code, dict(response.headers), response.content)
        if self._close_code == WS_CLOSE_VERSION_REJECTED and not isinstance(
            error, ProtocolVersionError
        ):
            # R4: the polling retry yielded no 4008 body; raise anyway, carrying 4900.
            return version_rejected_by_close()
        if error is not None:
            return error
        return _error_from_refusal(captured) or AgentConnectionError(
            f"cannot connect to {self._server_url}: {connect_error_text(exc)}"
        )

    async def _safe_disconnect(self) -> None:
        sio = self._sio
        if sio is None:
            return
        try:
            await sio.disconnect()
        except Exception:  # pragma: no cover - best effort on an already broken transport
            logger.debug("disconnect failed", exc_info=True)

    async def _mark_connected(self) -> None:
        self._transition(Transition.CONNECTED)
        sio = self._sio
        if sio is not None and not sio.connected:
            # The link dropped between the handshake and now; its disconnect event was
            # ignored because we were not CONNECTED yet, so handle the loss here.
            await self._on_disconnect("lost while connecting")

    async def _on_connect(self) -> None:
        logger.info("agent %s connected to %s", self._name, self._server_url)

    async def _on_connect_error(self, data: object = None) -> None:
        self._connect_error = data

    async def _on_disconnect(self, reason: object = None) -> None:
        logger.info("agent %s disconnected (%s)", self._name, reason)
        self._fail_pending(ConnectionLostError(f"connection lost ({reason})"))
        if self._state is not AgentState.CONNECTED:
            return
        self._transition(Transition.LOST)
        state = self._now()
        if state is AgentState.RECONNECTING and self._reconnect_task is None:
            self._reconnect_task = asyncio.ensure_future(self._reconnect_loop())
        elif state is AgentState.CLOSED:
            self._office = None
            self._drop_all_tools()

    async def _reconnect_loop(self) -> None:
        delays = reconnect_delays(initial=self._reconnect_delay, maximum=self._reconnect_max_delay)
        try:
            while self._now() is AgentState.RECONNECTING:
                await asyncio.sleep(next(delays))
                if self._now() is not AgentState.RECONNECTING:
                    return
                try:
                    await self._open_transport()
                except RemoteError as exc:
                    # The Server's verdict on this client (a refused token, a refused
                    # version): asking again cannot change its mind.
                    if not refusal_is_final(exc):
                        logger.info("reconnect attempt failed: %s", exc)
                        continue
                    if not isinstance(exc, ProtocolVersionError):  # that one is logged already
                        logger.error("the server refused to reconnect; giving up: %s", exc)
                    self._last_error = exc
                    self._office = None
                    self._drop_all_tools()
                    self._transition(Transition.GIVE_UP)
                    for stream in list(self._streams):
                        stream.close()
                    return
                except A2CError as exc:
                    logger.info("reconnect attempt failed: %s", exc)
                    continue
                if await self._after_reconnect():
                    await self._mark_connected()
                    return
        finally:
            if self._reconnect_task is asyncio.current_task():
                self._reconnect_task = None

    async def _after_reconnect(self) -> bool:
        """Re-join the office and refresh the cache; False if the link dropped again."""
        office = self._office
        if office is None:
            return True
        try:
            await self._join(office)
        except (ConnectionLostError, AckTimeoutError) as exc:
            logger.info("re-join of %r interrupted: %s", office, exc)
            await self._safe_disconnect()
            return False
        except A2CError as exc:
            logger.warning("could not re-join office %r after reconnecting: %s", office, exc)
            self._office = None
            self._drop_all_tools()
            return True
        if self._tool_cache_enabled:
            await self._refresh_all_tools()
        return True

    # ------------------------------------------------------------------ requests

    async def _emit(
        self, event: Event, data: Any, callback: Callable[..., None] | None = None
    ) -> None:
        sio = self._client()
        lock = self._emit_lock
        if lock is None:  # pragma: no cover - set in open()
            raise AgentStateError("the agent is not open")
        try:
            async with lock:
                await sio.emit(event.value, data, namespace=NAMESPACE, callback=callback)
        except socketio.exceptions.SocketIOError as exc:
            raise ConnectionLostError(f"cannot send {event.value}: not connected") from exc

    async def _request(
        self,
        event: Event,
        payload: Any,
        *,
        timeout: float | None = None,
        bind: Callable[[asyncio.Timeout], None] | None = None,
    ) -> tuple[Any, ...]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Any, ...]] = loop.create_future()

        def on_ack(*args: Any) -> None:
            if not future.done():
                future.set_result(args)

        self._pending.add(future)
        wait = self._request_timeout if timeout is None else timeout
        try:
            await self._emit(event, to_wire(payload), on_ack)
            try:
                async with asyncio.timeout(wait) as scope:
                    if bind is not None:
                        bind(scope)
                    return await future
            except TimeoutError:
                raise AckTimeoutError(event.value, wait) from None
        finally:
            self._pending.discard(future)

    async def _ask(self, event: Event, payload: Any, response: type[T]) -> T:
        require_connected(self._state)
        try:
            args = await self._request(event, payload)
        except AckTimeoutError as exc:
            unsupported = unanswered(event, exc)
            if unsupported is None:
                raise
            raise unsupported from exc
        return decode_ack(event, response, args)

    def _fail_pending(self, error: Exception) -> None:
        for future in list(self._pending):
            if not future.done():
                future.set_exception(error)
        self._pending.clear()

    async def _send_cancel(self, req_id: str) -> None:
        try:
            await self._emit(
                Event.TOOL_CALL_CANCEL, to_wire(AgentCallData(agent=self._name, req_id=req_id))
            )
        except A2CError as exc:
            logger.warning("could not send tool_call_cancel for %s: %s", req_id, exc)

    async def _cancel_once(self, req_id: str) -> None:
        if self._calls.claim(req_id):
            await self._send_cancel(req_id)

    async def _depart(self) -> None:
        """Cancel the calls in flight, then leave the office (bounded, never raises)."""
        office = self._office

        async def leave() -> None:
            wait = min(self._request_timeout, _DEPART_TIMEOUT)
            try:
                args = await self._request(
                    Event.LEAVE_OFFICE, LeaveOfficeReq(office_id=office or ""), timeout=wait
                )
                decode_office_ack(Event.LEAVE_OFFICE, office or "", args)
            except A2CError as exc:
                logger.info("leaving office %r before closing failed: %s", office, exc)

        await depart(self._calls, self._send_cancel, leave)

    async def _join(self, office_id: str) -> None:
        request = EnterOfficeReq(role=Role.AGENT, name=self._name, office_id=office_id)
        args = await self._request(Event.JOIN_OFFICE, request)
        decode_office_ack(Event.JOIN_OFFICE, office_id, args)
        self._office = office_id

    # --------------------------------------------------------------- tool cache

    def _drop_all_tools(self) -> None:
        dropped = list(self._cache.view())
        self._cache.clear()
        for computer in dropped:
            self._tools_listeners.fire(computer, None)
        self._skills.clear()

    async def _refresh_all_tools(self) -> None:
        office = self._office
        if office is None:
            return
        self._drop_all_tools()
        try:
            ret = decode_ack(
                Event.LIST_ROOM,
                ListRoomRet,
                await self._request(
                    Event.LIST_ROOM,
                    ListRoomReq(agent=self._name, req_id=_req_id(), office_id=office),
                ),
            )
        except A2CError as exc:
            logger.warning("could not list office %r to fill the tool cache: %s", office, exc)
            return
        computers = [s.name for s in ret.sessions if s.role is Role.COMPUTER]
        await asyncio.gather(*(self._perform(FetchTools(c)) for c in computers))

    async def _perform(self, action: Action) -> None:
        if isinstance(action, DropTools):
            if self._cache.drop(action.computer):
                self._tools_listeners.fire(action.computer, None)
        elif isinstance(action, FetchTools):
            token = self._cache.begin_fetch(action.computer)
            try:
                ret = decode_ack(
                    Event.GET_TOOLS,
                    GetToolsRet,
                    await self._request(
                        Event.GET_TOOLS,
                        GetToolsReq(agent=self._name, req_id=_req_id(), computer=action.computer),
                    ),
                )
            except A2CError as exc:
                logger.warning("could not fetch the tools of %r: %s", action.computer, exc)
                return
            tools = tools_from_ret(action.computer, ret)
            if self._cache.complete_fetch(action.computer, token, tools):
                self._tools_listeners.fire(action.computer, tools)
        elif isinstance(action, RefreshDesktop):
            try:
                ret_desktop = decode_ack(
                    Event.GET_DESKTOP,
                    GetDeskTopRet,
                    await self._request(
                        Event.GET_DESKTOP,
                        GetDeskTopReq(
                            agent=self._name,
                            req_id=_req_id(),
                            computer=action.computer,
                            desktop_size=self._desktop_size,
                        ),
                    ),
                )
            except A2CError as exc:
                logger.warning("could not refresh the desktop of %r: %s", action.computer, exc)
                return
            self._desktop_listeners.fire(action.computer, list(ret_desktop.desktops))

    # ------------------------------------------------------------- notifications

    async def _on_progress(self, data: object = None, *_: object) -> None:
        self._progress.on_notify(data)

    def _notify_handler(self, event: Event) -> Callable[..., Awaitable[None]]:
        async def handler(data: object = None, *_: object) -> None:
            self._on_notification(event, data)

        return handler

    def _on_notification(self, event: Event, data: object) -> None:
        try:
            notification = decode_notification(event, data)
        except InvalidResponseError as exc:
            logger.warning("dropped a malformed %s: %s", event.value, exc)
            return
        if self._state is not AgentState.CONNECTED:
            return
        in_office = self._office is not None
        for action in actions_for(
            notification,
            tool_cache=self._tool_cache_enabled and in_office,
            desktop_listeners=bool(self._desktop_listeners),
        ):
            self._spawn(self._perform(action))
        if in_office:
            self._skills.on_notification(notification)
        self._notification_listeners.fire(notification)
        for stream in list(self._streams):
            stream._offer(notification)


def _req_id() -> str:
    return uuid.uuid4().hex


def _error_from_refusal(data: object) -> RemoteError | None:
    """A typed error from a ``connect_error`` payload, when it holds a flat ErrorPayload.

    python-socketio wraps a server's refusal as ``{"message": ..., "data": ...}``.
    """
    for candidate in (data, data.get("data") if isinstance(data, dict) else None):
        error = remote_error_of(candidate)
        if error is not None:
            return error
    return None
