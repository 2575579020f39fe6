"""``a2c-agent mcp`` on the command line: its flags, and a clear error without the extra."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from a2c_agent._bridge._args import http_address, is_loopback, usage_problem
from a2c_agent._bridge._token import remove_token, token_dir, token_path, write_token
from a2c_agent._cli._args import parse_args
from a2c_agent._cli._main import main

BASE = ["--server", "http://127.0.0.1:9", "--office", "o1", "mcp"]


def test_without_the_mcp_extra_the_command_names_it() -> None:
    probe = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if a2c-agent[mcp] were not installed\n"
        "from a2c_agent._cli._main import main\n"
        f"sys.exit(main({BASE!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "pip install 'a2c-agent[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_cli_entry_and_the_bridge_args_import_no_mcp() -> None:
    probe = "import sys, a2c_agent._cli._main, a2c_agent._bridge\nprint('mcp' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--http", "0.0.0.0:8080"], "needs a bearer token"),
        (["--http", "example.org:8080"], "needs a bearer token"),
        (["--http", "8080"], "expected HOST:PORT"),
        (["--separator", "::"], "must be 1 to 8 characters"),
        (["--tool-timeout", "0"], "must be a number > 0"),
        (["--max-inline-bytes", "-1"], "--max-inline-bytes must be >= 0"),
        (["--no-token"], "--no-token is for --http only"),
        (["--http", "127.0.0.1:8080", "--no-token", "--http-token", "t"], "choose one"),
        (["--http", "0.0.0.0:8080", "--no-token"], "needs a bearer token"),
    ],
)
def test_usage_errors(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Checked without running main: with a check missing, main would start serving.
    code: object = None
    problem = None
    try:
        _, args = parse_args([*BASE, *extra], {})
        problem = usage_problem(args)
    except SystemExit as exc:
        code = exc.code
    if problem is None:
        assert code == 2
        assert message in capsys.readouterr().err
    else:
        assert message in problem


def test_a_usage_problem_exits_2_before_serving(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--http", "0.0.0.0:8080"], environ={}) == 2
    assert "needs a bearer token" in capsys.readouterr().err


def test_addresses() -> None:
    assert http_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert http_address("[::1]:80") == ("::1", 80)
    assert is_loopback("localhost") and is_loopback("127.0.0.2") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


def test_help_lists_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], environ={}) == 0
    assert "mcp" in capsys.readouterr().out


def test_a_port_in_use_is_a_clear_error_and_nothing_leaks() -> None:
    # The office link is still connecting (to a socket that never answers) when --http
    # fails to bind: one line, exit 1, no traceback and no unclosed aiohttp session.
    with socket.socket() as silent, socket.socket() as taken:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = f"http://127.0.0.1:{silent.getsockname()[1]}"
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "a2c_agent", "--server", server, "--office", "o1", "mcp",
             "--http", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"cannot serve HTTP on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr and "Unclosed" not in done.stderr, done.stderr


def test_the_token_file_goes_to_the_runtime_dir_else_the_state_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert token_dir({"XDG_RUNTIME_DIR": "/run/user/7"}, home) == Path("/run/user/7/a2c-agent")
    assert token_dir({"XDG_STATE_HOME": "/s"}, home) == Path("/s/a2c-agent")
    assert token_dir({"XDG_RUNTIME_DIR": "relative"}, home) == home / ".local/state/a2c-agent"
    assert token_dir({}, home) == home / ".local/state/a2c-agent"
    assert token_path(Path("/d"), 8765) == Path("/d/mcp-http-8765.token")


def test_a_token_file_is_owner_only_and_replaces_a_stale_one(tmp_path: Path) -> None:
    where = tmp_path / "open"
    where.mkdir(mode=0o755)
    where.chmod(0o755)
    path = token_path(where, 1)
    path.write_text("stale")
    path.chmod(0o644)
    write_token(path, "fresh")
    assert path.read_text() == "fresh\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert where.stat().st_mode & 0o777 == 0o700  # others could have listed or swapped it
    remove_token(path)
    assert not path.exists()
    remove_token(path)  # gone already: no error
