"""Rule A1: an Agent that goes away takes its tool calls with it.

When the Agent leaves its office or disconnects with ``client:tool_call`` requests in
flight, the Server sends each Computer running one ``notify:tool_call_cancel`` with the
extension key ``a2c_cancel_reason: "agent_gone"``. On two nodes the Agent and the
Computer sit on different nodes (clients alternate).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

from a2c_protocol import Event
from a2c_testkit.server import RawClient, RunningServer, connect_raw


async def _office(stack: AsyncExitStack, server: RunningServer) -> tuple[RawClient, RawClient]:
    """alice (agent) and c1 (computer) in o1; c1 holds every tool call until cancelled."""
    alice = await stack.enter_async_context(connect_raw(server, "agent"))
    c1 = await stack.enter_async_context(connect_raw(server, "computer"))
    assert await alice.join("agent", "alice", "o1") == (True, None)
    assert await c1.join("computer", "c1", "o1") == (True, None)
    started: asyncio.Queue[str] = asyncio.Queue()
    c1.started = started  # type: ignore[attr-defined]

    async def hold(data: Any) -> Any:
        await started.put(data["req_id"])
        await asyncio.Event().wait()  # never answers by itself

    c1.sio.on(Event.TOOL_CALL.value, hold, namespace="/smcp")
    return alice, c1


def _call(req_id: str) -> dict[str, Any]:
    return {"agent": "alice", "req_id": req_id, "computer": "c1", "tool_name": "slow",
            "params": {}, "timeout": 60}  # fmt: skip


async def _start(alice: RawClient, c1: RawClient, req_id: str) -> asyncio.Task[object]:
    call = asyncio.ensure_future(alice.call(Event.TOOL_CALL, _call(req_id), timeout=90))
    assert await asyncio.wait_for(c1.started.get(), 30) == req_id  # type: ignore[attr-defined]
    return call


async def test_an_agent_that_disconnects_gets_its_calls_cancelled(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await _office(stack, server)
        call = await _start(alice, c1, "r-crash")
        await alice.sio.disconnect()
        assert await c1.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "r-crash", "a2c_cancel_reason": "agent_gone"},
        )
        call.cancel()


async def test_an_agent_that_leaves_gets_its_calls_cancelled(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await _office(stack, server)
        call = await _start(alice, c1, "r-left")
        assert await alice.call(Event.LEAVE_OFFICE, {"office_id": "o1"}) == (True, None)
        assert await c1.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "r-left", "a2c_cancel_reason": "agent_gone"},
        )
        call.cancel()


async def test_a_call_its_agent_cancelled_is_not_cancelled_again(server: RunningServer) -> None:
    async with AsyncExitStack() as stack:
        alice, c1 = await _office(stack, server)
        first = await _start(alice, c1, "r-own")
        second = await _start(alice, c1, "r-other")
        await alice.emit(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "r-own"})
        assert await c1.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "r-own"},
        )
        assert await alice.call(Event.LEAVE_OFFICE, {"office_id": "o1"}) == (True, None)
        # Only the call nobody cancelled yet: had r-own been kept, its agent_gone cancel
        # (registered first) would come before this one.
        assert await c1.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "r-other", "a2c_cancel_reason": "agent_gone"},
        )
        first.cancel()
        second.cancel()


async def test_an_answered_call_is_not_cancelled_when_its_agent_leaves(
    server: RunningServer,
) -> None:
    """A call stops being tracked once answered (mutation-checked)."""
    async with AsyncExitStack() as stack:
        alice, c1 = await _office(stack, server)
        held = c1.sio.handlers["/smcp"][Event.TOOL_CALL.value]

        async def answer_done_hold_rest(data: Any) -> Any:
            if data["req_id"] == "r-done":
                return {"content": [], "isError": False}
            return await held(data)

        c1.sio.on(Event.TOOL_CALL.value, answer_done_hold_rest, namespace="/smcp")
        assert await alice.call(Event.TOOL_CALL, _call("r-done"), timeout=60) == {
            "content": [], "isError": False,
        }  # fmt: skip
        call = await _start(alice, c1, "r-held")
        assert await alice.call(Event.LEAVE_OFFICE, {"office_id": "o1"}) == (True, None)
        # Had r-done stayed tracked, its cancel (registered first) would come first.
        assert await c1.next_notification(Event.NOTIFY_TOOL_CALL_CANCEL) == (
            Event.NOTIFY_TOOL_CALL_CANCEL,
            {"agent": "alice", "req_id": "r-held", "a2c_cancel_reason": "agent_gone"},
        )
        call.cancel()
