"""The progress route with real clients: stamped, gated, and only for calls that asked."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from a2c_protocol import NAMESPACE, ExtensionEvent
from a2c_server import ServerSettings
from a2c_testkit.server import RawClient, connect_raw, running_server
from a2c_testkit.triangle import eventually

PROGRESS = ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value
REPORT = ExtensionEvent.TOOL_CALL_PROGRESS.value
REPLY = {"content": [{"type": "text", "text": "ok"}], "isError": False}


def _record(client: RawClient) -> list[Any]:
    got: list[Any] = []

    async def record(data: Any = None) -> None:
        got.append(data)

    client.sio.on(PROGRESS, record, namespace=NAMESPACE)
    return got


async def _office(stack: contextlib.AsyncExitStack, server: Any) -> tuple[RawClient, RawClient]:
    """Agent ``ag`` and Computer ``box`` in office ``o1``."""
    agent = await stack.enter_async_context(connect_raw(server, "agent"))
    assert await agent.join("agent", "ag", "o1") == (True, None)
    box = await stack.enter_async_context(connect_raw(server, "computer"))
    assert await box.join("computer", "box", "o1") == (True, None)
    return agent, box


def _call(req_id: str, **extra: Any) -> dict[str, Any]:
    return {"agent": "ag", "req_id": req_id, "computer": "box", "tool_name": "t",
            "params": {}, "timeout": 30, **extra}  # fmt: skip


async def test_reports_are_stamped_gated_and_bad_ones_dropped() -> None:
    async with running_server() as server, contextlib.AsyncExitStack() as stack:
        agent = await stack.enter_async_context(connect_raw(server, "agent"))
        assert await agent.join("agent", "ag", "o1") == (True, None)
        box = await stack.enter_async_context(connect_raw(server, "computer"))
        assert await box.join("computer", "box", "o1") == (True, None)
        got = _record(agent)
        seen_by_box = _record(box)

        async def on_call(data: Any) -> Any:
            report = {"agent": "ag", "req_id": data["req_id"], "computer": "claimed"}
            await box.emit(REPORT, {"bad": True})  # malformed: dropped, nothing breaks
            await box.emit(REPORT, "not an object")
            await box.emit(REPORT, {**report, "progress": 1, "total": 3})
            await box.emit(REPORT, {**report, "progress": 2, "total": 3})  # within 0.1 s
            if data.get("a2c_progress"):
                await eventually(lambda: len(got) >= 2, what="the held report", timeout=30)
            return REPLY

        box.sio.on("client:tool_call", on_call, namespace=NAMESPACE)
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await agent.call("client:tool_call", _call("r1", a2c_progress=True)) == REPLY
        # Stamped with the registered name; the second was held and sent on the gate's time.
        assert [(g["progress"], g["computer"]) for g in got] == [(1, "box"), (2, "box")]
        assert loop.time() - started >= 0.1
        # A call that did not ask gets nothing, whatever the Computer sends.
        got.clear()
        assert await agent.call("client:tool_call", _call("r2")) == REPLY
        await asyncio.sleep(0.3)  # a report would have been sent by now (nothing is held)
        assert got == []
        assert seen_by_box == []


async def test_progress_restarts_the_wait_but_never_past_max_tool_timeout() -> None:
    settings = ServerSettings(max_tool_timeout=3, tool_call_buffer=0.2)
    async with running_server(settings) as server, contextlib.AsyncExitStack() as stack:
        agent, box = await _office(stack, server)
        stop = asyncio.Event()

        async def on_call(data: Any) -> Any:
            step = 0
            while not stop.is_set():  # reports every 0.3 s and never answers
                step += 1
                await box.emit(REPORT, {"agent": "ag", "req_id": data["req_id"],
                                        "computer": "box", "progress": step})  # fmt: skip
                await asyncio.sleep(0.3)
            return REPLY

        box.sio.on("client:tool_call", on_call, namespace=NAMESPACE)
        loop = asyncio.get_running_loop()
        started = loop.time()
        answer = await agent.call("client:tool_call", _call("r1", timeout=1, a2c_progress=True))
        elapsed = loop.time() - started
        stop.set()
        assert isinstance(answer, dict) and answer["code"] == 408, answer
        # Alive well past timeout + buffer (1.2 s), ended at --max-tool-timeout + buffer.
        assert 3.0 <= elapsed < 10, elapsed
        # The message names the cap that ended it and the time waited.
        message = answer["message"]
        assert message.startswith(
            "Computer 'box' did not answer within this Server's cap for calls that report "
            "progress (--max-tool-timeout 3 s); waited "
        ), message
        waited = float(message.split("waited ")[1].split(" s,")[0])
        assert 3.0 <= waited <= elapsed, (waited, elapsed)
        assert "progress reports" in message


async def test_a_progress_call_that_goes_quiet_times_out_naming_its_last_report() -> None:
    settings = ServerSettings(max_tool_timeout=60, tool_call_buffer=0.2)
    async with running_server(settings) as server, contextlib.AsyncExitStack() as stack:
        agent, box = await _office(stack, server)
        stop = asyncio.Event()

        async def on_call(data: Any) -> Any:
            await box.emit(REPORT, {"agent": "ag", "req_id": data["req_id"],
                                    "computer": "box", "progress": 1})  # fmt: skip
            await stop.wait()  # then silence: no report, no answer
            return REPLY

        box.sio.on("client:tool_call", on_call, namespace=NAMESPACE)
        answer = await agent.call("client:tool_call", _call("r1", timeout=1, a2c_progress=True))
        stop.set()
        assert isinstance(answer, dict) and answer["code"] == 408, answer
        assert answer["message"].startswith(
            "Computer 'box' did not answer within 1.2 seconds of its last progress report (waited "
        ), answer
        assert " s in all, 1 progress report)" in answer["message"], answer


async def test_an_older_report_than_one_sent_is_dropped() -> None:
    """The stale-report rule, mutation-checked (MCP progress only grows)."""
    async with running_server() as server, contextlib.AsyncExitStack() as stack:
        agent = await stack.enter_async_context(connect_raw(server, "agent"))
        assert await agent.join("agent", "ag", "o1") == (True, None)
        box = await stack.enter_async_context(connect_raw(server, "computer"))
        assert await box.join("computer", "box", "o1") == (True, None)
        got = _record(agent)

        async def on_call(data: Any) -> Any:
            report = {"agent": "ag", "req_id": data["req_id"], "computer": "box"}
            await box.emit(REPORT, {**report, "progress": 3})
            await eventually(lambda: len(got) >= 1, what="the first report", timeout=30)
            await box.emit(REPORT, {**report, "progress": 2})
            await asyncio.sleep(0.3)  # past the gate's 0.1 s: a held report would go out now
            await box.emit(REPORT, {**report, "progress": 4})
            await eventually(lambda: got[-1]["progress"] == 4, what="the last report", timeout=30)
            return REPLY

        box.sio.on("client:tool_call", on_call, namespace=NAMESPACE)
        assert await agent.call("client:tool_call", _call("r1", a2c_progress=True)) == REPLY
        assert [g["progress"] for g in got] == [3, 4]
