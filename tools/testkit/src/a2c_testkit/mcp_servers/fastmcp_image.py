"""Test MCP server (stdio, ``MCPServer``) whose tool is annotated to return ``ImageContent``.

Run: ``python -m a2c_testkit.mcp_servers.fastmcp_image``. FastMCP derives an output schema
from the annotation and puts the image a second time into ``structuredContent``
(``{"type": "image", "data": <base64>, ...}``), like many real servers do.

* ``image {size, seed}``: a noise PNG of about ``size`` bytes (see ``bulk.noise_png``).
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent

from a2c_testkit.mcp_servers.bulk import noise_png

__all__ = ["main", "server"]

server = MCPServer("a2c-test-fastmcp-image")


@server.tool()
def image(size: int = 1024, seed: int = 0) -> ImageContent:
    """A noise PNG of about ``size`` bytes."""
    data = base64.b64encode(noise_png(size, seed)).decode("ascii")
    return ImageContent(type="image", data=data, mime_type="image/png")


def main() -> None:
    server.run("stdio")


if __name__ == "__main__":
    main()
