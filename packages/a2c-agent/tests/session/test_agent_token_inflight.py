"""A tool call outlives the token of the Agent that made it.

The Agent's token expires while its call runs. The Server keeps the session until the call
has ended (refusing the session's new requests at once with a 401), the answer arrives,
then the Server cuts the session, saying why, and the Agent comes back with a fresh token
from its provider. Scaled down: an 8 s token and a call held until the 401 was seen.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from a2c_agent import AgentState, AsyncAgent
from a2c_protocol import NAMESPACE, Event, RemoteError
from a2c_server import JwksKeys, JwtAuth, ServerSettings
from a2c_testkit.issuer import running_issuer
from a2c_testkit.server import connect_raw, running_server

OFFICE = "office-a"
AGENT = {"role": "agent", "name": "alice-agent", "offices": [OFFICE]}
PC = {"role": "computer", "name": "alice-pc", "offices": [OFFICE]}
WAIT = 60.0


async def _until_refused(agent: AsyncAgent) -> RemoteError:
    """Ask for tools until the Server refuses: that happens once the token has expired."""
    while True:
        try:
            await agent.get_tools("alice-pc")
        except RemoteError as exc:
            return exc
        await asyncio.sleep(0.2)


async def test_a_call_in_flight_survives_the_expiry_of_its_agents_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    with running_issuer() as issuer:
        auth = JwtAuth(
            issuer=issuer.issuer, audience=issuer.audience,
            jwks=JwksKeys(issuer.url, min_refresh=0.2), leeway=0,
        )  # fmt: skip
        handed: list[str] = []

        def provide() -> dict[str, str]:
            # Short enough to expire during the call, long enough to connect on a loaded
            # machine; the renewed ones last.
            handed.append(issuer.token("alice", AGENT, lifetime=8 if not handed else 600))
            return {"token": handed[-1]}

        reconnected = asyncio.Event()
        cuts: list[str | None] = []

        def on_state(old: AgentState, new: AgentState) -> None:
            if new is AgentState.RECONNECTING:
                cuts.append(agent.last_cut)  # what `a2c-agent watch` prints at once
            if old is AgentState.RECONNECTING and new is AgentState.CONNECTED:
                reconnected.set()

        started = asyncio.Event()
        release = asyncio.Event()

        async def tool_call(data: Any) -> Any:
            started.set()
            await release.wait()
            return {"content": [{"type": "text", "text": "done"}], "isError": False}

        async def get_tools(data: Any) -> Any:
            return {"tools": [], "req_id": data["req_id"]}

        async with (
            running_server(ServerSettings(), auth=auth) as srv,
            connect_raw(srv, "computer", auth={"token": issuer.token("alice", PC)}) as pc,
        ):
            pc.sio.on(Event.TOOL_CALL.value, tool_call, namespace=NAMESPACE)
            pc.sio.on(Event.GET_TOOLS.value, get_tools, namespace=NAMESPACE)
            assert await pc.join("computer", "alice-pc", OFFICE) == (True, None)
            agent = AsyncAgent(srv.url, name="alice-agent", auth=provide, reconnect_delay=0.1)
            agent.add_state_listener(on_state)
            try:
                await agent.open()
                await agent.join_office(OFFICE)
                call = asyncio.ensure_future(agent.call_tool("alice-pc", "slow", timeout=60))
                await asyncio.wait_for(started.wait(), WAIT)
                # The token expires while the call runs: the session is still there, but
                # a new request of it is refused at once, saying what to do.
                refused = await asyncio.wait_for(_until_refused(agent), WAIT)
                assert refused.code == 401, refused
                assert refused.message == "token expired: reconnect with a fresh token"
                assert agent.state is AgentState.CONNECTED and not reconnected.is_set()
                # The call ends normally and its answer arrives.
                release.set()
                result = await asyncio.wait_for(call, WAIT)
                assert not result.is_error and result.content[0]["text"] == "done"
                # Then the Server cuts the session and the Agent is back with a new token.
                await asyncio.wait_for(reconnected.wait(), WAIT)
                assert len(handed) >= 2 and handed[0] != handed[1]
                assert agent.office_id == OFFICE
                assert cuts and cuts[0] == "token expired", cuts
            finally:
                release.set()
                await agent.close()
    server_lines = [r.getMessage() for r in caplog.records if r.name == "a2c_server.auth"]
    assert sum("tool calls in flight" in line for line in server_lines) == 1, server_lines
    # The Server said why it cut the session (notify:a2c_session_expired), and the Agent
    # logs that reason instead of a bare "connection lost".
    agent_lines = [r.getMessage() for r in caplog.records if r.name == "a2c_agent"]
    assert "agent alice-agent disconnected by the Server: token expired" in agent_lines


def test_watch_names_token_expiry_as_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    from a2c_agent._cli._watch import _report_state

    _report_state(AgentState.CONNECTED, AgentState.RECONNECTING, "token expired")
    _report_state(AgentState.CONNECTED, AgentState.RECONNECTING, None)
    _report_state(AgentState.RECONNECTING, AgentState.CONNECTED, None, "mn")
    assert capsys.readouterr().err.splitlines() == [
        "a2c-agent: disconnected by the Server: token expired; reconnecting with a fresh token",
        "a2c-agent: connection lost; reconnecting",
        "a2c-agent: reconnected; back in office 'mn'",
    ]
