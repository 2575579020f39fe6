"""Fixtures for the Agent's component tests: the real Server and scripted Computers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from a2c_agent import AsyncAgent
from a2c_protocol import Event
from a2c_testkit.scripted_computer import ScriptedComputer
from a2c_testkit.server import RunningServer, running_server

OFFICE = "office-1"


@pytest.fixture
async def server() -> AsyncIterator[RunningServer]:
    async with running_server() as srv:
        yield srv


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    async with AsyncExitStack() as s:
        yield s


@pytest.fixture
def make_computer(
    server: RunningServer, stack: AsyncExitStack
) -> Callable[..., Awaitable[ScriptedComputer]]:
    async def make(
        name: str = "box-1", office_id: str | None = OFFICE, **kw: Any
    ) -> ScriptedComputer:
        computer = ScriptedComputer(
            server.url, name=name, office_id=office_id, socketio_path=server.socketio_path, **kw
        )
        return await stack.enter_async_context(computer)

    return make


@pytest.fixture
def make_agent(
    server: RunningServer, stack: AsyncExitStack
) -> Callable[..., Awaitable[AsyncAgent]]:
    async def make(name: str = "agent-1", **kw: Any) -> AsyncAgent:
        kw.setdefault("socketio_path", server.socketio_path)
        agent = AsyncAgent(server.url, name=name, **kw)
        return await stack.enter_async_context(agent)

    return make


@pytest.fixture
def make_office(
    make_computer: Callable[..., Awaitable[ScriptedComputer]],
    make_agent: Callable[..., Awaitable[AsyncAgent]],
) -> Callable[..., Awaitable[tuple[ScriptedComputer, AsyncAgent]]]:
    """A scripted Computer answering tool calls with ``tool`` and an Agent (``agent_kw``)
    in its office."""

    async def make(
        tool: Callable[[dict[str, Any]], Any], **agent_kw: Any
    ) -> tuple[ScriptedComputer, AsyncAgent]:
        computer = await make_computer()
        computer.on(Event.TOOL_CALL, tool)
        agent = await make_agent(**agent_kw)
        await agent.join_office(OFFICE)
        return computer, agent

    return make
