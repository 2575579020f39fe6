"""``a2c-agent mcp`` as MCP hosts meet it, for the bridge tests: spawned over stdio by the
``mcp`` client, or serving streamable HTTP.

Public API:

- ``bridge_argv(server_url, office, *extra, name="bridge")``: the command line;
- ``stdio_host(server_url, office, log, *extra, ...)``: a handshake-era ``ClientSession``
  over stdio (mcp 2's ``initialize`` asks for 2025-11-25; callbacks answer the bridge's
  own requests), with a :class:`Listener` of its notifications;
- ``modern_stdio_host(...)`` / ``modern_http_host(url, ...)``: ``mcp``'s
  ``Client(mode="auto")``, what 2026 hosts use;
- ``http_bridge(server_url, office, log_dir, *extra, env=...)``: the bridge on a free
  loopback port; yields ``(process, endpoint URL)`` once it listens.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client import Client
from mcp.client.stdio import stdio_client

from .processes import ManagedProcess, bin_path, spawn

__all__ = [
    "Listener",
    "bridge_argv",
    "http_bridge",
    "modern_http_host",
    "modern_stdio_host",
    "stdio_host",
    "text_of",
]


class Listener:
    """Counts the list-change notifications a handshake-era bridge session receives."""

    def __init__(self) -> None:
        self.tool_list_changes = 0
        self.resource_list_changes = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tool_list_changes += 1
        elif isinstance(message, types.ResourceListChangedNotification):
            self.resource_list_changes += 1


def bridge_argv(server_url: str, office: str, *extra: str, name: str = "bridge") -> list[str]:
    """``a2c-agent --server URL --office OFFICE --name NAME mcp EXTRA...``."""
    return [bin_path("a2c-agent"), "--server", server_url, "--office", office,
            "--name", name, "mcp", *extra]  # fmt: skip


def text_of(result: types.CallToolResult) -> str:
    """The text items of a tool result, one per line."""
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _params(server_url: str, office: str, extra: tuple[str, ...]) -> StdioServerParameters:
    argv = bridge_argv(server_url, office, *extra)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


@contextlib.asynccontextmanager
async def stdio_host(
    server_url: str,
    office: str,
    log: Path,
    *extra: str,
    **callbacks: Any,
) -> AsyncIterator[tuple[ClientSession, Listener]]:
    """A handshake-era host over stdio (``callbacks``: ``elicitation_callback``...)."""
    listener = Listener()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as errlog:
        async with (
            stdio_client(_params(server_url, office, extra), errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=listener, **callbacks) as session,
        ):
            await session.initialize()
            yield session, listener


@contextlib.asynccontextmanager
async def modern_stdio_host(
    server_url: str, office: str, log: Path, *extra: str, **options: Any
) -> AsyncIterator[Client]:
    """``Client(mode="auto")`` spawning the bridge over stdio (``options``: callbacks...)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as errlog:
        transport = stdio_client(_params(server_url, office, extra), errlog=errlog)
        async with Client(transport, mode="auto", **options) as client:
            yield client


@contextlib.asynccontextmanager
async def modern_http_host(url: str, **options: Any) -> AsyncIterator[Client]:
    """``Client(url, mode="auto")`` (``options``: callbacks...)."""
    async with Client(url, mode="auto", **options) as client:
        yield client


_SERVING = re.compile(r"serving MCP at (\S+)")


@contextlib.asynccontextmanager
async def http_bridge(
    server_url: str,
    office: str,
    log_dir: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    name: str = "bridge-http",
    runtime_dir: Path | None = None,
) -> AsyncIterator[tuple[ManagedProcess, str]]:
    """The bridge serving streamable HTTP on a loopback port of its own choosing.

    Port 0, read back from the log: a port picked here and bound later by the bridge can be
    taken in between by another test's listener (seen in CI as ``Address already in use``).
    Without a token in ``extra`` or ``env`` it serves with ``--no-token`` (hosts then need
    no header), unless ``runtime_dir`` is given: then it makes its token and writes it
    there (``XDG_RUNTIME_DIR``), as it does by default.
    """
    env = dict(env or {})
    if runtime_dir is not None:
        env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    elif not {"--http-token", "--no-token"} & set(extra) and "A2C_MCP_HTTP_TOKEN" not in env:
        extra = (*extra, "--no-token")
    argv = bridge_argv(server_url, office, "--http", "127.0.0.1:0", *extra)
    async with spawn(name, argv, log_dir=log_dir, env=env) as process:
        await process.wait_for_log("serving MCP at", timeout=90)
        found = _SERVING.search(process.logs())
        assert found is not None, process.logs()[-2000:]
        yield process, found[1]
