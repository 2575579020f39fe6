"""``a2c-agent`` as a new user meets it: environment variables, usage errors (exit 2, no
traceback), ``--version``, refusals that end at once, and ``| head``."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
import time

import pytest

from a2c_agent import __version__
from a2c_agent._cli._args import ENV_VARS, build_parser, parse_args
from a2c_agent._cli._main import main
from a2c_server import (
    AuthenticationError,
    AuthRequest,
    Identity,
    ServerSettings,
    SharedTokenAuth,
)
from a2c_testkit.scripted_computer import scripted_tool
from a2c_testkit.server import running_server

OFFICE = "office-1"
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ENV_VARS.values()}


async def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**CLEAN_ENV, **(env or {})},
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def test_usage_errors_exit_2_without_traceback(capsys):
    base = ["--server", "http://127.0.0.1:9", "--office", OFFICE]
    cases = [
        (["--server", "127.0.0.1:18800", "--office", OFFICE, "room"], "did you mean http://"),
        ([*base, "call", "box", "t", "{}", "--timeout", "0"], "--timeout"),
        ([*base, "call", "box", "t", "{}", "--timeout", "soon"], "--timeout"),
        ([*base, "--request-timeout", "-1", "room"], "--request-timeout"),
        ([*base, "desktop", "box", "--size", "0"], "--size"),
        ([*base, "call", "box", "t", "[1]"], "JSON object"),
        (["--office", OFFICE, "room"], "--server"),
        (["--server", "http://host:notaport", "--office", OFFICE, "room"], "invalid port"),
        (["--server", "http://", "--office", OFFICE, "room"], "no host"),
        (["--server", "http://[bad", "--office", OFFICE, "room"], "--server"),
    ]
    for argv, expected in cases:
        code = main(argv, stdout=io.StringIO(), environ={})
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert expected in err and "Traceback" not in err, (argv, err)


def test_empty_environment_variable_is_a_usage_error(capsys):
    env = {"A2C_SERVER_URL": "http://127.0.0.1:9", "A2C_OFFICE": OFFICE, "A2C_TOKEN": ""}
    assert main(["room"], stdout=io.StringIO(), environ=env) == 2
    assert "A2C_TOKEN is set but empty" in capsys.readouterr().err
    env = {"A2C_SERVER_URL": "127.0.0.1:9", "A2C_OFFICE": OFFICE}
    assert main(["room"], stdout=io.StringIO(), environ=env) == 2
    assert "did you mean http://127.0.0.1:9" in capsys.readouterr().err
    # Blank is empty too, and the flag is named as typed.
    env = {"A2C_SERVER_URL": "http://127.0.0.1:9", "A2C_OFFICE": OFFICE, "A2C_TOKEN_FILE": " "}
    assert main(["room"], stdout=io.StringIO(), environ=env) == 2
    assert "A2C_TOKEN_FILE is set but empty" in capsys.readouterr().err
    base = ["--server", "http://127.0.0.1:9", "--office", OFFICE]
    assert main([*base, "--token-file", "", "room"], stdout=io.StringIO(), environ={}) == 2
    assert "--token-file must not be empty" in capsys.readouterr().err
    env = {"A2C_MCP_HTTP_TOKEN": ""}
    assert main([*base, "mcp", "--http", "127.0.0.1:0"], stdout=io.StringIO(), environ=env) == 2
    assert "A2C_MCP_HTTP_TOKEN is set but empty" in capsys.readouterr().err


def test_help_documents_environment_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as info:
        build_parser({}).parse_args(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for var in ("A2C_SERVER_URL", "A2C_OFFICE", "A2C_TOKEN"):
        assert var in text
    assert "A2C_TOKEN_FILE  default for --token-file" in text  # was --token_file
    assert "--token_file" not in text
    for code in ("0 ", "1 ", "2 ", "3 "):
        assert f"\n  {code}" in text
    assert "watch" in text
    # The environment may supply them: the usage line does not call them required.
    assert "[--server SERVER]" in text and "[--office OFFICE]" in text
    assert main(["room"], stdout=io.StringIO(), environ={"A2C_OFFICE": OFFICE}) == 2
    assert "--server is needed (or set A2C_SERVER_URL)" in capsys.readouterr().err


async def test_version_flag():
    code, out, err = await run("--version")
    assert code == 0 and out.strip() == f"a2c-agent {__version__}", err


async def test_environment_variables_and_flags_win(make_computer, server):
    await make_computer()
    env = {"A2C_SERVER_URL": server.url, "A2C_OFFICE": OFFICE}
    code, out, err = await run("room", env=env)
    assert code == 0, err
    assert sorted(m["role"] for m in json.loads(out)) == ["agent", "computer"]
    # A flag wins over its variable: the other office has no Computer.
    code, out, err = await run("--office", "elsewhere", "room", env=env)
    assert code == 0, err
    assert [m["role"] for m in json.loads(out)] == ["agent"]
    code, _, err = await run("--server", "http://127.0.0.1:9", "room", env=env)
    assert code == 1 and "cannot connect" in err


class CountingTokenAuth:
    """The shared-token provider, recording when it refused each attempt."""

    def __init__(self, token: str) -> None:
        self._inner = SharedTokenAuth(token)
        self.refused_at: list[float] = []

    async def authenticate(self, request: AuthRequest) -> Identity:
        try:
            return await self._inner.authenticate(request)
        except AuthenticationError:
            self.refused_at.append(time.monotonic())
            raise


async def test_token_from_environment_and_refusal_is_final():
    auth = CountingTokenAuth("s3cret")
    async with running_server(ServerSettings(auth_token="s3cret"), auth=auth) as srv:
        env = {"A2C_SERVER_URL": srv.url, "A2C_OFFICE": OFFICE}
        code, out, err = await run("room", env={**env, "A2C_TOKEN": "s3cret"})
        assert code == 0, err
        code, out, err = await run("room", env={**env, "A2C_TOKEN": "wrong"})
        exited_at = time.monotonic()
    assert code == 1 and out == ""
    assert "error 401" in err and "Authentication failed" in err
    assert "wrong" not in err and "Traceback" not in err
    # One attempt, no retries, and the process ends right after the
    # refusal (measured from the refusal, so interpreter start-up does not count).
    assert len(auth.refused_at) == 1
    assert exited_at - auth.refused_at[0] < 2.0


async def test_broken_pipe_is_quiet(make_computer, server):
    computer = await make_computer()
    computer.tools = [scripted_tool(f"tool_{i}") for i in range(400)]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", server.url, "--office", OFFICE,
        "--table", "tools", "box-1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=CLEAN_ENV,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    await asyncio.wait_for(process.stdout.readline(), 120)
    process.stdout.feed_eof()
    # What `| head -1` does: read one line, then close the pipe.
    transport = process._transport  # type: ignore[attr-defined]
    transport.get_pipe_transport(1).close()
    err = (await asyncio.wait_for(process.stderr.read(), 120)).decode()
    code = await asyncio.wait_for(process.wait(), 120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == 0


def test_output_flags_work_before_and_after_the_command() -> None:
    base = ["--server", "http://127.0.0.1:9", "--office", "o"]
    for argv, want in (
        ([*base, "--json", "room"], "json"),
        ([*base, "room", "--json"], "json"),
        ([*base, "--table", "tools", "box"], "table"),
        ([*base, "tools", "box", "--table"], "table"),
        ([*base, "room"], None),
    ):
        _, args = parse_args(argv, {})
        assert args.output == want, argv


def test_call_help_says_the_default_timeout_and_the_progress_flag(capsys):
    """``call --help`` states the 60 s default, and a long call that reports progress has a
    flag to keep it alive."""
    with pytest.raises(SystemExit) as info:
        build_parser({}).parse_args(["call", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps at the terminal width
    assert "default: 60" in text
    assert "--timeout-resets-on-progress" in text
    _, args = parse_args(["--server", "http://127.0.0.1:9", "--office", "o", "call", "b", "t",
                          "{}"], {})  # fmt: skip
    assert args.timeout == 60.0 and args.timeout_resets_on_progress is False
