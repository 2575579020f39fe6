"""a2c_testkit (private).

The names below load on first use: the test MCP servers run as
``python -m a2c_testkit.mcp_servers.<name>``, which imports this package first, and an eager
import of the server helpers would cost each of those children python-socketio, redis and the
Server (about a second of CPU per MCP server start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .mcp_servers import stdio_server_config
    from .mcp_servers.http_server import serve_http as serve_mcp_http
    from .scripted_computer import ReceivedEvent, ScriptedComputer, ScriptedHandler
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
    "ReceivedEvent",
    "RunningServer",
    "ScriptedComputer",
    "ScriptedHandler",
    "assert_registry_matches_rooms",
    "close_client",
    "connect_raw",
    "running_server",
    "serve_mcp_http",
    "stdio_server_config",
]

# Public name -> (submodule, name there).
_LAZY: dict[str, tuple[str, str]] = {
    "RawClient": (".server", "RawClient"),
    "RunningServer": (".server", "RunningServer"),
    "assert_registry_matches_rooms": (".server", "assert_registry_matches_rooms"),
    "close_client": (".server", "close_client"),
    "connect_raw": (".server", "connect_raw"),
    "running_server": (".server", "running_server"),
    "ReceivedEvent": (".scripted_computer", "ReceivedEvent"),
    "ScriptedComputer": (".scripted_computer", "ScriptedComputer"),
    "ScriptedHandler": (".scripted_computer", "ScriptedHandler"),
    "stdio_server_config": (".mcp_servers", "stdio_server_config"),
    "serve_mcp_http": (".mcp_servers.http_server", "serve_http"),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module_name, __name__), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
