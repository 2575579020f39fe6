"""Tool-call timeouts send the cancel; Server forward timeouts (408) are typed errors."""

from __future__ import annotations

import asyncio

import pytest

from a2c_agent import (
    AsyncAgent,
    RequestTimeoutError,
    ToolCallTimeoutError,
    is_cancelled,
    is_timed_out,
    result_error_code,
    result_text,
)
from a2c_protocol import Event
from a2c_server import ServerSettings
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.server import running_server

OFFICE = "office-1"


async def test_local_timeout_sends_cancel_with_the_same_req_id(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)
    agent = await make_agent(tool_call_grace=0.2)
    await agent.join_office(OFFICE)
    with pytest.raises(ToolCallTimeoutError) as info:
        await agent.call_tool("box-1", "slow", {}, timeout=1)
    (call,) = computer.received(Event.TOOL_CALL)
    assert info.value.req_id == call["req_id"]
    cancel = await computer.wait_for_notification(
        Event.NOTIFY_TOOL_CALL_CANCEL, lambda p: p["req_id"] == call["req_id"]
    )
    assert cancel == {"agent": "agent-1", "req_id": call["req_id"]}
    # The locally built timeout result carries the 0.2.3 marker, like a Computer's.
    result = info.value.result
    assert result.is_error and is_timed_out(result) and not is_cancelled(result)
    assert result.meta is not None and result.meta["a2c_timeout"] is True
    assert result_error_code(result) == 4004 and "box-1" in result_text(result)


async def test_caller_chosen_req_id_can_be_cancelled_from_elsewhere(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)
    agent = await make_agent()
    await agent.join_office(OFFICE)
    call = asyncio.create_task(agent.call_tool("box-1", "slow", {}, timeout=60, req_id="job-7"))
    request = await computer.wait_for_request(Event.TOOL_CALL)
    assert request["req_id"] == "job-7"
    await agent.cancel_tool_call("job-7")
    cancel = await computer.wait_for_notification(
        Event.NOTIFY_TOOL_CALL_CANCEL, lambda p: p["req_id"] == "job-7"
    )
    assert cancel == {"agent": "agent-1", "req_id": "job-7"}
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    with pytest.raises(ValueError, match="req_id"):
        await agent.call_tool("box-1", "slow", {}, req_id="")


async def test_server_forward_timeout_is_408_and_cancels_tool_calls():
    settings = ServerSettings(forward_timeout=0.5, tool_call_buffer=0.0)
    async with (
        running_server(settings) as srv,
        ScriptedComputer(
            srv.url, name="box-1", office_id=OFFICE, socketio_path=srv.socketio_path
        ) as computer,
    ):
        computer.on(Event.GET_TOOLS, computer.hold)
        computer.on(Event.TOOL_CALL, computer.hold)
        async with AsyncAgent(
            srv.url, name="agent-1", tool_cache=False, tool_call_grace=20.0
        ) as agent:
            await agent.join_office(OFFICE)
            with pytest.raises(RequestTimeoutError) as info:
                await agent.get_tools("box-1")
            assert info.value.code == 408
            with pytest.raises(RequestTimeoutError):
                await agent.call_tool("box-1", "slow", {}, timeout=1)
            (call,) = computer.received(Event.TOOL_CALL)
            await computer.wait_for_notification(
                Event.NOTIFY_TOOL_CALL_CANCEL, lambda p: p["req_id"] == call["req_id"]
            )


async def test_with_default_settings_the_servers_may_have_run_answer_reaches_the_caller():
    """The timeout contract: a silent Computer, default Server and Agent waits.

    The Server answers 408 "may have run" at timeout + its buffer; the Agent's default
    grace outlasts that, so the caller gets it instead of an Agent-side timeout.
    """
    settings = ServerSettings()  # the default --tool-call-buffer
    async with (
        running_server(settings) as srv,
        ScriptedComputer(
            srv.url, name="box-1", office_id=OFFICE, socketio_path=srv.socketio_path
        ) as computer,
    ):
        computer.on(Event.TOOL_CALL, computer.hold)
        async with AsyncAgent(srv.url, name="agent-1", tool_cache=False) as agent:
            await agent.join_office(OFFICE)
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(RequestTimeoutError) as info:
                await agent.call_tool("box-1", "slow", {}, timeout=1)
            waited = loop.time() - started
    assert info.value.details == {"computer_name": "box-1", "delivered": True}
    assert "may have run" in info.value.message
    # Reported, not asserted: how far before the Agent's own deadline the answer came.
    print(f"408 after {waited:.2f} s; the Agent would have given up at {1 + 8.0:g} s")


def test_an_agent_side_timeout_never_reads_as_not_run():
    exc = ToolCallTimeoutError("box-1", "slow", "r1", 5, 13)
    assert exc.may_have_run is True and exc.delivered is None and exc.waited == 13
    assert "may have run" in str(exc) and "13 s" in str(exc)
    assert "may have run" in result_text(exc.result)
