"""Every request of the Agent against the real Server and a scripted Computer."""

from __future__ import annotations

import pytest

from a2c_agent import (
    AgentStateError,
    BadRequestError,
    CapabilityNotSupportedError,
    ForbiddenError,
    InvalidResponseError,
    InvalidWindowURIError,
    JoinOfficeError,
    McpServerNotFoundError,
    NotFoundError,
    NotInOfficeError,
    ToolAuthorizationRequiredError,
    WindowURI,
    raise_for_tool_error,
    result_error_code,
    result_text,
    tool_authorization,
)
from a2c_protocol import (
    CallToolResult,
    ErrorCode,
    Event,
    GetComputerConfigRet,
    MCPServerStdioParameters,
    Role,
    StdioServerConfig,
    ToolMeta,
)
from a2c_testkit.scripted_computer import scripted_tool

OFFICE = "office-1"


async def test_join_list_leave(make_computer, make_agent):
    await make_computer("box-1")
    agent = await make_agent()
    await agent.join_office(OFFICE)
    assert agent.office_id == OFFICE
    sessions = await agent.list_room()
    assert {(s.name, s.role) for s in sessions} == {
        ("agent-1", Role.AGENT),
        ("box-1", Role.COMPUTER),
    }
    assert all(s.office_id == OFFICE and s.a2c_version == "0.2.3" for s in sessions)
    await agent.leave_office()
    assert agent.office_id is None
    with pytest.raises(AgentStateError):
        await agent.leave_office()


async def test_join_refused_when_office_has_an_agent(make_agent):
    first = await make_agent("agent-1")
    await first.join_office(OFFICE)
    second = await make_agent("agent-2")
    with pytest.raises(JoinOfficeError) as info:
        await second.join_office(OFFICE)
    assert info.value.office_id == OFFICE
    assert info.value.reason
    assert second.office_id is None


async def test_get_tools_parses_tool_meta(make_computer, make_agent):
    computer = await make_computer()
    computer.tools = [
        scripted_tool("search", tags=["kb", "read"], alias="kb_search"),
        scripted_tool("plain"),
    ]
    agent = await make_agent(tool_cache=False)
    await agent.join_office(OFFICE)
    tools = await agent.get_tools("box-1")
    assert [t.name for t in tools] == ["search", "plain"]
    assert tools[0].tool_meta == ToolMeta(auto_apply=None, tags=["kb", "read"], alias="kb_search")
    assert tools[0].tags == ("kb", "read")
    assert tools[0].computer == "box-1"
    assert tools[1].tool_meta is None and tools[1].meta == {"vendor_key": "kept"}


async def test_get_config(make_computer, make_agent):
    computer = await make_computer()
    computer.config = GetComputerConfigRet(
        servers={
            "fs": StdioServerConfig(
                name="fs",
                server_parameters=MCPServerStdioParameters(
                    command="mcp-fs", args=["${input:root}"]
                ),
            )
        }
    )
    agent = await make_agent()
    await agent.join_office(OFFICE)
    config = await agent.get_config("box-1")
    assert (config.servers, config.inputs) == (computer.config.servers, computer.config.inputs)
    assert config.server_states is None  # a Computer that does not report states


async def test_get_desktop_with_size_and_window(make_computer, make_agent):
    computer = await make_computer()
    computer.desktops = [
        "window://org.example.a/x\n\nhello",
        "window://org.example.b",
        "window://org.example.c",
    ]
    agent = await make_agent()
    await agent.join_office(OFFICE)
    assert await agent.get_desktop("box-1") == computer.desktops
    assert await agent.get_desktop("box-1", size=2) == computer.desktops[:2]
    assert await agent.get_desktop("box-1", window="window://org.example.b") == [
        "window://org.example.b"
    ]
    uri = WindowURI.build("org.example.a", "x")
    assert await agent.get_desktop("box-1", window=uri) == [computer.desktops[0]]
    sent = computer.received(Event.GET_DESKTOP)
    assert sent[1]["desktop_size"] == 2 and sent[3]["window"] == "window://org.example.a/x"
    assert sent[2]["window"] == "window://org.example.b"  # a string goes out as given


@pytest.mark.parametrize(
    "window",
    [
        "window://org.example.a/x?priority=5",
        "window://org.example.a/x#top",
        "http://org.example.a/x",
    ],
)
async def test_get_desktop_rejects_non_strict_window_before_sending(
    make_computer, make_agent, window
):
    computer = await make_computer()
    agent = await make_agent()
    await agent.join_office(OFFICE)
    with pytest.raises(InvalidWindowURIError):
        await agent.get_desktop("box-1", window=window)
    assert computer.received(Event.GET_DESKTOP) == []


def _resources(n: int) -> list[dict]:
    return [
        {
            "uri": f"window://org.example.w/{i}",
            "name": f"w{i}",
            "mimeType": "text/plain",
            "annotations": {"priority": i / 10},
        }
        for i in range(n)
    ]


async def test_get_resources_one_page_and_iter_all_pages(make_computer, make_agent):
    computer = await make_computer(page_size=2)
    computer.resources = {"wins": _resources(7)}
    agent = await make_agent()
    await agent.join_office(OFFICE)
    page = await agent.get_resources("box-1", "wins")
    assert [r.uri for r in page.resources] == [
        "window://org.example.w/0",
        "window://org.example.w/1",
    ]
    assert page.resources[0].mime_type == "text/plain"
    assert page.next_cursor == "2"
    second = await agent.get_resources("box-1", "wins", cursor=page.next_cursor)
    assert second.resources[0].name == "w2"
    every = [r async for r in agent.iter_resources("box-1", "wins")]
    assert [r.name for r in every] == [f"w{i}" for i in range(7)]
    cursors = [p.get("cursor") for p in computer.received(Event.GET_RESOURCES)[2:]]
    assert cursors == [None, "2", "4", "6"]  # four pages followed by next_cursor


async def test_get_resources_reads_the_snake_case_mime_type_too(make_computer, make_agent):
    # The official Computers send only mime_type (their A2CResource spelling).
    computer = await make_computer()
    computer.resources = {"wins": [{"uri": "window://org.example.w/0", "mime_type": "text/html"}]}
    agent = await make_agent()
    await agent.join_office(OFFICE)
    page = await agent.get_resources("box-1", "wins")
    assert page.resources[0].mime_type == "text/html"


async def test_get_resources_4014_and_4015(make_computer, make_agent):
    computer = await make_computer()
    computer.no_resources = {"tools-only"}
    agent = await make_agent()
    await agent.join_office(OFFICE)
    with pytest.raises(McpServerNotFoundError) as missing:
        await agent.get_resources("box-1", "nope")
    assert missing.value.code == ErrorCode.MCP_SERVER_NOT_FOUND
    assert missing.value.mcp_server_name == "nope"
    with pytest.raises(CapabilityNotSupportedError) as lacking:
        await agent.get_resources("box-1", "tools-only")
    assert lacking.value.capability == "resources"
    assert lacking.value.mcp_server_name == "tools-only"


async def test_iter_resources_stops_on_a_cursor_loop(make_computer, make_agent):
    computer = await make_computer()
    computer.on(
        Event.GET_RESOURCES,
        lambda p: {"resources": [], "next_cursor": "same", "req_id": p["req_id"]},
    )
    agent = await make_agent()
    await agent.join_office(OFFICE)
    with pytest.raises(InvalidResponseError):
        [r async for r in agent.iter_resources("box-1", "wins")]


async def test_call_tool_success(make_computer, make_agent):
    computer = await make_computer()
    computer.tool_results["count"] = CallToolResult(
        content=[{"type": "text", "text": "3"}], structured_content={"n": 3}
    )
    agent = await make_agent()
    await agent.join_office(OFFICE)
    result = await agent.call_tool("box-1", "count", {"text": "a b c"}, timeout=10)
    assert not result.is_error and result_text(result) == "3"
    assert result.structured_content == {"n": 3}
    assert result_error_code(result) is None and tool_authorization(result) is None
    assert raise_for_tool_error(result) is result
    (sent,) = computer.received(Event.TOOL_CALL)
    assert (
        sent["params"] == {"text": "a b c"} and sent["timeout"] == 10 and sent["agent"] == "agent-1"
    )


async def test_tool_failures_stay_results(make_computer, make_agent):
    computer = await make_computer()
    computer.tool_results["ticket"] = {
        "content": [{"type": "text", "text": "Sign in first."}],
        "isError": True,
        "meta": {
            "error_code": 4006,
            "mcp_server": "ticketing",
            "auth_hint": {
                "action": "user_authorization_required",
                "message": "Sign in on the box.",
            },
        },
    }
    computer.tool_results["scoped"] = {
        "content": [{"type": "text", "text": "no scope"}],
        "isError": True,
        "_meta": {"error_code": 4007, "mcp_server": "ticketing"},
    }
    agent = await make_agent()
    await agent.join_office(OFFICE)

    unknown = await agent.call_tool("box-1", "missing", {})
    assert unknown.is_error and result_error_code(unknown) == ErrorCode.TOOL_NOT_FOUND

    needs_auth = await agent.call_tool("box-1", "ticket", {})
    info = tool_authorization(needs_auth)
    assert info is not None and info.first_time
    assert (info.code, info.mcp_server, info.message) == (4006, "ticketing", "Sign in on the box.")
    with pytest.raises(ToolAuthorizationRequiredError) as raised:
        raise_for_tool_error(needs_auth)
    assert raised.value.hint_message == "Sign in on the box."

    failed = await agent.call_tool("box-1", "scoped", {})
    info = tool_authorization(failed)
    assert info is not None and not info.first_time and info.message is None
    # never retried automatically: each call reached the Computer exactly once
    assert [p["tool_name"] for p in computer.received(Event.TOOL_CALL)] == [
        "missing",
        "ticket",
        "scoped",
    ]


async def test_unknown_computer_is_404(make_agent):
    agent = await make_agent()
    await agent.join_office(OFFICE)
    with pytest.raises(NotFoundError) as info:
        await agent.call_tool("ghost", "x", {})
    assert info.value.code == 404
    with pytest.raises(NotFoundError):
        await agent.get_tools("ghost")


async def test_not_in_office_is_4103(make_computer, make_agent):
    await make_computer()
    agent = await make_agent()
    with pytest.raises(NotInOfficeError) as info:
        await agent.get_tools("box-1")
    assert info.value.code == 4103


async def test_computer_of_another_office_is_404(make_computer, make_agent):
    # Names are per office on the Server: another office's Computer is "not connected".
    await make_computer("box-2", office_id="office-2")
    agent = await make_agent()
    await agent.join_office(OFFICE)
    with pytest.raises(NotFoundError) as info:
        await agent.call_tool("box-2", "x", {})
    assert info.value.code == 404


@pytest.mark.parametrize(("code", "error"), [(403, ForbiddenError), (400, BadRequestError)])
async def test_flat_error_from_the_computer_is_typed(make_computer, make_agent, code, error):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, lambda p: {"code": code, "message": f"computer says {code}"})
    computer.on(Event.GET_TOOLS, lambda p: {"code": code, "message": f"computer says {code}"})
    agent = await make_agent(tool_cache=False)
    await agent.join_office(OFFICE)
    with pytest.raises(error) as info:
        await agent.call_tool("box-1", "x", {})
    assert info.value.message == f"computer says {code}"
    with pytest.raises(error):
        await agent.get_tools("box-1")


async def test_malformed_answer_is_invalid_response(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.GET_TOOLS, lambda p: {"tools": "not a list", "req_id": p["req_id"]})
    agent = await make_agent(tool_cache=False)
    await agent.join_office(OFFICE)
    with pytest.raises(InvalidResponseError):
        await agent.get_tools("box-1")
