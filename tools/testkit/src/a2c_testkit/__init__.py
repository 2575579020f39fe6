"""a2c_testkit (private)."""

# Server helpers (a2c_testkit.server).
from .server import (
    RawClient,
    RunningServer,
    assert_registry_matches_rooms,
    close_client,
    connect_raw,
    running_server,
)

__all__ = [
    "RawClient",
    "RunningServer",
    "assert_registry_matches_rooms",
    "close_client",
    "connect_raw",
    "running_server",
]

# Scripted test Computer (a2c_testkit.scripted_computer).
from .scripted_computer import ReceivedEvent, ScriptedComputer, ScriptedHandler

__all__ += ["ReceivedEvent", "ScriptedComputer", "ScriptedHandler"]

# Test MCP servers (a2c_testkit.mcp_servers).
from .mcp_servers import stdio_server_config  # noqa: E402
from .mcp_servers.http_server import serve_http as serve_mcp_http  # noqa: E402

__all__ += ["serve_mcp_http", "stdio_server_config"]
