"""``a2c-agent mcp`` keeps serving a Computer's last known tools while refreshing them fails.

After a reconnect the bridge's Agent empties its tool cache and asks every Computer
again; when that ask fails (a Server node just died and the Computer's new session was not
reachable yet, answered 503), the tools used to vanish and the host's next call was
answered "no tool is served under the name 'fbox__echo' (list the tools again)" for a tool
that exists. Here the Server is killed with SIGKILL and started again on its port; the
Computer comes back with a ``client:get_tools`` that answers 503, so every refresh fails,
and the host's calls still reach it.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from mcp import ClientSession

from a2c_protocol import Event
from a2c_testkit.bridge import stdio_host, text_of
from a2c_testkit.processes import free_port
from a2c_testkit.scripted_computer import ScriptedComputer, scripted_tool
from a2c_testkit.triangle import eventually, server_process

PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}
UNAVAILABLE = {"code": 503, "message": "Registry unavailable, try again later",
               "details": {"reason": "registry_unavailable", "delivered": False}}  # fmt: skip


def _fbox(url: str, office: str) -> ScriptedComputer:
    box = ScriptedComputer(url, name="fbox", office_id=office)
    box.tools = [scripted_tool("echo")]
    box.tool_results["echo"] = PONG
    return box


async def _names(session: ClientSession) -> set[str]:
    return {t.name for t in (await session.list_tools()).tools}


async def _pong(session: ClientSession) -> bool:
    result = await session.call_tool("fbox__echo", {})
    return not result.is_error and text_of(result) == "pong"


async def test_a_failed_tool_refresh_keeps_the_last_known_tools(procs: Any, tmp_path: Path) -> None:
    office = f"office-{uuid.uuid4()}"
    log_dir = tmp_path / "logs"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    bridge_log = log_dir / "bridge.log"
    async with stdio_host(url, office, bridge_log) as (session, _):
        async with (
            server_process(log_dir, port=port, track=procs.track) as server,
            _fbox(server.url, office),
        ):
            await eventually(lambda: _pong(session), timeout=90, what="fbox served")
            server.process.kill()
            await eventually(lambda: not server.process.running, timeout=30, what="killed")
        async with server_process(log_dir, port=port, track=procs.track, name="server-2") as again:
            box = _fbox(again.url, office)
            box.on(Event.GET_TOOLS, lambda payload: UNAVAILABLE)
            async with box:
                # The bridge re-joins by itself; each refresh of fbox's tools fails.
                await eventually(lambda: box.received(Event.GET_TOOLS), timeout=120,
                                 what="the bridge asked fbox for its tools again")  # fmt: skip
                assert "fbox__echo" in await _names(session)
                await eventually(lambda: _pong(session), timeout=60,
                                 what="the host's call reaches fbox after the failed refresh")  # fmt: skip
    log = bridge_log.read_text(encoding="utf-8", errors="replace")
    assert log.count("serving the last known ones") >= 1
