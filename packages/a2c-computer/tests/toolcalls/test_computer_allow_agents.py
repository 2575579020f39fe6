"""``--allow-agent``: a Computer answers only the Agents it names, whatever the Server does
(defense in depth)."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from a2c_computer import Computer
from a2c_protocol import Event
from a2c_testkit.server import connect_raw, running_server


async def ask(agent: Any, event: Event, name: str, **fields: Any) -> Any:
    return await agent.call(event, {"agent": name, "computer": "box", "req_id": "r", **fields})


async def test_computer_answers_only_allowed_agents(caplog: pytest.LogCaptureFixture) -> None:
    async with (
        running_server() as srv,
        Computer(
            {"servers": {}}, name="box", server_url=srv.url, office_id="o1",
            socketio_path=srv.socketio_path, allow_agents=["alice-agent"],
        ) as computer,
    ):  # fmt: skip
        assert computer.link is not None
        await computer.link.wait_joined()
        # Another Agent takes the free seat: the Server lets it through, the Computer not.
        async with connect_raw(srv, "agent") as mallory:
            assert await mallory.join("agent", "mallory", "o1") == (True, None)
            for event, extra in (
                (Event.GET_TOOLS, {}),
                (Event.GET_CONFIG, {}),
                (Event.TOOL_CALL, {"tool_name": "x", "params": {}, "timeout": 5}),
                (Event.GET_DESKTOP, {}),
            ):
                answer = await ask(mallory, event, "mallory", **extra)
                assert answer == {
                    "code": 403,
                    "message": "Agent 'mallory' is not allowed to use this Computer",
                }, (event, answer)
        async with connect_raw(srv, "agent") as alice:
            assert await alice.join("agent", "alice-agent", "o1") == (True, None)
            answer = await ask(alice, Event.GET_TOOLS, "alice-agent")
            assert answer == {"tools": [], "req_id": "r"}
    refused = [r for r in caplog.records if "not in --allow-agent" in r.getMessage()]
    assert len(refused) == 4 and all(r.levelno == logging.WARNING for r in refused)


async def test_computer_cli_warns_without_allow_agent(tmp_path: Path) -> None:
    import asyncio
    import signal

    config = tmp_path / "c.json"
    config.write_text(json.dumps({"servers": {}}))
    async with running_server() as srv:
        for extra, warned in (([], True), (["--allow-agent", "alice-agent"], False)):
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "a2c_computer._cli", "run", "--config", str(config),
                "--server", srv.url, "--office", "o1", "--name", "box", *extra,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                stdin=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            try:
                async with asyncio.timeout(60):
                    while not await srv.app.store.office_members("o1"):
                        await asyncio.sleep(0.05)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                _, err = await asyncio.wait_for(proc.communicate(), 60)
            text = err.decode()
            assert ("any Agent in office o1 may call" in text) is warned, text
            async with asyncio.timeout(60):
                while await srv.app.store.office_members("o1"):
                    await asyncio.sleep(0.05)
