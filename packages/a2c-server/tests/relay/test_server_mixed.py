"""Mixed offices: the Server translates between a 0.2 and a 0.4 party at the relay points.

Both peers are bare python-socketio clients speaking the wire by hand, so what is checked
is exactly what the Server sends each side.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from a2c_protocol import Event
from a2c_testkit.server import RawClient, RunningServer, connect_raw

TOOL_04 = {
    "name": "wiki__search",
    "bundle_id": "wiki",
    "description": "d",
    "params_schema": {"type": "object"},
    "return_schema": None,
}
TOOL_02 = {"name": "search", "description": "d", "params_schema": {"type": "object"},
           "return_schema": None}  # fmt: skip


def computer_answers(client: RawClient, tools: list[dict[str, Any]], seen: list[Any]) -> None:
    sio = client.sio

    @sio.on("client:get_tools", namespace="/smcp")  # type: ignore[untyped-decorator]
    async def get_tools(data: Any) -> Any:
        seen.append(("client:get_tools", data))
        return {"tools": tools, "req_id": data["req_id"]}

    @sio.on("client:tool_call", namespace="/smcp")  # type: ignore[untyped-decorator]
    async def tool_call(data: Any) -> Any:
        seen.append(("client:tool_call", data))
        return {"content": [{"type": "text", "text": data["tool_name"]}], "isError": False}

    @sio.on("client:get_resources", namespace="/smcp")  # type: ignore[untyped-decorator]
    async def get_resources(data: Any) -> Any:
        seen.append(("client:get_resources", data))
        key = "mcp_server" if tools is TOOLS_04 else "mcp_server_name"
        return {"code": 4014, "message": "MCP server not found", key: data["mcp_server"]}


TOOLS_04 = [TOOL_04]
TOOLS_02 = [TOOL_02]


async def office(
    stack: AsyncExitStack, server: RunningServer, agent_version: str, computer_version: str,
    tools: list[dict[str, Any]], seen: list[Any],
) -> RawClient:  # fmt: skip
    computer = await stack.enter_async_context(
        connect_raw(server, None, a2c_version=computer_version)
    )
    computer_answers(computer, tools, seen)
    assert await computer.join("computer", "c1", "o1") == (True, None)
    agent = await stack.enter_async_context(connect_raw(server, None, a2c_version=agent_version))
    assert await agent.join("agent", "a1", "o1") == (True, None)
    return agent


def req(**fields: Any) -> dict[str, Any]:
    return {"agent": "a1", "computer": "c1", "req_id": "r1", **fields}


async def test_a_0_2_agent_uses_a_0_4_computer(server: RunningServer) -> None:
    seen: list[Any] = []
    async with AsyncExitStack() as stack:
        agent = await office(stack, server, "0.2.3", "0.4.2", TOOLS_04, seen)
        tools = await agent.call(Event.GET_TOOLS, req())
        assert tools == {"tools": [{k: v for k, v in TOOL_04.items() if k != "bundle_id"}],
                         "req_id": "r1"}  # fmt: skip
        call = req(tool_name="wiki__search", params={}, timeout=10)
        answer = await agent.call(Event.TOOL_CALL, call)
        assert answer == {"content": [{"type": "text", "text": "wiki__search"}], "isError": False}
        error = await agent.call(Event.GET_RESOURCES, req(mcp_server="wiki"))
        assert error == {"code": 4014, "message": "MCP server not found", "mcp_server_name": "wiki"}
    assert seen[1] == ("client:tool_call", call)


async def test_a_0_4_agent_uses_a_0_2_computer(server: RunningServer) -> None:
    seen: list[Any] = []
    async with AsyncExitStack() as stack:
        agent = await office(stack, server, "0.4.2", "0.2.3", TOOLS_02, seen)
        tools = await agent.call(Event.GET_TOOLS, req())
        assert isinstance(tools, dict)
        assert [(t["name"], t["bundle_id"]) for t in tools["tools"]] == [
            ("a2c-0-2__search", "a2c-0-2")
        ]
        answer = await agent.call(
            Event.TOOL_CALL, req(tool_name="a2c-0-2__search", params={}, timeout=10)
        )
        assert answer == {"content": [{"type": "text", "text": "search"}], "isError": False}
        error = await agent.call(Event.GET_RESOURCES, req(mcp_server="wiki"))
        assert error == {"code": 4014, "message": "MCP server not found", "mcp_server": "wiki"}
        assert seen[1][1]["tool_name"] == "search"


async def test_a_pure_office_is_relayed_untouched(server: RunningServer) -> None:
    # 0.4 on both sides: nothing is translated, the 0.4 shapes pass as they are.
    seen: list[Any] = []
    async with AsyncExitStack() as stack:
        agent = await office(stack, server, "0.4.0", "0.4.2", TOOLS_04, seen)
        assert await agent.call(Event.GET_TOOLS, req()) == {"tools": TOOLS_04, "req_id": "r1"}
    seen.clear()
    async with AsyncExitStack() as stack:
        agent = await office(stack, server, "0.2.0", "0.2.3", TOOLS_02, seen)
        assert await agent.call(Event.GET_TOOLS, req()) == {"tools": TOOLS_02, "req_id": "r1"}
