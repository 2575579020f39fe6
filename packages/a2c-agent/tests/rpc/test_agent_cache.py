"""The tool cache and notifications, driven by real notify:* broadcasts of the Server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from a2c_agent import AgentNotification, AgentTool, AsyncAgent
from a2c_protocol import EnterOfficeNotification, Event, LeaveOfficeNotification
from a2c_testkit.scripted_computer import scripted_tool

OFFICE = "office-1"
WAIT = 30.0


class ToolsSeen:
    """Records tools-listener calls and lets a test wait for a condition on the cache."""

    def __init__(self, agent: AsyncAgent) -> None:
        self.agent = agent
        self.changes: list[tuple[str, tuple[AgentTool, ...] | None]] = []
        self._changed = asyncio.Event()
        agent.add_tools_listener(self._on_change)

    def _on_change(self, computer: str, tools: tuple[AgentTool, ...] | None) -> None:
        self.changes.append((computer, tools))
        self._changed.set()

    async def until(self, condition: Callable[[], bool]) -> None:
        async def loop() -> None:
            while not condition():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(loop(), WAIT)


def names(agent: AsyncAgent, computer: str) -> list[str] | None:
    tools = agent.tools.get(computer)
    return None if tools is None else [t.name for t in tools]


async def test_join_fills_the_cache_from_computers_already_there(make_computer, make_agent):
    first = await make_computer("box-1")
    first.tools = [scripted_tool("a", tags=["t"])]
    second = await make_computer("box-2")
    second.tools = [scripted_tool("b")]
    agent = await make_agent()
    await agent.join_office(OFFICE)
    assert names(agent, "box-1") == ["a"] and names(agent, "box-2") == ["b"]
    assert agent.tools["box-1"][0].tool_meta is not None


async def test_cache_follows_enter_update_and_leave(make_computer, make_agent):
    agent = await make_agent()
    seen = ToolsSeen(agent)
    await agent.join_office(OFFICE)
    assert dict(agent.tools) == {}

    computer = await make_computer("box-1")  # joins after the agent: notify:enter_office
    computer.tools = [scripted_tool("v1")]
    await seen.until(lambda: names(agent, "box-1") == ["v1"])

    computer.tools = [scripted_tool("v2"), scripted_tool("extra")]
    await computer.announce(Event.UPDATE_TOOL_LIST)
    await seen.until(lambda: names(agent, "box-1") == ["v2", "extra"])

    computer.tools = [scripted_tool("v3")]
    await computer.announce(Event.UPDATE_CONFIG)
    await seen.until(lambda: names(agent, "box-1") == ["v3"])

    await computer.leave()
    await seen.until(lambda: "box-1" not in agent.tools)
    assert ("box-1", None) in seen.changes


async def test_cache_drops_a_computer_that_disconnects(make_computer, make_agent):
    computer = await make_computer("box-1")
    computer.tools = [scripted_tool("a")]
    agent = await make_agent()
    seen = ToolsSeen(agent)
    await agent.join_office(OFFICE)
    assert names(agent, "box-1") == ["a"]
    await computer.close()
    await seen.until(lambda: "box-1" not in agent.tools)


async def test_cache_can_be_turned_off(make_computer, make_agent):
    computer = await make_computer("box-1")
    computer.tools = [scripted_tool("a")]
    agent = await make_agent(tool_cache=False)
    stream = agent.notifications(Event.NOTIFY_UPDATE_TOOL_LIST)
    await agent.join_office(OFFICE)
    await computer.announce(Event.UPDATE_TOOL_LIST)
    await asyncio.wait_for(anext(stream), WAIT)
    # A later request on the same connection is answered after any fetch the
    # notification could have triggered, so a wrong fetch would be recorded by now.
    await agent.get_config("box-1")
    assert dict(agent.tools) == {}
    assert computer.received(Event.GET_TOOLS) == []


async def test_typed_notifications_via_listener_and_stream(make_computer, make_agent):
    agent = await make_agent()
    heard: list[AgentNotification] = []
    remove = agent.add_notification_listener(heard.append, Event.NOTIFY_ENTER_OFFICE)
    async with agent.notifications() as stream:
        await agent.join_office(OFFICE)
        computer = await make_computer("box-1")
        first = await asyncio.wait_for(anext(stream), WAIT)
        assert first.event is Event.NOTIFY_ENTER_OFFICE
        assert first.payload == EnterOfficeNotification(office_id=OFFICE, computer="box-1")
        assert first.computer == "box-1"
        await computer.announce(Event.UPDATE_DESKTOP)
        second = await asyncio.wait_for(anext(stream), WAIT)
        assert second.event is Event.NOTIFY_UPDATE_DESKTOP and second.computer == "box-1"
        remove()
        await computer.leave()
        third = await asyncio.wait_for(anext(stream), WAIT)
        assert third.payload == LeaveOfficeNotification(office_id=OFFICE, computer="box-1")
    assert [n.event for n in heard] == [Event.NOTIFY_ENTER_OFFICE]


async def test_update_desktop_refreshes_into_the_desktop_listener(make_computer, make_agent):
    computer = await make_computer("box-1")
    computer.desktops = ["window://org.example.a", "window://org.example.b"]
    agent = await make_agent(desktop_size=1)
    got: asyncio.Queue[tuple[str, list[str]]] = asyncio.Queue()

    async def on_desktop(name: str, desktops: list[str]) -> None:
        await got.put((name, desktops))

    agent.add_desktop_listener(on_desktop)
    await agent.join_office(OFFICE)
    await computer.announce(Event.UPDATE_DESKTOP)
    assert await asyncio.wait_for(got.get(), WAIT) == ("box-1", ["window://org.example.a"])
    (request,) = computer.received(Event.GET_DESKTOP)
    assert request["desktop_size"] == 1


async def test_no_desktop_fetch_without_a_listener(make_computer, make_agent):
    computer = await make_computer("box-1")
    agent = await make_agent()
    stream = agent.notifications(Event.NOTIFY_UPDATE_DESKTOP)
    await agent.join_office(OFFICE)
    await computer.announce(Event.UPDATE_DESKTOP)
    await asyncio.wait_for(anext(stream), WAIT)
    await agent.get_config("box-1")  # ordered after any refresh the notification started
    assert computer.received(Event.GET_DESKTOP) == []


async def test_streams_end_when_the_agent_closes(make_agent):
    agent = await make_agent()
    stream = agent.notifications()
    await agent.close()
    assert [n async for n in stream] == []
