"""A question a 2026-07-28 host abandons frees its MCP server at once, through every part.

Real processes: ``a2c-server``, ``a2c-computer run`` hosting the mcp 2 test server
``a2c_testkit.mcp_servers.asking`` (its ``twice`` asks two forms in a row), and the bridge
``a2c-agent mcp`` over stdio at ``--input-timeout 2``, with mcp 2.3's ``Client(mode="auto")``
as the host. The host takes the first question and never answers: the bridge gives the
call up, the Agent SDK tells the Computer every request is cancelled, the tool asks its
second question, and the Computer ends the call there instead of keeping it (and the
server) for its own 300 s. The host's next call to the same server asks and is answered.
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
