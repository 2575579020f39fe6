"""``a2c-agent mcp`` on the command line: its flags, and a clear error without the extra."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from a2c_agent._bridge._args import http_address, is_loopback, usage_problem
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
