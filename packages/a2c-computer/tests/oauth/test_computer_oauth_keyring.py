"""OAuth sign-ins in a real OS keyring: the Secret Service of ``gnome-keyring-daemon``.

Each test starts its own D-Bus session bus and keyring daemon (``dbus-daemon`` and
``gnome-keyring-daemon``, as on a Linux desktop, with the login keyring unlocked by its
password on stdin) over a temporary ``HOME``/``XDG_DATA_HOME``, and selects keyring's
Secret Service backend through ``PYTHON_KEYRING_BACKEND``: the user's own keyring is never
touched. ``.ci/run`` installs ``gnome-keyring``; a box without it skips these tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2c_computer._oauth._provider import resource_of
from a2c_computer._oauth._store import KeyringTokenStore, default_store

pytest.importorskip("keyring")
pytest.importorskip("secretstorage")

_DAEMONS = ("dbus-daemon", "gnome-keyring-daemon")
_CLI = [sys.executable, "-c", "import sys; from a2c_computer._cli import main; sys.exit(main())"]

_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

A_URL = "https://a.example/mcp"
B_URL = "https://b.example/mcp"


class SecretService:
    """A session bus with a keyring daemon on it, and the environment that reaches them."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        runtime = tmp / "run"
        runtime.mkdir(mode=0o700)
        self.env = {
            "HOME": str(tmp / "home"),
            "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_CONFIG_HOME": str(tmp / "config"),
            "XDG_RUNTIME_DIR": str(runtime),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring",
            "A2C_COMPUTER_STATE_DIR": str(tmp / "state"),
        }
        # A unix socket path has ~100 bytes at most; a long $TMPDIR gets a short one instead.
        bus_dir = tmp if len(str(tmp)) < 90 else Path(tempfile.mkdtemp(prefix="a2c-bus-"))
        base = {k: v for k, v in os.environ.items() if k != "A2C_COMPUTER_TOKEN_STORE"}
        # A session bus without service activation: with the standard service directories a
        # client's first call could start a second, password-less keyring daemon before ours
        # owns the name ("another secret service is running"), which never unlocks.
        config = tmp / "bus.conf"
        config.write_text(_BUS_CONFIG)
        self.bus = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--nosyslog", "--print-address=1",
             f"--address=unix:path={bus_dir / 'bus'}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**base, **self.env},
            text=True,
        )  # fmt: skip
        assert self.bus.stdout is not None
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.bus.stdout.readline().strip()
        self.daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**base, **self.env},
        )
        assert self.daemon.stdin is not None
        self.daemon.stdin.write(b"login-password")
        self.daemon.stdin.close()

    def wait_ready(self) -> None:
        import secretstorage

        deadline = time.monotonic() + 30
        while True:
            assert self.daemon.poll() is None, "gnome-keyring-daemon ended"
            connection = secretstorage.dbus_init()
            try:
                # Not get_default_collection: it would create a collection (through a prompt
                # that fails headless) while the daemon is still loading the login keyring.
                if secretstorage.check_service_availability(connection):
                    with contextlib.suppress(secretstorage.exceptions.ItemNotFoundException):
                        if not secretstorage.Collection(connection).is_locked():
                            return
            finally:
                connection.close()
            assert time.monotonic() < deadline, "the keyring daemon never came up"
            time.sleep(0.02)

    def lock(self) -> None:
        """What a screen lock or ``secret-tool lock`` does: the login keyring is locked."""
        import secretstorage

        connection = secretstorage.dbus_init()
        try:
            collection = secretstorage.Collection(connection)
            collection.lock()
            assert collection.is_locked()
        finally:
            connection.close()

    def items(self) -> dict[str, str]:
        """What the daemon holds for the Computer, read past ``keyring`` (attribute: value)."""
        import secretstorage

        connection = secretstorage.dbus_init()
        try:
            collection = secretstorage.Collection(connection)
            return {
                item.get_attributes()["username"]: item.get_secret().decode()
                for item in collection.search_items({"service": "a2c-computer"})
            }
        finally:
            connection.close()

    def stop(self) -> None:
        for process in (self.daemon, self.bus):
            process.terminate()
        for process in (self.daemon, self.bus):
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.bus.stdout is not None:
            self.bus.stdout.close()


@pytest.fixture
def secret_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretService]:
    missing = [name for name in _DAEMONS if shutil.which(name) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have {', '.join(missing)} (.ci/run installs gnome-keyring)")
        pytest.skip(f"needs {', '.join(missing)} (apt package gnome-keyring; .ci/run installs it)")
    service = SecretService(tmp_path)
    try:
        for key, value in service.env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("A2C_COMPUTER_TOKEN_STORE", raising=False)
        service.wait_ready()
        yield service
    finally:
        service.stop()


def _record(access: str, refresh: str, *, life: float = 3600) -> dict[str, Any]:
    return {
        "tokens": {
            "access_token": access,
            "token_type": "Bearer",
            "refresh_token": refresh,
            "scope": "mcp",
        },
        "client_info": {"client_id": "c-" + access, "client_secret": "s-" + access},
        "expires_at": time.time() + life,
    }


def _config(tmp: Path) -> Path:
    path = tmp / "computer.json"
    servers = {
        name: {
            "type": "streamable",
            "name": name,
            "tool_prefix": f"{name}_",
            "server_parameters": {"url": url, "timeout": "PT10S"},
            "auth": {"type": "oauth", "scopes": ["mcp"]},
        }
        for name, url in (("alpha", A_URL), ("beta", B_URL))
    }
    path.write_text(json.dumps({"servers": servers}))
    return path


def _cli(service: SecretService, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "A2C_COMPUTER_TOKEN_STORE"}
    return subprocess.run(
        [*_CLI, *args],
        env={**env, **service.env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_store_keeps_two_servers_apart_in_the_secret_service(
    secret_service: SecretService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = default_store()
    assert isinstance(store, KeyringTokenStore)
    assert "SecretService" in store.where
    a, b = resource_of(A_URL), resource_of(B_URL)
    store.put("alpha", a, _record("AT-alpha-1", "RT-alpha-1"))
    store.put("beta", b, _record("AT-beta-1", "RT-beta-1"))

    # Another process's view: a new store over a new backend object, and the daemon itself.
    again = default_store()
    alpha = again.get("alpha", a)
    assert alpha is not None and alpha["tokens"]["access_token"] == "AT-alpha-1"
    beta = again.get("beta", b)
    assert beta is not None and beta["tokens"]["refresh_token"] == "RT-beta-1"
    assert again.get("alpha", b) is None and again.get("beta", a) is None
    held = secret_service.items()
    assert "AT-alpha-1" in held[f"alpha\n{a}"] and "AT-beta-1" in held[f"beta\n{b}"]

    # A refresh replaces alpha's record and leaves beta's alone.
    store.put("alpha", a, _record("AT-alpha-2", "RT-alpha-2"))
    assert again.get("alpha", a)["tokens"]["access_token"] == "AT-alpha-2"  # type: ignore[index]
    assert again.get("beta", b)["tokens"]["access_token"] == "AT-beta-1"  # type: ignore[index]
    assert set(again.entries()) == {"alpha", "beta"}

    assert again.delete("beta") == 1
    assert again.delete("beta") == 0
    assert set(store.entries()) == {"alpha"} and store.get("beta", b) is None
    assert set(secret_service.items()) == {"index", f"alpha\n{a}"}
    assert store.delete("alpha") == 1 and store.entries() == {}

    # Nothing went to the 0600 file, and no token reached a log line.
    assert not (Path(secret_service.env["A2C_COMPUTER_STATE_DIR"]) / "oauth-tokens.json").exists()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "AT-" not in logged and "RT-" not in logged


def test_auth_status_and_logout_see_the_keyring(
    secret_service: SecretService, tmp_path: Path
) -> None:
    config = str(_config(tmp_path))
    store = default_store()
    store.put("alpha", resource_of(A_URL), _record("AT-alpha", "RT-alpha"))
    store.put("beta", resource_of(B_URL), _record("AT-beta", "RT-beta"))

    status = _cli(secret_service, "auth", "status", "--config", config)
    assert status.returncode == 0, status.stderr
    assert "alpha: signed in" in status.stdout and "beta: signed in" in status.stdout
    assert "refresh token: yes" in status.stdout

    logout = _cli(secret_service, "auth", "logout", "alpha", "--config", config)
    assert logout.returncode == 0, logout.stderr
    assert "Signed out of alpha: the stored sign-in is deleted." in logout.stdout
    assert "offers no token revocation" in logout.stdout  # its record names no endpoint
    assert "AT-alpha" not in json.dumps(secret_service.items())

    status = _cli(secret_service, "auth", "status", "--config", config)
    assert status.returncode == 1, status.stderr
    assert "alpha: not signed in (a2c-computer auth login alpha)" in status.stdout
    assert "beta: signed in" in status.stdout
    again = _cli(secret_service, "auth", "logout", "alpha")
    assert again.returncode == 0 and "No stored sign-in for alpha." in again.stdout
    for run in (status, logout, again):
        assert "AT-" not in run.stdout + run.stderr and "RT-" not in run.stdout + run.stderr
    assert not (Path(secret_service.env["A2C_COMPUTER_STATE_DIR"]) / "oauth-tokens.json").exists()


def test_a_locked_keyring_is_a_clear_error_not_a_traceback(
    secret_service: SecretService, tmp_path: Path
) -> None:
    config = str(_config(tmp_path))
    store = default_store()
    store.put("alpha", resource_of(A_URL), _record("AT-alpha", "RT-alpha"))
    secret_service.lock()

    for args in (("auth", "status", "--config", config), ("auth", "logout", "alpha")):
        run = _cli(secret_service, *args)
        assert run.returncode == 1, (args, run.stdout, run.stderr)
        assert "Traceback" not in run.stderr, run.stderr
        assert "keyring" in run.stderr and "locked" in run.stderr.lower(), run.stderr
        assert "A2C_COMPUTER_TOKEN_STORE=file" in run.stderr
        assert "AT-alpha" not in run.stdout + run.stderr
    # Nothing was silently written elsewhere instead.
    assert not (Path(secret_service.env["A2C_COMPUTER_STATE_DIR"]) / "oauth-tokens.json").exists()


async def test_a_running_computer_with_a_locked_keyring_names_the_cause(
    secret_service: SecretService, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from a2c_computer import Computer

    caplog.set_level(logging.DEBUG)
    default_store().put("alpha", resource_of(A_URL), _record("AT-alpha", "RT-alpha"))
    secret_service.lock()
    config = json.loads(_config(tmp_path).read_text())
    async with Computer(config, name="box") as computer:
        async with asyncio.timeout(30):
            while computer.server_states()["alpha"].status in ("starting", "stopped"):
                await asyncio.sleep(0.05)
        state = computer.server_states()["alpha"]
        answer = await computer.call_tool("alpha_x", {})
    # keyring's Secret Service backend leaves its D-Bus connection open when the collection
    # is locked; collect it here rather than have its ResourceWarning land in a later test.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    assert state.status == "failed", state
    cause = state.last_error or ""
    assert "SecretService" in cause and "KeyringLocked" in cause, cause
    assert "A2C_COMPUTER_TOKEN_STORE=file" in cause, cause
    assert answer.is_error and answer.meta is not None and answer.meta["error_code"] == 4014
    assert "KeyringLocked" in answer.meta["server_error"]
    ours = [r for r in caplog.records if r.name.startswith("a2c_computer")]
    assert any("KeyringLocked" in r.getMessage() for r in ours)
    assert all(r.exc_info is None for r in ours)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "AT-alpha" not in logged and "RT-alpha" not in logged


async def test_auth_login_into_the_keyring_then_a_computer_uses_it(
    secret_service: SecretService,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The whole path: ``auth login`` stores in the Secret Service, the Computer calls with it."""
    import httpx

    from a2c_computer import Computer
    from a2c_computer._cli import main
    from a2c_testkit.oauth import (
        MemoryAS,
        Watch,
        authorization_app,
        free_loopback_port,
        oauth_mcp_app,
        serve_app,
    )

    caplog.set_level(logging.DEBUG)
    auth = MemoryAS()
    as_port, rs_port = free_loopback_port(), free_loopback_port()
    as_url, url = f"http://127.0.0.1:{as_port}", f"http://127.0.0.1:{rs_port}/mcp"
    rs = Watch(oauth_mcp_app("oauthy", auth, rs_port, as_url), auth)
    config = {
        "servers": {
            "oauthy": {
                "type": "streamable",
                "name": "oauthy",
                "tool_prefix": "o_",
                "default_tool_meta": {"auto_apply": True},
                "server_parameters": {"url": url, "timeout": "PT10S"},
                "auth": {"type": "oauth", "scopes": ["mcp"]},
            }
        }
    }
    path = tmp_path / "computer.json"
    path.write_text(json.dumps(config))
    async with serve_app(authorization_app(auth, as_url), as_port), serve_app(rs, rs_port):
        login = asyncio.ensure_future(
            asyncio.to_thread(
                main, ["auth", "login", "oauthy", "--config", str(path), "--no-browser"]
            )
        )
        printed = ""
        async with asyncio.timeout(30):
            while "/authorize?" not in printed:
                await asyncio.sleep(0.05)
                printed += capsys.readouterr().out
        async with httpx.AsyncClient(follow_redirects=True, timeout=20) as browser:
            answer = await browser.get(next(w for w in printed.split() if "/authorize?" in w))
        assert answer.status_code == 200, answer.text
        assert await asyncio.wait_for(login, 30) == 0
        out = capsys.readouterr().out
        assert "tokens kept in the OS keyring (SecretService Keyring)" in out, out
        held = secret_service.items()
        assert set(held) == {"index", f"oauthy\n{resource_of(url)}"}
        assert any(token in held[f"oauthy\n{resource_of(url)}"] for token in auth.issued)

        async with Computer(config, name="box") as computer:
            async with asyncio.timeout(30):
                while "o_whoami" not in {t.name for t in computer.tools()}:
                    await asyncio.sleep(0.05)
            done = await computer.call_tool("o_whoami", {})
            assert not done.is_error, done
        assert rs.authorizations and rs.authorizations[-1].removeprefix("Bearer ") in auth.issued
        # While the authorization server runs: logout revokes there too (RFC 7009).
        assert await asyncio.to_thread(main, ["auth", "logout", "oauthy"]) == 0
        out = capsys.readouterr().out
        assert "Signed out of oauthy: the stored sign-in is deleted." in out, out
        assert "Revoked at" in out, out

    assert set(secret_service.items()) == {"index"}
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert all(token not in logged for token in auth.issued)
    assert not (Path(secret_service.env["A2C_COMPUTER_STATE_DIR"]) / "oauth-tokens.json").exists()
