"""OAuth MCP servers: a real authorization server and resource server on loopback.

The authorization server is ``mcp``'s own auth routes over an in-memory provider (discovery,
dynamic registration, PKCE, refresh, revocation); the MCP server is FastMCP with a token
verifier and protected-resource metadata, behind a small middleware that asks for the
``admin`` scope for one tool (a 403 ``insufficient_scope`` step-up). The browser step is
``httpx`` following the authorization redirect to the sign-in's loopback listener.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyUrl

from a2c_computer import Computer
from a2c_computer._cli import main
from a2c_computer._config import load_config
from a2c_computer._oauth._login import sign_in
from a2c_computer._oauth._store import FileTokenStore
from a2c_testkit.oauth import (
    MemoryAS,
    Watch,
    authorization_app,
    free_loopback_port,
    oauth_mcp_app,
    serve_app,
)


class Rig:
    def __init__(self, tmp: Path, transport: str = "streamable") -> None:
        self.transport = transport
        self.auth = MemoryAS()
        self.as_port, self.rs_port, self.other_port = (
            free_loopback_port(),
            free_loopback_port(),
            free_loopback_port(),
        )
        self.as_url = f"http://127.0.0.1:{self.as_port}"
        self.rs = Watch(
            oauth_mcp_app("oauthy", self.auth, self.rs_port, self.as_url, transport), self.auth
        )
        self.other = Watch(oauth_mcp_app("plain", None, self.other_port, self.as_url), None)
        self.store = FileTokenStore(tmp / "state" / "oauth-tokens.json")
        self.browsed: list[str] = []
        self.config_path = tmp / "computer.json"
        self.config_path.write_text(json.dumps(self.config()))

    def config(self) -> dict[str, Any]:
        return {
            "servers": {
                "oauthy": {
                    "type": self.transport,
                    "name": "oauthy",
                    "tool_prefix": "o_",
                    "default_tool_meta": {"auto_apply": True},
                    "server_parameters": (
                        {"url": f"http://127.0.0.1:{self.rs_port}/sse", "timeout": 10}
                        if self.transport == "sse"
                        else {
                            "url": f"http://127.0.0.1:{self.rs_port}/mcp",
                            "timeout": "PT10S",
                        }
                    ),
                    "auth": {"type": "oauth", "scopes": ["mcp"]},
                },
                "plain": {
                    "type": "streamable",
                    "name": "plain",
                    "tool_prefix": "p_",
                    "default_tool_meta": {"auto_apply": True},
                    "server_parameters": {
                        "url": f"http://127.0.0.1:{self.other_port}/mcp",
                        "timeout": "PT10S",
                    },
                },
            }
        }

    async def browser(self, url: str) -> None:
        """The user's browser: follows the authorization redirect to the loopback listener."""
        self.browsed.append(url)
        async with httpx.AsyncClient(follow_redirects=True, timeout=20) as client:
            answer = await client.get(url)
        assert answer.status_code == 200, answer.text

    async def login(self, *scopes: str) -> int:
        server = load_config(self.config()).servers["oauthy"]
        return await sign_in(
            "oauthy",
            server,  # type: ignore[arg-type]
            self.store,
            open_url=self.browser,
            extra_scopes=list(scopes),
            timeout=30,
        )


@pytest.fixture(params=["streamable"])
async def rig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> AsyncIterator[Rig]:
    monkeypatch.setenv("A2C_COMPUTER_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("A2C_COMPUTER_TOKEN_STORE", "file")
    rig = Rig(tmp_path, request.param)
    as_app = authorization_app(rig.auth, rig.as_url)
    async with (
        serve_app(as_app, rig.as_port),
        serve_app(rig.rs, rig.rs_port),
        serve_app(rig.other, rig.other_port),
    ):
        yield rig


async def _ready(computer: Computer) -> None:
    """The OAuth server is ready *and* its tools are listed (ready comes first)."""
    async with asyncio.timeout(30):
        while computer.server_states()["oauthy"].status != "ready" or "o_whoami" not in {
            t.name for t in computer.tools()
        }:
            await asyncio.sleep(0.05)


async def _state(computer: Computer, name: str, status: str) -> None:
    async with asyncio.timeout(30):
        while computer.server_states()[name].status != status:
            await asyncio.sleep(0.05)


async def test_sign_in_then_calls_refresh_and_no_token_elsewhere(rig: Rig) -> None:
    # Before any sign-in: the server needs one (the 401 at initialize is not a failure).
    async with Computer(rig.config(), name="box") as computer:
        state = computer.server_states()["oauthy"]
        assert state.status == "needs_auth", state
        assert "a2c-computer auth login oauthy" in (state.last_error or "")
        assert "--config <the Computer's config file>" in (state.last_error or "")  # a dict
        assert computer.server_states()["plain"].status == "ready"
        assert sorted(t.name for t in computer.tools()) == ["p_admin_tool", "p_whoami"]
        early = await computer.call_tool("o_whoami", {})
        assert early.is_error and early.meta is not None
        assert early.meta["error_code"] == 4006 and early.meta["mcp_server"] == "oauthy"
        assert early.meta["auth_hint"]["action"] == "user_authorization_required"
        assert "auth login oauthy" in early.meta["auth_hint"]["message"]

    # First sign-in: discovery, dynamic registration, PKCE, the browser step.
    assert await rig.login() == 2
    assert len(rig.browsed) == 1 and "code_challenge=" in rig.browsed[0]
    assert "resource=" in rig.browsed[0]
    assert len(rig.auth.clients) == 1
    path = rig.store.path
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    (record,) = rig.store.entries()["oauthy"].values()
    first_access = record["tokens"]["access_token"]

    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        done = await computer.call_tool("o_whoami", {})
        assert not done.is_error and done.content[0]["text"] == "oauthy: hello", done
        assert rig.rs.authorizations[-1] == f"Bearer {first_access}"
        assert await computer.call_tool("p_whoami", {}) is not None

        # The access token ends at the authorization server: one 401, one refresh, retried.
        before = rig.auth.refreshes
        rig.auth.expire_access_tokens()
        again = await computer.call_tool("o_whoami", {})
        assert not again.is_error, again
        assert rig.auth.refreshes == before + 1
        assert computer.server_states()["oauthy"].status == "ready"

    # Refreshed *before* expiry: a stored token past its end is refreshed without a 401.
    data = json.loads(path.read_text())
    for item in data["oauthy"].values():
        item["expires_at"] = time.time() - 5
    path.write_text(json.dumps(data))
    rig.auth.expire_access_tokens()
    refused_before, refreshes_before = rig.rs.statuses.count(401), rig.auth.refreshes
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error
    assert rig.auth.refreshes == refreshes_before + 1
    assert rig.rs.statuses.count(401) == refused_before

    # No token of the OAuth server ever reached the other server.
    assert rig.other.authorizations == []


async def test_revoked_grant_is_4007_with_hint_and_needs_auth(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await rig.login()
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error
        rig.auth.revoke_everything()
        # errors.md §4.1: a refused refresh (revoked grant) is 4007, "redo OAuth".
        refused = await computer.call_tool("o_whoami", {})
        assert refused.is_error and refused.meta is not None, refused
        assert refused.meta["error_code"] == 4007
        assert "no longer valid" in refused.meta["auth_hint"]["message"]
        assert "auth login oauthy" in refused.meta["auth_hint"]["message"]
        await _state(computer, "oauthy", "needs_auth")
        assert all(not t.name.startswith("o_") for t in computer.tools())
        later = await computer.call_tool("o_admin_tool", {})
        assert later.meta is not None and later.meta["error_code"] == 4007, later
        assert "auth login oauthy" in later.meta["auth_hint"]["message"]

        # A new sign-in elsewhere (auth login) is picked up by the running Computer.
        await rig.login()
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error
    # Sign-ins, calls, a refused refresh, a new sign-in: no token in any log line.
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "oauthy" in logged
    assert all(token not in logged for token in rig.auth.issued)


async def test_insufficient_scope_is_4007_naming_it_then_step_up(rig: Rig) -> None:
    await rig.login()
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        refused = await computer.call_tool("o_admin_tool", {})
        assert refused.is_error and refused.meta is not None, refused
        assert refused.meta["error_code"] == 4007
        hint = refused.meta["auth_hint"]
        assert "'admin'" in hint["message"] and "--scope admin" in hint["message"]
        assert computer.server_states()["oauthy"].status == "ready"
    await rig.login("admin")
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        allowed = await computer.call_tool("o_admin_tool", {})
        assert not allowed.is_error and allowed.content[0]["text"] == "oauthy: admin ok"


async def test_auth_status_and_logout_commands(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    config = str(rig.config_path)
    assert await asyncio.to_thread(main, ["auth", "status", "--config", config]) == 1
    assert "oauthy: not signed in" in capsys.readouterr().out
    # The command a user types: it prints the URL; the test is the browser.
    login = asyncio.ensure_future(
        asyncio.to_thread(main, ["auth", "login", "oauthy", "--config", config, "--no-browser"])
    )
    printed = ""
    async with asyncio.timeout(30):
        while "/authorize?" not in printed:
            await asyncio.sleep(0.05)
            printed += capsys.readouterr().out
    url = next(w for w in printed.split() if "/authorize?" in w)
    await rig.browser(url)
    assert await asyncio.wait_for(login, 30) == 0
    assert "Signed in to oauthy (2 tools)" in capsys.readouterr().out
    assert await asyncio.to_thread(main, ["auth", "status", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "oauthy: signed in" in out and "refresh token: yes" in out
    assert all(token not in out for token in rig.auth.issued)
    assert await asyncio.to_thread(main, ["auth", "logout", "oauthy"]) == 0
    assert "Signed out of oauthy" in capsys.readouterr().out
    assert rig.store.entries() == {}


async def test_reload_to_another_url_needs_a_new_sign_in(rig: Rig) -> None:
    await rig.login()
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error
        # Same server, another URL (another RFC 8707 resource): the token is not sent there.
        moved = rig.config()
        params = moved["servers"]["oauthy"]["server_parameters"]
        params["url"] = params["url"].replace("127.0.0.1", "localhost")
        await computer.update_config(moved)
        await _state(computer, "oauthy", "needs_auth")
        assert not [h for h in rig.rs.hosts if h.startswith("localhost")], rig.rs.hosts
        # Back to the signed-in URL: the stored sign-in is used again.
        await computer.update_config(rig.config())
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error


async def test_check_reports_servers_that_need_a_sign_in(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await asyncio.to_thread(main, ["check", "--config", str(rig.config_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "MCP server oauthy: needs_auth" in out and "auth login oauthy" in out
    # Started from a file: the hint names it (a placeholder only for a config dict).
    assert f"auth login oauthy --config {rig.config_path.resolve()}" in out, out
    assert "<the Computer's config file>" not in out
    assert "MCP server plain: ready" in out


def test_get_config_shows_the_oauth_block_without_secrets() -> None:
    from a2c_computer._config import agent_view
    from a2c_protocol import REDACTED, to_wire

    config = load_config(
        {
            "servers": {
                "t": {
                    "type": "sse",
                    "name": "t",
                    "server_parameters": {"url": "http://127.0.0.1:9/sse"},
                    "auth": {
                        "type": "oauth",
                        "client_id": "public-id",
                        "scopes": ["read"],
                        "client_metadata": {"client_name": "box", "client_secret": "s3cr3t"},
                    },
                }
            }
        }
    )
    view = agent_view(to_wire(config))["servers"]["t"]["auth"]
    assert view == {
        "type": "oauth",
        "client_id": "public-id",
        "scopes": ["read"],
        "client_metadata": {"client_name": "box", "client_secret": REDACTED},
    }


@pytest.mark.parametrize("rig", ["sse"], indirect=True)
async def test_sse_server_refresh_on_401_step_up_and_revoked_grant(rig: Rig) -> None:
    assert await rig.login() == 2
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error
        before = rig.auth.refreshes
        rig.auth.expire_access_tokens()
        again = await computer.call_tool("o_whoami", {})
        assert not again.is_error and again.content[0]["text"] == "oauthy: hello", again
        assert rig.auth.refreshes == before + 1
        step_up = await computer.call_tool("o_admin_tool", {})
        assert step_up.meta is not None and step_up.meta["error_code"] == 4007, step_up
        assert "--scope admin" in step_up.meta["auth_hint"]["message"]
        rig.auth.revoke_everything()
        refused = await computer.call_tool("o_whoami", {})
        assert refused.meta is not None and refused.meta["error_code"] == 4007, refused
        assert "auth login oauthy" in refused.meta["auth_hint"]["message"]


class _MemoryKeyring:
    """A keyring backend holding its passwords in a dict (no OS keyring in the test box)."""

    def __init__(self) -> None:
        self.saved: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, user: str) -> str | None:
        return self.saved.get((service, user))

    def set_password(self, service: str, user: str, password: str) -> None:
        self.saved[(service, user)] = password

    def delete_password(self, service: str, user: str) -> None:
        del self.saved[(service, user)]


def test_keyring_store_keeps_records_per_server_and_resource() -> None:
    from a2c_computer._oauth._store import KeyringTokenStore

    backend = _MemoryKeyring()
    store = KeyringTokenStore(backend)
    store.put("a", "https://a.example/mcp", {"tokens": {"access_token": "t1"}})
    store.put("a", "https://b.example/mcp", {"tokens": {"access_token": "t2"}})
    store.put("b", "https://a.example/mcp", {"tokens": {"access_token": "t3"}})
    assert store.get("a", "https://a.example/mcp") == {"tokens": {"access_token": "t1"}}
    assert store.get("b", "https://b.example/mcp") is None
    assert set(store.entries()) == {"a", "b"}
    assert store.delete("a") == 2
    assert set(store.entries()) == {"b"}
    assert not any(user.startswith("a\n") for _, user in backend.saved)


async def test_pre_registered_client_with_a_fixed_loopback_redirect(rig: Rig) -> None:
    port = free_loopback_port()
    redirect = f"http://127.0.0.1:{port}/done"
    await rig.auth.register_client(
        OAuthClientInformationFull(
            client_id="pre-registered",
            redirect_uris=[AnyUrl(redirect)],
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            scope="mcp admin",
        )
    )
    config = rig.config()
    config["servers"]["oauthy"]["auth"] = {
        "type": "oauth",
        "client_id": "pre-registered",
        "scopes": ["mcp"],
        "client_metadata": {"redirect_uris": [redirect]},
    }
    server = load_config(config).servers["oauthy"]
    assert await sign_in("oauthy", server, rig.store, open_url=rig.browser, timeout=30) == 2  # type: ignore[arg-type]
    assert "client_id=pre-registered" in rig.browsed[-1]
    assert f"redirect_uri={redirect.replace(':', '%3A').replace('/', '%2F')}" in rig.browsed[-1]
    assert set(rig.auth.clients) == {"pre-registered"}  # no dynamic registration
    async with Computer(config, name="box") as computer:
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error


async def test_login_to_a_server_that_asks_for_no_sign_in_says_so(rig: Rig) -> None:
    from a2c_computer._exceptions import ConfigError

    config = rig.config()
    config["servers"]["plain"]["auth"] = {"type": "oauth"}
    server = load_config(config).servers["plain"]
    with pytest.raises(ConfigError, match="did not ask for a sign-in"):
        await sign_in("plain", server, rig.store, open_url=rig.browser, timeout=30)  # type: ignore[arg-type]
    assert rig.store.entries() == {} and rig.browsed == []


async def test_logout_revokes_at_the_authorization_server_and_a_running_computer_stops(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """RFC 7009: ``auth logout`` revokes the refresh and access tokens where the
    authorization server offers revocation, so a running Computer's next call needs a new
    sign-in instead of working on with the tokens it holds."""
    await rig.login()
    (record,) = rig.store.entries()["oauthy"].values()
    access, refresh = record["tokens"]["access_token"], record["tokens"]["refresh_token"]
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        assert not (await computer.call_tool("o_whoami", {})).is_error
        assert await asyncio.to_thread(main, ["auth", "logout", "oauthy"]) == 0
        out = capsys.readouterr().out
        assert "Signed out of oauthy" in out and "Revoked at" in out, out
        assert "refresh token and access token" in out
        assert access not in out and refresh not in out
        assert rig.store.entries() == {}
        assert await rig.auth.load_access_token(access) is None
        assert await rig.auth.load_refresh_token(None, refresh) is None  # type: ignore[arg-type]
        after = await computer.call_tool("o_whoami", {})
        assert after.is_error and after.meta is not None, after
        assert after.meta["error_code"] in (4006, 4007)
        assert "auth login oauthy" in after.meta["auth_hint"]["message"]


def test_logout_without_a_revocation_endpoint_revokes_nothing() -> None:
    from a2c_computer._oauth._revoke import revoke_sign_in

    record = {"tokens": {"access_token": "a", "refresh_token": "r"}, "server_metadata": {}}
    outcome = revoke_sign_in(record)
    assert outcome.endpoint is None and outcome.revoked == () and outcome.problem is None


async def test_logout_without_revocation_leaves_a_running_computer_signed_in(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """What docs/computer.md says when the authorization server offers no
    revocation. The stored sign-in is deleted and the command says so; a running Computer
    keeps calling with the tokens it holds (it does not watch the store) until it
    restarts; a Computer started afterwards needs a new sign-in."""
    await rig.login()
    ((resource, record),) = rig.store.entries()["oauthy"].items()
    assert record["server_metadata"].pop("revocation_endpoint")  # as if never advertised
    rig.store.put("oauthy", resource, record)
    async with Computer(rig.config(), name="box") as computer:
        await _ready(computer)
        assert await asyncio.to_thread(main, ["auth", "logout", "oauthy"]) == 0
        out = capsys.readouterr().out
        assert "Signed out of oauthy" in out and "offers no token revocation" in out, out
        assert "Revoked at" not in out and rig.store.entries() == {}
        still = await computer.call_tool("o_whoami", {})
        assert not still.is_error, still
    async with Computer(rig.config(), name="box") as restarted:
        await _state(restarted, "oauthy", "needs_auth")
