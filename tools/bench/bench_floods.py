"""Victim latency in one office while a client floods the Server from another.

An honest Agent keeps 4 ``client:tool_call`` in flight to an honest Computer whose tool
answers after 0.2 s (office V). A flooder (its own process, a hand-made WebSocket client
joined to office M as a Computer) sends one kind of packet as fast as its socket takes
them; ``own_notices`` floods office V itself with the flooder's own (legitimate)
``server:update_tool_list``, which the Server coalesces per ``--notice-interval``. Per
phase: victim p50/p99 in ms and their ratio to the baseline, the flooder's send rate, how
long until the Server cut it, how many notices the victim's Agent heard, and the drain:
the round trip of one ``server:list_room`` sent the moment the flooder exits (a backlog
left behind would delay it). Ratios against the baseline of the same run are what to read.

    uv run python tools/bench/bench_floods.py --seconds 6 [--kind ack ...] [--server-flag ...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any

import socketio
from _benchkit import join, server

from a2c_protocol import NAMESPACE
from a2c_testkit.rawws import RawWs

KINDS = {
    "ack": '43/smcp,{n}[{{"forged":true}}]',
    "progress": '42/smcp,["server:tool_call_progress",{{"req_id":"r{n}","progress":1}}]',
    "notify": '42/smcp,["notify:update_tool_list",{{"computer":"x{n}"}}]',
    "update_tool_list": '42/smcp,["server:update_tool_list",{{"computer":"box-v"}}]',
    "unknown": '42/smcp,["client:no_such_event",{{"n":{n}}}]',
}
KINDS["mixed"] = "|".join(KINDS.values())
KINDS["own_notices"] = '42/smcp,["server:update_tool_list",{{"computer":"mallory"}}]'


async def flooder(url: str, kind: str, seconds: float) -> None:
    port = int(url.rsplit(":", 1)[1])
    ws = await RawWs.open(port, rcvbuf=None)
    await ws.connect("computer")
    await ws.join("computer", "mallory", "office-v" if kind == "own_notices" else "office-m")
    templates = KINDS[kind].split("|")
    started = time.monotonic()
    sent = 0
    cut = None

    async def watch() -> None:  # a write into a cut socket may still succeed for a while
        nonlocal cut
        if await ws.closed_by_server(seconds + 60):
            cut = time.monotonic() - started

    watcher = asyncio.create_task(watch())
    try:
        while time.monotonic() - started < seconds and cut is None:
            for _ in range(200):
                ws.send(templates[sent % len(templates)].format(n=sent))
                sent += 1
            await ws.drain()
    except (ConnectionError, OSError):
        cut = cut if cut is not None else time.monotonic() - started
    watcher.cancel()
    rate = sent / max(1e-9, time.monotonic() - started)
    print(f"{sent} {cut if cut is not None else -1:.2f} {rate:.0f}", flush=True)


async def victim_phase(agent: socketio.AsyncClient, seconds: float) -> list[float]:
    latencies: list[float] = []
    end = time.monotonic() + seconds

    async def caller() -> None:
        while time.monotonic() < end:
            started = time.perf_counter()
            await agent.call("client:tool_call", {
                "agent": "agent-v", "req_id": uuid.uuid4().hex, "computer": "box-v",
                "tool_name": "slow", "params": {}, "timeout": 30,
            }, namespace=NAMESPACE, timeout=60)  # fmt: skip
            latencies.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(*(caller() for _ in range(4)))
    return latencies


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def summary(latencies: list[float]) -> str:
    return (f"p50 {statistics.median(latencies):7.0f}  p99 {p99(latencies):7.0f}"
            f"  ({len(latencies)} calls)")  # fmt: skip


async def drain_ms(agent: socketio.AsyncClient) -> float:
    started = time.perf_counter()
    await agent.call("server:list_room", {"agent": "agent-v", "office_id": "office-v",
                     "req_id": uuid.uuid4().hex}, namespace=NAMESPACE, timeout=60)  # fmt: skip
    return (time.perf_counter() - started) * 1000


async def main(seconds: float, extra: list[str], kinds: list[str]) -> None:
    async with server("a2c", extra) as (url, _pid):
        computer = socketio.AsyncClient(reconnection=False)

        @computer.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
        async def slow(data: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(0.2)
            return {"content": [{"type": "text", "text": "ok"}], "isError": False}

        agent = socketio.AsyncClient(reconnection=False)
        heard = [0]

        @agent.on("notify:update_tool_list", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
        async def notice(data: dict[str, Any]) -> None:
            heard[0] += 1

        await join(computer, url, "a2c", "computer", "box-v", "office-v")
        await join(agent, url, "a2c", "agent", "agent-v", "office-v")
        baseline = await victim_phase(agent, seconds)
        print(f"{'baseline':18} {summary(baseline)}")
        base_p50 = statistics.median(baseline)
        base_p99 = p99(baseline)
        for kind in kinds:
            heard[0] = 0
            proc = subprocess.Popen(
                [sys.executable, __file__, "--flood", url, kind, str(seconds)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            await asyncio.sleep(0.5)  # the flooder is connected and sending
            during = await victim_phase(agent, seconds)
            out, _ = proc.communicate(timeout=60)
            drain = await drain_ms(agent)
            sent, cut, rate = out.split()
            after = await victim_phase(agent, 1.0)
            ratio = statistics.median(during) / base_p50
            cut_text = f"cut after {cut} s" if float(cut) >= 0 else "never cut"
            print(f"{kind:12} {summary(during)}  p50 x{ratio:.2f} p99 x{p99(during) / base_p99:.2f}"
                  f"  flooder sent {sent} ({rate}/s), {cut_text}; notices heard {heard[0]};"
                  f" drain {drain:.0f} ms; after p50 {statistics.median(after):.0f}")  # fmt: skip
        await agent.disconnect()
        await computer.disconnect()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--flood":
        asyncio.run(flooder(sys.argv[2], sys.argv[3], float(sys.argv[4])))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--kind", action="append", choices=sorted(KINDS),
                        help="flood kinds to run (repeatable; default: all)")  # fmt: skip
    parser.add_argument("--server-flag", action="append", default=[],
                        help="extra a2c-server flag (repeatable), e.g. "
                        "--server-flag=--max-inbound-per-second=100000")  # fmt: skip
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.server_flag, args.kind or list(KINDS)))
