"""``a2c-agent call`` against a hostile Computer: its words never drive the terminal, and its
floods, foreign links and undeclared kinds never reach a prompt.

The CLI is a real subprocess against the real Server; the Computer is a raw python-socketio
client answering with input-required results written by hand
(``a2c_testkit.scripted_hostile``). The terminal test runs the CLI on a real pty and reads
every byte it writes there.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from a2c_agent._cli._visible import visible
from a2c_protocol import Event
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.scripted_hostile import HostileTool, form, sampling, url
from a2c_testkit.terminal import Terminal, run_agent_cli

OFFICE = "office-1"
MakeComputer = Callable[..., Awaitable[ScriptedComputer]]
#: What a terminal would obey: ESC (CSI, OSC), BEL, CR, and the C1 forms (CSI, OSC, ST).
RAW = re.compile("[\x1b\x07\r\x9b\x9d\x9c]")
OSC_TITLE = "\x1b]0;pwned\x07"
CSI_ERASE = "\x1b[2K\r"
EVIL_SERVER = f"wiki{OSC_TITLE}{CSI_ERASE}"


async def hostile(make_computer: MakeComputer, tool: HostileTool) -> HostileTool:
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, tool)
    return tool


def test_visible_escapes_control_characters_and_keeps_lines() -> None:
    assert visible("a\x1b]0;t\x07b\rc\x9bd") == "a\\x1b]0;t\\x07b\\rc\\x9bd"
    assert visible("line 1\nline 2\tend") == "line 1\nline 2\tend"
    assert visible("name\nfake line", one_line=True) == "name\\nfake line"
    assert visible("evil\u202egnp.exe") == "evil\\u202egnp.exe"
    assert visible("plain text, é ü 中") == "plain text, é ü 中"
    assert visible(None) == "None"


async def test_cli_without_a_terminal_prints_peer_text_escaped(
    make_computer: MakeComputer, server: Any
) -> None:
    rounds = [{"f": form(f"Name?{OSC_TITLE}"), "u": url(f"Open{OSC_TITLE}", "javascript:alert(1)"),
               "u2": url(f"Sign in{CSI_ERASE}", "https://wiki.example.test/a"),
               "s": sampling(f"hi{OSC_TITLE}"), "r": {"method": "roots/list", "params": {}}}]  # fmt: skip
    tool = await hostile(make_computer, HostileTool(rounds, server=EVIL_SERVER))
    code, out, err = await run_agent_cli(server.url, OFFICE, "call", "box-1", "greet", "{}")
    assert code == 0, err
    assert RAW.search(err) is None and RAW.search(out) is None, err
    assert "box-1 / wiki\\x1b]0;pwned\\x07\\x1b[2K\\r (tool greet)" in err
    (answers,) = tool.answers
    assert "'javascript:'" in answers["u"]["a2c_error"]["message"]
    assert answers["f"] == answers["u2"] == {"action": "decline"}
    # never declared (roots are the Computer's own): answered by the SDK, not the CLI
    assert "not declared" in answers["r"]["a2c_error"]["message"]
    assert "refused roots/list" not in err


async def test_cli_refuses_a_flood_naming_the_cap(make_computer: MakeComputer, server: Any) -> None:
    flood = {f"s{i}": sampling(f"q{i}") for i in range(5000)}
    await hostile(make_computer, HostileTool([flood]))
    code, _, err = await run_agent_cli(
        server.url, OFFICE, "call", "box-1", "greet", "{}", "--sample", "4"
    )
    assert code == 1
    assert "5000 input requests; at most 16 are taken per round" in err
    assert "answered the sampling request" not in err  # no request was answered one by one


def _cli(url: str) -> list[str]:
    return [sys.executable, "-m", "a2c_agent", "--server", url, "--office", OFFICE,
            "call", "box-1", "greet", "{}"]  # fmt: skip


def _hostile_prompts(url: str) -> tuple[int, str, str]:
    term = Terminal.spawn(_cli(url))
    shown = ""
    try:
        shown += term.expect("(string): ")
        term.type("Ann")
        shown += term.expect("[S]end / [e]dit / [d]ecline / [c]ancel: ")
        term.type("dog")  # neither a documented word nor its letter: asked again
        shown += term.expect("answer one of cancel, decline, edit, send (or its first letter)")
        shown += term.expect("[S]end / [e]dit / [d]ecline / [c]ancel: ")
        term.type("send")
        shown += term.expect("[a]ccept / [d]ecline / [c]ancel: ")
        term.type("decline")
        shown += term.expect("Type the model's reply (an empty line declines): ")
        term.type("")
        code, out = term.finish()
        shown += term.seen
    finally:
        term.close()
    return code, out, shown


async def test_cli_prompts_never_pass_control_sequences_to_the_terminal(
    make_computer: MakeComputer, server: Any
) -> None:
    field = {"who": {"type": "string", "title": f"Who{CSI_ERASE}", "description": OSC_TITLE}}
    tools = [{"name": f"t{OSC_TITLE}", "inputSchema": {"type": "object"}}]
    rounds = [{"f": form(f"Your name?\nsecond line{OSC_TITLE}", field)},
              {"u": url(f"Sign in{CSI_ERASE}", "https://wiki.example.test/a"),
               "s": sampling(f"2+2?{OSC_TITLE}", systemPrompt=f"sys{CSI_ERASE}", tools=tools)}]  # fmt: skip
    tool = await hostile(make_computer, HostileTool(rounds, server=EVIL_SERVER))
    code, out, shown = await asyncio.to_thread(_hostile_prompts, url=server.url)
    assert code == 0, shown
    # Every byte the CLI wrote on the terminal: no ESC, BEL or C1 control got through raw
    # (the pty turns each newline into CR LF, so CR is checked apart from those).
    assert re.search("[\x1b\x07\x9b\x9d\x9c]", shown) is None, shown
    assert "\r" not in shown.replace("\r\n", "\n"), shown
    assert "Your name?\nsecond line\\x1b]0;pwned\\x07" in shown.replace("\r\n", "\n")
    assert "Who\\x1b[2K\\r - \\x1b]0;pwned\\x07 (string): " in shown
    assert "wiki\\x1b]0;pwned\\x07" in shown and "Sign in\\x1b[2K\\r" in shown
    assert "system: sys\\x1b[2K\\r" in shown and "tools: t\\x1b]0;pwned\\x07" in shown
    assert "(answer by " in shown  # the deadline the Computer gave, on every prompt
    assert tool.answers[0] == {"f": {"action": "accept", "content": {"who": "Ann"}}}
    assert tool.answers[1]["u"] == {"action": "decline"}
    assert json.loads(out)["content"][0]["text"] == "done"


@pytest.mark.parametrize("typed", ["e", "edit"])
async def test_cli_review_takes_edit_as_a_word_or_a_letter(
    make_computer: MakeComputer, server: Any, typed: str
) -> None:
    tool = await hostile(make_computer, HostileTool([{"f": form("Name?")}], server="wiki"))

    def run() -> int:
        term = Terminal.spawn(_cli(server.url))
        try:
            term.expect("(string): ")
            term.type("Ann")
            term.expect("[c]ancel: ")
            term.type(typed)
            term.expect("(string): ")  # asked again
            term.type("Bo")
            term.expect("[c]ancel: ")
            term.type("s")
            return term.finish()[0]
        finally:
            term.close()

    assert await asyncio.to_thread(run) == 0
    assert tool.answers == [{"f": {"action": "accept", "content": {"answer": "Bo"}}}]


async def test_cli_stops_waiting_at_the_rounds_expiry(
    make_computer: MakeComputer, server: Any
) -> None:
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, HostileTool([{"f": form("Name?")}], expires_in=2))

    def run() -> tuple[int, str]:
        term = Terminal.spawn(_cli(server.url))
        try:
            shown = term.expect("(string): ")  # nobody types: the deadline passes
            code = term.process.wait(timeout=60)
            return code, shown + term.drain()
        finally:
            term.close()

    code, shown = await asyncio.to_thread(run)
    assert code == 1, shown
    assert "within 2 s)" in shown or "within 1 s)" in shown  # the prompt said so
    assert "were not answered within 2 s" in shown
    cancel = await computer.wait_for_request(Event.TOOL_CALL, lambda p: p["req_id"].endswith(".x"))
    assert cancel["a2c_input_responses"] == {"f": {"action": "cancel"}}
