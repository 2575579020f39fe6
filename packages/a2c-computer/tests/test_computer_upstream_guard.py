"""Guards for every upstream name the Computer's fence (``a2c_computer._upstream``) touches.

A minor release of ``mcp`` may rename or reshape a private name without notice; these tests
fail first, naming what would break in the Computer, instead of an OAuth server or a cancel
going quietly wrong in the field. ``tools/check_latest.sh`` runs them against the newest
releases. All in-process and fast: no network, no subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
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
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from pydantic import AnyHttpUrl

import a2c_computer
from a2c_computer._upstream import (
    AuthFlow,
    HookedOAuthProvider,
    request_id_of,
    streamable_http_streams,
)
from a2c_testkit.mcp_servers import plain

URL = "http://127.0.0.1:9/mcp"
TOKEN_URL = "http://127.0.0.1:9/sign-in/token"

# --------------------------------------------------------------- ClientSession._request_id


def test_a_session_has_a_request_id_counter() -> None:
    send, receive = anyio.create_memory_object_stream[Any](1)
    session = ClientSession(receive, send)
    assert isinstance(getattr(session, "_request_id", None), int), (
        "ClientSession._request_id is gone: the Computer cannot tell an MCP server which "
        "request to cancel (notifications/cancelled) nor match an SSE refusal to its call"
    )
    assert request_id_of(session) == 0
    send.close()
    receive.close()


class _Sent:
    """The client's write stream, noting the id of each request written."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.ids: list[Any] = []

    async def send(self, item: SessionMessage) -> None:
        root = item.message.root
        if isinstance(root, types.JSONRPCRequest):
            self.ids.append(root.id)
        await self._inner.send(item)

    async def __aenter__(self) -> _Sent:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def test_request_id_is_the_id_of_the_next_request_on_a_real_session() -> None:
    server, options = plain.build_server()
    async with (
        create_client_server_memory_streams() as (client, served),
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(lambda: server.run(served[0], served[1], options))
        sent = _Sent(client[1])
        async with ClientSession(client[0], sent) as session:  # type: ignore[arg-type]
            with anyio.fail_after(30):
                await session.initialize()
                calls: list[tuple[types.ClientRequest, type[Any]]] = [
                    (types.ClientRequest(types.PingRequest()), types.EmptyResult),
                    (types.ClientRequest(types.ListToolsRequest()), types.ListToolsResult),
                    (
                        types.ClientRequest(
                            types.CallToolRequest(
                                params=types.CallToolRequestParams(
                                    name="echo", arguments={"text": "hi"}
                                )
                            )
                        ),
                        types.CallToolResult,
                    ),
                ]
                for request, result_type in calls:
                    expected = request_id_of(session)
                    result = asyncio.ensure_future(session.send_request(request, result_type))
                    await asyncio.sleep(0)  # the request's first step, up to its first wait
                    assert request_id_of(session) == expected + 1, (
                        "send_request no longer takes its id on entry: the id the Computer "
                        "noted may belong to another request, so a cancel or refusal would "
                        "hit the wrong call"
                    )
                    await result
                    assert sent.ids[-1] == expected, (
                        "the request went out under another id than ClientSession."
                        "_request_id said: the Computer would cancel the wrong MCP request"
                    )
        tasks.cancel_scope.cancel()


# ---------------------------------------------------------- mcp.client.streamable_http


def test_the_streamable_http_entry_point_takes_what_the_fence_passes() -> None:
    modern = getattr(streamable_http, "streamable_http_client", None)
    if modern is not None:
        params = inspect.signature(modern).parameters
        missing = {"url", "http_client", "terminate_on_close"} - set(params)
        assert not missing, (
            f"streamable_http_client lost {sorted(missing)}: the Computer cannot open a "
            "Streamable HTTP MCP server (nor `auth login` sign in to one)"
        )
        return
    legacy = getattr(streamable_http, "streamablehttp_client", None)
    assert legacy is not None, (
        "neither streamable_http_client nor streamablehttp_client exists: no Streamable HTTP "
        "MCP server can be opened"
    )
    params = inspect.signature(legacy).parameters
    wanted = {"url", "headers", "timeout", "sse_read_timeout", "terminate_on_close"}
    missing = (wanted | {"httpx_client_factory", "auth"}) - set(params)
    assert not missing, (
        f"streamablehttp_client lost {sorted(missing)}: the Computer's HTTP refusal transport "
        "or OAuth would not reach a Streamable HTTP MCP server"
    )


async def test_the_streams_open_on_this_mcp() -> None:
    # Nothing listens on port 9: the session fails, but only after the entry point took
    # the client factory and the arguments the fence passes.
    made: list[dict[str, Any]] = []

    def factory(**kwargs: Any) -> httpx.AsyncClient:
        made.append(kwargs)
        return httpx.AsyncClient(**kwargs)

    async with streamable_http_streams(
        URL, client_factory=factory, headers={"x-a": "1"}, timeout=httpx.Timeout(5.0), auth=None
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

    def oauth_flow(self, request: httpx.Request, upstream: AuthFlow) -> AuthFlow:
        self.calls.append("flow")
        return upstream


def _token(expires_in: int) -> OAuthToken:
    return OAuthToken(access_token="a1", refresh_token="r1", expires_in=expires_in)


async def test_httpx_drives_our_flow_and_load_hooks() -> None:
    provider = _Recorder(_Storage(_token(3600)))
    request = httpx.Request("POST", URL)
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
            await flow.asend(httpx.Response(200, request=request))
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
    request = httpx.Request("POST", URL)
    async with contextlib.aclosing(provider.async_auth_flow(request)) as flow:
        refresh = await flow.__anext__()
        assert refresh is not request and str(refresh.url) == TOKEN_URL, (
            "a loaded expired token is not refreshed first at the sign-in's token endpoint "
            "(update_token_expiry / oauth_metadata no longer count): the Computer would send "
            "stale tokens or guess the token endpoint"
        )
        body = {"access_token": "a2", "token_type": "Bearer", "expires_in": 3600} if ok else {}
        nxt = await flow.asend(httpx.Response(status, json=body, request=refresh))
        assert ("refresh", ok) in provider.calls, (
            "_handle_refresh_response is no longer how mcp takes a refresh answer: a refused "
            "refresh would not be reported (4007)"
        )
        assert nxt is request
        assert (nxt.headers.get("Authorization") == "Bearer a2") is ok
        with pytest.raises(StopAsyncIteration):
            await flow.asend(httpx.Response(200, request=request))


# ------------------------------------------------------------------------- the fence


def test_only_the_fence_names_the_upstream_internals() -> None:
    assert a2c_computer.__file__ is not None
    root = Path(a2c_computer.__file__).parent
    names = [*_PRIVATE, "_request_id", "streamable_http_client", "streamablehttp_client"]
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
