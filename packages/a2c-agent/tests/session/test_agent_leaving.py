"""Leaving cancels what is in flight (rules D1-D3 of ``_inflight``).

The cancel must come from the Agent (no ``a2c_cancel_reason`` key: the Server adds
``agent_gone`` only to the cancels it sends for an Agent that left without them).
"""

from __future__ import annotations

import asyncio
import threading

from a2c_agent import AgentStateError, ConnectionLostError, SyncAgent
from a2c_protocol import Event

OFFICE = "office-1"


async def test_close_cancels_calls_in_flight_before_leaving(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)
    agent = await make_agent()
    await agent.join_office(OFFICE)
    calls = [
        asyncio.ensure_future(agent.call_tool("box-1", "slow", {}, timeout=60, req_id=r))
        for r in ("a", "b")
    ]
    for req_id in ("a", "b"):
        await computer.wait_for_request(Event.TOOL_CALL, lambda p, r=req_id: p["req_id"] == r)
    await agent.close()
    for req_id in ("a", "b"):
        cancel = await computer.wait_for_notification(
            Event.NOTIFY_TOOL_CALL_CANCEL, lambda p, r=req_id: p["req_id"] == r
        )
        assert cancel == {"agent": "agent-1", "req_id": req_id}
    for call in calls:
        (outcome,) = await asyncio.gather(call, return_exceptions=True)
        assert isinstance(outcome, AgentStateError | ConnectionLostError), outcome


async def test_a_cancelled_caller_sends_one_cancel_and_close_adds_none(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)
    agent = await make_agent()
    await agent.join_office(OFFICE)
    call = asyncio.ensure_future(agent.call_tool("box-1", "slow", {}, timeout=60, req_id="c"))
    await computer.wait_for_request(Event.TOOL_CALL)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    await agent.close()
    await computer.wait_for_notification(Event.NOTIFY_LEAVE_OFFICE)
    assert computer.received(Event.NOTIFY_TOOL_CALL_CANCEL) == [{"agent": "agent-1", "req_id": "c"}]


async def test_leave_office_cancels_calls_in_flight_first(make_computer, make_agent):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)
    agent = await make_agent()
    await agent.join_office(OFFICE)
    call = asyncio.ensure_future(agent.call_tool("box-1", "slow", {}, timeout=60, req_id="l"))
    await computer.wait_for_request(Event.TOOL_CALL)
    await agent.leave_office()
    cancel = await computer.wait_for_notification(Event.NOTIFY_TOOL_CALL_CANCEL)
    assert cancel == {"agent": "agent-1", "req_id": "l"}
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)


async def test_sync_agent_close_cancels_a_call_blocked_in_another_thread(server, make_computer):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)
    agent = SyncAgent(server.url, name="agent-1", socketio_path=server.socketio_path)
    await asyncio.to_thread(agent.open)
    await asyncio.to_thread(agent.join_office, OFFICE)
    ended = threading.Event()

    def call() -> None:
        try:
            agent.call_tool("box-1", "slow", {}, timeout=60, req_id="s")
        except (AgentStateError, ConnectionLostError):  # closed under it: an error, no hang
            ended.set()

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    await computer.wait_for_request(Event.TOOL_CALL)
    await asyncio.to_thread(agent.close)  # e.g. the `with` block left on Ctrl-C
    cancel = await computer.wait_for_notification(Event.NOTIFY_TOOL_CALL_CANCEL)
    assert cancel == {"agent": "agent-1", "req_id": "s"}
    await asyncio.to_thread(caller.join, 30)
    assert ended.is_set()


def test_each_call_is_cancelled_once_whoever_notices_first() -> None:
    from a2c_agent._rpc._inflight import InFlightCalls

    calls = InFlightCalls()
    with calls.tracking("a"), calls.tracking("b"):
        assert calls.claim("a") and not calls.claim("a")
        assert calls.claim_all() == ["b"] and calls.claim_all() == []
        assert calls.take_unflushed() and not calls.take_unflushed()
    assert len(calls) == 0
    assert calls.claim("gone")  # an explicit cancel_tool_call may name any id
