"""a2c-computer's flags and environment variables."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from a2c_computer._cli._args import apply_env, build_parser

BASE = ["run", "--config", "c.json", "--name", "box"]


def parse(argv: list[str], env: dict[str, str]) -> dict[str, object]:
    parser = build_parser()
    args = parser.parse_args(argv)
    apply_env(parser, args, env)
    return vars(args)


def test_environment_fills_what_flags_leave_unset_and_flags_win() -> None:
    env = {
        "A2C_TOKEN": "from-env",
        "A2C_SERVER_URL": "http://127.0.0.1:1",
        "A2C_OFFICE": "o-env",
        "A2C_OFFICE_ID": "o-legacy",
    }
    args = parse(BASE, env)
    assert (args["token"], args["server"], args["office"]) == (
        "from-env",
        "http://127.0.0.1:1",
        "o-env",
    )
    assert args["wait_server"] == 30.0 and args["confirm"] == "ask"
    flags = parse([*BASE, "--token", "flag", "--office", "o-flag"], env)
    assert (flags["token"], flags["office"]) == ("flag", "o-flag")
    assert parse(BASE, {"A2C_OFFICE_ID": "o-legacy"})["office"] == "o-legacy"
    # A flag wins: the empty variable is not read (one rule for 3 CLIs).
    assert parse([*BASE, "--token", "t"], {"A2C_TOKEN": ""})["token"] == "t"
    # How long an input request waits for the Agent: 300 s unless told.
    assert args["input_timeout"] == 300.0
    assert parse(BASE, {"A2C_INPUT_TIMEOUT": "20"})["input_timeout"] == 20.0
    assert parse([*BASE, "--input-timeout", "5"], {"A2C_INPUT_TIMEOUT": "20"})["input_timeout"] == 5


def test_the_bounds_on_input_requests_come_from_flags_or_environment() -> None:
    args = parse(BASE, {})
    assert (args["max_input_requests_per_round"], args["max_input_requests_per_call"]) == (16, 64)
    env = {"A2C_MAX_INPUT_REQUESTS_PER_ROUND": "4", "A2C_MAX_INPUT_REQUESTS_PER_CALL": "9"}
    args = parse(BASE, env)
    assert (args["max_input_requests_per_round"], args["max_input_requests_per_call"]) == (4, 9)
    flags = parse([*BASE, "--max-input-requests-per-round", "2"], env)
    assert flags["max_input_requests_per_round"] == 2


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"A2C_WAIT_SERVER": "soon"}, "A2C_WAIT_SERVER='soon': not a number"),
        ({"A2C_SERVER_URL": "127.0.0.1:18800"}, "did you mean 'http://127.0.0.1:18800'"),
        ({"A2C_CONFIRM": "maybe"}, "'maybe' is not one of ask, allow, deny"),
        ({"A2C_METRICS_PORT": "99999"}, "99999 is not a port"),
        ({"A2C_TOKEN": ""}, "A2C_TOKEN is set but empty: unset it or give a value"),
        ({"A2C_OFFICE": " ", "A2C_OFFICE_ID": "o"}, "A2C_OFFICE is set but empty"),
    ],
)
def test_a_bad_environment_value_is_a_usage_error(
    env: dict[str, str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(BASE, env)
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--server", "127.0.0.1:18800"], "did you mean 'http://127.0.0.1:18800'"),
        (["--wait-server", "-1"], "not a number of seconds >= 0"),
        (["--input-timeout", "0"], "--input-timeout"),
    ],
)
def test_a_bad_flag_is_a_usage_error(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse([*BASE, *argv], {})
    assert exited.value.code == 2 and said in capsys.readouterr().err


def test_check_refuses_a_zero_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["check", "--config", "c.json", "--timeout", "0"])
    assert exited.value.code == 2 and "more than 0" in capsys.readouterr().err


def run_cli(
    *argv: str, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "a2c_computer._cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        # None removes a variable the test run may have set.
        env={k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None},
        check=False,
    )


async def test_version_help_and_usage_errors_as_a_user_sees_them() -> None:
    version = await asyncio.to_thread(run_cli, "--version")
    assert version.returncode == 0 and version.stdout.startswith("a2c-computer 0.")
    helped = await asyncio.to_thread(run_cli, "run", "--help")
    assert helped.returncode == 0
    for name in ("A2C_TOKEN", "A2C_SERVER_URL", "A2C_OFFICE", "exit status"):
        assert name in helped.stdout, name
    no_scheme = await asyncio.to_thread(
        run_cli, *BASE, "--office", "o", "--server", "127.0.0.1:18800"
    )
    assert no_scheme.returncode == 2 and "Traceback" not in no_scheme.stderr
    assert "did you mean 'http://127.0.0.1:18800'" in no_scheme.stderr
    bad_env = await asyncio.to_thread(
        run_cli, *BASE, "--office", "o", env={"A2C_WAIT_SERVER": "abc"}
    )
    assert bad_env.returncode == 2 and "Traceback" not in bad_env.stderr
    assert "A2C_WAIT_SERVER='abc'" in bad_env.stderr
    names = ("A2C_COMPUTER_CONFIG", "A2C_SERVER_URL", "A2C_OFFICE", "A2C_OFFICE_ID",
             "A2C_COMPUTER_NAME")  # fmt: skip
    unset: dict[str, str | None] = dict.fromkeys(names)
    missing = await asyncio.to_thread(run_cli, "run", env=unset)
    assert missing.returncode == 2 and "--config, --server, --office, --name" in missing.stderr
    empty = await asyncio.to_thread(run_cli, "run", env={"A2C_LOG_FORMAT": ""})
    assert empty.returncode == 2 and "A2C_LOG_FORMAT is set but empty" in empty.stderr


def test_check_piped_into_a_closed_reader_exits_without_a_traceback(tmp_path: Path) -> None:
    """``check | head``: the reader is gone before anything is written."""
    config = tmp_path / "computer.json"
    config.write_text('{"servers": {}}', encoding="utf-8")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "a2c_computer._cli", "check", "--config", str(config)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0


def test_foreground_terminal_is_false_for_a_background_job() -> None:
    """A background job on a real pty: the case where reading would stop the process."""
    launcher = textwrap.dedent(
        """
        import fcntl, os, sys, termios
        master, slave = os.openpty()
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        probe = "from a2c_computer._toolcalls._confirm import foreground_terminal as f; import sys; " \\
            "print(f(sys.stdin))"
        for background in (False, True):
            pid = os.fork()
            if pid == 0:
                if background:
                    os.setpgid(0, 0)  # its own group, not the terminal's foreground one
                os.dup2(slave, 0)
                os.execv(sys.executable, [sys.executable, "-c", probe])
            os.waitpid(pid, 0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.split() == ["True", "False"], done.stderr
