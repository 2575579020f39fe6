"""``AsyncAgent``: the Socket.IO adapter of the Agent role.

This module only translates between python-socketio and the pure rules in
:mod:`a2c_agent._rules`, :mod:`a2c_agent._session._lifecycle` and
:mod:`a2c_agent._session._connection`.
``AsyncAgent`` is the composition of its parts: the link
(:mod:`~a2c_agent._session._link`), office membership (:mod:`~a2c_agent._session._membership`),
what the Server pushes (:mod:`~a2c_agent._events`) and requests
(:mod:`~a2c_agent._rpc._requests`) on a shared core (:mod:`~a2c_agent._core`); it holds the
channel (:mod:`~a2c_agent._channel`) and the skills and blobs requests
(:mod:`~a2c_agent._rpc._facades`). Here live its construction, its properties and the
methods it hands to those it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from a2c_protocol import (
    DEFAULT_SKILL_REL_PATH,
    REJOIN_BUDGET,
    A2CSkillRef,
    GetBlobRet,
    InputCapabilities,
    new_reclaim_secret,
    with_version_query,
)
from a2c_protocol._input import DEFAULT_MAX_REQUESTS_PER_CALL, DEFAULT_MAX_REQUESTS_PER_ROUND
from a2c_protocol._lines import LINE_0_2, LINE_VERSIONS, Line

from ._channel import Channel
from ._events import DesktopListener, NotificationListener, StateListener, ToolsListener
from ._notify import Listeners, NotificationStream
from ._rpc._blobpull import DEFAULT_CHUNK_BYTES, DEFAULT_MAX_IN_FLIGHT, BlobData, ProgressFn
from ._rpc._facades import ComputerFiles
from ._rpc._inflight import TOOL_CALL_GRACE, InFlightCalls
from ._rpc._input import DEFAULT_MAX_INPUT_ROUNDS, InputHandler, InputLimits
from ._rpc._progress import ProgressWaits
from ._rpc._requests import RequestsMixin
from ._rules import ToolCache
from ._session._connection import (
    DEFAULT_TRANSPORTS,
    AuthSource,
    build_auth,
    check_transports,
    versioned_url,
)
from ._session._lifecycle import AgentState, Lifecycle
from ._session._link import LinkMixin
from ._skills import SkillFile, SkillTracker
from ._types import AgentTool
from ._upload._push import Landed, Source, UploadProgress
from ._upload._put import put_blob

__all__ = [
    "AsyncAgent",
    "DesktopListener",
    "NotificationListener",
    "StateListener",
    "ToolsListener",
]


class AsyncAgent(LinkMixin, RequestsMixin):
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
        if min(max_input_rounds, max_input_requests_per_round, max_input_requests_per_call) < 1:
            raise ValueError(
                "max_input_rounds, max_input_requests_per_round and "
                "max_input_requests_per_call must be at least 1"
            )
        self._input_handler = input_handler
        self._input_capabilities = input_capabilities or InputCapabilities()
        self._input_limits = InputLimits(
            rounds=max_input_rounds,
            per_round=max_input_requests_per_round,
            per_call=max_input_requests_per_call,
        )
        self._resend_unsent = resend_unsent
        # The protocol line: 0.2 first, 0.4 after a 4008 saying the Server takes it, or pinned.
        self._channel = Channel(protocol or LINE_0_2, request_timeout)
        self._line_pinned = protocol is not None
        if protocol is not None:
            self._url = with_version_query(server_url, LINE_VERSIONS[protocol])

        self._leaving = False
        self._office: str | None = None
        self._cache = ToolCache()
        self._calls = InFlightCalls()
        self._progress = ProgressWaits(self._spawn)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reconnect_task: asyncio.Task[None] | None = None
        self._streams: set[NotificationStream] = set()
        self._notification_listeners = Listeners(self._spawn)
        self._tools_listeners = Listeners(self._spawn)
        self._desktop_listeners = Listeners(self._spawn)
        self._state_listeners = Listeners(self._spawn)
        self._life = Lifecycle(
            name, reconnect=reconnect, listeners=self._state_listeners,
            why_not=self._why_not_connected,
        )  # fmt: skip
        self._files = ComputerFiles(self._ask, name, blob_chunk_bytes, blob_max_in_flight)
        self._skills = SkillTracker(self._files.fetch_skills, self._spawn)
        self._connect_error: object = None
        self._close_code: int | None = None
        self._last_error: BaseException | None = None
        self._cut_reason: str | None = None
        self._last_cut: str | None = None
        # One per agent, never logged: see _session/_rejoin.py.
        self._reclaim = new_reclaim_secret()
        self._rejoin_budget = rejoin_budget
        self._held = None
        self._reconnecting_reason: str | None = None

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
        return self._office

    @property
    def url(self) -> str:
        """The URL actually connected to (with ``a2c_version``)."""
        return self._url

    @property
    def protocol(self) -> str:
        """The protocol version this agent announces (and whose shapes it speaks)."""
        return LINE_VERSIONS[self._channel.line]

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

    @property
    def last_cut(self) -> str | None:
        """Why the Server last cut this agent's connection, in its own words (e.g.
        ``"token expired"``), or None if the last drop came unannounced.

        Set when the Server announces the cut and again when the connection drops, so
        a state listener seeing ``RECONNECTING`` can say why at once.
        """
        return self._last_cut

    # ------------------------------------------------------------ skills and blobs

    @property
    def skills(self) -> Mapping[str, tuple[A2CSkillRef, ...]]:
        """Computer name → its last fetched skills; refreshed on ``notify:update_skills``."""
        return self._skills.view()

    async def get_skills(self, computer: str) -> list[A2CSkillRef]:
        """The skills ``computer`` offers now, in its discovery order (also cached)."""
        return await self._skills.fetch(computer)

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

    # ------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> AsyncAgent:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
