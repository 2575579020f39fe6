"""Test MCP server (stdio, ``MCPServer``) whose tools carry MCP annotations, for the MCP bridge.

Run: ``python -m a2c_testkit.mcp_servers.annotated``. Tools:

* ``lookup {key}``: read-only (``readOnlyHint``, title "Look up"); answers structured content
  ``{"key": key, "value": key.upper()}`` (FastMCP derives the output schema);
* ``wipe``: destructive (``destructiveHint``), answers "wiped";
* ``steps {count, delay}``: reports progress ``i/count`` ("step i") after each ``delay`` s;
* ``picture {size, seed}``: a noise PNG of about ``size`` bytes as ``ImageContent``.
"""

from __future__ import annotations

import asyncio
import base64

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, ToolAnnotations

from a2c_testkit.mcp_servers.bulk import noise_png

__all__ = ["main", "server"]

server = MCPServer("a2c-test-annotated")


@server.tool(annotations=ToolAnnotations(title="Look up", read_only_hint=True))
def lookup(key: str) -> dict[str, str]:
    """Look a key up."""
    return {"key": key, "value": key.upper()}


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def wipe() -> str:
    """Wipe everything (pretend)."""
    return "wiped"


@server.tool()
async def steps(count: int, delay: float, ctx: Context) -> str:
    """Sleep ``count`` times ``delay`` seconds, reporting progress after each."""
    for i in range(1, count + 1):
        await asyncio.sleep(delay)
        await ctx.report_progress(i, count, f"step {i}")
    return f"{count} steps"


@server.tool()
def picture(size: int = 1024, seed: int = 0) -> ImageContent:
    """A noise PNG of about ``size`` bytes."""
    data = base64.b64encode(noise_png(size, seed)).decode("ascii")
    return ImageContent(type="image", data=data, mime_type="image/png")


def main() -> None:
    server.run("stdio")


if __name__ == "__main__":
    main()
