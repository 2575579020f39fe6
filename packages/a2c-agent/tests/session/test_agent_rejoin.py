"""Back into the office after a reconnect: no silent half-state.

The agent stays RECONNECTING until it is in its office again; a held name or seat is
waited out (its reason on every refused request), anything else ends the agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from a2c_agent import (
    AgentConnectionError,
    AgentState,
    AsyncAgent,
    CallNotSentError,
    JoinOfficeError,
)
from a2c_protocol import NAMESPACE, Role
from a2c_server import AuthRequest, Grant, Identity
from a2c_testkit.server import RunningServer, connect_raw, running_server
from a2c_testkit.triangle import eventually

OFFICE = "office-1"


class Gate:
    """An Agent ``auth`` source that can hold a reconnect until the test lets it go."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()

    async def __call__(self) -> Mapping[str, Any]:
        await self.open.wait()
        return {}


async def drop(srv: RunningServer, agent: AsyncAgent) -> None:
    """The Server ends the agent's session (as a dying node's balancer would)."""
    sid = agent._channel.sio.get_sid(NAMESPACE)  # type: ignore[union-attr]
    await srv.app.sio.disconnect(sid, namespace=NAMESPACE)
    # Not CONNECTED any more (an ungated reconnect may already have ended it: CLOSED).
    await eventually(lambda: agent.state is not AgentState.CONNECTED, what="the loss seen")


async def test_a_held_seat_is_waited_out_and_every_request_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="a2c_agent")
    states: list[tuple[AgentState, AgentState]] = []
    gate = Gate()
    async with running_server() as srv:
        agent = AsyncAgent(srv.url, name="planner", auth=gate, reconnect_delay=0.1,
                           reconnect_max_delay=0.5)  # fmt: skip
        agent.add_state_listener(lambda old, new: states.append((old, new)))
        async with agent:
            await agent.join_office(OFFICE)
            gate.open.clear()
            await drop(srv, agent)
            async with connect_raw(srv, "agent") as other:
                assert await other.join("agent", "intruder", OFFICE) == (True, None)
                gate.open.set()
                await eventually(lambda: agent.reconnecting_reason is not None
                                 and "was refused" in agent.reconnecting_reason,
                                 what="the held seat noticed")  # fmt: skip
                assert agent.state is AgentState.RECONNECTING
                assert agent.office_id == OFFICE  # still its office: it is going back
                with pytest.raises(AgentConnectionError) as refused:
                    await agent.get_tools("box")
                assert "re-joining office 'office-1' was refused (Room already has an agent)" in (
                    str(refused.value)
                )
                # A tool call is not sent from outside the office either (it was a 4103): it
                # waits for the office within its timeout, then says why it was never sent.
                with pytest.raises(CallNotSentError, match="Room already has an agent") as unsent:
                    await agent.call_tool("box", "echo", {}, timeout=0.5)
                assert isinstance(unsent.value.cause, AgentConnectionError)
                assert unsent.value.may_have_run is False
                await asyncio.sleep(3.5)  # tries at about 0, 1 and 3 s, all refused
                assert agent.state is AgentState.RECONNECTING and agent.last_error is None
            # The seat is free again: back in the office, CONNECTED, without a new open().
            await eventually(lambda: agent.state is AgentState.CONNECTED, timeout=30,
                             what="back in the office")  # fmt: skip
            assert agent.office_id == OFFICE and agent.reconnecting_reason is None
            assert await agent.list_room()  # requests work again
    held = [r for r in caplog.records if "may still be held" in r.getMessage()]
    assert len(held) == 1 and held[0].levelno == logging.WARNING  # once, not per attempt
    # Never CONNECTED while outside its office: one loss, one return.
    assert states.count((AgentState.CONNECTED, AgentState.RECONNECTING)) == 1
    assert states.count((AgentState.RECONNECTING, AgentState.CONNECTED)) == 1


async def test_a_seat_held_past_the_budget_ends_the_agent_loudly() -> None:
    gate = Gate()
    async with running_server() as srv:
        agent = AsyncAgent(srv.url, name="planner", auth=gate, reconnect_delay=0.1,
                           rejoin_budget=1.5)  # fmt: skip
        async with agent:
            await agent.join_office(OFFICE)
            stream = agent.notifications()
            gate.open.clear()
            await drop(srv, agent)
            async with connect_raw(srv, "agent") as other:
                assert await other.join("agent", "intruder", OFFICE) == (True, None)
                gate.open.set()
                await eventually(lambda: agent.state is AgentState.CLOSED, timeout=30,
                                 what="the agent to give up")  # fmt: skip
            error = agent.last_error
            assert isinstance(error, JoinOfficeError)
            assert "Room already has an agent" in str(error) and "still refused after" in str(error)
            assert agent.office_id is None
            assert [n async for n in stream] == []  # the stream ended with the agent


class ShrinkingGrant:
    """Grants OFFICE on the first connect only: the re-join is forbidden (final)."""

    def __init__(self) -> None:
        self.connects = 0

    async def authenticate(self, request: AuthRequest) -> Identity:
        self.connects += 1
        offices = (OFFICE,) if self.connects == 1 else ("elsewhere",)
        return Identity(subject="planner", grant=Grant(offices=offices, role=Role.AGENT))


async def test_a_re_join_that_waiting_cannot_change_ends_the_agent_at_once() -> None:
    async with running_server(auth=ShrinkingGrant()) as srv:
        agent = AsyncAgent(srv.url, name="planner", reconnect_delay=0.1)
        async with agent:
            await agent.join_office(OFFICE)
            await drop(srv, agent)
            await eventually(lambda: agent.state is AgentState.CLOSED, timeout=30,
                             what="the agent to close")  # fmt: skip
            assert isinstance(agent.last_error, JoinOfficeError)
            assert agent.last_error.office_id == OFFICE


async def test_the_bridge_says_why_its_office_is_out_of_reach_while_the_seat_is_held() -> None:
    from a2c_agent._bridge._office import Office

    gate = Gate()
    changes: list[str | None] = []
    async with running_server() as srv:
        agents: list[AsyncAgent] = []

        def make_agent() -> AsyncAgent:
            agents.append(AsyncAgent(srv.url, name="bridge", auth=gate, reconnect_delay=0.1))
            return agents[-1]

        office = Office(make_agent, OFFICE, srv.url, on_tools=lambda: changes.append(None),
                        on_resources=lambda: None)  # fmt: skip
        running = asyncio.ensure_future(office.run())
        try:
            await eventually(lambda: office.agent is not None, what="the bridge in its office")
            gate.open.clear()
            await drop(srv, agents[0])
            async with connect_raw(srv, "agent") as other:
                assert await other.join("agent", "intruder", OFFICE) == (True, None)
                gate.open.set()
                await eventually(lambda: "was refused (Room already has an agent)"
                                 in (office.problem or ""), what="the cause in the problem")  # fmt: skip
                assert office.agent is None  # no tool call goes out from outside the office
            await eventually(lambda: office.problem is None, timeout=30, what="back")
            assert office.agent is agents[0]  # the same Agent got back in: no restart
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            await office.close()
