"""Progress of long tool calls, with real processes across two ``--redis`` nodes.

Two ``a2c-server`` nodes share a redis-server; the Computer (``a2c-computer run`` with the
FastMCP ``progress`` test server over stdio) is on node B, the Agent on node A, so every
report crosses nodes. The MCP server's answer says whether it was given a progress token,
so "no token unless asked" is read on the MCP side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import socketio

from a2c_agent import AsyncAgent, ToolCallProgress, ToolCallTimeoutError, result_text
from a2c_protocol import NAMESPACE, PROTOCOL_VERSION, ExtensionEvent, ToolCallReq, to_wire
from a2c_testkit.processes import ManagedProcess, bin_path
from a2c_testkit.redis_server import redis_server
from a2c_testkit.server import RawClient, close_client
from a2c_testkit.triangle import (
    ServerProcess,
    computer_process,
    eventually,
    server_process,
    write_config,
)

OFFICE = "o-progress"
PROGRESS = ExtensionEvent.NOTIFY_TOOL_CALL_PROGRESS.value


def _progress_entry() -> dict[str, Any]:
    return {
        "type": "stdio",
        "name": "progress",
        "default_tool_meta": {"auto_apply": True},
        "server_parameters": {
            "command": sys.executable,
            "args": ["-m", "a2c_testkit.mcp_servers.progress"],
        },
    }


@attrs.frozen
class Nodes:
    a: ServerProcess
    b: ServerProcess
    computer: ManagedProcess


@contextlib.asynccontextmanager
async def _nodes(procs: Any, tmp_path: Path) -> AsyncIterator[Nodes]:
    """Nodes A and B (a short forward buffer, so only progress keeps a long call alive) and
    the Computer ``box`` on node B in :data:`OFFICE`."""
    config = write_config(tmp_path / "computer.json", [_progress_entry()])
    with redis_server() as redis:
        async with contextlib.AsyncExitStack() as stack:
            nodes = []
            for name in ("A", "B"):
                args = ["--redis", redis.url, "--node-id", name, "--redis-prefix", "pr",
                        "--tool-call-buffer", "0.5"]  # fmt: skip
                nodes.append(await stack.enter_async_context(server_process(
                    procs.log_dir, name=f"node-{name}", extra_args=args, track=procs.track
                )))  # fmt: skip
            a, b = nodes
            computer = await stack.enter_async_context(computer_process(
                procs.log_dir, config=config, server_url=b.url, office=OFFICE, name="box",
                track=procs.track,
            ))  # fmt: skip
            yield Nodes(a, b, computer)


@contextlib.asynccontextmanager
async def _raw(node: ServerProcess, role: str) -> AsyncIterator[RawClient]:
    sio = socketio.AsyncClient(reconnection=False)
    client = RawClient(sio)
    await sio.connect(f"{node.url}?a2c_version={PROTOCOL_VERSION}", namespaces=[NAMESPACE],
                      auth={"role": role}, transports=["websocket"], wait_timeout=30)  # fmt: skip
    try:
        yield client
    finally:
        await close_client(sio)


class _Recorder:
    """Every progress notification a raw client receives."""

    def __init__(self, client: RawClient) -> None:
        self.got: list[object] = []
        client.sio.on(PROGRESS, self._record, namespace=NAMESPACE)

    async def _record(self, data: object = None) -> None:
        self.got.append(data)


async def _agent(url: str) -> AsyncAgent:
    agent = AsyncAgent(url, name="planner", tool_call_grace=0.5)
    await agent.__aenter__()
    await agent.join_office(OFFICE)
    await eventually(lambda: agent.tools.get("box"), what="computer box joined")
    return agent


async def test_progress_reaches_the_agent_in_order_and_keeps_the_call_alive(
    procs: Any, tmp_path: Path
) -> None:
    async with _nodes(procs, tmp_path) as n:
        agent = await _agent(n.a.url)
        try:
            seen: list[ToolCallProgress] = []
            # 8 steps of 0.5 s: 4 s in all, twice the call's timeout, and far past the
            # Server's own wait (timeout + 0.5 s) and the Agent's (timeout + 0.5 s).
            args = {"count": 8, "delay": 0.5}
            result = await agent.call_tool("box", "steps", args, timeout=2,
                                           on_progress=seen.append,
                                           timeout_resets_on_progress=True)  # fmt: skip
            assert not result.is_error, result_text(result)
            assert json.loads(result_text(result))["progress_token"] is True
            values = [r.progress for r in seen]
            # In order; the last report may race the answer across nodes, the rest may not.
            assert values[:7] == [1, 2, 3, 4, 5, 6, 7], values
            assert values == sorted(set(values))
            assert all(r.total == 8 and r.message == f"step {int(r.progress)}" for r in seen)
            assert {(r.computer, r.agent) for r in seen} == {("box", "planner")}

            # The same call without timeout_resets_on_progress times out at the Agent.
            late: list[ToolCallProgress] = []
            with pytest.raises(ToolCallTimeoutError):
                await agent.call_tool("box", "steps", args, timeout=2, on_progress=late.append)
            assert late  # progress did arrive; it just did not extend the Agent's wait
        finally:
            await agent.__aexit__(None, None, None)


async def test_progress_goes_to_the_calling_agent_only(procs: Any, tmp_path: Path) -> None:
    async with _nodes(procs, tmp_path) as n, contextlib.AsyncExitStack() as stack:
        # Another office's Agent, a second Computer of the same office, and a Computer of
        # the other office: none of them may ever see a report of planner's call.
        other = await stack.enter_async_context(_raw(n.a, "agent"))
        assert await other.join("agent", "other-agent", "o-other") == (True, None)
        spy = await stack.enter_async_context(_raw(n.b, "computer"))
        assert await spy.join("computer", "spy", OFFICE) == (True, None)
        intruder = await stack.enter_async_context(_raw(n.b, "computer"))
        assert await intruder.join("computer", "intruder", "o-other") == (True, None)
        watchers = [_Recorder(c) for c in (other, spy, intruder)]

        agent = await _agent(n.a.url)
        try:
            seen: list[ToolCallProgress] = []
            call = asyncio.ensure_future(
                agent.call_tool(
                    "box",
                    "steps",
                    {"count": 12, "delay": 0.5},
                    timeout=30,
                    req_id="call-1",
                    on_progress=seen.append,
                )
            )
            await eventually(lambda: seen, what="first progress report")
            first = seen[-1].progress
            # Forged reports for planner's running call, from a Computer of the office that
            # does not run it and from a Computer of another office. Each is IN order (above
            # every real value, sent while the call runs), so only the sender checks can
            # drop it: the stale-report rule never gets to.
            for forger in (spy, intruder):
                await forger.emit(ExtensionEvent.TOOL_CALL_PROGRESS.value, {
                    "agent": "planner", "req_id": "call-1", "computer": "box",
                    "progress": 1000, "message": "forged",
                })  # fmt: skip
            # A later report reached the Agent: the forged ones were handled while the call
            # was still waiting (both go through node B, sent before that report). A forged
            # report let through would also show as no later report: our Agent drops a
            # report naming another Computer, and the Server then drops every real one as
            # older than 1000.
            await eventually(lambda: any(r.progress > first + 1 for r in seen), timeout=30,
                             what="a later real report (none: a forged one got through?)")  # fmt: skip
            assert not call.done()
            result = await call
            assert not result.is_error, result_text(result)
            assert "forged" not in {r.message for r in seen}
            assert all(r.progress < 1000 for r in seen)
            assert [r.progress for r in seen] == sorted({r.progress for r in seen})
        finally:
            await agent.__aexit__(None, None, None)

        # An Agent that does not ask gets no report and its MCP server no progress token.
        asker = await stack.enter_async_context(_raw(n.a, "agent"))
        asker_seen = _Recorder(asker)
        await eventually(lambda: _joined(asker), what="the office's Agent seat is free again")
        request = ToolCallReq(agent="plain-agent", req_id="call-2", computer="box",
                              tool_name="steps", params={"count": 3, "delay": 0.3},
                              timeout=30)  # fmt: skip
        wire = to_wire(request)
        assert "a2c_progress" not in wire  # an official 0.2 request, byte for byte
        answer = await asker.call("client:tool_call", wire, timeout=60)
        assert isinstance(answer, dict) and not answer.get("isError"), answer
        assert json.loads(answer["content"][0]["text"])["progress_token"] is False
        assert asker_seen.got == []
        for watcher in watchers:
            assert watcher.got == []


async def _joined(client: RawClient) -> bool:
    return await client.join("agent", "plain-agent", OFFICE) == (True, None)


async def test_the_cli_call_shows_the_progress_on_stderr(procs: Any, tmp_path: Path) -> None:
    async with _nodes(procs, tmp_path) as n:
        agent = await _agent(n.a.url)  # waits for the Computer, then frees the Agent seat
        await agent.__aexit__(None, None, None)
        argv = [bin_path("a2c-agent"), "--server", n.a.url, "--office", OFFICE, "--json",
                "call", "box", "steps", json.dumps({"count": 3, "delay": 0.4}),
                "--timeout", "60"]  # fmt: skip
        cli = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(cli.communicate(), 120)
        assert cli.returncode == 0, err.decode()
        lines = [line for line in err.decode().splitlines() if "progress" in line]
        assert lines[:2] == [
            "a2c-agent: progress 1/3 (33.3%) step 1",
            "a2c-agent: progress 2/3 (66.7%) step 2",
        ], err.decode()
        assert '\\"progress_token\\": true' in out.decode()


async def test_the_cli_timeout_restarts_on_progress_when_asked(procs: Any, tmp_path: Path) -> None:
    """``call --timeout-resets-on-progress``: a call that reports progress outlives its
    timeout (15 s of steps against --timeout 2, past the Agent's default grace of 8 s); without the
    flag the same call is cut by the CLI."""
    async with _nodes(procs, tmp_path) as n:
        agent = await _agent(n.a.url)  # waits for the Computer, then frees the Agent seat
        await agent.__aexit__(None, None, None)
        base = [bin_path("a2c-agent"), "--server", n.a.url, "--office", OFFICE, "--json",
                "call", "box", "steps", json.dumps({"count": 30, "delay": 0.5}),
                "--timeout", "2"]  # fmt: skip
        for extra, code in ((["--timeout-resets-on-progress"], 0), ([], 1)):
            cli = await asyncio.create_subprocess_exec(
                *base, *extra, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            out, err = await asyncio.wait_for(cli.communicate(), 120)
            assert cli.returncode == code, (extra, err.decode())
            if code == 0:
                assert '\\"progress_token\\": true' in out.decode()
            else:
                assert "got no answer within" in err.decode(), err.decode()
                assert "it may have run" in err.decode(), err.decode()
