"""``AsyncAgent``: the Socket.IO adapter of the Agent role.

This module only translates between python-socketio and the pure rules in
:mod:`a2c_agent._rules`, :mod:`a2c_agent._session._lifecycle` and
:mod:`a2c_agent._session._connection`.
``AsyncAgent`` is the composition of its owners: the link
(:mod:`~a2c_agent._session._link`), the rejoin (:mod:`~a2c_agent._session._rejoin`), office
membership (:mod:`~a2c_agent._session._membership`), what the Server pushes
(:mod:`~a2c_agent._events`) and the calls (:mod:`~a2c_agent._rpc._requests`), which share
one :class:`~a2c_agent._core.AgentCore` (channel, lifecycle, tasks); and the skills and
blobs requests (:mod:`~a2c_agent._rpc._facades`). Here live its construction, its
properties and the public methods, each handed to its owner by one direct call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from a2c_protocol import (
    DEFAULT_SKILL_REL_PATH,
    REJOIN_BUDGET,
    A2CResource,
    A2CSkillRef,
    CallToolResult,
    ComputerConfigView,
    Event,
    ExtensionEvent,
    GetBlobRet,
    InputCapabilities,
    SessionInfo,
    WindowURI,
    with_version_query,
)
from a2c_protocol._input import DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_REQUESTS_PER_ROUND
from a2c_protocol._lines import LINE_0_2, LINE_VERSIONS, Line

from ._channel import Channel
from ._core import AgentCore
from ._events import DesktopListener, Events, NotificationListener, StateListener, ToolsListener
from ._notify import NotificationStream
from ._rpc._blobpull import DEFAULT_CHUNK_BYTES, DEFAULT_MAX_IN_FLIGHT, BlobData, ProgressFn
from ._rpc._facades import ComputerFiles
from ._rpc._inflight import TOOL_CALL_GRACE
from ._rpc._input import DEFAULT_MAX_INPUT_ROUNDS, InputHandler, InputLimits
from ._rpc._progress import ProgressCallback
from ._rpc._requests import Calls
from ._session._connection import (
    DEFAULT_TRANSPORTS,
    AuthSource,
    build_auth,
    check_transports,
    versioned_url,
)
from ._session._lifecycle import AgentState
from ._session._link import Link
from ._session._membership import Membership
from ._session._rejoin import Rejoin
from ._skills import SkillFile, SkillsListener
from ._types import AgentTool, ResourcePage
from ._upload._push import Landed, Source, UploadProgress
from ._upload._put import put_blob

__all__ = [
    "AsyncAgent",
    "DesktopListener",
    "NotificationListener",
    "StateListener",
    "ToolsListener",
]


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
            before the agent cancels it. The default (:data:`TOOL_CALL_GRACE`) outlasts
            the Server's default ``--tool-call-buffer`` with a margin, so the Server's
            answer (which says whether the call may have run) arrives first.
        desktop_size: ``desktop_size`` for automatic desktop refreshes.
        reconnect_delay, reconnect_max_delay: backoff bounds in seconds.
        drain_blobs: restore the bytes of tool-result items that arrive by blob handle
            before :meth:`call_tool` returns (default; ``call_tool(drain_blobs=False)``
            opts out per call).
        max_drained_bytes: most bytes drained per tool call (None: no limit); items past
            it keep their handle and get ``_meta.a2c_blob_error``.
        blob_chunk_bytes, blob_max_in_flight: chunk size asked for and parallel chunk
            requests of :meth:`read_blob`.
        protocol: ``"0.2"`` or ``"0.4"`` pins the protocol line. By default the agent
            announces 0.2 and, when the Server refuses it with 4008 but accepts 0.4,
            reconnects once announcing 0.4 and speaks 0.4 for the session (:attr:`protocol`).
        input_handler: answers an MCP server's requests for input during tool calls
            (elicitation, sampling; an extension, see :meth:`call_tool` and
            docs/agent.md); None: calls do not take input and the Computer declines.
        input_capabilities: what the calls made with a handler declare they can answer
            (default: forms, URLs, sampling, sampling with tools).
        max_input_rounds: rounds of input one call may ask for.
        max_input_requests_per_round: input requests one round may carry (default 16);
            a larger round is refused whole, no handler asked
            (:class:`InputRequestsExceededError`).
        max_input_requests_per_call: input requests all the rounds of one call may carry
            together (default 64); past it, the same.
        rejoin_budget: after a reconnect, how long (seconds; None: for ever) a re-join
            refused because the agent's name or the office's seat is still held is tried
            again, while the agent stays ``RECONNECTING`` (:attr:`reconnecting_reason`
            says why). The agent sends a reclaim secret with every connect, so a Server of
            this project gives its name back at once when its old node died; this covers
            other Servers. Then, or on a re-join refusal that waiting cannot change, the
            agent closes and :attr:`last_error` says why.
        resend_unsent: send again, within its own timeout, a tool call that provably never
            reached a Computer (made while reconnecting, or answered ``delivered: false``);
            False: such a call fails at once with its refusal, as before (for a caller
            with its own retry policy).
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
        tool_call_grace: float = TOOL_CALL_GRACE,
        desktop_size: int | None = None,
        reconnect_delay: float = 0.5,
        reconnect_max_delay: float = 10.0,
        drain_blobs: bool = True,
        max_drained_bytes: int | None = 256 * 1024 * 1024,
        blob_chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        blob_max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        protocol: Line | None = None,
        input_handler: InputHandler | None = None,
        input_capabilities: InputCapabilities | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        max_input_requests_per_round: int = DEFAULT_MAX_REQUESTS_PER_ROUND,
        max_input_requests_per_call: int = DEFAULT_MAX_REQUESTS_PER_CALL,
        rejoin_budget: float | None = REJOIN_BUDGET,
        resend_unsent: bool = True,
    ) -> None:
        if not name:
            raise ValueError("an agent needs a non-empty name")
        if request_timeout <= 0 or connect_timeout <= 0 or tool_call_grace < 0:
            raise ValueError("timeouts must be positive")
        if not callable(auth):
            build_auth(auth)  # fail early on a wrong role
        if min(max_input_rounds, max_input_requests_per_round, max_input_requests_per_call) < 1:
            raise ValueError(
                "max_input_rounds, max_input_requests_per_round and "
                "max_input_requests_per_call must be at least 1"
            )
        url = versioned_url(server_url)
        # The protocol line: 0.2 first, 0.4 after a 4008 saying the Server takes it, or pinned.
        self._channel = Channel(protocol or LINE_0_2, request_timeout)
        if protocol is not None:
            url = with_version_query(server_url, LINE_VERSIONS[protocol])
        core = AgentCore(
            name, self._channel, request_timeout, reconnect=reconnect, why_not=self._why_not
        )
        self._name, self._life, self._ask = name, core.life, core.ask
        self._files = ComputerFiles(core.ask, name, blob_chunk_bytes, blob_max_in_flight)
        # The office is the membership's; the others read it through this (built below).
        membership: Membership

        def office() -> str | None:
            return membership.office

        self._events = Events(
            core, office, self._files.fetch_skills, tool_cache=tool_cache,
            desktop_size=desktop_size,
        )  # fmt: skip
        membership = self._membership = Membership(core, self._events, tool_cache=tool_cache)
        self._requests = Calls(
            core, self._files, office, tool_call_grace=tool_call_grace,
            drain_blobs=drain_blobs, max_drained_bytes=max_drained_bytes,
            input_handler=input_handler,
            input_capabilities=input_capabilities or InputCapabilities(),
            input_limits=InputLimits(
                rounds=max_input_rounds,
                per_round=max_input_requests_per_round,
                per_call=max_input_requests_per_call,
            ),
            resend_unsent=resend_unsent,
        )  # fmt: skip
        self._rejoin = Rejoin(
            core, membership, self._events, budget=rejoin_budget, tool_cache=tool_cache
        )
        inbound = {
            **self._events.handlers(),
            ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value: self._requests.on_progress,
        }
        self._link = Link(
            core, membership, self._events, self._rejoin, inbound, server_url=server_url,
            url=url, line_pinned=protocol is not None, auth=auth,
            socketio_path=socketio_path, reconnect=reconnect,
            transports=check_transports(transports), connect_timeout=connect_timeout,
            reconnect_delay=reconnect_delay, reconnect_max_delay=reconnect_max_delay,
        )  # fmt: skip

    def _why_not(self) -> str | None:
        return self.reconnecting_reason

    # ------------------------------------------------------------------ properties

    @property
    def name(self) -> str:
        """The agent's routing name."""
        return self._name

    @property
    def state(self) -> AgentState:
        """The current lifecycle state."""
        return self._life.state

    @property
    def office_id(self) -> str | None:
        """The office the agent has joined, or None."""
        return self._membership.office

    @property
    def url(self) -> str:
        """The URL actually connected to (with ``a2c_version``)."""
        return self._link.url

    @property
    def protocol(self) -> str:
        """The protocol version this agent announces (and whose shapes it speaks)."""
        return LINE_VERSIONS[self._channel.line]

    @property
    def tools(self) -> Mapping[str, tuple[AgentTool, ...]]:
        """The tool cache: Computer name → its tools (a read-only snapshot)."""
        return self._events.tools

    @property
    def reconnecting_reason(self) -> str | None:
        """While :attr:`state` is ``RECONNECTING``, what the agent waits for, in one
        sentence (the connection, or its name or seat in the office); else None."""
        return self._rejoin.reconnecting_reason

    @property
    def last_error(self) -> BaseException | None:
        """Why the agent stopped on its own: the Server's refusal while reconnecting.

        A :class:`RemoteError` such as :class:`ProtocolVersionError` or
        :class:`UnauthorizedError`; such refusals are never retried.
        """
        return self._rejoin.last_error

    @property
    def last_cut(self) -> str | None:
        """Why the Server last cut this agent's connection, in its own words (e.g.
        ``"token expired"``), or None if the last drop came unannounced.

        Set when the Server announces the cut and again when the connection drops, so
        a state listener seeing ``RECONNECTING`` can say why at once.
        """
        return self._link.last_cut

    # ------------------------------------------------------------ skills and blobs

    @property
    def skills(self) -> Mapping[str, tuple[A2CSkillRef, ...]]:
        """Computer name → its last fetched skills; refreshed on ``notify:update_skills``."""
        return self._events.skills.view()

    async def get_skills(self, computer: str) -> list[A2CSkillRef]:
        """The skills ``computer`` offers now, in its discovery order (also cached)."""
        return await self._events.skills.fetch(computer)

    async def put_blob(
        self,
        computer: str,
        source: Source,
        name_hint: str | None = None,
        progress: UploadProgress | None = None,
    ) -> Landed:
        """Upload ``source`` (bytes, a file path or an async iterator of bytes) to
        ``computer``'s landing dir; returns where it landed (a path on the Computer, to
        hand to its tools) with the size and SHA-256 both sides checked.

        ``name_hint`` suggests the file name (a path's own name by default); the Computer
        makes it safe and never overwrites. Chunks go one at a time, each after the
        previous ack; ``progress(sent, total)`` is called after each. Raises
        :class:`~a2c_protocol.BlobWriteError` (4019, ``reason``: ``forbidden`` when the
        Computer takes no uploads, ``too_large``, ``busy``, ``integrity``, ...).
        """
        return await put_blob(self._ask, self._name, computer, source, name_hint, progress)

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
        return await self._files.get_skill(computer, name, rel_path, max_bytes)

    async def get_blob(
        self, computer: str, handle: str, *, offset: int = 0, max_chunk_bytes: int | None = None
    ) -> GetBlobRet:
        """One chunk of the blob behind ``handle`` (minted by ``computer``) at ``offset``.

        ``max_chunk_bytes`` is a suggestion in raw bytes; the Computer clamps it. Raises
        :class:`~a2c_protocol.BlobNotAccessibleError` (4018) with ``reason``
        ``invalid_handle``, ``forbidden``, ``gone`` or ``range``.
        """
        return await self._files.get_blob(computer, handle, offset, max_chunk_bytes)

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
        return await self._files.read_blob(computer, handle, max_bytes, progress)

    # ------------------------------------------------------------ link

    async def open(self) -> None:
        """Connect to the Server (``async with`` calls this). Raises on refusal.

        Raises :class:`ProtocolVersionError` when the Server refuses our protocol version
        (after disconnecting; never retried), another :class:`RemoteError` for other
        handshake refusals, :class:`AgentConnectionError` when the Server is unreachable.
        """
        return await self._link.open()

    async def close(self) -> None:
        """Disconnect and stop every background task; idempotent.

        Tool calls still in flight are cancelled first (``server:tool_call_cancel``, while
        the agent is still in its office), and the office is left before disconnecting,
        so no tool keeps running for a caller that is gone. ``async with`` calls this
        however the block ends (an exception, a cancelled task, Ctrl-C).
        """
        return await self._link.close()

    # ------------------------------------------------------------ membership

    async def join_office(self, office_id: str) -> None:
        """Join ``office_id``; raises :class:`JoinOfficeError` on ``[false, reason]``.

        With the tool cache on, the tools of every Computer already in the office are
        fetched before this returns (failures are logged, not raised).
        """
        return await self._membership.join_office(office_id)

    async def leave_office(self) -> None:
        """Leave the current office; raises :class:`LeaveOfficeError` if refused."""
        return await self._membership.leave_office()

    async def list_room(self, office_id: str | None = None) -> list[SessionInfo]:
        """The members of ``office_id`` (default: the agent's office)."""
        return await self._membership.list_room(office_id)

    # ------------------------------------------------------------ events

    def add_notification_listener(
        self, callback: NotificationListener, *events: Event
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for every ``notify:*`` (or only ``events``).

        Returns a function that removes the listener.
        """
        return self._events.add_notification_listener(callback, *events)

    def notifications(self, *events: Event) -> NotificationStream:
        """A :class:`NotificationStream` of every ``notify:*`` (or only ``events``)."""
        return self._events.notifications(*events)

    def add_tools_listener(self, callback: ToolsListener) -> Callable[[], None]:
        """Call ``callback(computer, tools_or_None)`` whenever the tool cache changes."""
        return self._events.add_tools_listener(callback)

    def add_desktop_listener(self, callback: DesktopListener) -> Callable[[], None]:
        """Call ``callback(computer, desktops)`` after ``notify:update_desktop``.

        Registering one turns the automatic desktop refresh on.
        """
        return self._events.add_desktop_listener(callback)

    def add_skills_listener(self, callback: SkillsListener) -> Callable[[], None]:
        """Call ``callback(computer, skills)`` after each skill-list fetch of ``computer``.

        ``skills`` is None when the entry was dropped (the Computer left, the agent left).
        """
        return self._events.add_skills_listener(callback)

    def add_state_listener(self, callback: StateListener) -> Callable[[], None]:
        """Call ``callback(old, new)`` on every lifecycle state change."""
        return self._events.add_state_listener(callback)

    # ------------------------------------------------------------ requests

    async def get_tools(self, computer: str) -> list[AgentTool]:
        """The tools of ``computer`` with their ``a2c_tool_meta`` parsed into ToolMeta."""
        return await self._requests.get_tools(computer)

    async def get_config(self, computer: str) -> ComputerConfigView:
        """The MCP server configuration of ``computer`` (placeholders unresolved); from our
        Computer also each MCP server's state (``server_states``, None from others)."""
        return await self._requests.get_config(computer)

    async def get_desktop(
        self, computer: str, size: int | None = None, window: WindowURI | str | None = None
    ) -> list[str]:
        """The rendered desktop of ``computer`` (one string per window).

        ``size`` caps the number of entries (``None``: all; ``<= 0``: none, per protocol).

        ``window`` restricts it to one window; a string is parsed strictly, so a query or
        fragment raises :class:`~a2c_protocol.InvalidWindowURIError` before anything is
        sent.
        """
        return await self._requests.get_desktop(computer, size, window)

    async def get_resources(
        self, computer: str, mcp_server: str, cursor: str | None = None
    ) -> ResourcePage:
        """One page of ``mcp_server``'s resources on ``computer``.

        Raises :class:`McpServerNotFoundError` (4014) for an unknown server and
        :class:`CapabilityNotSupportedError` (4015, with ``capability``) when it lacks
        resources.
        """
        return await self._requests.get_resources(computer, mcp_server, cursor)

    def iter_resources(self, computer: str, mcp_server: str) -> AsyncIterator[A2CResource]:
        """Every resource of ``mcp_server``, following ``next_cursor`` page by page."""
        return self._requests.iter_resources(computer, mcp_server)

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

        ``on_input`` (default: the agent's ``input_handler``; an extension, see
        docs/compatibility.md) answers the MCP server's requests for input during the call:
        each :class:`~a2c_protocol.ElicitationRequest` or
        :class:`~a2c_protocol.SamplingRequest` is passed to it and its answer sent back on a
        new round of the call (same ``timeout`` each, ``req_id`` of round *n* is
        ``<req_id>.<n>``), until the tool returns. Without a handler the call does not take
        input, and the Computer declines on the Agent's behalf, as before. More than the
        agent's ``max_input_rounds`` rounds raise :class:`InputRoundsExceededError`; a
        round of more than ``max_input_requests_per_round`` requests, or more than
        ``max_input_requests_per_call`` in all, raises
        :class:`InputRequestsExceededError` without asking the handler; a handler that
        has not answered when the round expires at the Computer (its ``expires_in``)
        raises :class:`InputTimeoutError`. ``input_capabilities`` (default: the agent's)
        is what this call declares it can answer: a request of another kind, or a URL
        that is not a web link, is answered no without asking the handler.
        """
        return await self._requests.call_tool(
            computer,
            tool_name,
            params,
            timeout=timeout,
            req_id=req_id,
            drain_blobs=drain_blobs,
            on_progress=on_progress,
            timeout_resets_on_progress=timeout_resets_on_progress,
            on_input=on_input,
            input_capabilities=input_capabilities,
        )

    async def cancel_tool_call(self, req_id: str) -> None:
        """Send ``server:tool_call_cancel`` for ``req_id`` (best effort, no answer)."""
        return await self._requests.cancel_tool_call(req_id)

    # ------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> AsyncAgent:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
