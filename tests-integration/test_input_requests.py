"""Tools that ask, through an office: real processes end to end.

``a2c-server`` and ``a2c-computer run`` as processes; the Computer hosts the mcp 2 server
``a2c_testkit.mcp_servers.asking`` over stdio twice, once in the handshake era (``asking``,
where ``ctx.elicit``, ``ctx.session.create_message`` and ``list_roots`` are server-initiated
requests) and once pinned to 2026-07-28 (``modern``, tools prefixed ``m_``: its resolver
tools answer ``input_required``). Our Agent SDK answers with a handler, ``a2c-agent call``
from flags and on a real terminal; official 0.2.2 / 0.4.2 Agents see today's behaviour; a
FastMCP 4.1.6 server (its own venv) asks with ``ctx.elicit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import (
    AsyncAgent,
    ElicitationRequest,
    ElicitationResponse,
    InputOrigin,
    InputRequest,
    InputResponse,
    InputTimeoutError,
    SamplingRequest,
    SamplingResponse,
    decline_input,
    result_text,
)
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.official import fastmcp_venv, official_venv, run_official
from a2c_testkit.terminal import Terminal, run_agent_cli
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config

SCRIPTS = Path(__file__).parent / "interop"
AUTO = {"auto_apply": True}
USE = {"role": "assistant", "model": "m", "stopReason": "toolUse",
       "content": [{"type": "tool_use", "id": "c1", "name": "get_weather",
                    "input": {"city": "Paris"}}]}  # fmt: skip


def asking_config(path: Path, *extra: dict[str, Any]) -> Path:
    return write_config(path, [
        stdio_server_config("asking", "asking", default_tool_meta=AUTO, roots=[str(path.parent)]),
        stdio_server_config("modern", "asking", default_tool_meta=AUTO, mcp_era="modern",
                            tool_prefix="m_", roots=[str(path.parent)]),
        *extra,
    ])  # fmt: skip


@contextlib.asynccontextmanager
async def office(procs: Any, config: Path, *extra_args: str) -> AsyncIterator[tuple[str, str]]:
    room = f"asks-{uuid.uuid4().hex[:8]}"
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config, server_url=server.url, office=room,
                         name="box", confirm="allow", track=procs.track,
                         extra_args=extra_args),
    ):  # fmt: skip
        async with AsyncAgent(server.url, name=f"probe-{room}") as probe:
            await probe.join_office(room)
            await eventually(lambda: len(probe.tools.get("box", ())) >= 20, timeout=120,
                             what="the Computer's tools")  # fmt: skip
            await probe.leave_office()
        yield server.url, room


async def answer(request: InputRequest) -> InputResponse:
    if isinstance(request, ElicitationRequest):
        if request.mode == "url":
            return ElicitationResponse.accept()
        return ElicitationResponse.accept({"name": "Ann"})
    assert isinstance(request, SamplingRequest)
    if request.wants_tools:
        return SamplingResponse(USE)
    return SamplingResponse.text("4", model="test-model")


async def test_the_agent_sdk_answers_tools_that_ask_in_both_eras(
    procs: Any, tmp_path: Path
) -> None:
    seen: list[InputRequest] = []

    async def handler(request: InputRequest) -> InputResponse:
        seen.append(request)
        return await answer(request)

    config = asking_config(tmp_path / "computer.json")
    async with (
        office(procs, config) as (url, room),
        AsyncAgent(url, name="alice", input_handler=handler) as agent,
    ):
        await agent.join_office(room)
        said = {tool: result_text(await agent.call_tool("box", tool, args, timeout=60))
                for tool, args in [
                    ("greet", {}), ("sign_in", {}), ("ask_model", {"question": "2+2?"}),
                    ("ask_model_tools", {"question": "Paris?"}), ("roots", {}),
                    ("m_resolved_greet", {}), ("m_resolved_sample", {}),
                    ("m_resolved_roots", {}),
                ]}  # fmt: skip
    root = tmp_path.as_uri()
    assert said == {
        "greet": "hello Ann", "sign_in": "sign_in:accept", "ask_model": "model:4",
        "ask_model_tools": 'model used get_weather({"city": "Paris"})',
        "roots": f"roots:{root}", "m_resolved_greet": "resolved hello Ann",
        "m_resolved_sample": "resolved model:4", "m_resolved_roots": f"resolved roots:{root}",
    }  # fmt: skip
    origins = {(r.method, r.origin.mcp_server) for r in seen if r.origin is not None}
    assert origins == {
        ("elicitation/create", "asking"),
        ("sampling/createMessage", "asking"),
        ("elicitation/create", "modern"),
        ("sampling/createMessage", "modern"),
    }
    assert seen[0].origin == InputOrigin(computer="box", tool="greet", mcp_server="asking")


async def test_a_decline_reaches_the_server_and_without_a_handler_nothing_changes(
    procs: Any, tmp_path: Path
) -> None:
    config = asking_config(tmp_path / "computer.json")
    async with office(procs, config) as (url, room), AsyncAgent(url, name="alice") as agent:
        await agent.join_office(room)
        declined = await agent.call_tool("box", "greet", {}, on_input=decline_input)
        refused = await agent.call_tool(
            "box", "ask_model", {"question": "?"}, on_input=decline_input
        )
        plain = await agent.call_tool("box", "greet", {})
        modern = await agent.call_tool("box", "m_resolved_greet", {})
    assert result_text(declined) == "greet:decline"
    assert result_text(refused).startswith("ask_model failed:")
    assert "declined by the Agent" in result_text(refused)
    assert "takes no questions" in result_text(plain)
    assert modern.is_error and "takes no questions" in result_text(modern)


async def test_a_handler_slower_than_the_computers_expiry_ends_the_call_as_a_timeout(
    procs: Any, tmp_path: Path
) -> None:
    # The Computer tells the Agent how long it keeps the requests (--input-timeout): the SDK
    # stops waiting for the handler then, instead of sending answers nobody waits for.
    async def slow(request: InputRequest) -> InputResponse:
        await asyncio.sleep(30)
        return await answer(request)

    config = asking_config(tmp_path / "computer.json")
    async with (
        office(procs, config, "--input-timeout", "1") as (url, room),
        AsyncAgent(url, name="alice", input_handler=slow) as agent,
    ):
        await agent.join_office(room)
        with pytest.raises(InputTimeoutError) as caught:
            await agent.call_tool("box", "greet", {}, timeout=30)
    assert caught.value.expires_in == 1


def _answer_on_the_terminal(url: str, room: str) -> tuple[int, str, str]:
    term = Terminal.spawn([sys.executable, "-m", "a2c_agent", "--server", url, "--office",
                           room, "call", "box", "greet"])  # fmt: skip
    try:
        shown = term.expect("Name - your name (string; required): ")
        term.type("Bea")
        term.expect("Age - your age (integer): ")
        term.type("41")
        term.expect("[S]end / [e]dit / [d]ecline / [c]ancel: ")
        term.type("y")
        code, out = term.finish()
    finally:
        term.close()
    return code, out, shown


async def test_the_cli_answers_from_json_and_on_a_terminal(procs: Any, tmp_path: Path) -> None:
    async with office(procs, asking_config(tmp_path / "computer.json")) as (url, room):
        code, out, err = await run_agent_cli(url, room, "call", "box", "greet", "{}", "--answer",
                                    '{"name": "Cy"}', "--json")  # fmt: skip
        assert code == 0, err
        data = json.loads(out)
        assert data["content"][0]["text"] == "hello Cy"
        (exchange,) = data["input_requests"]
        assert (exchange["method"], exchange["mcp_server"]) == ("elicitation/create", "asking")
        assert exchange["answer"] == {"action": "accept", "content": {"name": "Cy"}}
        code, out, err = await run_agent_cli(
            url, room, "call", "box", "ask_model", '{"question": "?"}'
        )
        assert code == 0 and "ask_model failed" in out and "no --sample" in err
        code, out, shown = await asyncio.to_thread(_answer_on_the_terminal, url, room)
    assert code == 0
    assert json.loads(out)["content"][0]["text"] == "hello Bea (41)"
    assert "box / asking (tool greet) asks:" in shown and "What is your name?" in shown


async def test_a_fastmcp_4_server_asks_through_the_office(procs: Any, tmp_path: Path) -> None:
    python = await asyncio.to_thread(fastmcp_venv, "4.1.6")
    fastmcp = {"type": "stdio", "name": "fm", "default_tool_meta": AUTO, "tool_prefix": "fm_",
               "server_parameters": {"command": str(python),
                                     "args": [str(SCRIPTS / "fastmcp4_asking.py")]}}  # fmt: skip

    async def choose(request: InputRequest) -> InputResponse:
        assert isinstance(request, ElicitationRequest) and request.requested_schema is not None
        choices = request.requested_schema["properties"]["value"].get("enum")
        return ElicitationResponse.accept({"value": choices[1] if choices else "Dee"})

    config = asking_config(tmp_path / "computer.json", fastmcp)
    async with (
        office(procs, config) as (url, room),
        AsyncAgent(url, name="alice", input_handler=choose) as agent,
    ):
        await agent.join_office(room)
        greeted = await agent.call_tool("box", "fm_greet", {}, timeout=60)
        picked = await agent.call_tool("box", "fm_pick_colour", {}, timeout=60)
    assert result_text(greeted) == "hello Dee"
    assert result_text(picked) == "colour:green"


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.2.2", "0.4.2"])
async def test_an_official_agent_sees_todays_behaviour(
    procs: Any, tmp_path: Path, version: str
) -> None:
    python = await asyncio.to_thread(official_venv, version)
    async with office(procs, asking_config(tmp_path / "computer.json")) as (url, room):
        run = await asyncio.to_thread(
            run_official, python, SCRIPTS / "official_agent_asks.py", url, room,
            "official-agent", "box", timeout=240,
        )  # fmt: skip
    out = json.loads(run.check().strip().splitlines()[-1])
    assert "resultType" not in out["call"] and out["call"]["isError"] is False
    assert "greet failed: elicitation/create refused by the A2C Computer: the caller of this " \
           "tool takes no questions" in out["call"]["content"][0]["text"]  # fmt: skip
