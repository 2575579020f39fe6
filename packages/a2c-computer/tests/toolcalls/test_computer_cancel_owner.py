"""Only the Agent that made a call (or the Server on its behalf) cancels it (rule
C4 in ``_link_calls.py``): a real Server, a real Computer, raw clients for the others."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_protocol import NAMESPACE, Event
from a2c_testkit.server import connect_raw, running_server

SETTLE_S = 0.5  # must-not-happen checks: the Computer has long handled the notice by then


async def test_only_the_calling_agent_cancels_a_call(
    servers: Any, tmp_path: Path, wait: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="a2c_computer.link")
    local_marker, slow_marker = tmp_path / "local", tmp_path / "slow"
    config = {"servers": {"desk": servers.desk("desk", "--profile", "conformant")}}

    def slow(marker: Path) -> dict[str, Any]:
        return {"seconds": 60, "marker": str(marker)}

    async with (
        running_server() as srv,
        Computer(
            config, name="box", server_url=srv.url, office_id="o1",
            socketio_path=srv.socketio_path,
        ) as computer,
    ):  # fmt: skip
        assert computer.link is not None
        await computer.link.wait_joined()
        # A call made on the Computer itself: no Agent made it, so no Agent cancels it.
        local = asyncio.ensure_future(
            computer.call_tool("slow", slow(local_marker), timeout=120, req_id="local-1")
        )
        await wait(lambda: local_marker.exists() and local_marker.read_text() == "started", 30)
        async with connect_raw(srv, "agent") as mallory:
            assert await mallory.join("agent", "mallory", "o1") == (True, None)
            await mallory.emit(Event.TOOL_CALL_CANCEL, {"agent": "mallory", "req_id": "local-1"})
            await asyncio.sleep(SETTLE_S)
            assert "local-1" in computer.in_flight()
        async with connect_raw(srv, "agent") as alice:
            assert await alice.join("agent", "alice", "o1") == (True, None)
            call = asyncio.ensure_future(
                alice.call(
                    Event.TOOL_CALL,
                    {"agent": "alice", "computer": "box", "req_id": "slow-1",
                     "tool_name": "slow", "params": slow(slow_marker), "timeout": 120},
                    timeout=120,
                )
            )  # fmt: skip
            await wait(lambda: slow_marker.exists() and slow_marker.read_text() == "started", 30)
            # What a Server that does not check U2 would relay: another Agent's cancel, and
            # another Agent's "agent_gone", both for alice's call.
            for forged in (
                {"agent": "mallory", "req_id": "slow-1"},
                {"agent": "mallory", "req_id": "slow-1", "a2c_cancel_reason": "agent_gone"},
            ):
                await srv.app.sio.emit(
                    Event.NOTIFY_TOOL_CALL_CANCEL.value, forged, room="o1", namespace=NAMESPACE
                )
            await asyncio.sleep(SETTLE_S)
            assert sorted(computer.in_flight()) == ["local-1", "slow-1"]
            assert slow_marker.read_text() == "started"
            # The caller's own cancel still works.
            await alice.emit(Event.TOOL_CALL_CANCEL, {"agent": "alice", "req_id": "slow-1"})
            result: Any = await asyncio.wait_for(call, 60)
            assert result["meta"]["a2c_cancelled"] is True
            assert result["meta"]["a2c_cancel_reason"] == "agent_requested"
        assert "local-1" in computer.in_flight()
        assert computer.cancel("local-1")
        await asyncio.wait_for(local, 60)
    ignored = [r for r in caplog.records if "ignoring a tool_call_cancel of" in r.getMessage()]
    assert len(ignored) == 3, [r.getMessage() for r in ignored]


async def test_the_servers_agent_gone_cancel_reaches_the_callers_call(
    servers: Any, tmp_path: Path, wait: Any
) -> None:
    marker = tmp_path / "marker"
    config = {"servers": {"desk": servers.desk("desk", "--profile", "conformant")}}
    async with (
        running_server() as srv,
        Computer(
            config, name="box", server_url=srv.url, office_id="o1",
            socketio_path=srv.socketio_path,
        ) as computer,
    ):  # fmt: skip
        assert computer.link is not None
        await computer.link.wait_joined()
        async with connect_raw(srv, "agent") as alice:
            assert await alice.join("agent", "alice", "o1") == (True, None)
            await alice.emit(
                Event.TOOL_CALL,
                {"agent": "alice", "computer": "box", "req_id": "gone-1", "tool_name": "slow",
                 "params": {"seconds": 60, "marker": str(marker)}, "timeout": 120},
            )  # fmt: skip
            await wait(lambda: marker.exists() and marker.read_text() == "started", 30)
        # alice disconnected: the Server cancels her call with "agent_gone" naming her.
        await wait(lambda: marker.read_text() == "cancelled", 30, "the MCP server to see it")
        assert computer.in_flight() == []
