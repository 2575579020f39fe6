"""Tools that ask, through ``a2c-agent mcp``: the MCP host answers.

Real processes: ``a2c-server``, ``a2c-computer run`` hosting the mcp 2 test server
``a2c_testkit.mcp_servers.asking`` twice (``asking`` in the handshake era, where
``ctx.elicit`` / ``ctx.session.create_message`` are server-initiated requests, and
``modern`` pinned to 2026-07-28, tools prefixed ``m_``, whose resolver tools answer
``input_required``), and the bridge spawned over stdio or serving HTTP. Hosts: mcp 2.3's
``Client(mode="auto")`` (2026-07-28: the bridge answers ``InputRequiredResult`` and the
host retries with its answers) and a ``ClientSession`` (2025-11-25: the bridge sends its own
``elicitation/create`` / ``sampling/createMessage``), both with callbacks; a FastMCP 4.1.6
server's ``ctx.elicit`` too (its own venv).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, MCPError, types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from a2c_agent import AsyncAgent
from a2c_testkit.bridge import (
    http_bridge,
    modern_http_host,
    modern_stdio_host,
    stdio_host,
    text_of,
)
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.official import fastmcp_venv
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

AUTO = {"auto_apply": True}
SCRIPTS = Path(__file__).parent / "interop"


class Answers:
    """A host's user and model: fills forms from their schema, accepts URLs, replies."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []  # (kind, message or URL)

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            self.asked.append(("url", params.url))
            return types.ElicitResult(action="accept")
        self.asked.append(("form", params.message))
        content: dict[str, Any] = {}
        for name, field in (params.requested_schema.get("properties") or {}).items():
            if "enum" in field:
                content[name] = field["enum"][0]
            elif field.get("type") == "string":
                content[name] = "Ann"
        return types.ElicitResult(action="accept", content=content)

    async def sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(("sampling", str(params.messages[0].content)))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="sunny"), model="m"
        )

    def callbacks(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicit, "sampling_callback": self.sample}


def asking_config(tmp: Path, *extra: dict[str, Any]) -> Path:
    return write_config(tmp / "box.json", [
        stdio_server_config("asking", "asking", default_tool_meta=AUTO),
        stdio_server_config("modern", "asking", default_tool_meta=AUTO, mcp_era="modern",
                            tool_prefix="m_"),
        *extra,
    ])  # fmt: skip


@contextlib.asynccontextmanager
async def office(procs: Any, config: Path, tools: int) -> AsyncIterator[tuple[str, str]]:
    """A Server and the Computer ``box``, once its ``tools`` tools are in the office."""
    room = f"asks-{uuid.uuid4().hex[:8]}"
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config, server_url=server.url, office=room,
                         name="box", confirm="allow", track=procs.track),
    ):  # fmt: skip
        async with AsyncAgent(server.url, name=f"probe-{room}") as probe:
            await probe.join_office(room)
            await eventually(lambda: len(probe.tools.get("box", ())) >= tools, timeout=120,
                             what="the Computer's tools")  # fmt: skip
            await probe.leave_office()
        yield server.url, room


MODERN_CASES = [
    # (tool, arguments, result): ctx.elicit / create_message on a handshake-era MCP
    # server (pushed to the Computer), resolvers on both eras of MCP server
    ("box__greet", {}, "hello Ann"),
    ("box__sign_in", {}, "sign_in:accept"),
    ("box__ask_model", {"question": "Weather?"}, "model:sunny"),
    ("box__resolved_greet", {}, "resolved hello Ann"),
    ("box__m_resolved_greet", {}, "resolved hello Ann"),
    ("box__m_resolved_sample", {}, "resolved model:sunny"),
    ("box__twice", {}, "twice:Ann,Ann"),
]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_2026_host_answers_through_input_required_results(
    procs: Any, tmp_path: Path, transport: str
) -> None:
    """mcp 2.3's ``Client(mode="auto")`` negotiates 2026-07-28 with the bridge; every
    question of the office's MCP servers reaches it as an ``InputRequiredResult`` its
    client answers (callbacks) and retries, and the tools get its answers."""
    answers = Answers()
    async with contextlib.AsyncExitStack() as stack:
        url, room = await stack.enter_async_context(
            office(procs, asking_config(tmp_path), tools=20)
        )
        if transport == "http":
            bridge, endpoint = await stack.enter_async_context(
                http_bridge(url, room, procs.log_dir)
            )
            procs.track(bridge)
            client = await stack.enter_async_context(
                modern_http_host(endpoint, **answers.callbacks())
            )
        else:
            client = await stack.enter_async_context(
                modern_stdio_host(url, room, procs.log_dir / "bridge.log", **answers.callbacks())
            )
        assert client.protocol_version == "2026-07-28"
        for tool, arguments, expected in MODERN_CASES:
            result = await client.call_tool(tool, arguments)
            assert text_of(result) == expected, (tool, result)
    assert ("url", "https://wiki.example.test/connect?s=1") in answers.asked


@contextlib.asynccontextmanager
async def handshake_host(
    transport: str, url: str, room: str, log_dir: Path, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    if transport == "stdio":
        async with stdio_host(url, room, log_dir / "bridge.log", **callbacks) as (session, _):
            yield session
        return
    async with (
        http_bridge(url, room, log_dir) as (_, endpoint),
        httpx2.AsyncClient(timeout=60) as http,
        streamable_http_client(endpoint, http_client=http) as (read, write),
        ClientSession(read, write, **callbacks) as session,
    ):
        await session.initialize()
        yield session


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_handshake_host_is_sent_the_bridges_own_requests(
    procs: Any, tmp_path: Path, transport: str
) -> None:
    """A ``ClientSession`` on 2025-11-25 gets ``elicitation/create`` and
    ``sampling/createMessage`` from the bridge, on its call's stream, and answers."""
    answers = Answers()
    async with (
        office(procs, asking_config(tmp_path), tools=20) as (url, room),
        handshake_host(transport, url, room, procs.log_dir, **answers.callbacks()) as session,
    ):
        assert session.initialize_result is not None
        assert session.initialize_result.protocol_version == "2025-11-25"
        for tool, arguments, expected in MODERN_CASES:
            result = await session.call_tool(tool, arguments)
            assert text_of(result) == expected, (tool, result)
        assert {kind for kind, _ in answers.asked} == {"form", "url", "sampling"}


async def test_what_the_host_did_not_declare_is_declined(procs: Any, tmp_path: Path) -> None:
    """A host without elicitation or sampling: the call takes no input and the Computer
    declines for it (as before); a host with elicitation only: the office is not told of
    sampling, so the Computer declines it, in either era."""
    answers = Answers()
    async with office(procs, asking_config(tmp_path), tools=20) as (url, room):
        async with stdio_host(url, room, procs.log_dir / "none.log") as (bare, _):
            greet = text_of(await bare.call_tool("box__greet", {}))
            assert greet.startswith("greet failed:"), greet
        async with stdio_host(
            url, room, procs.log_dir / "forms.log", elicitation_callback=answers.elicit
        ) as (forms, _):
            assert text_of(await forms.call_tool("box__greet", {})) == "hello Ann"
            model = text_of(await forms.call_tool("box__ask_model", {"question": "q"}))
            assert model.startswith("ask_model failed:") and "not take sampling" in model, model
        async with modern_stdio_host(
            url, room, procs.log_dir / "modern-forms.log", elicitation_callback=answers.elicit
        ) as client:
            assert text_of(await client.call_tool("box__m_resolved_greet", {})) == (
                "resolved hello Ann"
            )
            model = text_of(await client.call_tool("box__ask_model", {"question": "q"}))
            assert model.startswith("ask_model failed:") and "not take sampling" in model, model
    assert ("sampling", "q") not in answers.asked


async def _first_question(client: Client, tool: str) -> types.InputRequiredResult:
    first = await client.session.call_tool(tool, {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    return first


async def test_request_states_are_single_use_bound_and_expire(procs: Any, tmp_path: Path) -> None:
    """The 2026-07-28 side driven by hand: a ``requestState`` answers once, only for its
    own tool and arguments; a host that never comes back has its call cancelled after
    ``--input-timeout`` (the MCP server sees the cancel), and its state is unknown then."""
    async with (
        office(procs, asking_config(tmp_path), tools=20) as (url, room),
        modern_stdio_host(url, room, procs.log_dir / "bridge.log", "--input-timeout", "3",
                          elicitation_callback=Answers().elicit) as client,
    ):  # fmt: skip
        first = await _first_question(client, "box__greet")
        ((key, request),) = first.input_requests.items()
        assert isinstance(request, types.ElicitRequest)
        assert request.params.message == "What is your name?"
        state = first.request_state
        assert state is not None
        accept = {key: types.ElicitResult(action="accept", content={"name": "Bo"})}
        with pytest.raises(MCPError, match="issued for another call"):
            await client.session.call_tool(
                "box__sign_in", {}, input_responses=accept, request_state=state
            )
        done = await client.session.call_tool(
            "box__greet", {}, input_responses=accept, request_state=state
        )
        assert text_of(done) == "hello Bo"
        with pytest.raises(MCPError, match="unknown or expired"):
            await client.session.call_tool(
                "box__greet", {}, input_responses=accept, request_state=state
            )

        # a host that does not come back: the call is given up, the MCP server told
        abandoned = await _first_question(client, "box__greet")
        await eventually(
            lambda: "its host did not answer within 3 s" in _log(procs.log_dir / "bridge.log"),
            timeout=30, what="the parked call given up",
        )  # fmt: skip
        with pytest.raises(MCPError, match="unknown or expired"):
            await client.session.call_tool(
                "box__greet", {}, input_responses=accept, request_state=abandoned.request_state
            )
        # a wrong answer cancels the call with a clear error
        wrong = await _first_question(client, "box__greet")
        with pytest.raises(MCPError, match="does not answer elicitation/create"):
            await client.session.call_tool(
                "box__greet", {}, input_responses={}, request_state=wrong.request_state
            )


def _log(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def test_a_fastmcp_4_servers_elicit_reaches_both_kinds_of_host(
    procs: Any, tmp_path: Path
) -> None:
    """FastMCP 4.1.6's ``ctx.elicit`` (a server-initiated request: the Computer speaks the
    handshake era to it) through the office and the bridge, to a 2026-07-28 host and a
    handshake-era host."""
    if not os.environ.get("CI") and os.environ.get("A2C_SKIP_FASTMCP"):
        pytest.skip("A2C_SKIP_FASTMCP set")
    python = fastmcp_venv()
    entry = {
        "type": "stdio", "name": "fast", "default_tool_meta": AUTO,
        "server_parameters": {"command": str(python),
                              "args": [str(SCRIPTS / "fastmcp4_asking.py")]},
    }  # fmt: skip
    config = write_config(tmp_path / "fast.json", [entry])
    answers = Answers()
    async with office(procs, config, tools=2) as (url, room):
        async with modern_stdio_host(
            url, room, procs.log_dir / "modern.log", **answers.callbacks()
        ) as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("box__greet", {})) == "hello Ann"
            assert text_of(await client.call_tool("box__pick_colour", {})) == "colour:red"
        async with stdio_host(
            url, room, procs.log_dir / "handshake.log", **answers.callbacks()
        ) as (session, _):
            assert text_of(await session.call_tool("box__greet", {})) == "hello Ann"
