"""What the Agent SDK costs on the client side: per tool call, and per tool-cache refresh.

Run: ``uv run python tools/bench/bench_agent.py [--calls 1000] [--rounds 5] [--refreshes 20]``.

A real ``a2c-server`` and a Computer (a plain python-socketio client in its own process,
offering 1,000 tools) run as separate processes, so this process's CPU time is the client
side alone. Each figure is set against a plain python-socketio client doing the same wire
exchange in the same run (no decoding into models, no cache, no listeners):

- tool call: ``AsyncAgent.call_tool`` vs a bare ``call("client:tool_call", ...)``, both
  connected at once and measured in alternating rounds (bare then Agent, ``--calls`` each),
  so a change in the machine's load hits both sides; the figure is the median round;
- a tool that asks: ``call_tool(..., on_input=handler)`` of a tool whose Computer answers
  the first round with 16 form requests (the most a round may carry) and the retry with
  the result; the handler accepts each at once. Its figure is set against the plain
  ``AsyncAgent`` call of the same round (two round trips and 16 answers against one);
  compare it across builds (``PYTHONPATH`` at another build's ``a2c_agent``);
- cache refresh: the Computer announces ``server:update_tool_list``; the Agent gets
  ``notify:update_tool_list``, fetches and decodes the 1,000 tools and fires its tools
  listener. The reference fetches the same list with a bare ``call("client:get_tools")``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import uuid
from typing import Any

import socketio
from _benchkit import NAMESPACE, join, server

from a2c_agent import AsyncAgent, ElicitationResponse, InputRequest, InputResponse

REPLY = {"content": [{"type": "text", "text": "hi"}], "isError": False}
#: The first round of the tool that asks: 16 forms, the most one round may carry.
ASKED = {
    "resultType": "input_required",
    "inputRequests": {
        f"q{i}": {"method": "elicitation/create",
                  "params": {"mode": "form", "message": f"Field {i}?", "requestedSchema": {
                      "type": "object", "properties": {"v": {"type": "string"}}}}}
        for i in range(16)
    },
    "requestState": "state",
    "_meta": {"a2c_mcp_server": "asker", "a2c_expires_in": 300},
}  # fmt: skip
TOOLS = [
    {
        "name": f"tool_{i:04d}",
        "description": f"Tool number {i}: does one thing well, described in a sentence.",
        "params_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["text"],
        },
        "return_schema": None,
        "meta": {"a2c_tool_meta": '{"tags": ["bench"]}'},
    }
    for i in range(1000)
]


async def host_computer(url: str, name: str, office: str) -> None:
    """The Computer's process: answer calls and get_tools; announce on each stdin line."""
    computer = socketio.AsyncClient(reconnection=False, handle_sigint=False)

    @computer.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def answer(data: dict[str, Any]) -> dict[str, Any]:
        if data["tool_name"] == "ask" and "a2c_input" in data and "a2c_request_state" not in data:
            return ASKED
        return REPLY

    @computer.on("client:get_tools", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
    async def tools(data: dict[str, Any]) -> dict[str, Any]:
        return {"tools": TOOLS, "req_id": data["req_id"]}

    await join(computer, url, "a2c", "computer", name, office)
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):
        await computer.emit("server:update_tool_list", {"computer": name}, namespace=NAMESPACE)
    await computer.disconnect()


def _cpu(start: float, count: int) -> float:
    return (time.process_time() - start) / count * 1e6


def _bare_payload() -> dict[str, Any]:
    return {"agent": "bare", "req_id": uuid.uuid4().hex, "computer": "box-bare",
            "tool_name": "echo", "params": {"text": "hi"}, "timeout": 30}  # fmt: skip


async def _accept(request: InputRequest) -> InputResponse:
    return ElicitationResponse.accept({"v": "x"})


async def calls_in_rounds(
    url: str, agent: AsyncAgent, calls: int, rounds: int
) -> list[tuple[float, float, float]]:
    """(bare µs, Agent µs, Agent µs for a tool that asks) per call, one triple per round;
    the bare client has its own office (one Agent per office) and Computer."""
    client = socketio.AsyncClient(reconnection=False, handle_sigint=False)
    await join(client, url, "a2c", "agent", "bare", "office-bare")

    async def bare() -> None:
        await client.call("client:tool_call", _bare_payload(), namespace=NAMESPACE, timeout=60)

    async def ours() -> None:
        await agent.call_tool("box", "echo", {"text": "hi"}, timeout=30)

    async def asking() -> None:
        result = await agent.call_tool("box", "ask", {}, timeout=30, on_input=_accept)
        assert result.content[0]["text"] == "hi"

    for _ in range(50):
        await bare()
        await ours()
        await asking()
    pairs: list[tuple[float, float, float]] = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            await bare()
        per_bare = _cpu(start, calls)
        start = time.process_time()
        for _ in range(calls):
            await ours()
        per_ours = _cpu(start, calls)
        asks = max(1, calls // 4)
        start = time.process_time()
        for _ in range(asks):
            await asking()
        pairs.append((per_bare, per_ours, _cpu(start, asks)))
    await client.disconnect()
    return pairs


async def bare_fetch(url: str, refreshes: int) -> float:
    client = socketio.AsyncClient(reconnection=False, handle_sigint=False)
    await join(client, url, "a2c", "agent", "bare", "office")

    async def fetch() -> None:
        payload = {"agent": "bare", "req_id": uuid.uuid4().hex, "computer": "box"}
        ret = await client.call("client:get_tools", payload, namespace=NAMESPACE, timeout=60)
        assert len(ret["tools"]) == 1000

    await fetch()
    start = time.process_time()
    for _ in range(refreshes):
        await fetch()
    per_fetch = _cpu(start, refreshes)
    await client.disconnect()
    return per_fetch


async def sdk(
    url: str, announce: subprocess.Popen[bytes], calls: int, rounds: int, refreshes: int
) -> Any:
    async with AsyncAgent(url, name="sdk") as agent:
        arrived: asyncio.Queue[int] = asyncio.Queue()
        agent.add_tools_listener(
            lambda computer, tools: arrived.put_nowait(len(tools)) if tools else None
        )
        await agent.join_office("office")
        assert await asyncio.wait_for(arrived.get(), 60) == 1000
        pairs = await calls_in_rounds(url, agent, calls, rounds)
        assert announce.stdin is not None
        cpu = 0.0
        wall: list[float] = []
        for _ in range(refreshes):
            c0, w0 = time.process_time(), time.perf_counter()
            announce.stdin.write(b"announce\n")
            announce.stdin.flush()
            assert await asyncio.wait_for(arrived.get(), 60) == 1000
            cpu += time.process_time() - c0
            wall.append((time.perf_counter() - w0) * 1e3)
        return pairs, cpu / refreshes * 1e6, sorted(wall)[len(wall) // 2]


async def main_async(calls: int, rounds: int, refreshes: int) -> None:
    async with server("a2c") as (url, _pid):
        computer, other = (
            subprocess.Popen(
                [sys.executable, __file__, "--computer", url, name, office],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            for name, office in (("box", "office"), ("box-bare", "office-bare"))
        )
        try:
            loop = asyncio.get_running_loop()
            for process in (computer, other):
                assert process.stdout is not None
                if (await loop.run_in_executor(None, process.stdout.readline)).strip() != b"ready":
                    raise RuntimeError("a Computer's process did not start")
            bare_list = await bare_fetch(url, refreshes)
            pairs, sdk_refresh, refresh_ms = await sdk(url, computer, calls, rounds, refreshes)
        finally:
            for process in (computer, other):
                if process.stdin is not None:
                    process.stdin.close()
                process.wait(timeout=30)
    print(f"client-side CPU, {rounds} rounds of {calls} calls each side, "
          f"{refreshes} refreshes of 1,000 tools\n")  # fmt: skip
    print(f"{'':<34}{'bare µs':>10}{'AsyncAgent µs':>15}{'ratio':>8}")
    ratios = sorted(ours / bare for bare, ours, _ in pairs)
    for i, (bare, ours, _) in enumerate(pairs, 1):
        print(f"{f'per tool call, round {i}':<34}{bare:>10.0f}{ours:>15.0f}{ours / bare:>7.2f}x")
    print(f"{'per tool call, median round':<34}{'':>25}{ratios[len(ratios) // 2]:>7.2f}x")
    asked = sorted(a for _, _, a in pairs)
    print(f"\n{'':<34}{'plain µs':>10}{'asking µs':>15}{'ratio':>8}")
    for i, (_, ours, ask) in enumerate(pairs, 1):
        print(f"{f'tool asking 16 forms, round {i}':<34}{ours:>10.0f}{ask:>15.0f}"
              f"{ask / ours:>7.2f}x")  # fmt: skip
    print(f"{'tool asking 16 forms, median':<34}{'':>10}{asked[len(asked) // 2]:>15.0f}")
    print(f"{'per tool list (1,000 tools)':<34}{bare_list:>10.0f}{sdk_refresh:>15.0f}"
          f"{sdk_refresh / bare_list:>7.2f}x")  # fmt: skip
    print(f"\nnotify:update_tool_list -> tools listener fired: median {refresh_ms:.1f} ms wall")


def main() -> None:
    if len(sys.argv) > 4 and sys.argv[1] == "--computer":
        asyncio.run(host_computer(*sys.argv[2:5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--refreshes", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main_async(args.calls, args.rounds, args.refreshes))


if __name__ == "__main__":
    main()
