"""The ``a2c-server`` command: flags, environment variables, validation, a real start."""

from __future__ import annotations

import asyncio
import re
import socket
import sys

import httpx
import pytest

from a2c_server import ServerSettings, SettingsError
from a2c_server._cli import ENV_VARS, settings_from_args
from a2c_server._runtime import runtime_stack
from a2c_testkit.redis_server import redis_server


def test_server_cli_defaults() -> None:
    assert settings_from_args([], {}) == ServerSettings()
    defaults = ServerSettings()
    assert (defaults.host, defaults.port, defaults.socketio_path) == (
        "127.0.0.1",
        8000,
        "socket.io",
    )
    assert defaults.max_message_bytes == 1_000_000
    assert defaults.max_tool_timeout == 300
    assert defaults.forward_timeout >= 30
    assert defaults.auth_token is None
    assert defaults.shutdown_grace == 10


def test_server_cli_flags() -> None:
    s = settings_from_args(
        [
            "--host", "0.0.0.0", "--port", "9001", "--path", "/hub/", "--auth-token", "t0k",
            "--max-message-bytes", "2048", "--max-tool-timeout", "60",
            "--tool-call-buffer", "1.5", "--forward-timeout", "45", "--ping-interval", "10",
            "--ping-timeout", "5", "--cors-origins", "https://a.example, https://b.example",
            "--log-level", "debug", "--shutdown-grace", "2.5",
        ],
        {},
    )  # fmt: skip
    assert s == ServerSettings(
        host="0.0.0.0",
        port=9001,
        socketio_path="hub",
        auth_token="t0k",
        max_message_bytes=2048,
        max_tool_timeout=60,
        tool_call_buffer=1.5,
        forward_timeout=45,
        ping_interval=10,
        ping_timeout=5,
        cors_allowed_origins=("https://a.example", "https://b.example"),
        log_level="DEBUG",
        shutdown_grace=2.5,
    )


def test_server_cli_env_vars_and_flag_precedence() -> None:
    env = {
        "A2C_SERVER_HOST": "::1",
        "A2C_SERVER_PORT": "7000",
        "A2C_SERVER_AUTH_TOKEN": "from-env",
        "A2C_SERVER_MAX_TOOL_TIMEOUT": "120",
        "A2C_SERVER_LOG_LEVEL": "warning",
    }
    s = settings_from_args(["--port", "7001"], env)
    assert (s.host, s.port, s.auth_token, s.max_tool_timeout, s.log_level) == (
        "::1",
        7001,
        "from-env",
        120,
        "WARNING",
    )
    assert set(ENV_VARS) == {
        "host", "port", "socketio_path", "protocol_version", "protocols", "auth_token",
        "max_message_bytes", "max_tool_timeout", "tool_call_buffer", "forward_timeout",
        "allowed_hosts",
        "ping_interval", "ping_timeout", "cors_allowed_origins", "log_level", "log_format",
        "log_protocol", "shutdown_grace",
        "redis_url", "redis_prefix", "node_id", "node_ttl", "registry_timeout",
        "max_id_length", "max_outgoing_bytes", "max_queued_output_bytes", "admission_timeout",
        "join_timeout",
        "max_unadmitted_per_address", "forwarded_allow_ips", "max_inbound_per_second",
        "inbound_burst", "notice_interval", "handshake_pace",
        "jwt_jwks_url", "jwt_public_key", "jwt_secret", "jwt_issuer", "jwt_audience",
        "allow_offices", "max_requests_per_second", "request_burst",
        "max_connections_per_subject",
        "audit_calls", "console", "admin_token",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["--max-tool-timeout", "0"], {}),
        (["--max-tool-timeout", "3601"], {}),
        (["--port", "70000"], {}),
        (["--log-level", "chatty"], {}),
        (["--log-format", "xml"], {}),
        (["--protocol-version", "0.2"], {}),
        (["--protocols", "0.3"], {}),
        (["--protocols", ""], {}),
        (["--forward-timeout", "0"], {}),
        (["--shutdown-grace", "-1"], {}),
        (["--admission-timeout", "0"], {}),
        (["--max-id-length", "0"], {}),
        ([], {"A2C_SERVER_PORT": "eighty"}),
        ([], {"A2C_SERVER_AUTH_TOKEN": ""}),  # not a silent allow-all
        ([], {"A2C_SERVER_PORT": " "}),
        (["--redis", "http://127.0.0.1:6379"], {}),
        ([], {"A2C_SERVER_REDIS_URL": "localhost:6379"}),
        (["--redis-prefix", "a b"], {}),
        (["--redis-prefix", "{x}"], {}),
        (["--node-id", ""], {}),
        (["--node-ttl", "0"], {}),
        (["--console", "--host", "0.0.0.0"], {}),  # the console never open off loopback
        ([], {"A2C_SERVER_CONSOLE": "1", "A2C_SERVER_HOST": "10.0.0.1"}),
        (["--admin-token", ""], {}),
    ],
)
def test_server_cli_rejects_bad_values(argv: list[str], env: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        settings_from_args(argv, env)


def test_server_cli_console_with_an_admin_token() -> None:
    s = settings_from_args(
        ["--console", "--host", "0.0.0.0"], {"A2C_SERVER_ADMIN_TOKEN": "zq-secret-of-24-characters"}
    )
    assert (s.console, s.admin_token) == (True, "zq-secret-of-24-characters")
    assert "zq-secret-of-24-characters" not in repr(s)


def test_server_settings_repr_hides_the_token() -> None:
    assert "hunter2" not in repr(ServerSettings(auth_token="hunter2"))
    with pytest.raises(SettingsError):
        ServerSettings(auth_token="")


async def test_server_cli_starts_and_serves_healthz() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_server", "--port", "0", "--log-level", "info",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        url = None
        lines: list[str] = []
        while url is None:
            line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
            assert line, "a2c-server exited early:\n" + "".join(lines)
            lines.append(line)
            # The banner names the port actually bound, also for --port 0.
            match = re.search(r"a2c-server .* on (http://127\.0\.0\.1:\d+)/socket\.io/", line)
            url = match.group(1) if match else None
        assert "auth allow-all)" in lines[-1] and "protocol 0.2.3" in lines[-1]
        assert lines[-1].rstrip().endswith(f"on {runtime_stack().describe()}")
        async with httpx.AsyncClient(timeout=30) as http:
            health = await http.get(url + "/healthz")
            refused = await http.get(url + "/socket.io/?EIO=4&transport=polling")
        assert health.json()["protocol_version"] == "0.2.3"
        assert refused.status_code == 400
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 60)


async def test_server_cli_reports_bad_settings_with_exit_code_2() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_server", "--max-tool-timeout", "0",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert b"max_tool_timeout" in err


async def test_server_cli_warns_when_everyone_is_accepted_off_loopback() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_server", "--host", "0.0.0.0", "--port", "0",
        "--log-level", "error",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        lines: list[str] = []
        while not any(line.startswith("a2c-server ") for line in lines):
            line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
            assert line, "a2c-server exited early:\n" + "".join(lines)
            lines.append(line)
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 60)
    # Visible even with --log-level error: the banner itself says it.
    banner = lines[-1]
    assert re.search(r"on http://0\.0\.0\.0:[1-9]\d*/socket\.io/", banner), banner
    assert "ANYONE who can reach this address may connect" in banner


def test_server_cli_help_lists_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        settings_from_args(["--help"], {})
    text = capsys.readouterr().out
    assert "exit codes" in text and "set but empty is an error" in text
    for code in ("0", "2", "3"):
        assert re.search(rf"^  {code} ", text, re.M), text
    # An empty default reads as nonsense ("default ()"); the help text says what it means.
    assert "default ()" not in text
    assert re.search(r"same\s+origin\s+only\)\s+\[env\s+A2C_SERVER_CORS_ORIGINS\]", text), text


def test_server_cli_redis_flags_and_env() -> None:
    s = settings_from_args(
        ["--redis", "redis://127.0.0.1:6390/2", "--node-id", "n1"],
        {"A2C_SERVER_REDIS_PREFIX": "prod", "A2C_SERVER_NODE_TTL": "9"},
    )
    assert (s.redis_url, s.redis_prefix, s.node_id, s.node_ttl) == (
        "redis://127.0.0.1:6390/2", "prod", "n1", 9.0,
    )  # fmt: skip
    # The URL may carry a password: never in repr.
    assert "secret" not in repr(ServerSettings(redis_url="redis://:secret@h:1/0"))


async def test_server_cli_unreachable_redis_exits_2_with_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        port = sock.getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2c_server", "--port", "0", "--redis",
            f"redis://127.0.0.1:{port}/0",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert b"cannot reach Redis" in err
    assert b"Traceback" not in err


async def healthz_when_up(http: httpx.AsyncClient, url: str) -> dict[str, object]:
    """The banner comes before the lifespan start-up (node registration): poll."""
    for _ in range(300):
        try:
            answer = await http.get(url + "/healthz")
        except httpx.TransportError:
            await asyncio.sleep(0.1)
            continue
        document: dict[str, object] = answer.json()
        return document
    raise AssertionError(f"{url}/healthz never answered")


async def test_server_cli_runs_as_a_redis_node_and_reports_it_in_healthz() -> None:
    with redis_server() as redis:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2c_server", "--port", "0", "--redis", redis.url,
            "--node-id", "cli-node", "--log-level", "info",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stderr is not None
        try:
            url = None
            while url is None:
                line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
                assert line, "a2c-server exited early"
                match = re.search(r"a2c-server .* on (http://127\.0\.0\.1:\d+)/", line)
                url = match.group(1) if match else None
            async with httpx.AsyncClient(timeout=30) as http:
                health = await healthz_when_up(http, url)
            assert health["node_id"] == "cli-node"
            assert (health["registry"], health["redis"], health["status"]) == ("redis", "ok", "ok")
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 60)


def test_server_cli_notice_interval_flag_env_and_default() -> None:
    assert ServerSettings().notice_interval == 0.5
    assert settings_from_args(["--notice-interval", "0"], {}).notice_interval == 0.0
    env = {"A2C_SERVER_NOTICE_INTERVAL": "2"}
    assert settings_from_args([], env).notice_interval == 2.0
    with pytest.raises(SettingsError):
        settings_from_args(["--notice-interval", "-1"], {})


def test_server_cli_handshake_pace_flag_env_and_default() -> None:
    assert ServerSettings().handshake_pace == 100.0
    assert settings_from_args(["--handshake-pace", "0"], {}).handshake_pace == 0.0
    env = {"A2C_SERVER_HANDSHAKE_PACE": "250"}
    assert settings_from_args([], env).handshake_pace == 250.0


def test_server_cli_join_timeout_flag_env_and_default() -> None:
    assert ServerSettings().join_timeout == 60.0
    assert settings_from_args(["--join-timeout", "0"], {}).join_timeout == 0.0
    assert settings_from_args([], {"A2C_SERVER_JOIN_TIMEOUT": "15"}).join_timeout == 15.0
    with pytest.raises(ValueError):
        ServerSettings(join_timeout=-1)
