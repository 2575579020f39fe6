"""Test MCP server (stdio) with tools only: no ``resources`` capability (for 4015).

Run: ``python -m a2c_testkit.mcp_servers.plain``. Tools: ``echo`` and ``search`` (the same name
as a tool of other test servers, for alias/clash tests); with ``A2C_TEST_TASK_TOOL=1`` also
``research``, which declares ``execution.taskSupport: "required"`` (a tool that can only run
as an MCP task).
"""

from __future__ import annotations

import os
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions

from a2c_testkit.mcp_servers._kit import register_raw, run_stdio

__all__ = ["build_server", "main"]

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back (plain server).",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "search",
        "description": "Search something (plain server).",
        "inputSchema": {"type": "object"},
    },
]


def build_server() -> tuple[Server[Any], InitializationOptions]:
    server: Server[Any] = Server("a2c-test-plain")

    tools = list(TOOLS)
    if os.environ.get("A2C_TEST_TASK_TOOL") == "1":
        tools.append({
            "name": "research",
            "description": "A long job that runs only as an MCP task.",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"},
        })  # fmt: skip

    async def list_tools(request: types.ListToolsRequest) -> dict[str, Any]:
        return {"tools": tools}

    async def call_tool(request: types.CallToolRequest) -> dict[str, Any]:
        args = request.params.arguments or {}
        value = f"plain:{request.params.name}:{args.get('text', '')}"
        return {"content": [{"type": "text", "text": value}], "isError": False}

    register_raw(server, types.ListToolsRequest, list_tools)
    register_raw(server, types.CallToolRequest, call_tool)
    options = InitializationOptions(
        server_name="a2c-test-plain",
        server_version="0.2.0",
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False)),
    )
    return server, options


def main() -> None:
    server, options = build_server()
    run_stdio(server, options)


if __name__ == "__main__":
    main()
