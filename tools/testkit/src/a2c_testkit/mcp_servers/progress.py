"""Test MCP server (stdio, ``MCPServer``) whose tool reports progress while it works.

Run: ``python -m a2c_testkit.mcp_servers.progress``. Tool ``steps(count, delay)`` reports
``i/count`` with the message ``step i`` after each ``delay`` seconds of sleep, and
answers with what it was given: whether the request carried a progress token, and the
``traceparent`` of ``params._meta`` (the W3C trace context convention of MCP).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

__all__ = ["build_server", "main"]


def build_server() -> MCPServer:
    server = MCPServer("a2c-test-progress")

    @server.tool()
    async def steps(count: int, delay: float, ctx: Context) -> str:
        """Sleep ``count`` times ``delay`` seconds, reporting progress after each."""
        meta: dict[str, Any] = dict(ctx.request_context.meta or {})
        token = meta.get("progressToken", meta.get("progress_token"))
        for i in range(1, count + 1):
            await asyncio.sleep(delay)
            await ctx.report_progress(i, count, f"step {i}")
        return json.dumps(
            {"progress_token": token is not None, "traceparent": meta.get("traceparent")}
        )

    return server


def main() -> None:
    build_server().run("stdio")


if __name__ == "__main__":
    main()
