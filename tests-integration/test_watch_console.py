"""``a2c-agent watch --console``: an office followed read-only through the
Server's console feed while its one Agent seat stays taken by another Agent, with real
processes: ``a2c-server --console``, ``a2c-computer run``, the ``a2c-agent`` command."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from a2c_agent import AsyncAgent, JoinOfficeError, result_text
from a2c_server import ServerSettings
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.server import running_server
from a2c_testkit.triangle import computer_process, eventually, server_process, write_config
from a2c_testkit.watch_console import watching

ADMIN = "console-admin-token-for-watch-7c1e"


async def test_watch_console_follows_an_office_whose_seat_is_taken(
    procs: Any, tmp_path: Path
) -> None:
    office = f"office-{uuid.uuid4().hex[:8]}"
    config = write_config(tmp_path / "computer.json", [stdio_server_config("plain", "plain")])
    async with (
        server_process(procs.log_dir, track=procs.track,
                       extra_args=["--console", "--admin-token", ADMIN]) as server,
        AsyncAgent(server.url, name="planner") as agent,
    ):  # fmt: skip
        await agent.join_office(office)  # the office's one Agent seat is taken
        async with watching(server.url, office, A2C_ADMIN_TOKEN=ADMIN) as watcher:
            await eventually(lambda: f"office {office!r} now: planner (agent)" in watcher.err,
                             timeout=60, what="the watch's first state")  # fmt: skip
            async with computer_process(
                procs.log_dir, config=config, server_url=server.url, office=office,
                name="box", track=procs.track, confirm="allow",
            ):  # fmt: skip
                await eventually(lambda: agent.tools.get("box"), what="box joined")
                result = await agent.call_tool("box", "echo", {"text": "hi"}, timeout=30)
                assert result_text(result) == "plain:echo:hi"
                await eventually(
                    lambda: any(line["data"].get("tool") == "echo" for line in watcher.lines),
                    timeout=60, what="the call line",
                )  # fmt: skip
                # The watch is no session: the office still has its two members only, and
                # nobody else can take the seat meanwhile (one Agent per office).
                room = sorted(m.name for m in await agent.list_room())
                assert room == ["box", "planner"]
                async with AsyncAgent(server.url, name="other") as other:
                    with pytest.raises(JoinOfficeError, match="already has an agent"):
                        await other.join_office(office)
            await eventually(lambda: "notify:leave_office" in watcher.events(), timeout=60,
                             what="the leave line")  # fmt: skip
        code = await watcher.stop()
    assert code in (0, 130), watcher.err
    entered = next(line for line in watcher.lines if line["event"] == "notify:enter_office")
    assert entered["data"] == {"office_id": office, "computer": "box"}
    calls = [line for line in watcher.lines if line["event"] == "call"]
    # Every relayed request shows (the planner's client:get_tools too); one tool call.
    (call,) = [c for c in calls if c["data"]["request"] == "client:tool_call"]
    assert call["data"] == {"computer": "box", "agent": "planner", "request": "client:tool_call",
                            "tool": "echo", "outcome": "ok", "code": None,
                            "duration": call["data"]["duration"]}  # fmt: skip
    assert "hi" not in json.dumps(watcher.lines)  # names only: no arguments, no results
    # Only what happened while it watched: the planner's own join came before.
    assert all(line["data"].get("agent") != "planner" or line["event"] == "call"
               for line in watcher.lines)  # fmt: skip
    assert "Traceback" not in watcher.err


async def _watch_once(url: str, *args: str, **env: str) -> tuple[int, str]:
    async with watching(url, "o1", *args, **env) as watcher:
        code = await asyncio.wait_for(watcher.process.wait(), 60)
    return code, watcher.err


async def test_watch_console_refusals_say_what_to_do(tmp_path: Path) -> None:
    settings = ServerSettings(console=True, admin_token=ADMIN)
    async with running_server(settings) as server:
        code, err = await _watch_once(server.url, A2C_ADMIN_TOKEN="wrong")
        assert code == 1 and "refused the admin token (A2C_ADMIN_TOKEN)" in err, err
        code, err = await _watch_once(server.url)
        assert code == 1 and "needs the Server's admin token" in err, err
        token_file = tmp_path / "admin-token"
        token_file.write_text(ADMIN + "\n")
        code, err = await _watch_once(server.url, "--admin-token-file", str(token_file),
                                      "--for", "1")  # fmt: skip
        assert code == 0 and "office 'o1' now: nobody" in err, err
    async with running_server() as plain:
        code, err = await _watch_once(plain.url, A2C_ADMIN_TOKEN=ADMIN)
        assert code == 1 and "serves no console; start it with --console" in err, err
        assert "passes /console/ on" in err, err  # a balancer that does not is one cause
    code, err = await _watch_once("http://127.0.0.1:9", A2C_ADMIN_TOKEN=ADMIN)
    assert code == 1 and "cannot reach the console at http://127.0.0.1:9" in err, err
    assert "Traceback" not in err
