"""Per-client identity: JWT admission, grants on every join, expiry, the audit trail.

A real issuer stand-in (keys made here, JWKS over HTTP on loopback) and real clients on
the wire; every test on one memory node and on two Redis nodes (clients alternate).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import socketio
from cryptography.hazmat.primitives import serialization

from a2c_protocol import NAMESPACE, Event, Role
from a2c_server import (
    AuthRequest,
    Grant,
    Identity,
    JwksKeys,
    JwtAuth,
    ServerSettings,
    SettingsError,
    SharedTokenAuth,
)
from a2c_server._auth import check_office_pattern, connect_problem, join_problem, office_matches
from a2c_server._auth._grants import GrantError
from a2c_testkit.issuer import Issuer, running_issuer
from a2c_testkit.redis_server import RedisServer
from a2c_testkit.server import (
    RawClient,
    RunningServer,
    assert_registry_matches_rooms,
    close_client,
    connect_raw,
    running_nodes,
    running_server,
)

OFFICE_A = "office-a"
OFFICE_B = "office-b"
ALICE = {"role": "agent", "name": "alice-agent", "offices": [OFFICE_A]}
BOB = {"role": "computer", "name": "bob-pc", "offices": [OFFICE_B]}
ALICE_PC = {"role": "computer", "name": "alice-pc", "offices": ["office-*"]}


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer() as it:
        yield it


def provider_for(issuer: Issuer) -> JwtAuth:
    # No leeway: the issuer stand-in shares this machine's clock, and expiry tests wait
    # for the real exp.
    return JwtAuth(
        issuer=issuer.issuer,
        audience=issuer.audience,
        jwks=JwksKeys(issuer.url, min_refresh=0.2),
        leeway=0,
    )


@pytest.fixture(params=["memory", "redis"])
async def server(request: pytest.FixtureRequest, issuer: Issuer) -> AsyncIterator[RunningServer]:
    settings = ServerSettings(tool_call_buffer=0.5)
    auth = provider_for(issuer)
    if request.param == "memory":
        async with running_server(settings, auth=auth) as srv:
            yield srv
        return
    redis: RedisServer = request.getfixturevalue("redis")
    async with running_nodes(redis.url, settings, auth=auth, count=2) as srv:
        yield srv


async def refused_connect(server: RunningServer, role: str, token: str | None) -> dict[str, Any]:
    """Connect, expect a refusal, return its flat ErrorPayload."""
    node = server.next_node()
    sio = socketio.AsyncClient(reconnection=False)
    errors: list[Any] = []
    sio.on("connect_error", errors.append, namespace=NAMESPACE)
    auth: dict[str, Any] = {"role": role}
    if token is not None:
        auth["token"] = token
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            await sio.connect(
                f"{node.url}?a2c_version=0.2.0", namespaces=[NAMESPACE],
                socketio_path=node.socketio_path, auth=auth, transports=["websocket"],
                wait_timeout=30,
            )  # fmt: skip
    finally:
        await close_client(sio)
    assert errors, "no connect_error"
    data: dict[str, Any] = errors[0]["data"]
    return data


@contextlib.asynccontextmanager
async def client(server: RunningServer, role: str, token: str) -> AsyncIterator[RawClient]:
    async with connect_raw(server, role, auth={"token": token}, transports=["websocket"]) as c:
        yield c


async def members(server: RunningServer, office: str) -> list[tuple[str | None, str]]:
    found = await server.app.store.office_members(office)
    return sorted((m.name, m.role.value) for m in found)


async def no_notification(c: RawClient, witness: RawClient, office: str) -> None:
    """Assert ``c`` got no notification: a later join seen by ``c`` proves delivery order."""
    await witness.join("computer", "witness-pc", office)
    event, data = await c.next_notification(timeout=30)
    assert event is Event.NOTIFY_ENTER_OFFICE, (event, data)
    assert isinstance(data, dict) and data["computer"] == "witness-pc", data


# ---------------------------------------------------------------- pure grant rules


def test_identity_grant_patterns_and_matching() -> None:
    assert office_matches("team-*", "team-x") and office_matches("team-*", "team-")
    assert not office_matches("team-*", "tea") and not office_matches("o1", "o10")
    assert office_matches("*", "anything") and office_matches("o1", "o1")
    for bad in ("a*b", "**", "*x", "", "x" * 257):
        with pytest.raises(GrantError):
            check_office_pattern(bad)
    grant = Grant.from_claim({"role": "agent", "name": "n", "offices": ["o1", "team-*"]})
    assert grant == Grant(offices=("o1", "team-*"), role=Role.AGENT, name="n")
    for claim in (
        None, [], {}, {"offices": []}, {"offices": "o1"}, {"offices": ["a*b"]},
        {"offices": ["o"], "role": "admin"}, {"offices": ["o"], "name": ""},
        {"offices": ["o"], "rooms": ["x"]}, {"offices": [1]},
    ):  # fmt: skip
        with pytest.raises(GrantError):
            Grant.from_claim(claim)
    assert connect_problem(grant, Role.AGENT) is None
    assert connect_problem(grant, Role.COMPUTER) is not None
    assert connect_problem(Grant(offices=("o",)), Role.COMPUTER) is None
    assert join_problem(grant, "team-1", Role.AGENT, "n") is None
    assert "'o2'" in (join_problem(grant, "o2", Role.AGENT, "n") or "")
    assert "'m'" in (join_problem(grant, "o1", Role.AGENT, "m") or "")
    assert join_problem(grant, "o1", Role.COMPUTER, "n") is not None
    assert join_problem(None, "o2", Role.AGENT, "m") is None


# ------------------------------------------------------------------------ admission


async def test_identity_valid_tokens_are_admitted_and_bad_ones_refused(
    server: RunningServer, issuer: Issuer
) -> None:
    async with client(server, "agent", issuer.token("alice", ALICE)) as alice:
        assert await alice.join("agent", "alice-agent", OFFICE_A) == (True, None)
    other = Issuer()  # same kid names, other keys: a forgery
    now = int(time.time())
    public_pem = (
        issuer.private_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    cases: dict[str, tuple[str | None, int, str]] = {
        "missing": (None, 401, "auth.token is required"),
        "garbage": ("not-a-jwt", 401, "invalid token"),
        "expired": (issuer.token("alice", ALICE, exp=now - 5), 401, "expired"),
        "not yet": (issuer.token("alice", ALICE, nbf=now + 600), 401, "invalid token"),
        "audience": (issuer.token("alice", ALICE, aud="other-service"), 401, "invalid token"),
        "no aud": (issuer.token("alice", ALICE, aud=None), 401, "invalid token"),
        "issuer": (issuer.token("alice", ALICE, iss="https://evil.test"), 401, "invalid token"),
        "no exp": (issuer.token("alice", ALICE, exp=None), 401, "invalid token"),
        "forged": (other.token("alice", ALICE, key=other.private_key()), 401, "invalid token"),
        "unknown kid": (
            other.token("alice", ALICE, kid="nope", key=other.private_key()),
            401,
            "unknown signing key",
        ),
        "alg none": (
            jwt.encode({"sub": "alice", "a2c": ALICE}, None, algorithm="none"),
            401,
            "algorithm not accepted",
        ),
        "hs256 confusion": (
            _hs256_with_key(public_pem, issuer, ALICE),
            401,
            "algorithm not accepted",
        ),
        "no grant": (issuer.token("alice", None), 401, "no 'a2c' claim"),
        "bad grant": (issuer.token("alice", {"offices": ["a*b"]}), 401, "only allowed at the end"),
        "role contradicts grant": (issuer.token("alice", ALICE), 403, "only connect as agent"),
    }
    for label, (token, code, text) in cases.items():
        role = "computer" if label == "role contradicts grant" else "agent"
        error = await refused_connect(server, role, token)
        assert error["code"] == code and text in error["message"], (label, error)
        assert "eyJ" not in error["message"], label  # a token never comes back
    for node in server.nodes or (server,):
        assert not await node.app.store.office_members(OFFICE_A)


def _hs256_with_key(key: bytes, issuer: Issuer, grant: dict[str, Any]) -> str:
    """An HS256 token keyed with the RSA public key: the classic algorithm confusion."""
    import base64
    import hashlib
    import hmac
    import json

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": issuer.kid}).encode())
    body = b64(json.dumps({"iss": issuer.issuer, "aud": issuer.audience, "sub": "alice",
                           "exp": int(time.time()) + 60, "a2c": grant}).encode())  # fmt: skip
    signature = hmac.new(key, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64(signature)}"


async def test_identity_key_rotation_is_picked_up_without_a_restart(
    server: RunningServer, issuer: Issuer
) -> None:
    async with client(server, "agent", issuer.token("alice", ALICE)):
        pass
    fetched = issuer.jwks_requests
    assert fetched >= 1
    issuer.rotate(drop_old=True)
    # The Server refreshes on the unknown kid (after its short rate limit, set to 0.2 s).
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while True:
        token = issuer.token("alice", ALICE)
        try:
            async with client(server, "agent", token) as alice:
                assert await alice.join("agent", "alice-agent", OFFICE_A) == (True, None)
            break
        except socketio.exceptions.ConnectionError:
            assert loop.time() < deadline, "the new key was never picked up"
            await asyncio.sleep(0.1)
    assert issuer.jwks_requests > fetched


async def test_identity_unknown_kids_cannot_hammer_the_issuer(issuer: Issuer) -> None:
    keys = JwksKeys(issuer.url, min_refresh=3600)
    auth = JwtAuth(issuer=issuer.issuer, audience=issuer.audience, jwks=keys)
    request = AuthRequest(role=Role.AGENT, auth={}, headers={}, peer=None)
    other = Issuer()
    for i in range(50):
        token = other.token("x", ALICE, kid=f"made-up-{i}", key=other.private_key())
        with pytest.raises(Exception, match="unknown signing key"):
            await auth.authenticate(attrs_evolve(request, token))
    assert keys.fetches == 1 and issuer.jwks_requests == 1
    ok = await auth.authenticate(attrs_evolve(request, issuer.token("alice", ALICE)))
    assert ok.subject == "alice" and ok.grant is not None and keys.fetches == 1


def attrs_evolve(request: AuthRequest, token: str) -> AuthRequest:
    return AuthRequest(role=request.role, auth={"role": "agent", "token": token},
                       headers=request.headers, peer=request.peer)  # fmt: skip


# ------------------------------------------------------------------------------ joins


async def test_identity_joins_outside_the_grant_are_refused_without_a_trace(
    server: RunningServer, issuer: Issuer
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        bob = await stack.enter_async_context(client(server, "computer", issuer.token("bob", BOB)))
        assert await bob.join("computer", "bob-pc", OFFICE_B) == (True, None)
        alice = await stack.enter_async_context(
            client(server, "agent", issuer.token("alice", ALICE))
        )
        before = await members(server, OFFICE_B)
        refusals = {
            (OFFICE_B, "alice-agent"): "may not join office 'office-b'",
            (OFFICE_A, "mallory"): "may not use the name 'mallory'",
            # Outside the grant's offices the office is named, whatever the name.
            (OFFICE_B, "bob-pc"): "may not join office 'office-b'",
            ("office-b2", "alice-agent"): "may not join office 'office-b2'",
        }
        for (office, name), text in refusals.items():
            ok, message = await alice.join("agent", name, office)  # type: ignore[misc]
            assert ok is False and message.startswith("Forbidden") and text in message
        # A computer's grant (role) is checked on join too, whatever the name.
        ok, message = await alice.join("computer", "alice-agent", OFFICE_A)  # type: ignore[misc]
        assert ok is False
        assert await members(server, OFFICE_B) == before == [("bob-pc", "computer")]
        assert await members(server, OFFICE_A) == []
        await assert_registry_matches_rooms(server)
        witness = await stack.enter_async_context(
            client(server, "computer", issuer.token("w", {"offices": [OFFICE_B]}))
        )
        await no_notification(bob, witness, OFFICE_B)
        # And the granted join still works afterwards.
        assert await alice.join("agent", "alice-agent", OFFICE_A) == (True, None)


async def test_identity_rejoin_after_reconnect_is_judged_again(
    server: RunningServer, issuer: Issuer
) -> None:
    token = issuer.token("alice", ALICE)
    for _ in range(3):
        async with client(server, "agent", token) as alice:
            ok, message = await alice.join("agent", "alice-agent", OFFICE_B)  # type: ignore[misc]
            assert ok is False and "'office-b'" in message
            assert await alice.join("agent", "alice-agent", OFFICE_A) == (True, None)
    assert await members(server, OFFICE_B) == []


async def test_identity_hostile_client_never_reaches_another_office(
    server: RunningServer, issuer: Issuer
) -> None:
    attempts = successes = 0
    reached_bob: list[Any] = []
    async with contextlib.AsyncExitStack() as stack:
        bob = await stack.enter_async_context(client(server, "computer", issuer.token("bob", BOB)))
        for event in ("client:get_tools", "client:tool_call", "client:get_config"):
            bob.sio.on(event, lambda *a: reached_bob.append(a) or {}, namespace=NAMESPACE)
        assert await bob.join("computer", "bob-pc", OFFICE_B) == (True, None)
        token = issuer.token("mallory", ALICE)
        mallory = await stack.enter_async_context(client(server, "agent", token))
        data: dict[str, Any]
        names = ["alice-agent", "bob-pc", "mallory", "admin", "alice-agent ", "ALICE-AGENT"]
        offices = [OFFICE_B, "office-b ", "office-*", "*", "office-a*", "OFFICE-A", "office-a/b"]
        for office in offices:
            for name in names:
                for role in ("agent", "computer"):
                    attempts += 1
                    ok = await mallory.join(role, name, office)
                    successes += ok[0] is True  # type: ignore[index]
        for event in (Event.GET_TOOLS, Event.TOOL_CALL):  # in no office yet: 4103
            for _ in range(10):
                attempts += 1
                data = {"agent": "alice-agent", "computer": "bob-pc", "req_id": f"r{attempts}"}
                if event is Event.TOOL_CALL:
                    data.update(tool_name="shell", params={}, timeout=5)
                answer = await mallory.call(event, data)
                assert isinstance(answer, dict) and answer.get("code") == 4103, answer
        # Now legitimately in A; ask for B's Computer under every name it could claim.
        assert await mallory.join("agent", "alice-agent", OFFICE_A) == (True, None)
        for agent_name in ("alice-agent", "bob-pc", "mallory"):
            for event in (Event.GET_TOOLS, Event.GET_CONFIG, Event.TOOL_CALL):
                for _ in range(8):
                    attempts += 1
                    data = {"agent": agent_name, "computer": "bob-pc", "req_id": f"r{attempts}"}
                    if event is Event.TOOL_CALL:
                        data.update(tool_name="shell", params={}, timeout=5)
                    answer = await mallory.call(event, data)
                    assert isinstance(answer, dict) and answer.get("code") in (403, 404), answer
        # Reconnect again and again, trying B first each time.
        for _ in range(30):
            async with client(server, "agent", token) as again:
                for office in (OFFICE_B, "office-bb"):
                    attempts += 1
                    ok = await again.join("agent", "alice-agent", office)
                    successes += ok[0] is True  # type: ignore[index]
        assert attempts >= 200, attempts
        assert successes == 0 and reached_bob == []
        assert await members(server, OFFICE_B) == [("bob-pc", "computer")]


# --------------------------------------------------------------------------- expiry


async def test_identity_session_is_disconnected_when_its_token_expires(
    server: RunningServer, issuer: Issuer
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        pc = await stack.enter_async_context(
            client(server, "computer", issuer.token("alice", ALICE_PC))
        )
        assert await pc.join("computer", "alice-pc", OFFICE_A) == (True, None)
        gone = asyncio.Event()
        short = issuer.token("alice", ALICE, lifetime=3)
        agent = await stack.enter_async_context(client(server, "agent", short))
        agent.sio.on("disconnect", lambda *a: gone.set(), namespace=NAMESPACE)
        assert await agent.join("agent", "alice-agent", OFFICE_A) == (True, None)
        _, data = await pc.next_notification(Event.NOTIFY_LEAVE_OFFICE, timeout=60)
        assert isinstance(data, dict)
        assert (data["office_id"], data["agent"]) == (OFFICE_A, "alice-agent"), data
        await asyncio.wait_for(gone.wait(), 30)
        assert await members(server, OFFICE_A) == [("alice-pc", "computer")]


# --------------------------------------------------------- shared token and the hook


async def test_identity_shared_token_limited_by_allow_offices() -> None:
    auth = SharedTokenAuth("s3cret-s3cret", allow_offices=["team-*"])
    async with (
        running_server(ServerSettings(), auth=auth) as srv,
        client(srv, "agent", "s3cret-s3cret") as c,
    ):
        ok, message = await c.join("agent", "a1", "other")  # type: ignore[misc]
        assert ok is False and "'other'" in message
        assert await c.join("agent", "a1", "team-x") == (True, None)
    async with (  # without --allow-offices: unlimited, as before
        running_server(ServerSettings(auth_token="s3cret-s3cret")) as srv,
        client(srv, "agent", "s3cret-s3cret") as c,
    ):
        assert await c.join("agent", "a1", "other") == (True, None)


class _Hooked:
    """A custom provider: anyone, but office ``vip`` only for subject ``boss``."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, Role, str]] = []

    async def authenticate(self, request: AuthRequest) -> Identity:
        return Identity(subject=str(request.auth.get("token")))

    async def authorize_join(
        self, identity: Identity, office_id: str, role: Role, name: str
    ) -> str | None:
        self.asked.append((identity.subject, office_id, role, name))
        if office_id == "vip" and identity.subject != "boss":
            return f"Forbidden: {identity.subject} may not enter {office_id!r}"
        return None


async def test_identity_custom_provider_authorize_join_hook() -> None:
    hooked = _Hooked()
    async with running_server(ServerSettings(), auth=hooked) as srv:
        async with client(srv, "agent", "intern") as c:
            ok, message = await c.join("agent", "i", "vip")  # type: ignore[misc]
            assert (ok, message) == (False, "Forbidden: intern may not enter 'vip'")
            assert await srv.app.store.office_members("vip") == []
        async with client(srv, "agent", "boss") as c:
            assert await c.join("agent", "b", "vip") == (True, None)
    assert hooked.asked == [("intern", "vip", Role.AGENT, "i"), ("boss", "vip", Role.AGENT, "b")]


# ---------------------------------------------------------------------------- audit


@pytest.mark.parametrize("audit_calls", [None, "-"])
async def test_identity_audit_names_who_did_what_and_never_a_token(
    issuer: Issuer, caplog: pytest.LogCaptureFixture, audit_calls: str | None
) -> None:
    caplog.set_level(logging.INFO)
    token = issuer.token("alice", ALICE)
    secret_args = {"command": "cat /home/alice/.ssh/id_ed25519"}
    settings = ServerSettings(audit_calls=audit_calls)
    async with (
        running_server(settings, auth=provider_for(issuer)) as srv,
        client(srv, "computer", issuer.token("alice-box", ALICE_PC)) as pc,
    ):
        pc.sio.on(
            "client:tool_call",
            lambda data: {"content": [], "isError": False},
            namespace=NAMESPACE,
        )
        assert await pc.join("computer", "alice-pc", OFFICE_A) == (True, None)
        async with client(srv, "agent", token) as alice:
            await alice.join("agent", "alice-agent", OFFICE_B)
            await alice.join("agent", "alice-agent", OFFICE_A)
            call = {"agent": "alice-agent", "tool_name": "shell", "params": secret_args,
                    "timeout": 10}  # fmt: skip
            answer = await alice.call(
                Event.TOOL_CALL, {**call, "computer": "alice-pc", "req_id": "r1"}
            )
            assert answer == {"content": [], "isError": False}
            answer = await alice.call(
                Event.TOOL_CALL, {**call, "computer": "bob-pc", "req_id": "r2"}
            )
            assert isinstance(answer, dict) and answer["code"] == 404
        await refused_connect(srv, "computer", token)
        async with httpx.AsyncClient() as http:
            metrics = (await http.get(f"{srv.url}/metrics")).text
    # Per-call records (a forwarded call) only with audit_calls, on a logger of their own.
    names = ("a2c_server.audit", "a2c_server.audit.calls")
    audit = [r for r in caplog.records if r.name in names]
    fields = [r.a2c for r in audit if r.a2c.get("subject") != "alice-box"]  # type: ignore[attr-defined]
    seen = [(f["event"], f["outcome"], f.get("office"), f.get("computer")) for f in fields]
    per_call = [("route", "ok", OFFICE_A, "alice-pc")] if audit_calls else []
    assert seen == [
        ("admission", "ok", None, None),
        ("join", "refused", OFFICE_B, None),
        ("join", "ok", OFFICE_A, None),
        *per_call,
        ("route", "refused", OFFICE_A, "bob-pc"),
        ("admission", "refused", None, None),
    ]
    assert all(f["subject"] == "alice" for f in fields[: len(seen) - 1])
    calls = [r.a2c for r in audit if r.name == "a2c_server.audit.calls"]  # type: ignore[attr-defined]
    assert len(calls) == len(per_call)
    if audit_calls:
        assert calls[0]["request"] == "client:tool_call" and calls[0]["name"] == "alice-agent"
    # A record, not an alert: the operational log has the one WARNING per refusal.
    assert all(r.levelno == logging.INFO for r in audit)
    for record in caplog.records:
        text = f"{record.getMessage()} {record.__dict__}"
        assert token.split(".")[2] not in text and "id_ed25519" not in text
    assert 'a2c_server_audit_events_total{event="join",outcome="refused"} 1.0' in metrics
    assert 'a2c_server_audit_events_total{event="admission",outcome="ok"} 2.0' in metrics
    routed_ok = 'a2c_server_audit_events_total{event="route",outcome="ok"} 1.0'
    assert (routed_ok in metrics) is (audit_calls is not None)
    assert 'a2c_server_audit_events_total{event="route",outcome="refused"} 1.0' in metrics


# ------------------------------------------------------------------ settings and keys


def test_identity_jwt_settings_are_checked() -> None:
    ok = {"jwt_issuer": "https://i.test", "jwt_audience": "a2c"}
    bad: list[dict[str, Any]] = [
        {"jwt_jwks_url": "https://i.test/jwks"},  # no issuer/audience
        {"jwt_issuer": "https://i.test"},  # no key source
        {**ok, "jwt_jwks_url": "https://i.test/jwks", "jwt_secret": "x" * 32},
        {**ok, "jwt_jwks_url": "http://i.test/jwks"},  # plain http off loopback
        {**ok, "jwt_secret": "x" * 32, "auth_token": "t"},
        {**ok, "jwt_secret": "x" * 32, "allow_offices": ["o1"]},
        {"allow_offices": ["a*b"]},
    ]
    for values in bad:
        with pytest.raises(SettingsError):
            ServerSettings(**values)
    assert ServerSettings(**ok, jwt_jwks_url="http://127.0.0.1:9/jwks").jwt_enabled
    assert not ServerSettings(allow_offices=["team-*"]).jwt_enabled
    with pytest.raises(SettingsError, match="at least 32 bytes"):
        JwtAuth(issuer="i", audience="a", secret="short")
    with pytest.raises(SettingsError, match="exactly one"):
        JwtAuth(issuer="i", audience="a")


def test_identity_jwt_without_the_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from a2c_server._auth import require_jwt_support

    monkeypatch.setitem(sys.modules, "jwt", None)
    with pytest.raises(SettingsError, match=r"a2c-server\[jwt\]"):
        require_jwt_support()


async def test_identity_public_key_file_and_hs256_secret_from_settings(
    issuer: Issuer, tmp_path: Path
) -> None:
    pem = tmp_path / "issuer.pem"
    pem.write_bytes(
        issuer.private_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    claims = {"jwt_issuer": issuer.issuer, "jwt_audience": issuer.audience}
    async with running_server(ServerSettings(jwt_public_key=str(pem), **claims)) as srv:
        async with client(srv, "agent", issuer.token("alice", ALICE)) as alice:
            assert await alice.join("agent", "alice-agent", OFFICE_B) == (
                False,
                "Forbidden: this identity may not join office 'office-b'",
            )
        forged = Issuer().token("alice", ALICE)
        assert (await refused_connect(srv, "agent", forged))["code"] == 401
    secret = "s" * 40
    async with running_server(ServerSettings(jwt_secret=secret, **claims)) as srv:
        signed = issuer.token("alice", ALICE, key=secret, algorithm="HS256")
        async with client(srv, "agent", signed) as alice:
            assert await alice.join("agent", "alice-agent", OFFICE_A) == (True, None)
        rsa_signed = issuer.token("alice", ALICE)  # RS256 where only HS256 is configured
        error = await refused_connect(srv, "agent", rsa_signed)
        assert error["code"] == 401 and "algorithm not accepted" in error["message"]


async def test_identity_es256_keys_from_a_jwks() -> None:
    with running_issuer(algorithm="ES256") as es:
        auth = JwtAuth(issuer=es.issuer, audience=es.audience, jwks_url=es.url)
        request = AuthRequest(
            role=Role.COMPUTER, auth={"token": es.token("pc", BOB)}, headers={}, peer=None
        )
        identity = await auth.authenticate(request)
    assert identity.subject == "pc" and identity.grant == Grant.from_claim(BOB)
    assert identity.expires_at is not None and identity.expires_at > time.time() + 500


class _Expiring:
    """A custom provider whose identities carry an expiry (and a role-limited grant)."""

    def __init__(self, expires_in: float) -> None:
        self.expires_in = expires_in

    async def authenticate(self, request: AuthRequest) -> Identity:
        return Identity(
            subject="svc",
            grant=Grant(offices=("o1",), role=Role.COMPUTER),
            expires_at=time.time() + self.expires_in,
        )


async def test_identity_from_a_custom_provider_is_enforced_too() -> None:
    async with running_server(ServerSettings(), auth=_Expiring(-1)) as srv:
        error = await refused_connect(srv, "computer", None)
        assert error == {"code": 401, "message": "Authentication failed: token expired"}
    async with running_server(ServerSettings(), auth=_Expiring(600)) as srv:
        error = await refused_connect(srv, "agent", None)
        assert error["code"] == 403 and "only connect as computer" in error["message"]
        async with connect_raw(srv, "computer") as pc:
            ok, message = await pc.join("computer", "pc", "o2")  # type: ignore[misc]
            assert ok is False and "'o2'" in message
            assert await pc.join("computer", "pc", "o1") == (True, None)
