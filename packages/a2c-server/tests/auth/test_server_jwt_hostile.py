"""JWT admission against hostile tokens and hostile issuers.

A real Server under uvicorn, real Socket.IO clients, a JWKS served over HTTP by this
module: a token whose header names an algorithm of another key family is a 401 with one
WARNING and no traceback, and a JWKS that trickles or never ends cannot hold or bloat the
Server.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
import socketio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from a2c_protocol import NAMESPACE
from a2c_server import JwksKeys, JwtAuth, ServerSettings
from a2c_testkit.server import RunningServer, close_client, connect_raw, running_server

ISSUER = "https://issuer.test/realms/hostile"
AUDIENCE = "a2c-server"
GRANT = {"role": "agent", "offices": ["office-a"]}

Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


@contextlib.contextmanager
def serving(handler: Handler) -> Iterator[str]:
    """An HTTP server on loopback answering every GET with ``handler``; yields its URL."""

    class _Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with contextlib.suppress(OSError):
                handler(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="jwks", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks.json"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def json_answer(document: dict[str, Any]) -> Handler:
    body = json.dumps(document).encode()

    def answer(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("content-type", "application/json")
        request.send_header("content-length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    return answer


def unbound_jwk(private: Any, kid: str) -> dict[str, Any]:
    """The public JWK of ``private`` with no ``alg`` member, as some issuers publish."""
    public = private.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        jwk = jwt.algorithms.ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = jwt.algorithms.OKPAlgorithm.to_jwk(public, as_dict=True)
    jwk.pop("alg", None)
    return {**jwk, "kid": kid, "use": "sig"}


def token(private: Any, algorithm: str, kid: str = "k1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 600, "a2c": GRANT}
    return jwt.encode({**body, **claims}, private, algorithm=algorithm, headers={"kid": kid})


async def connect_error(server: RunningServer, auth_token: str) -> dict[str, Any]:
    sio = socketio.AsyncClient(reconnection=False)
    errors: list[Any] = []
    sio.on("connect_error", errors.append, namespace=NAMESPACE)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            await sio.connect(
                f"{server.url}?a2c_version=0.2.0", namespaces=[NAMESPACE],
                socketio_path=server.socketio_path, auth={"role": "agent", "token": auth_token},
                transports=["websocket"], wait_timeout=30,
            )  # fmt: skip
    finally:
        await close_client(sio)
    assert errors, "no connect_error"
    data: dict[str, Any] = errors[0]["data"]
    return data


RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
EC384_KEY = ec.generate_private_key(ec.SECP384R1())
ED_KEY = ed25519.Ed25519PrivateKey.generate()

# (verifying key, forged tokens signed by an attacker's key of another family)
MISMATCHES = {
    "rsa": (RSA_KEY, [token(EC_KEY, "ES256"), token(ED_KEY, "EdDSA"), token(EC384_KEY, "ES384")]),
    "ec": (EC_KEY, [token(RSA_KEY, "RS256"), token(RSA_KEY, "PS256"), token(EC384_KEY, "ES384")]),
    "okp": (ED_KEY, [token(RSA_KEY, "RS256"), token(EC_KEY, "ES256")]),
}
LEGIT = {"rsa": ["RS256", "PS384"], "ec": ["ES256"], "okp": ["EdDSA"]}


def pem(private: Any) -> str:
    return str(
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@contextlib.asynccontextmanager
async def server_with(source: str, family: str) -> Any:
    private = MISMATCHES[family][0]
    if source == "pem":
        auth = JwtAuth(issuer=ISSUER, audience=AUDIENCE, public_key_pem=pem(private))
        async with running_server(ServerSettings(), auth=auth) as srv:
            yield srv
        return
    with serving(json_answer({"keys": [unbound_jwk(private, "k1")]})) as url:
        auth = JwtAuth(issuer=ISSUER, audience=AUDIENCE, jwks_url=url)
        async with running_server(ServerSettings(), auth=auth) as srv:
            yield srv


def assert_one_warning_each(caplog: pytest.LogCaptureFixture, refusals: int) -> None:
    """No ERROR, no traceback, and at most one WARNING per refusal: repeated refusals of one
    cause from one address are folded into one line per interval (docs/operations.md)."""
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    assert not any(r.exc_info for r in caplog.records)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert 0 < len(warnings) <= refusals, [r.getMessage() for r in warnings]
    assert all("authentication failed" in r.getMessage() for r in warnings)


@pytest.mark.parametrize("source", ["pem", "jwks-without-alg"])
@pytest.mark.parametrize("family", ["rsa", "ec", "okp"])
async def test_jwt_algorithm_of_another_key_family_is_a_401_and_one_warning(
    source: str, family: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    async with server_with(source, family) as srv:
        forged = MISMATCHES[family][1]
        for forgery in forged:
            error = await connect_error(srv, forgery)
            assert error["code"] == 401, (jwt.get_unverified_header(forgery), error)
            assert "algorithm not accepted" in error["message"], error
        assert_one_warning_each(caplog, len(forged))
        # The key's own family still works.
        for alg in LEGIT[family]:
            good = token(MISMATCHES[family][0], alg)
            async with connect_raw(srv, "agent", auth={"token": good}) as c:
                assert await c.join("agent", "a", "office-a") == (True, None)


def test_jwt_algorithms_follow_the_key_family() -> None:
    from a2c_server._auth._algorithms import algorithms_for_key

    assert algorithms_for_key(RSA_KEY.public_key()) == (
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
    )  # fmt: skip
    assert algorithms_for_key(EC_KEY.public_key()) == ("ES256",)
    assert algorithms_for_key(EC384_KEY.public_key()) == ("ES384",)
    assert algorithms_for_key(ED_KEY.public_key()) == ("EdDSA",)
    assert algorithms_for_key(ec.generate_private_key(ec.SECP256K1()).public_key()) == ()
    assert algorithms_for_key(b"secret") == ()


# Raise it to 1000 (A2C_FORGED_FLOOD=1000) for the issue's full flood; the default keeps the
# suite quick while still many more than one connect.
FLOOD = int(os.environ.get("A2C_FORGED_FLOOD", "120"))


async def test_jwt_forged_algorithm_flood_leaves_no_traceback_and_no_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    forged = MISMATCHES["rsa"][1]
    async with server_with("jwks-without-alg", "rsa") as srv:
        codes: list[int] = []
        batch = 20
        for start in range(0, FLOOD, batch):
            errors = await asyncio.gather(
                *(connect_error(srv, forged[i % len(forged)]) for i in range(start, start + batch))
            )
            codes.extend(e["code"] for e in errors)
    assert len(codes) >= FLOOD and set(codes) == {401}
    assert_one_warning_each(caplog, len(codes))


def test_jwt_extra_excludes_pyjwt_releases_with_the_issuer_flaw() -> None:
    # PyJWT 2.10.0 matched `iss` as a substring container (CVE-2024-53861).
    import tomllib
    from pathlib import Path

    from packaging.requirements import Requirement
    from packaging.version import Version

    project = Path(__file__).parents[2] / "pyproject.toml"
    extra = tomllib.loads(project.read_text())["project"]["optional-dependencies"]["jwt"]
    (pyjwt,) = (Requirement(r) for r in extra if Requirement(r).name == "pyjwt")
    for version in ("2.8.0", "2.9.0", "2.10.0"):
        assert not pyjwt.specifier.contains(Version(version)), (version, str(pyjwt))
    assert pyjwt.specifier.contains(Version("2.10.1"))


# ------------------------------------------------------------------------- hostile JWKS


class _Sender:
    """Counts what a hostile JWKS handler wrote and notices when the reader hung up."""

    def __init__(self) -> None:
        self.sent = 0
        self.hung_up = threading.Event()
        self.finished = threading.Event()

    def write(self, request: http.server.BaseHTTPRequestHandler, data: bytes) -> bool:
        try:
            request.wfile.write(data)
            request.wfile.flush()
        except OSError:
            self.hung_up.set()
            return False
        self.sent += len(data)
        return True


async def test_jwks_trickling_issuer_cannot_hold_a_fetch_past_its_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    sender = _Sender()
    stop = threading.Event()

    def trickle(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("content-type", "application/json")
        request.send_header("content-length", "100000")
        request.end_headers()
        # A byte every 0.1 s for up to 120 s: each read is quick, the whole is not.
        for _ in range(1200):
            if stop.is_set() or not sender.write(request, b" "):
                return
            time.sleep(0.1)
        sender.finished.set()

    with serving(trickle) as url:
        # 5 s: making the HTTP client alone can take a second on a loaded machine.
        keys = JwksKeys(url, timeout=5.0)
        try:
            # Generous bound: without the overall deadline this waits out the whole 120 s.
            assert await asyncio.wait_for(keys.key("k1"), timeout=60) is None
            assert sender.sent > 0, "the fetch never reached the body"
            assert await asyncio.to_thread(sender.hung_up.wait, 30)
            assert not sender.finished.is_set()
        finally:
            stop.set()
    (failed,) = [r for r in caplog.records if "JWKS refresh failed" in r.getMessage()]
    assert failed.levelno == logging.WARNING and "no answer within 5.0s" in failed.getMessage()


async def test_jwks_huge_body_is_not_read_past_the_cap(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2c_server")
    sender = _Sender()
    total = 50_000_000
    chunk = b" " * 65536

    def flood(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("content-type", "application/json")
        request.send_header("content-length", str(total))
        request.end_headers()
        while sender.sent < total:
            if not sender.write(request, chunk[: total - sender.sent]):
                return
        sender.finished.set()

    with serving(flood) as url:
        keys = JwksKeys(url, timeout=60)
        assert await keys.key("k1") is None
        assert await asyncio.to_thread(sender.hung_up.wait, 30)
    # The reader stopped soon after the 1 MB cap; socket buffers hold a few MB more at most.
    assert not sender.finished.is_set()
    assert sender.sent < 16_000_000, sender.sent
    (failed,) = [r for r in caplog.records if "JWKS refresh failed" in r.getMessage()]
    assert "larger than 1000000 bytes" in failed.getMessage()


async def test_jwks_of_fair_size_still_loads() -> None:
    document = {"keys": [unbound_jwk(RSA_KEY, "k1")], "padding": " " * 900_000}
    with serving(json_answer(document)) as url:
        keys = JwksKeys(url, timeout=10)
        found = await keys.key("k1")
    assert found is not None and found.alg is None
