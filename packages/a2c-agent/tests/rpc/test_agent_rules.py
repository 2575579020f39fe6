"""The Agent's pure rules: lifecycle, ack decoding, notification decisions, cache, URLs."""

from __future__ import annotations

import pytest

from a2c_agent import (
    AgentConnectionError,
    AgentNotification,
    AgentState,
    AgentStateError,
    AgentTool,
    InvalidResponseError,
    JoinOfficeError,
    LeaveOfficeError,
    raise_for_tool_error,
    resource_priority,
    result_error_code,
    tool_authorization,
)
from a2c_agent._rules import (
    DropTools,
    FetchTools,
    RefreshDesktop,
    ToolCache,
    actions_for,
    decode_ack,
    decode_notification,
    decode_office_ack,
)
from a2c_agent._session._connection import (
    build_auth,
    check_transports,
    handshake_probe_url,
    versioned_url,
)
from a2c_agent._session._lifecycle import Transition, next_state, require_connected
from a2c_protocol import (
    A2CResource,
    AgentCallData,
    CallToolResult,
    CapabilityNotSupportedError,
    CrossOfficeError,
    EnterOfficeNotification,
    Event,
    GetToolsRet,
    InternalError,
    LeaveOfficeNotification,
    NotInOfficeError,
    ProtocolVersionError,
    RemoteError,
    SMCPTool,
    ToolAuthorizationFailedError,
    UpdateComputerConfigReq,
    UpdateToolListNotification,
)

S, T = AgentState, Transition


# ------------------------------------------------------------------ lifecycle


def test_lifecycle_happy_path_and_reconnect():
    state = S.IDLE
    for transition, expected in [
        (T.OPEN, S.CONNECTING),
        (T.CONNECTED, S.CONNECTED),
        (T.LOST, S.RECONNECTING),
        (T.CONNECTED, S.CONNECTED),
        (T.CLOSE, S.CLOSING),
        (T.CLOSED, S.CLOSED),
    ]:
        state = next_state(state, transition)
        assert state is expected


def test_lifecycle_failures_and_finality():
    assert next_state(S.CONNECTING, T.CONNECT_FAILED) is S.CLOSED
    assert next_state(S.CONNECTED, T.LOST, reconnect=False) is S.CLOSED
    assert next_state(S.RECONNECTING, T.GIVE_UP) is S.CLOSED  # version refusal while reconnecting
    assert next_state(S.CLOSED, T.CLOSE) is S.CLOSED  # close is idempotent
    with pytest.raises(AgentStateError, match="closed"):
        next_state(S.CLOSED, T.OPEN)
    with pytest.raises(AgentStateError):
        next_state(S.CONNECTED, T.OPEN)


def test_requests_only_when_connected():
    require_connected(S.CONNECTED)
    with pytest.raises(AgentConnectionError):
        require_connected(S.RECONNECTING)
    for state in (S.IDLE, S.CONNECTING, S.CLOSING, S.CLOSED):
        with pytest.raises(AgentStateError):
            require_connected(state)


# ---------------------------------------------------------------- ack decoding


def test_decode_ack_success_and_typed_errors():
    ret = decode_ack(Event.GET_TOOLS, GetToolsRet, [{"tools": [], "req_id": "r"}])
    assert ret == GetToolsRet(tools=[], req_id="r")
    cases = [
        ({"code": 4103, "message": "join first"}, NotInOfficeError),
        ({"code": 4104, "message": "other office"}, CrossOfficeError),
        ({"code": 500, "message": "boom"}, InternalError),
        ({"code": 4999, "message": "future code"}, RemoteError),
    ]
    for payload, error in cases:
        with pytest.raises(error) as info:
            decode_ack(Event.GET_TOOLS, GetToolsRet, [payload])
        assert info.value.code == payload["code"]
    with pytest.raises(CapabilityNotSupportedError) as lacking:
        decode_ack(
            Event.GET_RESOURCES,
            GetToolsRet,
            [{"code": 4015, "message": "m", "mcp_server_name": "s", "capability": "resources"}],
        )
    assert lacking.value.capability == "resources"


def test_decode_ack_refuses_malformed_answers():
    with pytest.raises(InvalidResponseError):
        decode_ack(Event.GET_TOOLS, GetToolsRet, [{"tools": 3, "req_id": "r"}])
    with pytest.raises(InvalidResponseError):
        decode_ack(Event.GET_TOOLS, GetToolsRet, [])
    # a nested envelope is not an ErrorPayload (errors.md §2): it fails as a bad answer
    with pytest.raises(InvalidResponseError):
        decode_ack(Event.GET_TOOLS, GetToolsRet, [{"error": {"code": 404, "message": "x"}}])


def test_tool_results_are_not_errors():
    failed = {"content": [], "isError": True, "meta": {"error_code": 4003}}
    result = decode_ack(Event.TOOL_CALL, CallToolResult, [failed])
    assert result.is_error and result_error_code(result) == 4003


def test_office_acks():
    decode_office_ack(Event.JOIN_OFFICE, "o", [True, None])
    decode_office_ack(Event.LEAVE_OFFICE, "o", [[True, None]])
    with pytest.raises(JoinOfficeError, match="Room already has an agent") as info:
        decode_office_ack(Event.JOIN_OFFICE, "o", [False, "Room already has an agent"])
    assert info.value.reason == "Room already has an agent"
    with pytest.raises(LeaveOfficeError):
        decode_office_ack(Event.LEAVE_OFFICE, "o", [False, None])
    with pytest.raises(InvalidResponseError):
        decode_office_ack(Event.JOIN_OFFICE, "o", ["yes"])
    with pytest.raises(NotInOfficeError):
        decode_office_ack(Event.LEAVE_OFFICE, "o", [{"code": 4103, "message": "m"}])


# ---------------------------------------------------------------- notifications


def _note(event: Event, payload: object) -> AgentNotification:
    return AgentNotification(event, payload)  # type: ignore[arg-type]


def test_actions_follow_the_recommended_receiver_behaviour():
    enter = _note(Event.NOTIFY_ENTER_OFFICE, EnterOfficeNotification(office_id="o", computer="c"))
    leave = _note(Event.NOTIFY_LEAVE_OFFICE, LeaveOfficeNotification(office_id="o", computer="c"))
    tools = _note(Event.NOTIFY_UPDATE_TOOL_LIST, UpdateToolListNotification(computer="c"))
    config = _note(Event.NOTIFY_UPDATE_CONFIG, UpdateComputerConfigReq(computer="c"))
    desktop = _note(Event.NOTIFY_UPDATE_DESKTOP, UpdateComputerConfigReq(computer="c"))
    agent_in = _note(Event.NOTIFY_ENTER_OFFICE, EnterOfficeNotification(office_id="o", agent="a"))
    cancel = _note(Event.NOTIFY_TOOL_CALL_CANCEL, AgentCallData(agent="a", req_id="r"))
    on = {"tool_cache": True, "desktop_listeners": True}
    assert actions_for(enter, **on) == [FetchTools("c")]
    assert actions_for(tools, **on) == [FetchTools("c")]
    assert actions_for(config, **on) == [FetchTools("c")]
    assert actions_for(leave, **on) == [DropTools("c")]
    assert actions_for(desktop, **on) == [RefreshDesktop("c")]
    assert actions_for(agent_in, **on) == []
    assert actions_for(cancel, **on) == []
    off = {"tool_cache": False, "desktop_listeners": False}
    assert all(actions_for(n, **off) == [] for n in (enter, leave, tools, config, desktop))


def test_decode_notification_is_typed():
    note = decode_notification(Event.NOTIFY_ENTER_OFFICE, {"office_id": "o", "computer": "c"})
    assert note.payload == EnterOfficeNotification(office_id="o", computer="c")
    assert note.computer == "c"
    with pytest.raises(InvalidResponseError):
        decode_notification(Event.NOTIFY_UPDATE_TOOL_LIST, {"computer": 3})
    with pytest.raises(ValueError):
        decode_notification(Event.GET_TOOLS, {})


# ------------------------------------------------------------------ tool cache


def _tool(name: str) -> AgentTool:
    smcp = SMCPTool(name=name, description="", params_schema={}, return_schema=None)
    return AgentTool.from_smcp("c", smcp)


def test_cache_discards_stale_fetches():
    cache = ToolCache()
    old = cache.begin_fetch("c")
    new = cache.begin_fetch("c")
    assert cache.complete_fetch("c", new, [_tool("new")])
    assert not cache.complete_fetch("c", old, [_tool("old")])  # slower, older answer
    assert [t.name for t in cache.view()["c"]] == ["new"]
    inflight = cache.begin_fetch("c")
    assert cache.drop("c")
    assert not cache.complete_fetch("c", inflight, [_tool("ghost")])  # left meanwhile
    assert "c" not in cache.view()
    assert not cache.drop("c")


def test_cache_clear_and_find():
    cache = ToolCache()
    for computer in ("a", "b"):
        token = cache.begin_fetch(computer)
        cache.complete_fetch(computer, token, [_tool("x")])
    assert len(cache.find("x")) == 2
    pending = cache.begin_fetch("a")
    cache.clear()
    assert dict(cache.view()) == {}
    assert not cache.complete_fetch("a", pending, [_tool("x")])
    view = cache.view()
    with pytest.raises(TypeError):
        view["z"] = ()  # type: ignore[index]


def test_malformed_tool_meta_keeps_the_tool():
    smcp = SMCPTool(
        name="t",
        description="",
        params_schema={},
        return_schema=None,
        meta={"a2c_tool_meta": "{not json"},
    )
    tool = AgentTool.from_smcp("c", smcp)
    assert tool.tool_meta is None and tool.tags == () and tool.auto_apply is None


# ------------------------------------------------------------- tool results


def test_authorization_info_and_raising():
    result = CallToolResult(
        content=[{"type": "text", "text": "scope"}],
        is_error=True,
        meta={"error_code": 4007, "mcp_server": "s", "auth_hint": {"message": "Ask an admin."}},
    )
    info = tool_authorization(result)
    assert info is not None and not info.first_time and info.message == "Ask an admin."
    with pytest.raises(ToolAuthorizationFailedError):
        raise_for_tool_error(result)
    other = CallToolResult(content=[], is_error=True, meta={"error_code": True})
    assert result_error_code(other) is None and tool_authorization(other) is None


def test_resource_priority_reads_annotations_not_the_uri():
    assert resource_priority(A2CResource(uri="window://h/p", annotations={"priority": 0.8})) == 0.8
    assert resource_priority(A2CResource(uri="window://h/p")) == 0.0


# ------------------------------------------------------------------ connection


def test_connection_parameters():
    assert versioned_url("http://h:1/base?x=1") == "http://h:1/base?x=1&a2c_version=0.2.3"
    with pytest.raises(ValueError):
        versioned_url("http://h:1/?a2c_version=0.3.0")
    probe = handshake_probe_url("wss://h:1/?tenant=t&a2c_version=0.2.0", "/smcp/")
    assert probe == "https://h:1/smcp/?tenant=t&a2c_version=0.2.0&EIO=4&transport=polling"
    # The upload extension is announced on every connect (docs/compatibility.md).
    uploads = {"a2c_extensions": ["put_blob"]}
    assert build_auth({"token": "t"}) == {"token": "t", "role": "agent", **uploads}
    assert build_auth(None) == {"role": "agent", **uploads}
    with pytest.raises(ValueError):
        build_auth({"role": "computer"})
    assert check_transports(["websocket"]) == ("websocket",)
    with pytest.raises(ValueError):
        check_transports([])
    with pytest.raises(ValueError):
        check_transports(["carrier-pigeon"])


def test_version_error_is_a_remote_error():
    # ProtocolVersionError comes from the core: one tree for every role.
    assert issubclass(ProtocolVersionError, RemoteError)
