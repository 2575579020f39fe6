"""A tool call that never reached a Computer is sent again (``_rpc/_resend`` RS1-RS3).

The rules alone, then a real Server in-process with a raw Computer that counts the calls
it gets: a call made while the agent reconnects goes out once the agent is back; a call a
draining Server refused unsent goes out again on the next connection, once; a call whose
connection dropped after it was sent is never sent again; and the time runs out with
:class:`CallNotSentError` naming the cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2c_agent import (
    AgentConnectionError,
    AgentState,
    AsyncAgent,
    CallNotSentError,
    ConnectionLostError,
    result_text,
)
from a2c_agent._rpc._resend import Resends, Wait, resend_delays, resend_wait
from a2c_protocol import NAMESPACE, Event, RemoteError
from a2c_testkit.server import RawClient, RunningServer, connect_raw, running_server
from a2c_testkit.triangle import eventually

OFFICE = "resend-office"


def _refused(code: int, **details: Any) -> RemoteError:
    return RemoteError("refused", code=code, details=details or None)


@pytest.mark.parametrize(
    ("error", "wait"),
    [
        (AgentConnectionError("the agent is reconnecting"), Wait.NEXT_LINK),
        (ConnectionLostError("cannot send", may_have_run=False), Wait.NEXT_LINK),
        (ConnectionLostError("lost while out", may_have_run=True), None),
        (_refused(500, reason="server_shutdown", delivered=False), Wait.NEXT_LINK),
        (_refused(503, reason="registry_unavailable", delivered=False), Wait.PAUSE),
        (_refused(503, reason="computer_returning", delivered=False), Wait.PAUSE),
        (_refused(500, reason="server_shutdown", delivered=True), None),
        (_refused(500, reason="server_shutdown"), None),  # may have run: no "delivered"
        (_refused(404, computer_name="box"), None),
        (_refused(408, delivered=True), None),
        (_refused(500), None),
        (ValueError("not ours"), None),
    ],
)
def test_only_a_call_that_never_reached_a_computer_is_sent_again(
    error: BaseException, wait: Wait | None
) -> None:
    assert resend_wait(error) is wait


def test_pauses_grow_to_a_second_and_every_try_fits_in_the_timeout() -> None:
    delays = resend_delays()
    assert [next(delays) for _ in range(7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    resends = Resends(100.0, 2.0)
    assert resends.left(100.5) == 1.5 and resends.left(103.0) == 0.0
    assert resends.pause(100.0) == 0.1
    assert resends.pause(101.95) == pytest.approx(0.05)  # never past the deadline
    assert resends.tries == 1


def _computer(client: RawClient, calls: list[str], *, answer: bool = True) -> None:
    async def on_call(payload: Any) -> dict[str, Any] | None:
        calls.append(payload["req_id"])
        if not answer:
            await asyncio.sleep(3600)  # never answers: the call stays out
        return {"content": [{"type": "text", "text": "pong"}], "isError": False}

    client.sio.on(Event.TOOL_CALL.value, on_call, namespace=NAMESPACE)


@contextlib.asynccontextmanager
async def _office(
    srv: RunningServer, calls: list[str], *, answer: bool = True
) -> AsyncIterator[AsyncAgent]:
    async with connect_raw(srv, "computer", transports=["websocket"]) as box:
        _computer(box, calls, answer=answer)
        assert await box.join("computer", "box", OFFICE) == (True, None)
        agent = AsyncAgent(srv.url, name="planner", reconnect_delay=0.2, reconnect_max_delay=0.5)
        async with agent:
            await agent.join_office(OFFICE)
            yield agent


async def _drop(srv: RunningServer, agent: AsyncAgent) -> None:
    sid = agent._channel.sio.get_sid(NAMESPACE)  # type: ignore[union-attr]
    await srv.app.sio.disconnect(sid, namespace=NAMESPACE)


async def test_a_call_made_while_reconnecting_goes_out_once_the_agent_is_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="a2c_agent")
    calls: list[str] = []
    async with running_server() as srv, _office(srv, calls) as agent:
        await _drop(srv, agent)
        await eventually(lambda: agent.state is AgentState.RECONNECTING, what="reconnecting")
        result = await agent.call_tool("box", "echo", {}, timeout=30)
        assert result_text(result) == "pong" and len(calls) == 1
    again = [r for r in caplog.records if "sent again" in r.getMessage()]
    assert len(again) == 1 and again[0].levelno == logging.DEBUG  # one line per try


async def test_a_call_refused_by_a_draining_server_goes_out_on_the_next_connection() -> None:
    calls: list[str] = []
    async with running_server() as srv, _office(srv, calls) as agent:
        drain = srv.app.drain
        drain.draining = True  # refuses calls unsent, as after SIGTERM
        call = asyncio.create_task(agent.call_tool("box", "echo", {}, timeout=30))
        # Refused, the call waits for a change of connection (not the same one again).
        await eventually(lambda: bool(agent._life.waiters), what="waiting for a new link")
        assert not call.done() and calls == []
        drain.draining = False  # "restarted": the next connection is served
        await _drop(srv, agent)
        result = await asyncio.wait_for(call, 30)
        assert result_text(result) == "pong" and len(calls) == 1  # sent once, on the new link


async def test_a_call_lost_with_its_connection_after_it_was_sent_is_not_sent_again() -> None:
    calls: list[str] = []
    async with running_server() as srv, _office(srv, calls, answer=False) as agent:
        call = asyncio.create_task(agent.call_tool("box", "echo", {}, timeout=30))
        await eventually(lambda: len(calls) == 1, what="the call reached the Computer")
        await _drop(srv, agent)
        with pytest.raises(ConnectionLostError) as lost:
            await asyncio.wait_for(call, 30)
        assert lost.value.may_have_run is True
        await eventually(lambda: agent.state is AgentState.CONNECTED, what="back")
        await asyncio.sleep(0.3)
        assert len(calls) == 1  # never twice to a Computer


async def test_a_call_never_sent_within_its_timeout_says_why() -> None:
    calls: list[str] = []
    async with running_server() as srv, _office(srv, calls) as agent:
        srv.app.drain.draining = True  # and the connection never moves
        with pytest.raises(CallNotSentError, match="was not sent within 1 s") as unsent:
            await agent.call_tool("box", "echo", {}, timeout=1.0)
        assert unsent.value.may_have_run is False and unsent.value.delivered is False
        assert isinstance(unsent.value.cause, RemoteError)
        assert unsent.value.cause.details == {"reason": "server_shutdown", "delivered": False}
        assert unsent.value.tries == 1 and calls == []
        srv.app.drain.draining = False


async def test_after_the_servers_notice_of_a_cut_nothing_new_goes_out_on_that_connection() -> None:
    calls: list[str] = []
    async with running_server() as srv, _office(srv, calls) as agent:
        states: list[AgentState] = []
        agent.add_state_listener(lambda old, new: states.append(new))
        drain = srv.app.drain
        drain.draining = True  # SIGTERM's drain begins: refusals from now on, and the notice
        assert drain.announce is not None
        await drain.announce()
        await eventually(lambda: agent.state is AgentState.RECONNECTING, what="the notice")
        assert agent._channel.sio is not None and agent._channel.sio.connected  # not cut yet
        assert "server shutting down" in (agent.reconnecting_reason or "")
        call = asyncio.create_task(agent.call_tool("box", "echo", {}, timeout=30))
        await eventually(lambda: bool(agent._life.waiters), what="the call waiting")
        assert calls == [] and not call.done()  # held back, not sent to a closing node
        drain.draining = False  # "restarted"
        await _drop(srv, agent)  # the cut the notice announced
        result = await asyncio.wait_for(call, 30)
        assert result_text(result) == "pong" and len(calls) == 1
        assert states.count(AgentState.RECONNECTING) == 1  # one loss, seen at the notice


async def test_a_cut_announced_but_never_made_is_made_by_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("a2c_agent._session._link._CUT_WITHIN", 0.5)
    calls: list[str] = []
    async with running_server() as srv, _office(srv, calls) as agent:
        drain = srv.app.drain
        assert drain.announce is not None
        await drain.announce()  # and the Server never cuts
        await eventually(lambda: agent.state is AgentState.RECONNECTING, what="the notice")
        call = asyncio.create_task(agent.call_tool("box", "echo", {}, timeout=30))
        result = await asyncio.wait_for(call, 30)  # the agent left and came back by itself
        assert result_text(result) == "pong" and len(calls) == 1
        assert agent.state is AgentState.CONNECTED
