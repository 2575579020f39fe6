"""Test MCP servers shared by the Computer's tests and the integration suite.

* ``desk`` (stdio): tools incl. slow/crash/notification triggers, v0.2 windows (and awkward
  ones), paging; ``python -m a2c_testkit.mcp_servers.desk --profile full --page-size 2``;
* ``plain`` (stdio): tools only, no ``resources`` capability;
* ``http_server``: Streamable HTTP (``/mcp``) and SSE (``/sse``) under uvicorn, answering
  401/403/502 for protected tools; in tests use
  :func:`a2c_testkit.mcp_servers.http_server.serve_http`.

:func:`stdio_server_config` builds a Computer config entry that runs one of them with the
current interpreter.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["stdio_server_config"]


def stdio_server_config(
    name: str, module: str = "desk", *args: str, **fields: Any
) -> dict[str, Any]:
    """A ``type: "stdio"`` config entry running ``python -m a2c_testkit.mcp_servers.<module>``."""
    entry: dict[str, Any] = {
        "type": "stdio",
        "name": name,
        "server_parameters": {
            "command": sys.executable,
            "args": ["-m", f"a2c_testkit.mcp_servers.{module}", *args],
        },
    }
    entry.update(fields)
    return entry
