"""Guards for every upstream name the Computer's fence (``a2c_computer._upstream``) touches.

A minor release of ``mcp`` may rename or reshape a private name without notice; these tests
fail first, naming what would break in the Computer, instead of an OAuth server or a cancel
going quietly wrong in the field. ``tools/check_latest.sh`` runs them against the newest
releases. All in-process and fast: no network, no subprocess.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client import streamable_http
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from mcp.types.version import LATEST_HANDSHAKE_VERSION
from pydantic import AnyHttpUrl

import a2c_computer
from a2c_computer._upstream import (
    AuthFlow,
    HookedOAuthProvider,
    send_raw,
    streamable_http_streams,
)
from a2c_computer.examples import desk_server
from a2c_testkit.mcp_servers import plain

URL = "http://127.0.0.1:9/mcp"
TOKEN_URL = "http://127.0.0.1:9/sign-in/token"

# ------------------------------------------------------------------ ClientSession._stamp


def test_a_session_stamps_its_requests() -> None:
    send, receive = anyio.create_memory_object_stream[Any](1)
    session = ClientSession(receive, send)
    stamp = getattr(session, "_stamp", None)
    assert callable(stamp), (
        "ClientSession._stamp is gone: the Computer cannot send its requests as the session "
        "would (the era's MCP-Protocol-Version header, the 2026-07-28 _meta envelope)"
    )
    assert list(inspect.signature(stamp).parameters) == ["data", "opts"], (
        "ClientSession._stamp no longer takes (data, opts)"
    )
    send.close()
    receive.close()


class _Sent:
    """The client's write stream, noting each message written and its metadata."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.messages: list[SessionMessage] = []

    async def send(self, item: SessionMessage) -> None:
        self.messages.append(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Sent:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def requests(self, method: str) -> list[Any]:
        return [
            m.message
            for m in self.messages
            if isinstance(m.message, types.JSONRPCRequest) and m.message.method == method
        ]


@contextlib.asynccontextmanager
async def _session_with(
    server: Any, options: Any
) -> AsyncIterator[tuple[ClientSession, JSONRPCDispatcher[Any], _Sent, anyio.abc.TaskGroup]]:
    """A client session over memory streams to ``server``, on a dispatcher of our own."""
    async with (
        create_client_server_memory_streams() as (client, served),
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(lambda: server.run(served[0], served[1], options))
        sent = _Sent(client[1])
        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(client[0], sent)  # type: ignore[arg-type]
        async with ClientSession(dispatcher=dispatcher) as session:
            yield session, dispatcher, sent, tasks
        tasks.cancel_scope.cancel()


async def test_send_raw_goes_out_as_the_session_sends_in_each_era() -> None:
    server, options = plain.build_server()
    for era in ("handshake", "modern"):
        async with _session_with(server, options) as (session, dispatcher, sent, _):
            with anyio.fail_after(30):
                if era == "handshake":
                    await session.initialize()
                else:
                    await session.discover()
                params = {"name": "echo", "arguments": {"text": "hi"}}
                result = await send_raw(
                    session, dispatcher, "tools/call", dict(params), {"request_id": 77}
                )
        assert isinstance(result, dict) and result["content"][0]["text"] == "plain:echo:hi", (
            f"send_raw no longer returns the plain JSON result ({era} era)"
        )
        (call,) = sent.requests("tools/call")
        assert call.id == 77, (
            "CallOptions['request_id'] no longer names the request's id: an SSE refusal "
            "could not be matched to its call"
        )
        meta = (call.params or {}).get("_meta") or {}
        if era == "modern":
            assert meta.get("io.modelcontextprotocol/protocolVersion") == "2026-07-28", (
                "send_raw's request lacks the 2026-07-28 _meta envelope (ClientSession._stamp "
                "changed): a modern MCP server refuses every request of the Computer"
            )
        else:
            assert "io.modelcontextprotocol/protocolVersion" not in meta
            assert session.protocol_version == LATEST_HANDSHAKE_VERSION


async def test_an_abandoned_request_is_cancelled_by_the_dispatcher() -> None:
    # The Computer no longer sends notifications/cancelled itself: it relies on this.
    server, options = desk_server.build(desk_server.Desk())
    async with _session_with(server, options) as (session, dispatcher, sent, tasks):
        with anyio.fail_after(30):
            await session.initialize()
        with anyio.CancelScope() as call:

            async def abandon_once_written() -> None:
                while not sent.requests("tools/call"):
                    await anyio.sleep(0.01)
                call.cancel()

            tasks.start_soon(abandon_once_written)
            params = {"name": "wait", "arguments": {"seconds": 60}}
            await send_raw(session, dispatcher, "tools/call", params, {"request_id": 5})
        with anyio.fail_after(30):
            while not [
                m.message
                for m in sent.messages
                if isinstance(m.message, types.JSONRPCNotification)
                and m.message.method == "notifications/cancelled"
                and (m.message.params or {}).get("requestId") == 5
            ]:
                await anyio.sleep(0.01)


# ---------------------------------------------------------- mcp.client.streamable_http


def test_the_streamable_http_entry_point_takes_what_the_fence_passes() -> None:
    entry = getattr(streamable_http, "streamable_http_client", None)
    assert entry is not None, "streamable_http_client is gone: no Streamable HTTP server opens"
    params = inspect.signature(entry).parameters
    missing = {"url", "http_client", "terminate_on_close"} - set(params)
    assert not missing, (
        f"streamable_http_client lost {sorted(missing)}: the Computer cannot open a "
        "Streamable HTTP MCP server (nor `auth login` sign in to one)"
    )


async def test_the_streams_open_on_this_mcp() -> None:
    # Nothing listens on port 9: the session fails, but only after the entry point took
    # the client the fence made.
    made: list[dict[str, Any]] = []

    def factory(**kwargs: Any) -> httpx2.AsyncClient:
        made.append(kwargs)
        return httpx2.AsyncClient(**kwargs)

    async with streamable_http_streams(
        URL, client_factory=factory, headers={"x-a": "1"}, timeout=httpx2.Timeout(5.0), auth=None
    ) as (read, write):
        assert hasattr(read, "receive") and hasattr(write, "send")
        await read.aclose()
        await write.aclose()
    assert made and made[0]["headers"] == {"x-a": "1"}, (
        "the Streamable HTTP entry point no longer uses the client the Computer makes: its "
        "HTTP refusal transport and OAuth would be skipped"
    )


# ------------------------------------------------------------------- OAuthClientProvider

#: name → (parameters after self, kind) of each private method the fence overrides or calls.
_PRIVATE = {
    "_auth_flow": (["request"], "asyncgen"),
    "_initialize": ([], "coroutine"),
    "_handle_refresh_response": (["response"], "coroutine"),
    "_refresh_token": ([], "coroutine"),
    "_add_auth_header": (["request"], "function"),
}

_BREAKS = {
    "_auth_flow": "refresh-on-401 and needs_auth (no browser in a running Computer)",
    "_initialize": "tokens loaded from the store keep their expiry and the sign-in's token "
    "endpoint",
    "_handle_refresh_response": "a refused refresh is told apart (4007, not 4006)",
    "_refresh_token": "the refresh and retry after a 401",
    "_add_auth_header": "the retry after a refresh carries the new access token",
}


@pytest.mark.parametrize("name", sorted(_PRIVATE))
def test_the_private_provider_methods_are_there(name: str) -> None:
    method = getattr(OAuthClientProvider, name, None)
    assert method is not None, f"OAuthClientProvider.{name} is gone: breaks {_BREAKS[name]}"
    params, kind = _PRIVATE[name]
    got = [p for p in inspect.signature(method).parameters if p != "self"]
    assert got == params, (
        f"OAuthClientProvider.{name} takes {got}, not {params}: breaks {_BREAKS[name]}"
    )
    is_kind = {
        "asyncgen": inspect.isasyncgenfunction,
        "coroutine": inspect.iscoroutinefunction,
        "function": lambda f: (
            not inspect.iscoroutinefunction(f) and not inspect.isasyncgenfunction(f)
        ),
    }[kind]
    assert is_kind(method), (
        f"OAuthClientProvider.{name} is no longer a {kind}: breaks " + (_BREAKS[name])
    )


def test_the_context_fields_are_there() -> None:
    provider = OAuthClientProvider(URL, _metadata(), _Storage(None))
    context = getattr(provider, "context", None)
    assert context is not None, "OAuthClientProvider.context is gone: the Computer's OAuth breaks"
    for field in (
        "storage",
        "current_tokens",
        "oauth_metadata",
        "protected_resource_metadata",
        "auth_server_url",
        "can_refresh_token",
        "update_token_expiry",
    ):
        assert hasattr(context, field), (
            f"OAuthContext.{field} is gone: the Computer cannot seed the sign-in's metadata, "
            "keep a loaded token's expiry or decide on a refresh"
        )


def test_no_hook_of_ours_shadows_an_upstream_name() -> None:
    ours = {n for n in vars(HookedOAuthProvider) if not n.startswith("_")}
    assert "oauth_flow" in ours
    clash = sorted(n for n in ours if hasattr(OAuthClientProvider, n))
    assert not clash, (
        f"OAuthClientProvider now has {clash}: the fence's names would replace mcp's own "
        "methods of the same name; rename ours"
    )


class _Storage(TokenStorage):
    def __init__(self, tokens: OAuthToken | None) -> None:
        self.tokens = tokens
        self.client = OAuthClientInformationFull(
            client_id="c1", redirect_uris=[AnyHttpUrl("http://127.0.0.1/callback")]
        )

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _metadata() -> OAuthClientMetadata:
    return OAuthClientMetadata(redirect_uris=[AnyHttpUrl("http://127.0.0.1/callback")])


class _Recorder(HookedOAuthProvider):
    """Notes each hook call; on load, does what the Computer's provider does."""

    def __init__(self, storage: _Storage, seed: OAuthMetadata | None = None) -> None:
        super().__init__(URL, _metadata(), storage)
        self.calls: list[Any] = []
        self._seed = seed

    async def on_loaded(self) -> None:
        self.calls.append("loaded")
        self.seed_discovery(self._seed, None)
        self.keep_token_expiry()

    def on_refresh_answer(self, ok: bool) -> None:
        self.calls.append(("refresh", ok))

    def oauth_flow(self, request: httpx2.Request, upstream: AuthFlow) -> AuthFlow:
        self.calls.append("flow")
        return upstream


def _token(expires_in: int) -> OAuthToken:
    return OAuthToken(access_token="a1", refresh_token="r1", expires_in=expires_in)


async def test_httpx_drives_our_flow_and_load_hooks() -> None:
    provider = _Recorder(_Storage(_token(3600)))
    request = httpx2.Request("POST", URL)
    async with contextlib.aclosing(provider.async_auth_flow(request)) as flow:
        sent = await flow.__anext__()
        assert provider.calls == ["flow", "loaded"], (
            "async_auth_flow no longer runs _initialize / _auth_flow: the Computer's "
            "refresh-on-401, needs_auth and loaded-token expiry are silently off"
        )
        assert sent is request and sent.headers.get("Authorization") == "Bearer a1", (
            "the stored access token is not put on the request (_add_auth_header)"
        )
        with pytest.raises(StopAsyncIteration):
            await flow.asend(httpx2.Response(200, request=request))
    assert provider.held_tokens is not None and provider.can_refresh()
    assert provider.discovered() == (None, None)


@pytest.mark.parametrize(("status", "ok"), [(200, True), (400, False)])
async def test_a_loaded_expired_token_is_refreshed_first_at_the_seeded_endpoint(
    status: int, ok: bool
) -> None:
    seed = OAuthMetadata(
        issuer=AnyHttpUrl("http://127.0.0.1:9/sign-in"),
        authorization_endpoint=AnyHttpUrl("http://127.0.0.1:9/sign-in/authorize"),
        token_endpoint=AnyHttpUrl(TOKEN_URL),
    )
    provider = _Recorder(_Storage(_token(-60)), seed=seed)  # expired a minute ago
    request = httpx2.Request("POST", URL)
    async with contextlib.aclosing(provider.async_auth_flow(request)) as flow:
        refresh = await flow.__anext__()
        assert refresh is not request and str(refresh.url) == TOKEN_URL, (
            "a loaded expired token is not refreshed first at the sign-in's token endpoint "
            "(update_token_expiry / oauth_metadata no longer count): the Computer would send "
            "stale tokens or guess the token endpoint"
        )
        body = {"access_token": "a2", "token_type": "Bearer", "expires_in": 3600} if ok else {}
        nxt = await flow.asend(httpx2.Response(status, json=body, request=refresh))
        assert ("refresh", ok) in provider.calls, (
            "_handle_refresh_response is no longer how mcp takes a refresh answer: a refused "
            "refresh would not be reported (4007)"
        )
        assert nxt is request
        assert (nxt.headers.get("Authorization") == "Bearer a2") is ok
        with pytest.raises(StopAsyncIteration):
            await flow.asend(httpx2.Response(200, request=request))


# ------------------------------------------------------------------------- the fence


def test_only_the_fence_names_the_upstream_internals() -> None:
    assert a2c_computer.__file__ is not None
    root = Path(a2c_computer.__file__).parent
    names = [*_PRIVATE, "_stamp", "streamable_http_client"]
    either = "|".join(map(re.escape, names))
    # a use (``x._name``, ``context.``), an override (``def _name(self``) or the entry points
    pattern = re.compile(
        rf"\.context\.|\.({either})\b|def ({either})\(self|streamable_?http_client"
    )
    reaches = [
        f"{path.relative_to(root)}:{number}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "_upstream.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert reaches == [], f"upstream internals reached outside _upstream.py: {reaches}"
