"""``a2c-agent call`` sends again a call a stopping node refused unsent (``_rpc/_resend``).

The command is a real subprocess against the real Server in-process: the Server drains
(as after SIGTERM) and refuses the call ``server_shutdown`` with ``delivered: false``; once
its connection is cut and the "restarted" Server serves again, the command's SDK sends
the call on its next connection and prints the result, within ``--timeout``.
"""

from __future__ import annotations

import asyncio
import json
import sys

from a2c_protocol import NAMESPACE, CallToolResult, Event
from a2c_testkit.metrics import metric_sample, scrape_metrics
from a2c_testkit.scripted_computer import scripted_tool
from a2c_testkit.triangle import eventually

OFFICE = "office-1"


async def _shutdown_refusals(url: str) -> float:
    text = await scrape_metrics(f"{url}/metrics")
    return metric_sample(text, "a2c_server_routed_requests_total", event="client:tool_call",
                         outcome="shutdown") or 0.0  # fmt: skip


async def test_a_call_refused_by_a_stopping_node_is_sent_again_on_the_next_connection(
    make_computer, server
):
    computer = await make_computer()
    computer.tools = [scripted_tool("count")]
    computer.tool_results["count"] = CallToolResult(content=[{"type": "text", "text": "2"}])
    server.app.drain.draining = True  # SIGTERM's drain: calls refused, not sent
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", server.url, "--office", OFFICE,
        "call", "box-1", "count", "{}", "--timeout", "60",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await eventually(lambda: _refused(server.url), timeout=60, what="the call refused")
        assert _tool_calls(computer) == 0  # not sent to the Computer
        server.app.drain.draining = False  # "restarted"
        for member in await server.app.store.office_members(OFFICE):
            if member.name and member.name.startswith("a2c-agent-cli-"):
                await server.app.sio.disconnect(member.sid, namespace=NAMESPACE)  # the cut
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
    assert process.returncode == 0, err.decode()
    assert json.loads(out)["content"][0]["text"] == "2"
    assert _tool_calls(computer) == 1  # once, on the new connection


async def _refused(url: str) -> bool:
    return await _shutdown_refusals(url) >= 1


def _tool_calls(computer) -> int:
    return sum(1 for r in computer.requests if r.event is Event.TOOL_CALL)
