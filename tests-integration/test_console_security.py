"""Who opens the console, and what the Server's log says about it.

Real Servers: in-process under uvicorn for the access rules, the ``a2c-server`` command for
what reaches its log. Each test names the check it guards; each was seen to fail with that
check removed.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from a2c_server import ServerSettings, SettingsError
from a2c_server._console._access import COOKIE
from a2c_server._console._throttle import LoginThrottle
from a2c_testkit.processes import bin_path, free_port, spawn, wait_until_healthy
from a2c_testkit.server import RunningServer, joined_raw, running_server

ADMIN = "console-admin-token-3f9c-0123456789"
PAGES = ("/console", "/console/", "/console/office/desk-office")


@contextlib.asynccontextmanager
async def console(**fields: object) -> AsyncIterator[tuple[RunningServer, httpx.AsyncClient]]:
    settings = ServerSettings(console=True, admin_token=ADMIN, **fields)  # type: ignore[arg-type]
    async with (
        running_server(settings) as server,
        httpx.AsyncClient(base_url=server.url, timeout=30) as http,
        contextlib.AsyncExitStack() as stack,
    ):
        await joined_raw(stack, server, "computer", "rendered-desk", "desk-office")
        yield server, http


async def logged_in_cookie(http: httpx.AsyncClient) -> str:
    answer = await http.post("/console/login", data={"token": ADMIN})
    assert answer.status_code == 303, answer.text
    match = re.match(rf"{COOKIE}=([^;]+);", answer.headers["set-cookie"])
    assert match, answer.headers["set-cookie"]
    http.cookies.clear()  # each request below says exactly what it carries
    return match.group(1)


async def test_console_only_the_exact_cookie_opens_it() -> None:
    async with console() as (_, http):
        cookie = await logged_in_cookie(http)
        assert ADMIN not in cookie
        wrong = [
            "", "x", cookie[:-1], cookie[:-1] + ("0" if cookie[-1] != "0" else "1"),
            cookie.upper() if cookie != cookie.upper() else cookie.lower(), ADMIN, cookie + "0",
        ]  # fmt: skip
        for path in PAGES:
            for value in wrong:
                answer = await http.get(path, headers={"cookie": f"{COOKIE}={value}"})
                assert answer.status_code == 401, (path, value)
                assert "rendered-desk" not in answer.text, (path, value)
            # Another cookie's name with the right value is no session either.
            answer = await http.get(path, headers={"cookie": f"other={cookie}"})
            assert answer.status_code == 401, path
            answer = await http.get(path, headers={"cookie": f"a=b; {COOKIE}={cookie}"})
            assert answer.status_code == 200 and "rendered-desk" in answer.text, path


async def test_console_only_the_exact_bearer_token_opens_it() -> None:
    async with console() as (_, http):
        # Pages that need the token (the static assets need none, so they prove nothing).
        for path in PAGES:
            ok = await http.get(path, headers={"authorization": f"Bearer {ADMIN}"})
            assert ok.status_code == 200 and "rendered-desk" in ok.text, path
        wrong = [f"Bearer {ADMIN[:-1]}", f"Bearer {ADMIN}x", f"Basic {ADMIN}", ADMIN]
        for value in wrong:
            answer = await http.get("/console/", headers={"authorization": value})
            assert answer.status_code == 401, value
            assert "rendered-desk" not in answer.text, value
        async with http.stream(
            "GET", "/console/events", headers={"authorization": f"Bearer {ADMIN}x"}
        ) as events:
            assert events.status_code == 401


async def test_console_token_in_the_query_opens_nothing() -> None:
    async with console() as (_, http):
        answer = await http.get("/console/", params={"token": ADMIN})
        assert answer.status_code == 401 and "set-cookie" not in answer.headers
        assert "rendered-desk" not in answer.text
        # The login form is what a browser uses now.
        assert 'action="/console/login"' in answer.text


async def test_console_failed_logins_are_throttled_per_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="a2c_server")
    caplog.set_level("INFO", logger="a2c_server.audit")
    async with console() as (_, http):
        cookie = await logged_in_cookie(http)
        for attempt in range(5):
            answer = await http.post("/console/login", data={"token": f"guess-{attempt}"})
            assert answer.status_code == 401, attempt
        # Spent: even the right token is not confirmed (nor by a bearer header) for a while.
        blocked = await http.post("/console/login", data={"token": ADMIN})
        assert blocked.status_code == 429 and "set-cookie" not in blocked.headers
        assert 1 <= int(blocked.headers["retry-after"]) <= 10
        bearer = await http.get("/console/", headers={"authorization": f"Bearer {ADMIN}"})
        assert bearer.status_code == 429
        # A session already open is not locked out by someone guessing from its address.
        page = await http.get("/console/", headers={"cookie": f"{COOKIE}={cookie}"})
        assert page.status_code == 200
    failed = [r for r in caplog.records if "console login failed" in r.getMessage()]
    assert len(failed) == 5 and all("peer=127.0.0.1" in r.getMessage() for r in failed)
    assert not any(ADMIN in r.getMessage() for r in caplog.records)
    # The audit trail has each decision too: the login, the five guesses.
    audit = [r.getMessage() for r in caplog.records if r.name == "a2c_server.audit"]
    logins = [line for line in audit if "event=console_login" in line]
    assert sum("outcome=refused" in line and "reason=form" in line for line in logins) == 5
    assert sum("outcome=ok" in line for line in logins) == 1, logins
    assert all("peer=127.0.0.1" in line for line in logins), logins


def test_console_login_throttle_refills_and_forgets() -> None:
    now = [0.0]
    throttle = LoginThrottle(burst=2, refill_seconds=10, max_addresses=2, clock=lambda: now[0])
    assert throttle.retry_after("a") is None
    throttle.failed("a")
    throttle.failed("a")
    assert throttle.retry_after("a") == pytest.approx(10)
    now[0] = 5
    assert throttle.retry_after("a") == pytest.approx(5)
    assert throttle.retry_after("b") is None  # per address
    now[0] = 10
    assert throttle.retry_after("a") is None
    throttle.failed("a")
    assert throttle.retry_after("a") == pytest.approx(10)
    throttle.failed("b")
    throttle.failed("c")  # a third address: the idlest ("a") is forgotten
    assert throttle.retry_after("a") is None


@pytest.mark.parametrize("length", [0, 1, 23])
def test_console_admin_token_shorter_than_24_is_refused(length: int) -> None:
    with pytest.raises(SettingsError, match="at least 24 characters"):
        ServerSettings(console=True, admin_token="x" * length)
    assert ServerSettings(console=True, admin_token="x" * 24).admin_token == "x" * 24


def test_console_short_admin_token_stops_the_command_with_exit_2() -> None:
    done = subprocess.run(
        [bin_path("a2c-server"), "--console", "--port", "0", "--admin-token", "y" * 23],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "at least 24 characters" in done.stderr and "Traceback" not in done.stderr
    assert "y" * 23 not in done.stderr


SHARED = "shared-client-token-5be1"
JWT_SECRET = "jwt-hs256-secret-" + "q" * 32


@pytest.mark.parametrize("auth", ["token", "jwt"])
async def test_console_no_secret_of_the_server_reaches_its_log(auth: str, tmp_path: Path) -> None:
    port = free_port()
    argv = [
        bin_path("a2c-server"), "--port", str(port), "--console", "--admin-token", ADMIN,
        "--log-level", "DEBUG",
    ]  # fmt: skip
    if auth == "token":
        argv += ["--auth-token", SHARED]
    else:
        argv += ["--jwt-secret", JWT_SECRET, "--jwt-issuer", "https://i.test", "--jwt-audience",
                 "a2c-server"]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    secret = SHARED if auth == "token" else JWT_SECRET
    async with spawn(f"server-{auth}", argv, log_dir=tmp_path) as server:
        await wait_until_healthy(f"{url}/healthz", server)
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            # Secrets a client echoes in URLs: the access log prints every request line.
            await http.get("/console/", params={"token": ADMIN})
            await http.get("/console/", params={"q": ADMIN.upper(), "r": ADMIN})
            await http.get(f"/console/office/{ADMIN}")
            await http.get("/healthz", params={"s": secret})
            await http.get("/console/", headers={"authorization": f"Bearer {ADMIN}"})
            await http.post("/console/login", data={"token": ADMIN})
            await http.post("/console/login", data={"token": "wrong-one"})
            await http.get(f"/socket.io/?EIO=4&transport=polling&a2c_version=0.2.0&t={secret}")
        await server.wait_for_log("/socket.io/")
        logs = server.logs()
    assert "GET /console/" in logs and "GET /healthz" in logs, logs[-3000:]
    for value in (ADMIN, secret):
        assert value not in logs, value
    assert "[redacted]" in logs


def test_console_every_secret_of_the_settings_is_redacted() -> None:
    from a2c_server._observe._logs import server_secrets

    settings = ServerSettings(
        console=True, admin_token=ADMIN, auth_token=SHARED,
        redis_url="redis://user:redis-pass-9x@127.0.0.1:6379/0",
    )  # fmt: skip
    assert set(server_secrets(settings)) == {ADMIN, SHARED, "redis-pass-9x"}
    jwt_settings = ServerSettings(
        jwt_secret=JWT_SECRET, jwt_issuer="https://i.test", jwt_audience="a"
    )
    assert server_secrets(jwt_settings) == [JWT_SECRET]
