"""``a2c-agent watch`` prints an office's notifications as they arrive; ``desktop`` says
why a desktop is empty."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys

from a2c_agent._cli._watch import notification_line
from a2c_agent._rules import decode_notification
from a2c_protocol import Event
from a2c_testkit.scripted_computer import ScriptedComputer

OFFICE = "office-1"


async def test_watch_prints_notifications_as_they_arrive(make_computer, server):
    box = await make_computer()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", server.url, "--office", OFFICE,
        "--json", "watch", "--count", "4",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    banner = await asyncio.wait_for(process.stderr.readline(), 120)
    assert b"watching office 'office-1'" in banner
    events: list[dict[str, object]] = []

    async def next_line() -> dict[str, object]:
        line = await asyncio.wait_for(process.stdout.readline(), 60)  # type: ignore[union-attr]
        events.append(json.loads(line))
        return events[-1]

    second = ScriptedComputer(server.url, name="box-2", office_id=OFFICE)
    await second.__aenter__()
    # Each line is printed when its notification arrives, not at the end.
    assert (await next_line())["event"] == "notify:enter_office"
    await box.announce(Event.UPDATE_TOOL_LIST)
    assert (await next_line())["event"] == "notify:update_tool_list"
    await box.announce(Event.UPDATE_DESKTOP)
    assert (await next_line())["event"] == "notify:update_desktop"
    await second.close()
    assert (await next_line())["event"] == "notify:leave_office"
    await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0
    assert events[0]["data"]["computer"] == "box-2"  # type: ignore[index]
    assert events[1]["data"] == {"computer": "box-1"}


def test_watch_table_line_is_readable():
    notification = decode_notification(Event.NOTIFY_UPDATE_TOOL_LIST, {"computer": "box-1"})
    line = notification_line(notification, dt.datetime(2026, 1, 2, 3, 4, 5))
    assert line == "03:04:05  notify:update_tool_list  computer=box-1"


async def test_empty_desktop_prints_a_hint(make_computer, server):
    await make_computer()  # no window:// resources
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", server.url, "--office", OFFICE,
        "desktop", "box-1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0
    assert json.loads(out) == []  # JSON output stays clean
    assert b"hint:" in err and b"window://" in err


async def test_config_table_counts_each_servers_tools(make_computer, server):
    import attrs

    from a2c_protocol import GetComputerConfigRet, from_wire
    from a2c_testkit.scripted_computer import scripted_tool

    box = await make_computer()
    box.config = from_wire(
        GetComputerConfigRet,
        {
            "servers": {
                "fs": {"type": "stdio", "name": "fs", "server_parameters": {"command": "x"}},
                "gone": {"type": "stdio", "name": "gone", "server_parameters": {"command": "y"}},
            }
        },
    )
    box.tools = [attrs.evolve(scripted_tool("read"), meta={"a2c_mcp_server": "fs"})]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2c_agent", "--server", server.url, "--office", OFFICE,
        "--table", "config", "box-1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err
    rows = [line.split() for line in out.decode().splitlines()]
    assert rows[0] == ["SERVER", "TYPE", "STATUS"]
    assert rows[2:] == [["fs", "stdio", "1", "tool"], ["gone", "stdio", "no", "tools"]]
