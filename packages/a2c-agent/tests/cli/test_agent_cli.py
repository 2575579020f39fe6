"""The ``a2c-agent`` command, run as a real subprocess against the real Server."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path

import pytest

from a2c_agent._cli._args import parse_args
from a2c_agent._cli._main import build_parser, main, render_table
from a2c_protocol import CallToolResult, Event
from a2c_server import ServerSettings
from a2c_testkit.scripted_computer import scripted_tool
from a2c_testkit.server import running_server

OFFICE = "office-1"


async def run_cli(
    url: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2c_agent",
        "--server",
        url,
        "--office",
        OFFICE,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_cli_commands_print_json(make_computer, server):
    computer = await make_computer(page_size=2)
    computer.tools = [scripted_tool("count", tags=["text"])]
    computer.desktops = ["window://org.example.a\n\nhi"]
    computer.resources = {
        "wins": [{"uri": f"window://org.example.w/{i}", "name": f"w{i}"} for i in range(5)]
    }
    computer.tool_results["count"] = CallToolResult(content=[{"type": "text", "text": "2"}])

    code, out, _ = await run_cli(server.url, "room")
    assert code == 0
    names = sorted(m["name"] for m in json.loads(out))
    assert names[0].startswith("a2c-agent-cli-") and names[1] == "box-1"

    code, out, _ = await run_cli(server.url, "tools", "box-1")
    (tool,) = json.loads(out)
    assert code == 0 and tool["name"] == "count" and tool["tool_meta"]["tags"] == ["text"]

    code, out, _ = await run_cli(server.url, "config", "box-1")
    assert code == 0 and json.loads(out) == {"servers": {}}

    code, out, _ = await run_cli(server.url, "desktop", "box-1", "--size", "1")
    assert code == 0 and json.loads(out) == ["window://org.example.a\n\nhi"]

    code, out, _ = await run_cli(server.url, "resources", "box-1", "wins", "--all")
    assert code == 0 and [r["name"] for r in json.loads(out)["resources"]] == [
        f"w{i}" for i in range(5)
    ]

    code, out, _ = await run_cli(server.url, "resources", "box-1", "wins")
    assert code == 0 and json.loads(out)["next_cursor"] == "2"

    code, out, _ = await run_cli(
        server.url, "call", "box-1", "count", '{"text": "a b"}', "--timeout", "5"
    )
    assert code == 0 and json.loads(out)["content"] == [{"type": "text", "text": "2"}]
    assert computer.received(Event.TOOL_CALL)[0]["params"] == {"text": "a b"}


async def test_cli_errors_print_the_message_and_exit_non_zero(make_computer, server):
    await make_computer()
    code, out, err = await run_cli(server.url, "tools", "ghost")
    assert code == 1 and out == ""
    assert "error 404" in err

    code, out, err = await run_cli(server.url, "resources", "box-1", "nope")
    assert code == 1 and "error 4014" in err and "not registered" in err

    code, out, _ = await run_cli(server.url, "call", "box-1", "missing", "{}")
    assert code == 3 and json.loads(out)["isError"] is True

    code, _, err = await run_cli(
        server.url, "desktop", "box-1", "--window", "window://h/p?priority=5"
    )
    assert code == 2 and "query is not allowed" in err

    code, _, err = await run_cli(server.url, "call", "box-1", "x", "[1]")
    assert code == 2 and "JSON object" in err


async def test_cli_sends_the_token_as_auth_token():
    async with running_server(ServerSettings(auth_token="s3cret")) as srv:
        code, out, _ = await run_cli(srv.url, "--token", "s3cret", "room")
        assert code == 0 and json.loads(out)[0]["name"].startswith("a2c-agent-cli-")
        code, out, err = await run_cli(srv.url, "--token", "wrong", "room")
        assert code == 1 and "Authentication failed" in err
        assert "wrong" not in err


async def test_cli_version_refusal_exits_non_zero():
    async with running_server(ServerSettings(protocol_version="0.3.0")) as srv:
        code, out, err = await run_cli(srv.url, "room")
    assert code == 1 and out == ""
    assert "error 4008" in err and "0.3.0" in err and "0.2.3" in err


def test_cli_unreachable_server_exits_non_zero(capsys):
    stdout = io.StringIO()
    code = main(["--server", "http://127.0.0.1:9", "--office", OFFICE, "room"], stdout=stdout)
    assert code == 1 and stdout.getvalue() == ""
    err = capsys.readouterr().err
    assert "cannot connect" in err and "Connect call failed" in err
    assert "ssl:default" not in err  # aiohttp's words, meaningless for an http:// URL


def test_render_table_is_readable():
    room = [
        {
            "name": "box-1",
            "role": "computer",
            "a2c_version": "0.2.0",
            "sid": "abc",
            "office_id": "o",
        }
    ]
    assert render_table("room", room).splitlines()[0].split() == ["NAME", "ROLE", "A2C", "SID"]
    assert "box-1" in render_table("room", room)
    tools = [{"name": "count", "description": "counts", "tool_meta": {"tags": ["a", "b"]}}]
    assert "a,b" in render_table("tools", tools)
    resources = {
        "resources": [{"uri": "window://h/1", "name": "w", "annotations": {"priority": 0.5}}],
        "next_cursor": "2",
    }
    text = render_table("resources", resources)
    assert "0.50" in text and "next cursor: 2" in text
    failed = {
        "content": [{"type": "text", "text": "nope"}],
        "isError": True,
        "meta": {"error_code": 4001},
    }
    assert render_table("call", failed) == "tool error 4001: nope"
    assert render_table("desktop", []) == "(empty)"


def test_parser_requires_server_and_office():
    with pytest.raises(SystemExit):
        parse_args(["room"], {})
    args = build_parser().parse_args(
        ["--server", "http://x", "--office", "o", "desktop", "c", "--size", "3"]
    )
    assert (args.command, args.computer, args.size) == ("desktop", "c", 3)
