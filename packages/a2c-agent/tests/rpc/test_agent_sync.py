"""The blocking facade runs the same happy path as the async agent."""

from __future__ import annotations

import asyncio
import base64
import inspect
import threading

import pytest

from a2c_agent import (
    AgentState,
    AgentStateError,
    AsyncAgent,
    NotFoundError,
    SyncAgent,
    ToolCallTimeoutError,
)
from a2c_protocol import CallToolResult, Event
from a2c_testkit.scripted_computer import scripted_tool
from a2c_testkit.scripted_skills import PNG, SKILLS, script_skills

OFFICE = "office-1"


async def test_sync_agent_happy_path(make_computer, server):
    computer = await make_computer(page_size=2)
    computer.tools = [scripted_tool("count", tags=["text"])]
    computer.desktops = ["window://org.example.a"]
    computer.resources = {"wins": [{"uri": f"window://org.example.w/{i}"} for i in range(5)]}
    computer.tool_results["count"] = CallToolResult(content=[{"type": "text", "text": "2"}])

    def script() -> dict:
        seen: dict = {}
        threads: set[str] = set()
        with SyncAgent(server.url, name="sync-agent", tool_call_grace=0.2) as agent:
            agent.add_tools_listener(lambda c, t: threads.add(threading.current_thread().name))
            assert agent.state is AgentState.CONNECTED
            agent.join_office(OFFICE)
            seen["cached"] = [t.name for t in agent.tools["box-1"]]
            seen["room"] = sorted(s.name for s in agent.list_room())
            seen["tools"] = [t.tool_meta.tags for t in agent.get_tools("box-1")]
            seen["config"] = agent.get_config("box-1").servers
            seen["desktop"] = agent.get_desktop("box-1", size=1)
            seen["page"] = agent.get_resources("box-1", "wins").next_cursor
            seen["all"] = [r.uri for r in agent.iter_resources("box-1", "wins")]
            seen["call"] = agent.call_tool("box-1", "count", {"text": "a b"}, timeout=5).content
            with pytest.raises(NotFoundError):
                agent.get_tools("ghost")
            agent.leave_office()
            seen["office"] = agent.office_id
        seen["threads"] = threads
        seen["closed"] = agent.state
        return seen

    seen = await asyncio.to_thread(script)
    assert seen["cached"] == ["count"]
    assert seen["room"] == ["box-1", "sync-agent"]
    assert seen["tools"] == [["text"]]
    assert seen["config"] == {}
    assert seen["desktop"] == ["window://org.example.a"]
    assert seen["page"] == "2"
    assert seen["all"] == [f"window://org.example.w/{i}" for i in range(5)]
    assert seen["call"] == [{"type": "text", "text": "2"}]
    assert seen["office"] is None
    assert seen["threads"] == {"a2c-agent-loop"}  # callbacks run on the private loop
    assert seen["closed"] is AgentState.CLOSED


async def test_sync_timeout_sends_cancel(make_computer, server):
    computer = await make_computer()
    computer.on(Event.TOOL_CALL, computer.hold)

    def script() -> str:
        with SyncAgent(server.url, name="sync-agent", tool_call_grace=0.2) as agent:
            agent.join_office(OFFICE)
            with pytest.raises(ToolCallTimeoutError) as info:
                agent.call_tool("box-1", "slow", {}, timeout=1)
            return info.value.req_id

    req_id = await asyncio.to_thread(script)
    await computer.wait_for_notification(
        Event.NOTIFY_TOOL_CALL_CANCEL, lambda p: p["req_id"] == req_id
    )


def test_sync_agent_needs_open_and_keeps_signatures():
    agent = SyncAgent("http://127.0.0.1:9", name="a")
    with pytest.raises(AgentStateError):
        agent.get_tools("box")
    for name in (
        "join_office",
        "get_tools",
        "get_desktop",
        "get_resources",
        "call_tool",
        "list_room",
        "get_skills",
        "get_skill",
    ):
        assert inspect.signature(getattr(SyncAgent, name)) == inspect.signature(
            getattr(AsyncAgent, name)
        )
        assert getattr(SyncAgent, name).__doc__ == getattr(AsyncAgent, name).__doc__
    with pytest.raises(ValueError, match="a2c_version"):
        SyncAgent("http://127.0.0.1:9/?a2c_version=0.2.0", name="a")


async def test_sync_notifications_iterator(make_computer, server):
    computer = await make_computer()
    loop = asyncio.get_running_loop()
    announced = asyncio.Event()

    def script() -> tuple[str | None, int, int]:
        with SyncAgent(server.url, name="sync-agent") as agent:
            agent.join_office(OFFICE)
            notes = agent.notifications(Event.NOTIFY_UPDATE_TOOL_LIST)
            registered = len(agent.async_agent._events._streams)
            loop.call_soon_threadsafe(announced.set)
            first = next(notes)
            notes.close()  # leaving early unregisters the stream
            return first.computer, registered, len(agent.async_agent._events._streams)

    task = asyncio.ensure_future(asyncio.to_thread(script))
    await asyncio.wait_for(announced.wait(), 30)
    await computer.announce(Event.UPDATE_TOOL_LIST)
    assert await asyncio.wait_for(task, 30) == ("box-1", 1, 0)


async def test_sync_agent_reads_skills(make_computer, server):
    computer = await make_computer()
    script_skills(computer, SKILLS)

    def script() -> tuple[list[str], bytes, list[str]]:
        with SyncAgent(server.url, name="sync-agent") as agent:
            agent.join_office(OFFICE)
            listed = [s.name for s in agent.get_skills("box-1")]
            png = agent.get_skill("box-1", "log-triage", "assets/a.png").data
            return listed, png, [s.name for s in agent.skills["box-1"]]

    listed, png, cached = await asyncio.to_thread(script)
    assert listed == cached == [s["name"] for s in SKILLS]
    assert png == PNG


async def test_sync_agent_reads_a_blob_with_progress(make_computer, server):
    computer = await make_computer()
    script_skills(computer, SKILLS)

    def script() -> tuple[bytes, int, bytes, list[tuple[int, int]]]:
        seen: list[tuple[int, int]] = []
        with SyncAgent(server.url, name="sync-agent") as agent:
            agent.join_office(OFFICE)
            first = agent.get_blob("box-1", "handle-1", offset=0)
            blob = agent.read_blob(
                "box-1", "handle-1", progress=lambda got, total: seen.append((got, total))
            )
            return base64.b64decode(first.blob), first.total_size, blob.data, seen

    first, total, data, seen = await asyncio.to_thread(script)
    assert data == PNG and total == len(PNG) and first == PNG[:500]
    assert seen and seen[-1] == (len(PNG), len(PNG))
    assert [got for got, _ in seen] == sorted(got for got, _ in seen)
