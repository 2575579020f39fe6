"""``a2c-agent mcp`` between a hostile Computer and a real MCP host: the office hears only what
the host declared, and floods and foreign links never reach the host.

The Server runs in-process; the Computer is a raw python-socketio client answering with
input-required results written by hand (``a2c_testkit.scripted_hostile``); the bridge is the
real ``a2c-agent mcp`` process spawned over stdio by a real mcp 2.3 host: a
``ClientSession`` (2025-11-25: the bridge sends it requests) or ``Client(mode="auto")``
(2026-07-28: the bridge answers ``InputRequiredResult``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import types

from a2c_protocol import Event
from a2c_testkit.bridge import modern_stdio_host, stdio_host, text_of
from a2c_testkit.scripted_computer import ScriptedComputer, scripted_tool
from a2c_testkit.scripted_hostile import HostileTool, form, sampling, url

OFFICE = "office-1"
TOOL = "box-1__greet"
MakeComputer = Callable[..., Awaitable[ScriptedComputer]]
ASKS = {"f": form("Name?"), "u": url("Open", "javascript:alert(1)"),
        "u2": url("Sign in", "https://wiki.example.test/a"), "s": sampling("2+2?"),
        "ts": sampling("weather?", tools=[{"name": "w", "inputSchema": {"type": "object"}}])}  # fmt: skip


class Host:
    """A host's user and model, counting what they are asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            self.asked.append(f"url {params.url}")
            return types.ElicitResult(action="accept")
        self.asked.append(f"form {params.message}")
        return types.ElicitResult(action="accept", content={"answer": "Ann"})

    async def sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append("sampling")
        text = types.TextContent(type="text", text="4")
        return types.CreateMessageResult(role="assistant", content=text, model="m")


@contextlib.asynccontextmanager
async def host(
    era: str, server: Any, log: Path, callbacks: dict[str, Any]
) -> AsyncIterator[Callable[[str], Awaitable[types.CallToolResult]]]:
    """A host of the bridge in ``era``; yields its ``call(tool)``."""
    if era == "handshake":
        async with stdio_host(server.url, OFFICE, log, **callbacks) as (session, _):
            yield lambda tool: session.call_tool(tool, {})
    else:
        async with modern_stdio_host(server.url, OFFICE, log, **callbacks) as client:
            assert client.protocol_version == "2026-07-28"
            yield lambda tool: client.call_tool(tool, {})


async def computer_with(make_computer: MakeComputer, tool: HostileTool) -> ScriptedComputer:
    computer = await make_computer()
    computer.tools = [scripted_tool("greet")]
    computer.on(Event.TOOL_CALL, tool)
    return computer


@pytest.mark.parametrize("era", ["handshake", "modern"])
@pytest.mark.parametrize(
    ("declares", "told", "asked"),
    [
        # mcp 2.3 declares forms and URLs with an elicitation callback, sampling (no tools)
        # with a sampling callback
        ("elicitation", {"elicitation": {"form": {}, "url": {}}},
         ["form Name?", "url https://wiki.example.test/a"]),
        ("sampling", {"sampling": {}}, ["sampling"]),
    ],
)  # fmt: skip
async def test_the_office_hears_only_what_the_host_declared(
    make_computer: MakeComputer, server: Any, tmp_path: Path, era: str, declares: str,
    told: dict[str, Any], asked: list[str],
) -> None:  # fmt: skip
    tool = HostileTool([ASKS], server="evil")
    await computer_with(make_computer, tool)
    user = Host()
    callbacks = {"elicitation": {"elicitation_callback": user.elicit},
                 "sampling": {"sampling_callback": user.sample}}[declares]  # fmt: skip
    async with host(era, server, tmp_path / "bridge.log", callbacks) as call:
        result = await call(TOOL)
    assert text_of(result) == "done", text_of(result)
    assert tool.declared[0] == told
    assert user.asked == asked  # nothing undeclared, no javascript: link
    (answers,) = tool.answers
    if declares == "elicitation":  # a URL the host could be shown, were it a web link
        assert "'javascript:'" in answers["u"]["a2c_error"]["message"]
    else:
        assert answers["u"] == answers["f"] == {"action": "decline"}
    assert "not declared" in answers["ts"]["a2c_error"]["message"]


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_a_flood_through_the_bridge_is_refused_before_the_host(
    make_computer: MakeComputer, server: Any, tmp_path: Path, era: str
) -> None:
    flood = {f"f{i}": form(f"q{i}") for i in range(17)}
    await computer_with(make_computer, HostileTool([flood]))
    user = Host()
    async with host(era, server, tmp_path / "bridge.log", {"elicitation_callback": user.elicit}
                    ) as call:  # fmt: skip
        result = await call(TOOL)
    assert result.is_error
    assert "17 input requests; at most 16 are taken per round" in text_of(result)
    assert user.asked == []
