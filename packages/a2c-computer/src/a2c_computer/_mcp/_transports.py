"""The transports an MCP session runs over, one per config type (stdio, Streamable HTTP,
SSE), and the HTTP refusal transport under the two HTTP ones.

An HTTP 401/403/5xx answer to a JSON-RPC POST becomes a JSON-RPC error carrying the status
(Streamable HTTP) or is reported out of band (SSE), so one refused call does not tear the
session down and the caller can map it.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Final, TextIO, TypeAlias

import httpx2
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client

from a2c_computer._oauth._provider import STATUS_HEADER
from a2c_computer._upstream import streamable_http_streams
from a2c_protocol import (
    SseServerConfig,
    StdioServerConfig,
    StreamableServerConfig,
    parse_iso8601_duration,
)

__all__ = ["TRANSPORTS", "RefusalSink", "Streams", "TransportFactory", "open_stdio"]

#: JSON-RPC error code used for an HTTP refusal turned into an error response.
_HTTP_REFUSAL: Final = -32001

Streams: TypeAlias = tuple[Any, Any]
#: ``on_refusal(jsonrpc_request_id, http_status, scope)``: an HTTP transport refused a
#: request (``scope``: what a 403 ``insufficient_scope`` asked for, else None).
RefusalSink: TypeAlias = Callable[[Any, int, str | None], None]
TransportFactory: TypeAlias = Callable[
    [Mapping[str, Any], RefusalSink, httpx2.Auth | None], AbstractAsyncContextManager[Streams]
]


# ----------------------------------------------------------------- transports


class _HttpRefusalTransport(httpx2.AsyncBaseTransport):
    """Turns a refused JSON-RPC POST (401/403/5xx) into something the session survives.

    Streamable HTTP answers requests in the POST response, so the refusal becomes a JSON-RPC
    error response carrying the status. SSE answers on the event stream, so the refusal is
    reported to ``on_refusal`` and the POST is acknowledged (202) to keep the writer alive.
    """

    def __init__(
        self, inner: httpx2.AsyncBaseTransport, on_refusal: RefusalSink, *, in_band: bool
    ) -> None:
        self._inner = inner
        self._on_refusal = on_refusal
        self._in_band = in_band

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        status = response.status_code
        if request.method != "POST" or not (status in (401, 403) or status >= 500):
            return response
        try:
            message = json.loads(request.content)
        except (ValueError, httpx2.RequestNotRead):
            return response
        if not isinstance(message, dict) or "method" not in message:
            return response
        if "id" not in message:
            if self._in_band:
                return response
            # A refused notification (mcp 2 sends notifications/cancelled for an abandoned
            # request itself) must not end the SSE writer, and with it the session:
            # nothing waits for it, so it is dropped here.
            await response.aread()
            await response.aclose()
            return httpx2.Response(202, request=request)
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
            return httpx2.Response(
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
        return httpx2.Response(
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


class _OutOfBandClient(httpx2.AsyncClient):
    """Reports the refusal of an SSE POST from the final response of the whole send."""

    def __init__(self, *args: Any, on_refusal: RefusalSink, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_refusal = on_refusal

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        response = await super().send(request, **kwargs)
        refusal = response.extensions.get("a2c_refusal")
        if refusal is not None:
            self._on_refusal(*refusal)
        return response


def _client_factory(on_refusal: RefusalSink, *, in_band: bool) -> Callable[..., httpx2.AsyncClient]:
    def make(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        transport = _HttpRefusalTransport(httpx2.AsyncHTTPTransport(), on_refusal, in_band=in_band)
        if not in_band:
            return _OutOfBandClient(
                headers=headers,
                timeout=timeout if timeout is not None else httpx2.Timeout(30.0, read=300.0),
                auth=auth,
                transport=transport,
                on_refusal=on_refusal,
            )
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout if timeout is not None else httpx2.Timeout(30.0, read=300.0),
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
async def open_stdio(
    params: Mapping[str, Any],
    _: RefusalSink,
    __: httpx2.Auth | None = None,
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
    params: Mapping[str, Any], on_refusal: RefusalSink, auth: httpx2.Auth | None = None
) -> AsyncIterator[Streams]:
    factory = _client_factory(on_refusal, in_band=True)
    timeout = httpx2.Timeout(
        parse_iso8601_duration(params.get("timeout") or "PT30S"),
        read=parse_iso8601_duration(params.get("sse_read_timeout") or "PT5M"),
    )
    terminate = bool(params.get("terminate_on_close", True))
    async with streamable_http_streams(
        str(params["url"]),
        client_factory=factory,
        headers=_headers(params),
        timeout=timeout,
        auth=auth,
        terminate_on_close=terminate,
    ) as streams:
        yield streams


@contextlib.asynccontextmanager
async def _open_sse(
    params: Mapping[str, Any], on_refusal: RefusalSink, auth: httpx2.Auth | None = None
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
    StdioServerConfig: open_stdio,
    StreamableServerConfig: _open_streamable,
    SseServerConfig: _open_sse,
}
