"""What a tool call that asks costs, end to end through the Agent SDK.

Run: ``uv run python tools/bench/bench_asks.py [--calls 20] [--rounds 3]``.

A real Server (in-process, port 0), a Computer (in-process) hosting the testkit's mcp 2
server ``asking`` over stdio twice (``asking`` in the handshake era, whose ``greet`` asks
with ``ctx.elicit``; ``modern`` pinned to 2026-07-28, whose ``resolved_greet`` answers
``input_required``), and the Agent SDK (``AsyncAgent.call_tool(on_input=...)``) answering
each form at once. A call that asks is two rounds (the question, then the answer); a plain
``echo`` of the same server is timed alongside. Reported per kind: the median wall time of
``--calls`` sequential calls (after 5 unmeasured), the median over ``--rounds`` rounds;
the kinds alternate, so the machine's load hits all alike. Compare two builds by running
this file from each one's worktree.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from a2c_agent import AsyncAgent
from a2c_computer import Computer
from a2c_protocol import ElicitationResponse, InputRequest
from a2c_testkit.mcp_servers import stdio_server_config
from a2c_testkit.server import running_server


async def _answer(request: InputRequest) -> ElicitationResponse:
    return ElicitationResponse.accept({"name": "Ann"})


async def main(calls: int, rounds: int) -> None:
    meta = {"auto_apply": True}
    servers = {
        "asking": stdio_server_config("asking", "asking", default_tool_meta=meta),
        "modern": stdio_server_config("modern", "asking", default_tool_meta=meta,
                                      mcp_era="modern", tool_prefix="m_"),
    }  # fmt: skip
    async with (
        running_server() as srv,
        Computer({"servers": servers}, name="box", server_url=srv.url, office_id="o1",
                 socketio_path=srv.socketio_path) as box,
        AsyncAgent(srv.url, name="alice", socketio_path=srv.socketio_path) as agent,
    ):  # fmt: skip
        assert box.link is not None
        await box.link.wait_joined()
        await agent.join_office("o1")

        def kind(tool: str, said: str, asks: bool) -> Callable[[], Awaitable[None]]:
            async def once() -> None:
                extra: dict[str, Any] = {"on_input": _answer} if asks else {}
                result = await agent.call_tool("box", tool, {"text": "x"} if not asks else {},
                                               **extra)  # fmt: skip
                text = result.content[0]["text"]
                assert said in text, text

            return once

        kinds = {
            "plain echo (handshake)": kind("echo", ":x", asks=False),
            "asks: ctx.elicit (handshake)": kind("greet", "hello Ann", asks=True),
            "asks: resolver (2026-07-28)": kind("m_resolved_greet", "resolved hello Ann",
                                                asks=True),
        }  # fmt: skip
        for call in kinds.values():
            for _ in range(5):
                await call()
        medians: dict[str, list[float]] = {name: [] for name in kinds}
        for _ in range(rounds):
            for name, call in kinds.items():
                wall = []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    await call()
                    wall.append((time.perf_counter() - t0) * 1e3)
                medians[name].append(statistics.median(wall))
        for name, values in medians.items():
            rounded = ", ".join(f"{v:.2f}" for v in values)
            print(f"{name:32s} median {statistics.median(values):6.2f} ms ({rounded})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
