"""A tool whose MCP server is down, through the real triangle.

An SSE MCP server lists ``search`` (aliased ``sse_search``), a stdio one ``echo`` (aliased
``stdio_search``). Once the SSE server is killed, a call to ``sse_search`` used to answer
"Tool 'sse_search' not found; did you mean 'stdio_search'?", steering the caller to another
server's tool, and the ``config`` view said ``no tools``. Now the call is 4014 naming the
server that is down, and the ``config`` view says ``failed: <reason>``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from a2c_agent import result_error_code, result_text
from a2c_agent._cli._render import render_table
from a2c_protocol import to_wire
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.mcp_servers.http_server import serve_http
from a2c_testkit.triangle import deployment, eventually, write_config


async def test_a_call_to_a_down_servers_tool_says_its_server_is_down(
    procs: Any, tmp_path: Path
) -> None:
    auto = {"auto_apply": True}
    async with contextlib.AsyncExitStack() as http:
        base = await http.enter_async_context(serve_http())
        servers = [
            {
                "type": "sse",
                "name": "legacy",
                "default_tool_meta": auto,
                "tool_meta": {"search": {"alias": "sse_search"}},
                "server_parameters": {"url": f"{base}/sse", "timeout": 20},
            },
            stdio_server_config(
                "desk", default_tool_meta=auto, tool_meta={"echo": {"alias": "stdio_search"}}
            ),
        ]
        config = write_config(tmp_path / "computer.json", servers)
        async with deployment(procs.log_dir, config, computer_name="box", track=procs.track) as t:
            agent = t.agent
            assert "sse_search" in {tool.name for tool in agent.tools["box"]}
            await http.aclose()  # the SSE server is killed
            await check_down(agent)


async def check_down(agent: Any) -> None:
    await eventually(
        lambda: "sse_search" not in {tool.name for tool in agent.tools.get("box", ())},
        what="the killed SSE server's tools to leave the list",
    )
    result = await agent.call_tool("box", "sse_search", {}, timeout=30)
    assert result.is_error
    assert result_error_code(result) == 4014
    assert result.meta is not None
    assert result.meta["mcp_server"] == "legacy"
    assert result.meta["reason"] == "mcp_server_down"
    text = result_text(result)
    assert "legacy" in text and "down" in text and "did you mean" not in text

    unknown = await agent.call_tool("box", "nothing_like_it", {}, timeout=30)
    assert result_error_code(unknown) == 4001
    assert "'legacy' is down" in result_text(unknown)

    view = await agent.get_config("box")
    assert view.server_states is not None
    assert view.server_states["legacy"].status != "ready"
    assert view.server_states["desk"].status == "ready"
    tools = [to_wire(tool) for tool in agent.tools["box"]]
    table = render_table("config", to_wire(view), tools=tools, width=200)
    rows = {line.split()[0]: line for line in table.splitlines()[1:] if line.strip()}
    assert "no tools" not in rows["legacy"]
    assert view.server_states["legacy"].status in rows["legacy"]
    assert "tool" in rows["desk"]
