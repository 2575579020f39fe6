"""A late answer to a call the Server timed out costs its Computer nothing.

A stale ack (an id nobody waits for) costs its session 50 packets of the inbound budget:
forged and flooded acks are cut. But an ack arriving after the Server itself gave up on
the call is the Computer's honest, slow answer; charged 50 each, a few short-timeout calls
to a slow tool put the office's own Computer over its budget and its next answers were
dropped (a call that then hangs until its timeout), sustained, cut. On a real uvicorn, with
a small budget so that a handful of late answers would exhaust it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import attrs

from a2c_protocol import Event
from a2c_server import ServerSettings
from a2c_server._floods._late_acks import GivenUp
from a2c_testkit import running_server
from a2c_testkit.server import joined_raw
from a2c_testkit.triangle import eventually

SLOW_S = 1.5
LATE = 8  # 8 x 50 packets: four times the burst below
SETTINGS = ServerSettings(max_inbound_per_second=5, inbound_burst=100, tool_call_buffer=0)


def call(req: int, tool: str, timeout: int) -> dict[str, Any]:
    return {"agent": "agent-1", "computer": "pc-1", "req_id": f"r{req}", "tool_name": tool,
            "params": {}, "timeout": timeout}  # fmt: skip


async def test_floods_late_answers_to_timed_out_calls_do_not_spend_the_computer_budget() -> None:
    async with running_server(attrs.evolve(SETTINGS)) as srv, contextlib.AsyncExitStack() as st:
        computer = await joined_raw(st, srv, "computer", "pc-1", "office-1")
        agent = await joined_raw(st, srv, "agent", "agent-1", "office-1")

        @computer.sio.on(Event.TOOL_CALL.value, namespace="/smcp")  # type: ignore[untyped-decorator]
        async def answer(data: dict[str, Any]) -> dict[str, Any]:
            if data["tool_name"] == "slow":
                await asyncio.sleep(SLOW_S)
            return {"content": [{"type": "text", "text": data["req_id"]}], "isError": False}

        timed_out = await asyncio.gather(
            *(agent.call(Event.TOOL_CALL, call(n, "slow", 1)) for n in range(LATE))
        )
        assert all(isinstance(a, dict) and a.get("code") == 408 for a in timed_out), timed_out
        stats = srv.app.sio.inbound_stats
        await eventually(lambda: stats.late_acks + stats.stale_acks + stats.dropped >= LATE,
                         what="the late answers")  # fmt: skip
        # The Computer's next answer is relayed: its budget was not spent on the late ones.
        fresh = await agent.call(Event.TOOL_CALL, call(99, "fast", 10))
        assert isinstance(fresh, dict) and fresh.get("isError") is False, fresh
        assert (stats.late_acks, stats.stale_acks, stats.dropped) == (LATE, 0, 0)
        assert len(srv.app.sio.given_up) == 0  # each id forgotten once answered


def test_floods_given_up_ids_are_taken_once_bounded_and_go_with_their_session() -> None:
    given_up = GivenUp(per_session=3)
    given_up.add("s1", [1, 2])
    assert given_up.take("s1", 1) is True
    assert given_up.take("s1", 1) is False  # a second ack for the id: stale, charged
    assert given_up.take("s2", 2) is False  # another session's id
    assert given_up.take("s1", None) is False
    given_up.add("s1", [3, 4, 5])
    assert len(given_up) == 3 and given_up.take("s1", 2) is False  # the oldest went
    given_up.forget("s1")
    assert len(given_up) == 0 and given_up.take("s1", 5) is False
