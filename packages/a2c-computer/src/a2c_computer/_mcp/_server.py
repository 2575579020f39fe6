"""The thin adapter around the ``mcp`` client library (the only module importing ``mcp``).

What it does, and nothing more:

* opens a transport chosen from a dict keyed by config type (stdio, Streamable HTTP, SSE);
* runs one MCP server per owner task with its own ``AsyncExitStack``: a failed start closes
  only that stack; status is starting / ready / failed (+ last error) / stopped;
* notices a lost transport (a crashed stdio process) and restarts with backoff;
* pings an idle SSE session before its stream's read timeout would end it;
* speaks MCP with raw JSON results, so that the Computer (not ``mcp``'s typed models) decides
  how lenient to be — e.g. an out-of-range ``annotations.priority`` must not fail a whole
  ``resources/list``;
* turns an HTTP 401/403/5xx answer to a JSON-RPC POST into a JSON-RPC error carrying the
  status, so one refused call does not tear the session down and the caller can map it;
* hands an OAuth server's transport the ``httpx`` auth of :mod:`._oauth` (tokens of that
  server and URL only); a server that needs a sign-in is ``needs_auth``, not ``failed``,
  also when its token is refused mid-session (its tools are withdrawn until it is back);
* sends ``notifications/cancelled`` when a call is abandoned (timeout or cancel);
* forwards an MCP server's log notifications to the Computer's log at their level.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Final, TextIO, TypeAlias

import anyio
import httpx
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client import streamable_http as _streamable_http
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.shared.session import ProgressFnT
from pydantic import BaseModel, ConfigDict

from a2c_computer._auth import redact_text
from a2c_computer._exceptions import ComputerError
from a2c_computer._extensions import ProgressFn
from a2c_computer._logging import SECRETS, forward_mcp_log
from a2c_computer._oauth._provider import STATUS_HEADER, ComputerOAuth, make_auth, sign_in_hint
from a2c_computer._oauth._store import TokenStore, default_store
from a2c_computer._stderr import stderr_pipe
from a2c_protocol import (
    JsonObject,
    MCPServerConfig,
    SseServerConfig,
    StdioServerConfig,
    StreamableServerConfig,
    parse_iso8601_duration,
    reconnect_delays,
)

__all__ = [
    "McpCallFailure",
    "McpServer",
    "NotificationKind",
    "ServerStatus",
]

logger = logging.getLogger("a2c_computer.mcp")

#: JSON-RPC error code used for an HTTP refusal turned into an error response.
_HTTP_REFUSAL: Final = -32001
_MAX_PAGES: Final = 10_000
#: Marks a waiting request whose session ended.
_LOST: Final = -1


class ServerStatus(enum.StrEnum):
    """Lifecycle of one MCP server."""

    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    STOPPED = "stopped"
    DISABLED = "disabled"
    #: An OAuth server without a usable sign-in (``a2c-computer auth login``).
    NEEDS_AUTH = "needs_auth"


class NotificationKind(enum.StrEnum):
    TOOLS_CHANGED = "tools_changed"
    RESOURCES_CHANGED = "resources_changed"
    RESOURCE_UPDATED = "resource_updated"


class McpCallFailure(ComputerError):
    """An MCP request failed; ``http_status`` is set for an HTTP refusal upstream
    (``scope``: what a 403 ``insufficient_scope`` asked for)."""

    def __init__(
        self,
        message: str,
        *,
        http_status: int | None = None,
        connection_lost: bool = False,
        scope: str | None = None,
    ) -> None:
        self.http_status = http_status
        self.connection_lost = connection_lost
        self.scope = scope
        #: An OAuth refresh was refused (errors.md §4.1: 4007, not 4006).
        self.refresh_failed = False
        super().__init__(message)


class _Raw(BaseModel):
    """Any JSON-RPC result, kept as plain JSON."""

    model_config = ConfigDict(extra="allow")


Streams: TypeAlias = tuple[Any, Any]
#: ``on_refusal(jsonrpc_request_id, http_status, scope)``: an HTTP transport refused a
#: request (``scope``: what a 403 ``insufficient_scope`` asked for, else None).
RefusalSink: TypeAlias = Callable[[Any, int, str | None], None]
TransportFactory: TypeAlias = Callable[
    [Mapping[str, Any], RefusalSink, httpx.Auth | None], AbstractAsyncContextManager[Streams]
]


# ----------------------------------------------------------------- transports


class _HttpRefusalTransport(httpx.AsyncBaseTransport):
    """Turns a refused JSON-RPC POST (401/403/5xx) into something the session survives.

    Streamable HTTP answers requests in the POST response, so the refusal becomes a JSON-RPC
    error response carrying the status. SSE answers on the event stream, so the refusal is
    reported to ``on_refusal`` and the POST is acknowledged (202) to keep the writer alive.
    """

    def __init__(
        self, inner: httpx.AsyncBaseTransport, on_refusal: RefusalSink, *, in_band: bool
    ) -> None:
        self._inner = inner
        self._on_refusal = on_refusal
        self._in_band = in_band

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        status = response.status_code
        if request.method != "POST" or not (status in (401, 403) or status >= 500):
            return response
        try:
            message = json.loads(request.content)
        except (ValueError, httpx.RequestNotRead):
            return response
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            return response
        await response.aread()
        await response.aclose()
        # The auth above this transport (OAuth) judges the real status and challenge.
        seen = {STATUS_HEADER: str(status)}
        challenge = response.headers.get("www-authenticate")
        if challenge:
            seen["www-authenticate"] = challenge
        if not self._in_band:
            # Reported by _OutOfBandClient once the auth above is done with the request:
            # a refresh and retry that succeeds is no refusal.
            return httpx.Response(
                202,
                headers=seen,
                request=request,
                extensions={"a2c_refusal": (message["id"], status, _insufficient_scope(challenge))},
            )
        data: dict[str, Any] = {"a2c_http_status": status}
        scope = _insufficient_scope(challenge)
        if scope is not None:
            data["a2c_scope"] = scope
        error = {
            "code": _HTTP_REFUSAL,
            "message": f"upstream answered HTTP {status} to {message['method']}",
            "data": data,
        }
        return httpx.Response(
            200,
            headers={"content-type": "application/json", **seen},
            content=json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode(),
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def _insufficient_scope(challenge: str | None) -> str | None:
    """The ``scope`` of a ``Bearer error="insufficient_scope"`` challenge ("" if unnamed)."""
    if not challenge or "insufficient_scope" not in challenge:
        return None
    found = re.search(r'scope="([^"]*)"', challenge) or re.search(r"scope=([^\s,]+)", challenge)
    return found.group(1) if found else ""


class _OutOfBandClient(httpx.AsyncClient):
    """Reports the refusal of an SSE POST from the final response of the whole send."""

    def __init__(self, *args: Any, on_refusal: RefusalSink, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_refusal = on_refusal

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = await super().send(request, **kwargs)
        refusal = response.extensions.get("a2c_refusal")
        if refusal is not None:
            self._on_refusal(*refusal)
        return response


def _client_factory(on_refusal: RefusalSink, *, in_band: bool) -> Callable[..., httpx.AsyncClient]:
    def make(
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        auth: httpx.Auth | None = None,
    ) -> httpx.AsyncClient:
        transport = _HttpRefusalTransport(httpx.AsyncHTTPTransport(), on_refusal, in_band=in_band)
        if not in_band:
            return _OutOfBandClient(
                headers=headers,
                timeout=timeout if timeout is not None else httpx.Timeout(30.0, read=300.0),
                auth=auth,
                transport=transport,
                on_refusal=on_refusal,
            )
        return httpx.AsyncClient(
            headers=headers,
            timeout=timeout if timeout is not None else httpx.Timeout(30.0, read=300.0),
            auth=auth,
            transport=transport,
        )

    return make


def _headers(params: Mapping[str, Any]) -> dict[str, str] | None:
    raw = params.get("headers")
    if not raw:
        return None
    return {str(k): str(v) for k, v in raw.items()}


@contextlib.asynccontextmanager
async def _open_stdio(
    params: Mapping[str, Any],
    _: RefusalSink,
    __: httpx.Auth | None = None,
    errlog: TextIO = sys.stderr,
) -> AsyncIterator[Streams]:
    env = params.get("env")
    server = StdioServerParameters(
        command=str(params["command"]),
        args=[str(a) for a in params.get("args") or []],
        env={str(k): str(v) for k, v in env.items()} if env else None,
        cwd=params.get("cwd"),
        encoding=params.get("encoding") or "utf-8",
        encoding_error_handler=params.get("encoding_error_handler") or "strict",
    )
    async with stdio_client(server, errlog=errlog) as (read, write):
        yield read, write


@contextlib.asynccontextmanager
async def _open_streamable(
    params: Mapping[str, Any], on_refusal: RefusalSink, auth: httpx.Auth | None = None
) -> AsyncIterator[Streams]:
    factory = _client_factory(on_refusal, in_band=True)
    timeout = httpx.Timeout(
        parse_iso8601_duration(params.get("timeout") or "PT30S"),
        read=parse_iso8601_duration(params.get("sse_read_timeout") or "PT5M"),
    )
    terminate = bool(params.get("terminate_on_close", True))
    # mcp >= 1.24 takes a ready httpx client; older releases only the factory-based function.
    modern = getattr(_streamable_http, "streamable_http_client", None)
    if modern is not None:
        async with (
            factory(headers=_headers(params), timeout=timeout, auth=auth) as client,
            modern(str(params["url"]), http_client=client, terminate_on_close=terminate) as streams,
        ):
            yield streams[0], streams[1]
        return
    async with _streamable_http.streamablehttp_client(
        str(params["url"]),
        headers=_headers(params),
        timeout=timeout.connect or 30.0,
        sse_read_timeout=timeout.read or 300.0,
        terminate_on_close=terminate,
        httpx_client_factory=factory,
        auth=auth,
    ) as streams:
        yield streams[0], streams[1]


@contextlib.asynccontextmanager
async def _open_sse(
    params: Mapping[str, Any], on_refusal: RefusalSink, auth: httpx.Auth | None = None
) -> AsyncIterator[Streams]:
    async with sse_client(
        str(params["url"]),
        headers=_headers(params),
        timeout=float(params.get("timeout") or 5.0),
        sse_read_timeout=float(params.get("sse_read_timeout") or 300.0),
        httpx_client_factory=_client_factory(on_refusal, in_band=False),
        auth=auth,
    ) as (read, write):
        yield read, write


TRANSPORTS: Final[Mapping[type[Any], TransportFactory]] = {
    StdioServerConfig: _open_stdio,
    StreamableServerConfig: _open_streamable,
    SseServerConfig: _open_sse,
}


class _CheckedWriter:
    """The session's write stream, encoding each message before the transport does.

    A transport encodes in its own writer task, where a failure (a lone surrogate in an
    argument) ends the task and with it the session and every call in flight. Encoding
    here first fails only the send of that message, in its caller.
    """

    def __init__(self, inner: Any, server: str, encoding: str, errors: str) -> None:
        self._inner = inner
        self._server = server
        self._encoding = encoding
        self._errors = errors

    async def send(self, item: Any) -> None:
        try:
            text = item.message.model_dump_json(by_alias=True, exclude_none=True)
            text.encode(self._encoding, self._errors)
        except (ValueError, UnicodeError) as exc:  # PydanticSerializationError is a ValueError
            raise McpCallFailure(
                f"MCP server {self._server}: the request cannot be encoded "
                f"({type(exc).__name__}); nothing was sent"
            ) from exc
        await self._inner.send(item)

    async def __aenter__(self) -> _CheckedWriter:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


# --------------------------------------------------------------------- server


ParamsFn: TypeAlias = Callable[[], Awaitable[Mapping[str, Any]]]
ReadyFn: TypeAlias = Callable[["McpServer"], Awaitable[None]]
DownFn: TypeAlias = Callable[["McpServer"], Awaitable[None]]
NotifyFn: TypeAlias = Callable[["McpServer", NotificationKind, str | None], None]


def _keepalive_interval(config: MCPServerConfig, params: Mapping[str, Any]) -> float | None:
    """SSE only: its stream is torn down after ``sse_read_timeout`` seconds of silence."""
    if not isinstance(config, SseServerConfig):
        return None
    return float(params.get("sse_read_timeout") or 300.0) / 3


def _closed_message(config: MCPServerConfig) -> str:
    if isinstance(config, StdioServerConfig):
        return "the MCP server closed the connection (process exited?)"
    return "the MCP server's HTTP stream ended (server restarted or connection dropped)"


def _describe(exc: BaseException) -> str:
    """A one-line, secret-free description (URLs may carry resolved credentials)."""
    return redact_text(SECRETS.redact(_explain(exc)))


def _explain(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_explain(e) for e in exc.exceptions)
    if isinstance(exc, McpError):
        return f"MCP error {exc.error.code}: {exc.error.message}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


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
    ) -> None:
        self.config = config
        self.name = config.name
        self.status = ServerStatus.STARTING
        self.last_error: str | None = None
        self.capabilities: types.ServerCapabilities | None = None
        self.restarts = 0
        self._params = params
        self._on_ready = on_ready
        self._on_down = on_down
        self._notify = on_notification
        self._restart = restart
        self._start_timeout = start_timeout
        self._session: ClientSession | None = None
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
                self._session = None
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

    def _auth_for(self, params: Mapping[str, Any]) -> httpx.Auth | None:
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
            session = await stack.enter_async_context(
                ClientSession(
                    watched,  # type: ignore[arg-type]  # duck-typed receive stream
                    checked,  # type: ignore[arg-type]  # duck-typed send stream
                    message_handler=self._on_message,
                )
            )
            with anyio.fail_after(self._start_timeout):
                init = await session.initialize()
            self.capabilities = init.capabilities
            self._session = session
            self.status = ServerStatus.READY
            self._was_ready = True
            self.last_error = None
            logger.info("MCP server %s ready", self.name)
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

    async def _on_message(self, message: Any) -> None:
        # Runs inside the session's receive loop: never await MCP requests here.
        if not isinstance(message, types.ServerNotification):
            return
        root = message.root
        if isinstance(root, types.ToolListChangedNotification):
            self._notify(self, NotificationKind.TOOLS_CHANGED, None)
        elif isinstance(root, types.ResourceListChangedNotification):
            self._notify(self, NotificationKind.RESOURCES_CHANGED, None)
        elif isinstance(root, types.ResourceUpdatedNotification):
            self._notify(self, NotificationKind.RESOURCE_UPDATED, str(root.params.uri))
        elif isinstance(root, types.LoggingMessageNotification):
            params = root.params
            forward_mcp_log(self.name, params.level, params.data, params.logger)

    # -- requests ------------------------------------------------------------

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
        request_id = session._request_id
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


def _failure(exc: McpError, server: str) -> McpCallFailure:
    data = exc.error.data
    status = data.get("a2c_http_status") if isinstance(data, dict) else None
    if exc.error.code == types.CONNECTION_CLOSED:
        return McpCallFailure(f"MCP server {server}: connection closed", connection_lost=True)
    if isinstance(status, int):
        scope = data.get("a2c_scope") if isinstance(data, dict) else None
        return McpCallFailure(
            f"MCP server {server}: upstream answered HTTP {status}",
            http_status=status,
            scope=scope if isinstance(scope, str) else None,
        )
    return McpCallFailure(f"MCP server {server}: {exc.error.message}")


class _WatchedReceive:
    """The transport's receiving stream, handed to the MCP session as is, that sets
    ``closed`` when it ends.

    The session must learn that the MCP server went away (the stream ended or broke)
    without an extra hop: a relay task between transport and session cost every message
    one more stream hand-off and event-loop turn, a measurable share of a tool call.
    """

    _ENDED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)

    def __init__(self, source: Any, closed: anyio.Event) -> None:
        self._source = source
        self._closed = closed

    async def receive(self) -> Any:
        try:
            return await self._source.receive()
        except self._ENDED:
            self._closed.set()
            raise

    def __aiter__(self) -> _WatchedReceive:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed.set()
        with contextlib.suppress(Exception):
            await self._source.aclose()

    async def __aenter__(self) -> _WatchedReceive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _restarting(scope: asyncio.Timeout, timeout: float | None, report: ProgressFn) -> ProgressFnT:
    """``report`` that first restarts ``scope``: a tool that reports progress is alive."""

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if timeout is not None and not scope.expired():
            # An expired or exited scope (the call is ending) stays as it is.
            with contextlib.suppress(RuntimeError):
                scope.reschedule(asyncio.get_running_loop().time() + timeout)
        await report(progress, total, message)

    return on_progress
