"""Transient disconnects: pending requests fail at once, then reconnect, re-join, refresh."""

from __future__ import annotations

import asyncio

import pytest

from a2c_agent import AgentState, AsyncAgent, ConnectionLostError
from a2c_protocol import Event, Role
from a2c_server import AuthRequest, Identity
from a2c_testkit.scripted_computer import ScriptedComputer, scripted_tool
from a2c_testkit.server import running_server
from a2c_testkit.triangle import eventually

OFFICE = "office-1"
WAIT = 30.0


class GatedAuth:
    """Accepts everybody, but holds Agent connections until ``gate`` is set."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def authenticate(self, request: AuthRequest) -> Identity:
        if request.role is Role.AGENT:
            await self.gate.wait()
        return Identity(subject=request.role.value)


async def test_reconnect_rejoins_and_refreshes_the_cache():
    states: list[AgentState] = []
    connected_again = asyncio.Event()

    def on_state(old: AgentState, new: AgentState) -> None:
        states.append(new)
        if old is AgentState.RECONNECTING and new is AgentState.CONNECTED:
            connected_again.set()

    async with running_server() as first:
        port = first.port
        agent = AsyncAgent(first.url, name="agent-1", reconnect_delay=0.1, reconnect_max_delay=0.5)
        agent.add_state_listener(on_state)
        await agent.open()
        box1 = ScriptedComputer(first.url, name="box-1", office_id=OFFICE)
        await box1.__aenter__()
        box1.tools = [scripted_tool("old")]
        box1.on(Event.TOOL_CALL, box1.hold)
        await agent.join_office(OFFICE)
        assert [t.name for t in agent.tools["box-1"]] == ["old"]
        pending = asyncio.ensure_future(agent.call_tool("box-1", "slow", {}, timeout=300))
        await box1.wait_for_request(Event.TOOL_CALL)
    # The server is gone: the pending call fails from the disconnect, not from a timeout.
    with pytest.raises(ConnectionLostError):
        await asyncio.wait_for(pending, WAIT)
    assert agent.state is AgentState.RECONNECTING

    auth = GatedAuth()
    try:
        async with (
            running_server(auth=auth, port=port) as second,
            ScriptedComputer(second.url, name="box-2", office_id=OFFICE) as box2,
        ):
            box2.tools = [scripted_tool("new")]
            auth.gate.set()  # box-2 is in the office before the agent comes back
            await asyncio.wait_for(connected_again.wait(), WAIT)
            assert agent.office_id == OFFICE
            # The cache was rebuilt from list_room after the re-join, before CONNECTED.
            assert {c: [t.name for t in ts] for c, ts in agent.tools.items()} == {"box-2": ["new"]}
            members = {(s.name, s.role) for s in await agent.list_room()}
            assert members == {("agent-1", Role.AGENT), ("box-2", Role.COMPUTER)}
            result = await agent.call_tool("box-2", "missing", {})
            assert result.is_error
    finally:
        await box1.close()
        await agent.close()
    assert states[:3] == [AgentState.CONNECTING, AgentState.CONNECTED, AgentState.RECONNECTING]
    assert states[-2:] == [AgentState.CLOSING, AgentState.CLOSED]


async def test_without_reconnect_a_lost_connection_closes_the_agent():
    closed = asyncio.Event()
    async with running_server() as srv:
        agent = AsyncAgent(srv.url, name="agent-1", reconnect=False)
        agent.add_state_listener(lambda old, new: new is AgentState.CLOSED and closed.set())
        await agent.open()
        await agent.join_office(OFFICE)
    await asyncio.wait_for(closed.wait(), WAIT)
    assert agent.office_id is None
    await agent.close()


@pytest.mark.parametrize("refusal", ["version", "token"])
async def test_refusal_while_reconnecting_ends_the_agent(refusal, caplog):
    """A refusal carrying a flat ErrorPayload (4008, 401, ...) is final: no retries."""
    from a2c_protocol import ProtocolVersionError, UnauthorizedError
    from a2c_server import ServerSettings

    closed = asyncio.Event()
    async with running_server() as first:
        port = first.port
        agent = AsyncAgent(first.url, name="agent-1", reconnect_delay=0.1, reconnect_max_delay=0.2)
        agent.add_state_listener(lambda old, new: new is AgentState.CLOSED and closed.set())
        await agent.open()
        await agent.join_office(OFFICE)
        stream = agent.notifications()
    # The Server comes back speaking another version, or requiring a token we lack.
    settings = (
        ServerSettings(protocol_version="0.3.0")
        if refusal == "version"
        else ServerSettings(auth_token="s3cret")
    )
    async with running_server(settings, port=port):
        await asyncio.wait_for(closed.wait(), WAIT)
        if refusal == "version":
            assert isinstance(agent.last_error, ProtocolVersionError)
            assert agent.last_error.server_version == "0.3.0"
        else:
            assert isinstance(agent.last_error, UnauthorizedError)
            assert "Authentication failed" in str(agent.last_error)
            assert any(
                r.levelname == "ERROR" and "Authentication failed" in r.getMessage()
                for r in caplog.records
            )
        assert agent.office_id is None and dict(agent.tools) == {}
        assert [n async for n in stream] == []  # streams end with the agent
    await agent.close()
    assert agent.state is AgentState.CLOSED


class FlakyAuth:
    """An auth provider that crashes (the Server answers 500) until ``healthy`` is set."""

    def __init__(self) -> None:
        self.healthy = asyncio.Event()
        self.crashes = 0

    async def authenticate(self, request: AuthRequest) -> Identity:
        if not self.healthy.is_set():
            self.crashes += 1
            raise RuntimeError("auth backend down")
        return Identity(subject=request.role.value)


async def test_a_5xx_refusal_while_reconnecting_is_retried():
    """A failing auth provider is not a verdict on this client: keep trying."""
    back = asyncio.Event()
    async with running_server() as first:
        port = first.port
        agent = AsyncAgent(first.url, name="agent-1", reconnect_delay=0.1, reconnect_max_delay=0.2)
        agent.add_state_listener(
            lambda old, new: (
                old is AgentState.RECONNECTING and new is AgentState.CONNECTED and back.set()
            )
        )
        await agent.open()
        await agent.join_office(OFFICE)
    auth = FlakyAuth()
    try:
        async with running_server(auth=auth, port=port):
            # Refused with 500 at least twice, and still trying.
            await eventually(lambda: auth.crashes >= 2 or agent.state is AgentState.CLOSED)
            assert agent.state is AgentState.RECONNECTING, agent.last_error
            auth.healthy.set()
            await asyncio.wait_for(back.wait(), WAIT)
            assert agent.office_id == OFFICE and agent.last_error is None
    finally:
        await agent.close()


def test_which_refusals_are_final():
    from a2c_agent._session._connection import handshake_refusal, refusal_is_final
    from a2c_protocol import InternalError, ProtocolVersionError, RemoteError, UnauthorizedError

    assert refusal_is_final(UnauthorizedError("Authentication failed"))
    assert refusal_is_final(RemoteError("nope", code=403))
    assert refusal_is_final(ProtocolVersionError("v", server_version="0.3.0",
                            client_version="0.2.3", min_supported="0.3.0",
                            max_supported="0.3.0"))  # fmt: skip
    assert not refusal_is_final(InternalError("auth backend down"))
    # An HTTP error without an A2C body (a proxy) is a connection problem, retried.
    from a2c_agent import AgentConnectionError

    assert isinstance(handshake_refusal(502, {}, b"<html>Bad Gateway</html>"), AgentConnectionError)
    body = b'{"code": 401, "message": "Authentication failed"}'
    assert isinstance(handshake_refusal(401, {}, body), UnauthorizedError)
    assert handshake_refusal(200, {}, b"") is None
