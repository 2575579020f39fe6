"""Tools that ask, made safe, with every part a process of its own.

Real processes: ``a2c-server``, ``a2c-computer run`` hosting mcp 2 test servers, and for
the first test the bridge ``a2c-agent mcp`` over stdio at ``--input-timeout 2`` with mcp
2.3's ``Client(mode="auto")`` as the host:

* a question a 2026-07-28 host abandons frees its MCP server at once: the host takes the
  first question of ``twice`` (``a2c_testkit.mcp_servers.asking``) and never answers; the
  bridge gives the call up, the Agent SDK tells the Computer every request is cancelled,
  the tool asks its second question, and the Computer ends the call there instead of
  keeping it (and the server) for its own 300 s; the host's next call asks and is answered;
* the bounds on input requests set on ``a2c-computer run``'s command line and environment
  hold against a hostile server (``a2c_testkit.mcp_servers.pushy``).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from mcp import types

from a2c_agent import AsyncAgent
from a2c_testkit.bridge import modern_stdio_host, text_of
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config


async def fill(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ann"})


def _log(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def test_a_question_the_host_abandons_frees_the_server_at_once(
    procs: Any, tmp_path: Path
) -> None:
    room = f"gone-{uuid.uuid4().hex[:8]}"
    config = write_config(tmp_path / "box.json", [
        stdio_server_config("asking", "asking", default_tool_meta={"auto_apply": True}),
    ])  # fmt: skip
    bridge_log = procs.log_dir / "bridge.log"
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config, server_url=server.url, office=room,
                         name="box", confirm="allow", track=procs.track) as computer,
    ):  # fmt: skip
        async with AsyncAgent(server.url, name=f"probe-{room}") as probe:
            await probe.join_office(room)
            await eventually(lambda: len(probe.tools.get("box", ())) >= 10, timeout=120,
                             what="the Computer's tools")  # fmt: skip
            await probe.leave_office()
        async with modern_stdio_host(server.url, room, bridge_log, "--input-timeout", "2",
                                     elicitation_callback=fill) as client:  # fmt: skip
            assert client.protocol_version == "2026-07-28"
            first = await client.session.call_tool("box__twice", {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first  # never answered
            await eventually(
                lambda: "its host did not answer within 2 s" in _log(bridge_log),
                timeout=60, what="the bridge giving the call up",
            )  # fmt: skip
            await computer.wait_for_log(
                "asked again after its Agent gave its questions up", timeout=30
            )
            again = text_of(await client.call_tool("box__greet", {}))
            assert again == "hello Ann", again


async def test_the_bounds_set_on_the_command_line_hold(procs: Any, tmp_path: Path) -> None:
    """``a2c-computer run --max-input-requests-per-round 4`` and
    ``A2C_MAX_INPUT_REQUESTS_PER_CALL=2``: a hostile 2026-07-28 server's rounds past either
    end the Agent SDK's call with an error naming that bound (the log names it too); a
    round within both is put to the Agent."""
    room = f"caps-{uuid.uuid4().hex[:8]}"
    config = write_config(tmp_path / "box.json", [
        stdio_server_config("pushy", "pushy", default_tool_meta={"auto_apply": True},
                            mcp_era="modern"),
    ])  # fmt: skip
    async with (
        server_process(procs.log_dir, track=procs.track) as server,
        computer_process(procs.log_dir, config=config, server_url=server.url, office=room,
                         name="box", confirm="allow", track=procs.track,
                         extra_args=["--max-input-requests-per-round", "4"],
                         env={"A2C_MAX_INPUT_REQUESTS_PER_CALL": "2"}) as computer,
        AsyncAgent(server.url, name=f"alice-{room}", input_handler=_decline) as agent,
    ):  # fmt: skip
        await agent.join_office(room)
        await eventually(lambda: len(agent.tools.get("box", ())) >= 3, timeout=120,
                         what="the Computer's tools")  # fmt: skip
        for count, said in ((5, "at most 4 are taken per round"),
                            (3, "at most 2 are taken per call")):  # fmt: skip
            result = await agent.call_tool("box", "modern_flood", {"count": count})
            assert result.is_error and said in text_of_result(result), result
        await computer.wait_for_log("(max_input_requests_per_call); the call is ended", 30)
        ok = await agent.call_tool("box", "modern_flood", {"count": 2})
        assert text_of_result(ok) == "modern_flood:2"


async def _decline(request: Any) -> Any:
    from a2c_protocol import ElicitationResponse

    return ElicitationResponse.decline()


def text_of_result(result: Any) -> str:
    return "\n".join(c["text"] for c in result.content if c.get("type") == "text")
