"""One configured MCP server and its session: :class:`McpServer`.

Each runs in its own owner task with its own ``AsyncExitStack`` (a failed start closes only
that stack); status is starting / ready / failed (+ last error) / needs_auth / stopped. It
speaks the MCP era :mod:`._era` chooses (``protocol_version`` says which it negotiated),
notices a lost transport (a crashed stdio process) and restarts with backoff, pings an idle
SSE session before its stream's read timeout would end it, hands an OAuth server's transport
the ``httpx2`` auth of :mod:`a2c_computer._oauth`, forwards the MCP server's notifications
(in 2026-07-28 over the :mod:`._listen` stream) and answers its input requests through the
:mod:`._inputs` callbacks, if any. Over the ready session it sends requests: plain-JSON
results, paging, tool calls with progress, the cancellation an abandoned call announces,
and, in 2026-07-28, resource subscriptions on the change stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, Final, TypeAlias

import anyio
import httpx2
from mcp import ClientSession, MCPError, types
from mcp.shared.dispatcher import CallOptions, Dispatcher, ProgressFnT
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from a2c_computer._oauth._provider import ComputerOAuth, make_auth, sign_in_hint
from a2c_computer._oauth._store import TokenStore, default_store
from a2c_computer._observe._logging import forward_mcp_log
from a2c_computer._observe._stderr import stderr_pipe
from a2c_computer._toolcalls._extensions import ProgressFn
from a2c_computer._upstream import send_raw
from a2c_protocol import JsonObject, MCPServerConfig, SseServerConfig, reconnect_delays

from ._era import MODERN, era_of, open_session
from ._failures import McpCallFailure, closed_message, describe_error, failure_of
from ._inputs import INPUT_REQUIRED, NO_INPUT, InputCallbacks, input_kinds
from ._listen import ChangeStream
from ._status import NotificationKind, ServerStatus
from ._streams import CheckedWriter, WatchedReceive
from ._transports import TRANSPORTS, open_stdio

__all__ = ["McpServer"]

logger = logging.getLogger("a2c_computer.mcp")

_MAX_PAGES: Final = 10_000
#: Marks a waiting request whose session ended.
_LOST: Final = -1
#: Request ids the Computer chooses itself (SSE only, to match a refusal to its call):
#: far from the dispatcher's own, which count from 1 for initialize and pings.
_OWN_IDS: Final = 1 << 32


ParamsFn: TypeAlias = Callable[[], Awaitable[Mapping[str, Any]]]
ReadyFn: TypeAlias = Callable[["McpServer"], Awaitable[None]]
DownFn: TypeAlias = Callable[["McpServer"], Awaitable[None]]
NotifyFn: TypeAlias = Callable[["McpServer", NotificationKind, str | None], None]


def _keepalive_interval(config: MCPServerConfig, params: Mapping[str, Any]) -> float | None:
    """SSE only: its stream is torn down after ``sse_read_timeout`` seconds of silence."""
    if not isinstance(config, SseServerConfig):
        return None
    return float(params.get("sse_read_timeout") or 300.0) / 3


class McpServer:
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
                    logger.debug("MCP server %s closed: %s", self.name, describe_error(exc))
                elif self._sign_in_needed() is not None:
                    logger.debug("MCP server %s: %s", self.name, describe_error(exc))
                else:
                    self.last_error = describe_error(exc)
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
            if opener is open_stdio:  # its stderr becomes log records, one per line
                errlog = stack.enter_context(stderr_pipe(self.name))
                opener = functools.partial(open_stdio, errlog=errlog)
            read, write = await stack.enter_async_context(opener(params, self._refused, auth))
            watched = WatchedReceive(read, closed)
            stack.push_async_callback(watched.aclose)
            checked = CheckedWriter(
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
                self.last_error = closed_message(self.config)
        return True

    async def _keep_alive(self, session: ClientSession, interval: float) -> None:
        """Ping so an idle event stream carries traffic before its read timeout hits."""
        while True:
            await anyio.sleep(interval)
            try:
                with anyio.fail_after(interval * 2):
                    await session.send_ping()
            except Exception as exc:  # the session's own loss detection decides, not a ping
                logger.debug(
                    "MCP server %s: keep-alive ping failed: %s", self.name, describe_error(exc)
                )

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

    # -- requests over the ready session ---------------------------------------

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
            raise self._noted(failure_of(exc, self.name)) from exc
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


def _log_level(server: str) -> types.LoggingLevel:
    """The least level an MCP server's log messages are asked for at (2026-07-28)."""
    debug = logging.getLogger(f"a2c_computer.mcp_log.{server}").isEnabledFor(logging.DEBUG)
    return "debug" if debug else "info"


def _restarting(scope: asyncio.Timeout, timeout: float | None, report: ProgressFn) -> ProgressFnT:
    """``report`` that first restarts ``scope``: a tool that reports progress is alive."""

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if timeout is not None and not scope.expired():
            # An expired or exited scope (the call is ending) stays as it is.
            with contextlib.suppress(RuntimeError):
                scope.reschedule(asyncio.get_running_loop().time() + timeout)
        await report(progress, total, message)

    return on_progress
