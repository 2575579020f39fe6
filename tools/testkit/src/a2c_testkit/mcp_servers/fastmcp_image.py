"""Test MCP server (stdio, ``MCPServer``) whose tool returns its image twice.

Run: ``python -m a2c_testkit.mcp_servers.fastmcp_image``. mcp 1's FastMCP derived an output
schema from an ``-> ImageContent`` annotation and put the image a second time into
``structuredContent`` (``{"type": "image", "data": <base64>, ...}``), like many real servers
do; mcp 2's ``MCPServer`` no longer does, so the tool returns both itself, as those
servers send them.

* ``image {size, seed}``: a noise PNG of about ``size`` bytes (see ``bulk.noise_png``);
  writes ``image of <size> bytes`` on stderr, as servers log what they do (mcp 1's server
  logged each request there itself).
"""

from __future__ import annotations

import base64
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent

from a2c_testkit.mcp_servers.bulk import noise_png

__all__ = ["main", "server"]

server = MCPServer("a2c-test-fastmcp-image")


@server.tool()
def image(size: int = 1024, seed: int = 0) -> CallToolResult:
    """A noise PNG of about ``size`` bytes."""
    print(f"image of {size} bytes", file=sys.stderr, flush=True)
    data = base64.b64encode(noise_png(size, seed)).decode("ascii")
    item = ImageContent(type="image", data=data, mime_type="image/png")
    return CallToolResult(
        content=[item], structured_content=item.model_dump(by_alias=True, mode="json")
    )


def main() -> None:
    server.run("stdio")


if __name__ == "__main__":
    main()
