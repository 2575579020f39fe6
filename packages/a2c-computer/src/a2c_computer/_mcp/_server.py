"""One configured MCP server and its session: :class:`McpServer`.

Each runs in its own owner task with its own ``AsyncExitStack`` (a failed start closes only
that stack); status is starting / ready / failed (+ last error) / needs_auth / stopped. It
speaks the MCP era :mod:`._era` chooses (``protocol_version`` says which it negotiated),
notices a lost transport (a crashed stdio process) and restarts with backoff, pings an idle
SSE session before its stream's read timeout would end it, hands an OAuth server's transport
the ``httpx2`` auth of :mod:`a2c_computer._oauth`, forwards the MCP server's notifications
(in 2026-07-28 over the :mod:`._listen` stream) and answers its input requests through the
:mod:`._inputs` callbacks, if any. Requests over the ready session live in :mod:`._requests`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, TypeAlias

import anyio
import httpx2
from mcp import ClientSession, types
from mcp.shared.dispatcher import Dispatcher
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from a2c_computer._oauth._provider import ComputerOAuth, make_auth, sign_in_hint
from a2c_computer._oauth._store import TokenStore, default_store
from a2c_computer._observe._logging import forward_mcp_log
from a2c_computer._observe._stderr import stderr_pipe
from a2c_protocol import MCPServerConfig, SseServerConfig, reconnect_delays

from ._era import MODERN, era_of, open_session
from ._failures import _closed_message, _describe
from ._inputs import InputCallbacks
from ._listen import ChangeStream
from ._requests import _Requests
from ._status import NotificationKind, ServerStatus
from ._streams import _CheckedWriter, _WatchedReceive
from ._transports import TRANSPORTS, _open_stdio

__all__ = ["McpServer"]

logger = logging.getLogger("a2c_computer.mcp")


ParamsFn: TypeAlias = Callable[[], Awaitable[Mapping[str, Any]]]
ReadyFn: TypeAlias = Callable[["McpServer"], Awaitable[None]]
DownFn: TypeAlias = Callable[["McpServer"], Awaitable[None]]
NotifyFn: TypeAlias = Callable[["McpServer", NotificationKind, str | None], None]


def _keepalive_interval(config: MCPServerConfig, params: Mapping[str, Any]) -> float | None:
    """SSE only: its stream is torn down after ``sse_read_timeout`` seconds of silence."""
    if not isinstance(config, SseServerConfig):
        return None
    return float(params.get("sse_read_timeout") or 300.0) / 3


class McpServer(_Requests):
    """One configured MCP server and its session, restarted with backoff when lost."""

    def __init__(
        self,
        config: MCPServerConfig,
        *,
        params: ParamsFn,
        on_ready: ReadyFn,
        on_down: DownFn,
        on_notification: NotifyFn,
        restart: bool = True,
        start_timeout: float = 30.0,
        token_store: TokenStore | None = None,
        name: str | None = None,
        inputs: InputCallbacks | None = None,
    ) -> None:
        self.config = config
        #: Its key in ``servers`` (the name, or an explicit bundle_id when names repeat).
        self.name = config.name if name is None else name
        self.status = ServerStatus.STARTING
        self.last_error: str | None = None
        self.capabilities: types.ServerCapabilities | None = None
        #: The MCP protocol version the current (or last) session negotiated.
        self.protocol_version: str | None = None
        self.restarts = 0
        self._inputs = inputs or InputCallbacks()
        self._params = params
        self._on_ready = on_ready
        self._on_down = on_down
        self._notify = on_notification
        self._restart = restart
        self._start_timeout = start_timeout
        self._session: ClientSession | None = None
        self._dispatcher: Dispatcher[Any] | None = None
        self._changes: ChangeStream | None = None
        self._own_ids = isinstance(config, SseServerConfig)
        self._next_id = 0
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()  # first attempt finished (ready or failed)
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._side_tasks: set[asyncio.Task[None]] = set()
        # request id → [waiting task, refusal status] for out-of-band (SSE) refusals
        self._waiting: dict[Any, list[Any]] = {}
        self._was_ready = False  # the current session reached READY
        self._token_store = token_store
        self._oauth: ComputerOAuth | None = None
        self._signed_out = asyncio.Event()  # the current session's token was refused

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp-server:{self.name}")

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called (a session ending now ends on purpose)."""
        return self._stop.is_set()

    async def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        task = self._task
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.status = ServerStatus.STOPPED

    async def wait_settled(self, timeout: float | None = None) -> None:
        """Wait until the first start attempt has finished (ready or failed)."""
        await asyncio.wait_for(self._settled.wait(), timeout)

    async def wait_ready(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(self._ready.wait(), timeout)

    @property
    def era(self) -> str | None:
        """``"handshake"`` or ``"modern"``: the era of the current (or last) session."""
        return era_of(self.protocol_version)

    @property
    def listening(self) -> bool:
        """2026-07-28: the session's ``subscriptions/listen`` stream is open."""
        return self._changes is not None and self._changes.open

    @property
    def has_resources(self) -> bool:
        return self.capabilities is not None and self.capabilities.resources is not None

    @property
    def can_subscribe(self) -> bool:
        caps = self.capabilities
        return bool(caps is not None and caps.resources is not None and caps.resources.subscribe)

    async def _run(self) -> None:
        delays = reconnect_delays(initial=0.5, maximum=15.0)
        while not self._stop.is_set():
            if self.status is not ServerStatus.NEEDS_AUTH:
                self.status = ServerStatus.STARTING
            self._was_ready = False
            try:
                await self._session_once()
            except Exception as exc:
                if self._stop.is_set():
                    # Teardown noise of a transport being closed on purpose.
                    logger.debug("MCP server %s closed: %s", self.name, _describe(exc))
                elif self._sign_in_needed() is not None:
                    logger.debug("MCP server %s: %s", self.name, _describe(exc))
                else:
                    self.last_error = _describe(exc)
                    logger.warning("MCP server %s failed: %s", self.name, self.last_error)
            finally:
                self._session = self._dispatcher = self._changes = None
                self._ready.clear()
                self._fail_pending()
            # Also when the session ended with an error (an HTTP server that went away
            # fails the next request): its tools must be withdrawn until it is back.
            was_ready = self._was_ready
            if was_ready:
                with contextlib.suppress(Exception):
                    await self._on_down(self)
            if self._stop.is_set():
                break
            reason = self._sign_in_needed()
            if reason is not None:
                if self.status is not ServerStatus.NEEDS_AUTH:
                    logger.warning("MCP server %s %s", self.name, reason)
                self.status = ServerStatus.NEEDS_AUTH
                self.last_error = reason
            else:
                self.status = ServerStatus.FAILED
            if self.last_error is None:
                self.last_error = "connection to the MCP server was lost"
            self._settled.set()
            if was_ready:
                logger.warning("MCP server %s went away: %s", self.name, self.last_error)
                delays = reconnect_delays(initial=0.5, maximum=15.0)
            if not self._restart:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), next(delays))
            self.restarts += 1
        self.status = ServerStatus.STOPPED
        self._settled.set()

    @property
    def sign_in_lost(self) -> bool:
        """An OAuth server whose sign-in stopped working (its refresh was refused)."""
        return self._oauth is not None and self._oauth.refresh_refused

    def _sign_in_needed(self) -> str | None:
        """Why this OAuth server needs a sign-in, with what to run; None if it does not."""
        oauth = self._oauth
        if oauth is None or oauth.needs_sign_in is None:
            return None
        return f"needs sign-in ({oauth.needs_sign_in}): run `{sign_in_hint(self.name)}`"

    def _auth_for(self, params: Mapping[str, Any]) -> httpx2.Auth | None:
        """A fresh OAuth auth per session: it reads the store again (a new sign-in counts)."""
        settings = getattr(self.config, "auth", None)
        if settings is None:
            self._oauth = None
            return None
        store = self._token_store if self._token_store is not None else default_store()
        self._oauth = make_auth(self.name, str(params["url"]), settings, store)
        return self._oauth

    async def _session_once(self) -> bool:
        """Run one session until it is lost or stopped; True if it became ready."""
        opener = TRANSPORTS[type(self.config)]
        params = await self._params()
        closed = anyio.Event()
        self._signed_out.clear()
        async with AsyncExitStack() as stack:
            auth = self._auth_for(params)
            if opener is _open_stdio:  # its stderr becomes log records, one per line
                errlog = stack.enter_context(stderr_pipe(self.name))
                opener = functools.partial(_open_stdio, errlog=errlog)
            read, write = await stack.enter_async_context(opener(params, self._refused, auth))
            watched = _WatchedReceive(read, closed)
            stack.push_async_callback(watched.aclose)
            checked = _CheckedWriter(
                write,
                self.name,
                params.get("encoding") or "utf-8",
                params.get("encoding_error_handler") or "strict",
            )
            dispatcher = JSONRPCDispatcher(watched, checked)
            inputs = self._inputs
            session = await stack.enter_async_context(
                ClientSession(
                    message_handler=self._on_message,
                    elicitation_callback=inputs.elicitation,
                    sampling_callback=inputs.sampling,
                    list_roots_callback=inputs.list_roots,
                    sampling_capabilities=types.SamplingCapability(
                        tools=types.SamplingToolsCapability() if inputs.sampling_tools else None
                    ),
                    # 2026-07-28 delivers log messages only to requests that ask for them.
                    log_level=_log_level(self.name),
                    dispatcher=dispatcher,
                )
            )
            with anyio.fail_after(self._start_timeout):
                await open_session(session, getattr(self.config, "mcp_era", None), self.name)
            self.capabilities = session.server_capabilities
            self.protocol_version = session.protocol_version
            self._session, self._dispatcher = session, dispatcher
            if self.era == MODERN:
                self._changes = ChangeStream(
                    session, self.name, self.capabilities, self._lists_may_have_changed
                )
            self.status = ServerStatus.READY
            self._was_ready = True
            self.last_error = None
            logger.info("MCP server %s ready (MCP %s)", self.name, self.protocol_version)
            try:
                await self._on_ready(self)
            except Exception as exc:
                logger.warning("MCP server %s: listing after start failed: %s", self.name, exc)
            self._ready.set()
            self._settled.set()
            stop_wait = asyncio.ensure_future(self._stop.wait())
            try:
                async with anyio.create_task_group() as waiters:

                    async def on_closed() -> None:
                        await closed.wait()
                        waiters.cancel_scope.cancel()

                    async def on_stop() -> None:
                        await stop_wait
                        waiters.cancel_scope.cancel()

                    async def on_signed_out() -> None:
                        await self._signed_out.wait()
                        waiters.cancel_scope.cancel()

                    waiters.start_soon(on_closed)
                    waiters.start_soon(on_stop)
                    waiters.start_soon(on_signed_out)
                    interval = _keepalive_interval(self.config, params)
                    if interval is not None:
                        waiters.start_soon(self._keep_alive, session, interval)
                    if self._changes is not None:
                        waiters.start_soon(self._changes.run)
            finally:
                stop_wait.cancel()
            self._session = None
            if closed.is_set() and not self._stop.is_set():
                self.last_error = _closed_message(self.config)
        return True

    async def _keep_alive(self, session: ClientSession, interval: float) -> None:
        """Ping so an idle event stream carries traffic before its read timeout hits."""
        while True:
            await anyio.sleep(interval)
            try:
                with anyio.fail_after(interval * 2):
                    await session.send_ping()
            except Exception as exc:  # the session's own loss detection decides, not a ping
                logger.debug("MCP server %s: keep-alive ping failed: %s", self.name, _describe(exc))

    def _lists_may_have_changed(self) -> None:
        """A 2026-07-28 change stream was re-opened: re-read what it would have told."""
        self._notify(self, NotificationKind.TOOLS_CHANGED, None)
        if self.has_resources:
            self._notify(self, NotificationKind.RESOURCES_CHANGED, None)

    async def _on_message(self, message: Any) -> None:
        # mcp runs each delivery as its own task; never await MCP requests here anyway.
        if isinstance(message, types.ToolListChangedNotification):
            self._notify(self, NotificationKind.TOOLS_CHANGED, None)
        elif isinstance(message, types.ResourceListChangedNotification):
            self._notify(self, NotificationKind.RESOURCES_CHANGED, None)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._notify(self, NotificationKind.RESOURCE_UPDATED, str(message.params.uri))
        elif isinstance(message, types.LoggingMessageNotification):
            params = message.params
            forward_mcp_log(self.name, params.level, params.data, params.logger)


def _log_level(server: str) -> types.LoggingLevel:
    """The least level an MCP server's log messages are asked for at (2026-07-28)."""
    debug = logging.getLogger(f"a2c_computer.mcp_log.{server}").isEnabledFor(logging.DEBUG)
    return "debug" if debug else "info"
