"""Our Agent and Computer on the official 0.4.2 Server, started without a protocol flag:
both announce 0.2.3, are refused with 4008, reconnect once announcing 0.4.2 and
speak 0.4 shapes; the Agent lists the Computer's tools and gets a call answered.

The official Server is its real code in a throwaway venv (``a2c_testkit.official``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2c_agent import AsyncAgent
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.official import OfficialProcess, official_venv, start_official
from a2c_testkit.processes import free_port
from a2c_testkit.triangle import computer_process, eventually, write_config

TOKEN = "s3cret"

# The official Server as its README builds it: its namespace, its default auth provider and
# its version-handshake middleware around python-socketio's ASGI app, under uvicorn.
OFFICIAL_SERVER = """
import sys, socketio, uvicorn
from a2c_smcp.server.auth import DefaultAuthenticationProvider
from a2c_smcp.server.middleware import A2CProtocolVersionASGIMiddleware
from a2c_smcp.server.namespace import SMCPNamespace

sio = socketio.AsyncServer(async_mode="asgi")
sio.register_namespace(SMCPNamespace(DefaultAuthenticationProvider(admin_secret=sys.argv[2])))
app = A2CProtocolVersionASGIMiddleware(socketio.ASGIApp(sio, socketio_path="/socket.io"),
                                       socketio_path="/socket.io")
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="info")
"""


@pytest.fixture
def official_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    server: OfficialProcess = start_official(
        official_venv("0.4.2"), OFFICIAL_SERVER, str(port), TOKEN,
        log_path=tmp_path / "logs" / "official-server.log",
    )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


async def _up(url: str) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        async with httpx.AsyncClient(timeout=5) as http:
            await http.get(f"{url}/socket.io/?EIO=4&transport=polling&a2c_version=0.4.2")
            return True
    return False


async def test_our_roles_speak_0_4_on_the_official_server_without_a_flag(
    procs: Any, tmp_path: Path, official_server: str
) -> None:
    await eventually(lambda: _up(official_server), timeout=120, what="official server up")
    entry = stdio_server_config("plain", "plain", default_tool_meta={"auto_apply": True})
    config = write_config(tmp_path / "computer.json", [entry])
    async with (
        computer_process(procs.log_dir, config=config, server_url=official_server, office="o1",
                         name="box", token=TOKEN, track=procs.track) as computer,
        AsyncAgent(official_server, name="planner", auth={"token": TOKEN}) as agent,
    ):  # fmt: skip
        assert agent.protocol == "0.4.2"
        await agent.join_office("o1")
        await computer.wait_for_log("joined office o1 as box (protocol 0.4.2)", timeout=120)
        tools = await eventually(lambda: agent.get_tools("box"), timeout=60, what="tools")
        names = [t.name for t in tools]
        # One bundle per MCP server, named after it (the 0.4 way).
        assert "plain__echo" in names, names
        assert all(t.name.startswith("plain__") for t in tools)
        result = await agent.call_tool("box", "plain__echo", {"text": "hi"}, timeout=60)
        assert not result.is_error
        assert result.content[0]["text"] == "plain:echo:hi"
        assert "speaking 0.4" in computer.logs()
