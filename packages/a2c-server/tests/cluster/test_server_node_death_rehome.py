"""A call right after a node's death finds its Computer again on the node it reconnected to.

Two ``a2c-server --redis`` processes on one healthy Redis. The Computer ``box`` is on node
n2, the Agent on n1. n2 is killed with SIGKILL: its sessions stay in the registry until
n1 reaps them (``--node-ttl 30``: not within this test), and ``box`` reconnects to n1 and
takes its name back with its reclaim secret. A call made in between used to be refused at
once with ``503 Registry unavailable`` (``box``'s old session was on a node that no longer
listens on Redis, and that check answered with the registry's 503 although Redis was
fine); now it waits for the name to move (bounded) and reaches the reconnected ``box``.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

from a2c_agent import AsyncAgent, result_text
from a2c_protocol import Event
from a2c_server._cluster._publish import AUDIENCE_TTL
from a2c_testkit.redis_sentinel import redis_command
from a2c_testkit.redis_server import RedisServer
from a2c_testkit.scripted_computer import ScriptedComputer, scripted_tool
from a2c_testkit.triangle import eventually, redis_node_process

PONG = {"content": [{"type": "text", "text": "pong"}], "isError": False}


def _box(url: str, office: str | None, secret: str) -> ScriptedComputer:
    box = ScriptedComputer(url, name="box", office_id=office, auth={"a2c_reclaim": secret})
    box.tools = [scripted_tool("echo")]
    box.tool_results["echo"] = PONG
    return box


async def test_a_call_after_a_node_died_waits_for_its_computer_to_come_back(
    tmp_path: Path, redis: RedisServer
) -> None:
    prefix = f"rehome-{uuid.uuid4().hex[:8]}"
    office = f"o-{prefix}"
    secret = secrets.token_urlsafe(24)
    async with AsyncExitStack() as stack:
        nodes = [
            redis_node_process(tmp_path, redis.url, node, prefix=prefix, node_ttl=30.0)
            for node in ("n1", "n2")
        ]
        n1, n2 = [await stack.enter_async_context(node) for node in nodes]
        await stack.enter_async_context(_box(n2.url, office, secret))
        agent = await stack.enter_async_context(AsyncAgent(n1.url, name="planner"))
        await agent.join_office(office)
        # The Agent's join fetched box's tools through n2: n1 trusts that n2 listens for
        # AUDIENCE_TTL after that (a call then goes out and ends "may have run"); the call
        # below is made once that has lapsed, so n1 asks Redis who listens.
        n2.process.kill()
        channel = f"{prefix}:socketio:node:n2"
        await eventually(
            lambda: redis_command(redis.port, "PUBSUB", "NUMSUB", channel) == [channel.encode(), 0],
            timeout=30, what="Redis dropped the dead node's subscription",
        )  # fmt: skip
        await asyncio.sleep(AUDIENCE_TTL)
        call = asyncio.ensure_future(agent.call_tool("box", "echo", {}, timeout=30))
        # box comes back on n1 after the call reached n1: a refusal comes within
        # milliseconds, so a second is plenty (a slower host only makes the call find the
        # new box at once, which passes either way).
        await asyncio.wait({call}, timeout=1.0)
        back = _box(n1.url, None, secret)
        await stack.enter_async_context(back)
        await back.join(office)
        result = await call
        assert result_text(result) == "pong"
        assert back.received(Event.TOOL_CALL)  # the reconnected box answered
