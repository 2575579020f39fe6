"""``a2c-agent call`` answering a tool that asks: from flags, on a real terminal, or no.

The CLI runs as a real subprocess against the real Server; the Computer is scripted
(``AskingTool``). The terminal is a real pseudo-terminal: the CLI's stdin and stderr are its
slave side, the test types on the master side what a user would.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from a2c_protocol import Event
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.scripted_input import AskingTool, form_request, sampling_request, url_request
from a2c_testkit.terminal import Terminal, run_agent_cli

OFFICE = "office-1"

MakeComputer = Callable[..., Awaitable[ScriptedComputer]]
NAME = form_request("Your name?", {"name": {"type": "string", "title": "Name"},
                                   "age": {"type": "integer", "minimum": 18}}, ["name"])  # fmt: skip
URL = url_request("Sign in to the wiki", "https://wiki.example.test/connect?x=1")
SAMPLE = sampling_request("What is 2+2?")


async def run_cli(url: str, *args: str) -> tuple[int, str, str]:
    return await run_agent_cli(url, OFFICE, *args)


async def asking(make_computer: MakeComputer, rounds: list[dict[str, Any]]) -> AskingTool:
    computer = await make_computer()
    tool = AskingTool(rounds, mcp_server="wiki")
    computer.on(Event.TOOL_CALL, tool)
    return tool


async def test_cli_answers_from_flags_and_json_shows_the_exchanges(
    make_computer: MakeComputer, server: Any
) -> None:
    tool = await asking(make_computer, [{"q1": NAME, "q2": URL}, {"s1": SAMPLE}])
    code, out, err = await run_cli(
        server.url, "call", "box-1", "greet", "{}", "--answer", '{"name": "Ann", "age": 30}',
        "--answer", "accept", "--sample", "4",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert tool.answers == [
        {"q1": {"action": "accept", "content": {"name": "Ann", "age": 30}},
         "q2": {"action": "accept"}},
        {"s1": {"role": "assistant", "content": {"type": "text", "text": "4"},
                "model": "a2c-agent-cli", "stopReason": "endTurn"}},
    ]  # fmt: skip
    assert [(x["key"], x["method"], x["mcp_server"]) for x in data["input_requests"]] == [
        ("q1", "elicitation/create", "wiki"), ("q2", "elicitation/create", "wiki"),
        ("s1", "sampling/createMessage", "wiki"),
    ]  # fmt: skip
    assert data["input_requests"][1]["params"]["url"] == "https://wiki.example.test/connect?x=1"
    assert json.loads(data["content"][0]["text"]) == tool.answers
    assert "answered form request of box-1 / wiki (tool greet) with accept" in err


async def test_cli_without_answers_or_terminal_declines(
    make_computer: MakeComputer, server: Any
) -> None:
    tool = await asking(make_computer, [{"q1": NAME, "s1": SAMPLE}])
    code, _, err = await run_cli(server.url, "call", "box-1", "greet", "{}")
    assert code == 0, err
    (answers,) = tool.answers
    assert answers["q1"] == {"action": "decline"}
    assert "no --sample" in answers["s1"]["a2c_error"]["message"]
    assert "declined form request of box-1 / wiki (tool greet): 'Your name?'" in err
    assert "declined the sampling request" in err


async def test_cli_refuses_a_form_that_asks_for_a_secret_without_asking(
    make_computer: MakeComputer, server: Any
) -> None:
    secret = form_request("Log in", {"user": {"type": "string"}, "password": {"type": "string"}})
    tool = await asking(make_computer, [{"q1": secret}])
    code, _, err = await run_cli(
        server.url, "call", "box-1", "greet", "{}", "--answer", '{"user": "u", "password": "p"}'
    )
    assert code == 0 and tool.answers == [{"q1": {"action": "decline"}}]
    assert "asks for a secret (password)" in err


async def test_cli_an_answer_that_does_not_fit_the_form_is_an_error(
    make_computer: MakeComputer, server: Any
) -> None:
    computer = await make_computer()
    tool = AskingTool([{"q1": NAME}], mcp_server="wiki")
    computer.on(Event.TOOL_CALL, tool)
    code, _, err = await run_cli(
        server.url, "call", "box-1", "greet", "{}", "--answer", '{"age": 3}'
    )
    assert code == 1
    assert "does not fit the form" in err and "name: required" in err and "age: must be" in err
    cancel = await computer.wait_for_request(Event.TOOL_CALL, lambda p: p["req_id"].endswith(".x"))
    assert cancel["a2c_input_responses"] == {"q1": {"action": "cancel"}}


@pytest.mark.parametrize("value", ["maybe", "[1]", "{"])
async def test_cli_a_bad_answer_flag_is_a_usage_error(value: str) -> None:
    code, _, err = await run_cli("http://127.0.0.1:9", "call", "c", "t", "{}", "--answer", value)
    assert code == 2 and "--answer" in err


def _cli(url: str) -> list[str]:
    return [sys.executable, "-m", "a2c_agent", "--server", url, "--office", OFFICE,
            "call", "box-1", "greet", "{}"]  # fmt: skip


def _interactive_call(url: str) -> tuple[int, str, list[str]]:
    term = Terminal.spawn(_cli(url))
    screens: list[str] = []
    try:
        screens.append(term.expect("Name (string; required): "))
        term.type("")  # required: asked again
        term.expect("required")
        term.expect("Name (string; required): ")
        term.type("Ann")
        screens.append(term.expect("age (integer): "))
        term.type("ten")
        term.expect("expected an integer")
        term.type("12")
        term.expect("must be at least 18")
        term.type("")  # optional: left out
        screens.append(
            term.expect('Send {"name": "Ann"}? [S]end / [e]dit / [d]ecline / [c]ancel: ')
        )
        term.type("")
        screens.append(term.expect("[a]ccept / [d]ecline / [c]ancel: "))
        term.type("d")
        screens.append(term.expect("Type the model's reply (an empty line declines): "))
        term.type("four")
        code, out = term.finish()
    finally:
        term.close()
    return code, out, screens


async def test_cli_asks_on_a_terminal(make_computer: MakeComputer, server: Any) -> None:
    tool = await asking(make_computer, [{"q1": NAME, "q2": URL}, {"s1": SAMPLE}])
    code, out, screens = await asyncio.to_thread(_interactive_call, server.url)
    assert code == 0
    assert tool.answers == [
        {"q1": {"action": "accept", "content": {"name": "Ann"}}, "q2": {"action": "decline"}},
        {"s1": {"role": "assistant", "content": {"type": "text", "text": "four"},
                "model": "a2c-agent-cli", "stopReason": "endTurn"}},
    ]  # fmt: skip
    assert "box-1 / wiki (tool greet) asks:" in screens[0] and "Your name?" in screens[0]
    url_screen = screens[3]
    assert "(a2c-agent does not open it)" in url_screen
    assert "URL:  https://wiki.example.test/connect?x=1" in url_screen
    assert "host: wiki.example.test" in url_screen
    assert "user: What is 2+2?" in screens[4]
    assert len(json.loads(out)["input_requests"]) == 3


def _interrupted_call(url: str) -> tuple[int, str]:
    term = Terminal.spawn(_cli(url))
    try:
        term.expect("Name (string; required): ")
        term.process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        term.process.wait(timeout=60)  # the prompt still waiting for a line does not hold it
        said = term.drain()
    finally:
        term.close()
    return term.process.returncode, said


async def test_cli_interrupted_at_a_prompt_exits_and_cancels_on_the_computer(
    make_computer: MakeComputer, server: Any
) -> None:
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, AskingTool([{"q1": NAME}], mcp_server="wiki"))
    code, said = await asyncio.to_thread(_interrupted_call, server.url)
    assert code == 130, said
    cancel = await computer.wait_for_request(Event.TOOL_CALL, lambda p: p["req_id"].endswith(".x"))
    assert cancel["a2c_input_responses"] == {"q1": {"action": "cancel"}}
