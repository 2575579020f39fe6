"""Test MCP server (stdio) whose tools return large results, for the blob channel.

Run: ``python -m a2c_testkit.mcp_servers.bulk``. Tools:

* ``png {size, seed}``: one ``image/png`` item, a valid PNG of about ``size`` bytes
  (deterministic noise from ``seed``), plus a text item ``sha256=<hex> size=<n>`` so tests
  can check what arrived against what was sent;
* ``blob {size, seed}``: the same bytes as an embedded ``resource`` (``resource.blob``);
* ``text {size}``: one text item of ``size`` characters.
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
import zlib
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions

from a2c_testkit.mcp_servers._kit import register_raw, run_stdio

__all__ = ["build_server", "main", "noise_png"]

_SIZE = {"type": "object", "properties": {"size": {"type": "integer"}, "seed": {"type": "integer"}}}
TOOLS: list[dict[str, Any]] = [
    {"name": "png", "description": "A noise PNG of about size bytes.", "inputSchema": _SIZE},
    {"name": "blob", "description": "Noise bytes as an embedded resource.", "inputSchema": _SIZE},
    {"name": "text", "description": "size characters of text.", "inputSchema": _SIZE},
]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def noise_png(size: int, seed: int = 0) -> bytes:
    """A valid grayscale PNG of noise, about ``size`` bytes (stored, uncompressed rows)."""
    width = 1024
    height = max(1, size // (width + 1))
    rng = random.Random(seed)
    raw = b"".join(b"\0" + rng.randbytes(width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 0))
        + _chunk(b"IEND", b"")
    )


def build_server() -> tuple[Server[Any], InitializationOptions]:
    server: Server[Any] = Server("a2c-test-bulk")

    async def list_tools(request: types.ListToolsRequest) -> dict[str, Any]:
        return {"tools": TOOLS}

    async def call_tool(request: types.CallToolRequest) -> dict[str, Any]:
        args = request.params.arguments or {}
        size, seed = int(args.get("size", 1024)), int(args.get("seed", 0))
        name = request.params.name
        if name == "text":
            return {"content": [{"type": "text", "text": "t" * size}], "isError": False}
        data = noise_png(size, seed) if name == "png" else random.Random(seed).randbytes(size)
        encoded = base64.b64encode(data).decode("ascii")
        facts = {
            "type": "text",
            "text": f"sha256={hashlib.sha256(data).hexdigest()} size={len(data)}",
        }
        if name == "png":
            item: dict[str, Any] = {"type": "image", "mimeType": "image/png", "data": encoded}
        else:
            resource = {
                "uri": "bulk://blob",
                "mimeType": "application/octet-stream",
                "blob": encoded,
            }
            item = {"type": "resource", "resource": resource}
        return {"content": [item, facts], "isError": False}

    register_raw(server, types.ListToolsRequest, list_tools)
    register_raw(server, types.CallToolRequest, call_tool)
    options = InitializationOptions(
        server_name="a2c-test-bulk",
        server_version="0.2.0",
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False)),
    )
    return server, options


def main() -> None:
    server, options = build_server()
    run_stdio(server, options)


if __name__ == "__main__":
    main()
