"""The console shows each session's protocol version (0.2 and 0.4 share offices)."""

from __future__ import annotations

import re
from contextlib import AsyncExitStack

import httpx

from a2c_server import ServerSettings
from a2c_testkit.server import connect_raw, running_server

ADMIN = "console-admin-token-0123456789"


async def test_the_session_table_names_each_sessions_version() -> None:
    settings = ServerSettings(console=True, admin_token=ADMIN)
    async with running_server(settings) as server, AsyncExitStack() as stack:
        computer = await stack.enter_async_context(connect_raw(server, None, a2c_version="0.4.2"))
        assert await computer.join("computer", "box-04", "o1") == (True, None)
        agent = await stack.enter_async_context(connect_raw(server, None, a2c_version="0.2.1"))
        assert await agent.join("agent", "planner-02", "o1") == (True, None)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            page = await http.get("/console", headers={"authorization": f"Bearer {ADMIN}"})
    assert page.status_code == 200
    assert "<th>Protocol</th>" in page.text
    rows = {
        cells[3]: cells[2]
        for cells in (
            re.findall(r"<td>(.*?)</td>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", page.text, re.S)
        )
        if len(cells) == 8
    }
    assert rows == {"box-04": "0.4.2", "planner-02": "0.2.1"}
