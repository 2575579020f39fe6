"""A tokenless connect flood against a real ``a2c-server`` with a token:
how cheap a refused connect is, and how the honest calls fare meanwhile.

An honest Agent and Computer (plain python-socketio clients holding the token) make paced
``client:tool_call`` round trips through the Server the whole time (the tool answers at
once). First a baseline; then flooder processes (``--flooders``, each with ``--lanes``
attempts in flight) connect again and again without a token or with a wrong one, each
attempt a real Engine.IO handshake plus a Socket.IO CONNECT that the Server refuses with
401, half over long-polling (three HTTP requests on a kept-alive connection), half over a
WebSocket. Printed per phase: the honest calls' p50/p99 (ms), what the Server's log grew
by, the Server's CPU, and for the flood the refusals per second and the Server's CPU per
refused connect (its CPU over the flood, less what the honest calls cost at baseline rate,
divided by the refusals ``/metrics`` counted). Flooders run at the lowest CPU priority
(an attacker's CPU is not the victim's; here they share two cores). The Server runs at
its default log level, its log going to a file, as an operator runs it.

``--rounds N`` alternates baseline and flood N times (the machine's other load changes: each
flood is compared with the baseline just before it). Each phase also prints how much of
its wall time the Server and the honest pair spent waiting for a CPU (``schedstat``): on a
shared machine that, not the Server's work, is most of the tail. ``--flooder-nice 0`` runs
the flooders as the Server's peers; ``--separate`` is the control: the same flood against a
second Server process, so what is left of the honest tail is CPU contention alone. Every
3 s of a flood a new Agent connects and joins: how long a legitimate newcomer waits, and
how often it is refused (``--newcomer-source 127.0.0.2``: from another address than the
flood's).

    uv run python tools/bench/bench_connect_flood.py [--seconds 30] [--rounds 3]
        [--flooder-nice 19] [--transports both|polling|websocket] [--separate]
        [--flooders 3 --lanes 200 --newcomer-source 127.0.0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import socketio
from _benchkit import NAMESPACE, cpu_seconds

from a2c_protocol import PROTOCOL_VERSION
from a2c_testkit.processes import bin_path, free_port
from a2c_testkit.rawws import RawWs

TOKEN = "bench-connect-flood-token-0123456789"
REPLY = {"content": [{"type": "text", "text": "ok"}], "isError": False}
REFUSED = re.compile(r'^a2c_server_refusals_total\{cause="unauthorized"\} (\S+)$', re.M)


# ---------------------------------------------------------------- the flooder's process


async def _http(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: str, body: bytes = b""
) -> bytes:
    """One HTTP/1.1 exchange on a kept-alive connection; the response body."""
    writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    headers = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
    found = re.search(r"content-length: *(\d+)", headers)
    if found:
        return await reader.readexactly(int(found.group(1)))
    chunks = b""
    while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
        chunks += await reader.readexactly(size + 2)
    await reader.readuntil(b"\r\n")
    return chunks


def _auth(n: int) -> str:
    return '{"role":"agent"}' if n % 2 else '{"role":"agent","token":"wrong-token"}'


async def _polling_lane(port: int, until: float, counts: dict[str, int]) -> None:
    path = f"/socket.io/?EIO=4&transport=polling&a2c_version={PROTOCOL_VERSION}"
    host = f"Host: 127.0.0.1:{port}\r\n"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < until:
            opened = await _http(reader, writer, f"GET {path} HTTP/1.1\r\n{host}")
            sid = json.loads(opened[1:])["sid"]
            post = f"POST {path}&sid={sid} HTTP/1.1\r\n{host}"
            await _http(reader, writer, post, f"40{NAMESPACE},{_auth(counts['sent'])}".encode())
            counts["sent"] += 1
            answer = await _http(reader, writer, f"GET {path}&sid={sid} HTTP/1.1\r\n{host}")
            counts["refused" if b"401" in answer else "other"] += 1
    finally:
        writer.close()


async def _websocket_lane(port: int, until: float, counts: dict[str, int]) -> None:
    while time.monotonic() < until:
        ws = await RawWs.open(port, rcvbuf=None)
        try:
            ws.send(f"40{NAMESPACE},{_auth(counts['sent'])}")
            counts["sent"] += 1
            answer = await ws.recv_until((f"40{NAMESPACE},", f"44{NAMESPACE},"))
            counts["refused" if "401" in answer else "other"] += 1
        finally:
            ws.close()


async def _lane(port: int, kind: str, until: float, counts: dict[str, int]) -> None:
    run = _polling_lane if kind == "polling" else _websocket_lane
    while time.monotonic() < until:
        try:
            await run(port, until, counts)
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            counts["errors"] += 1


async def flooder(port: int, lanes: int, transports: str) -> None:
    """Floods for each number of seconds read from stdin, then prints its counts."""
    print("ready", flush=True)  # imports done: the bench starts each flood with a line
    loop = asyncio.get_running_loop()
    kinds = ("polling", "websocket") if transports == "both" else (transports,)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        counts = {"sent": 0, "refused": 0, "other": 0, "errors": 0}
        until = time.monotonic() + float(line)
        await asyncio.gather(
            *(_lane(port, kinds[i % len(kinds)], until, counts) for i in range(lanes))
        )
        print(json.dumps(counts), flush=True)


# ---------------------------------------------------------------- the honest pair


async def join(
    url: str, role: str, name: str, office: str = "office-h",
    session: aiohttp.ClientSession | None = None,
) -> socketio.AsyncClient:  # fmt: skip
    client = socketio.AsyncClient(reconnection=False, http_session=session)
    if role == "computer":

        @client.on("client:tool_call", namespace=NAMESPACE)  # type: ignore[untyped-decorator]
        async def answer(data: dict[str, Any]) -> dict[str, Any]:
            return REPLY

    await client.connect(
        f"{url}?a2c_version={PROTOCOL_VERSION}", auth={"role": role, "token": TOKEN},
        namespaces=[NAMESPACE], transports=["websocket"], wait_timeout=30,
    )  # fmt: skip
    ack = await client.call("server:join_office",
        {"role": role, "name": name, "office_id": office}, namespace=NAMESPACE,
        timeout=30)  # fmt: skip
    if ack is not True and not (isinstance(ack, list | tuple) and ack[0] is True):
        raise RuntimeError(f"{name} could not join: {ack!r}")
    return client


async def honest_calls(agent: socketio.AsyncClient, seconds: float, rate: float) -> list[float]:
    """Calls paced at ``rate`` per second (one in flight); their latencies in ms."""
    latencies: list[float] = []
    end = time.monotonic() + seconds
    while (now := time.monotonic()) < end:
        started = time.perf_counter()
        answer = await agent.call("client:tool_call", {
            "agent": "agent-h", "req_id": uuid.uuid4().hex, "computer": "box-h",
            "tool_name": "echo", "params": {}, "timeout": 30,
        }, namespace=NAMESPACE, timeout=60)  # fmt: skip
        if not isinstance(answer, dict) or answer.get("isError"):
            raise RuntimeError(f"an honest call failed: {answer!r}")
        latencies.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(max(0.0, now + 1 / rate - time.monotonic()))
    return latencies


def runqueue_seconds(pid: int) -> float:
    """Seconds the process's main thread has waited for a CPU while runnable (schedstat)."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9


async def newcomers(url: str, seconds: float, tag: str, source: str) -> tuple[list[float], int]:
    """A legitimate Agent connecting (from ``source``) and joining every 3 s of the flood;
    the times in ms, and how many times it was refused."""
    took: list[float] = []
    refused = 0
    end = time.monotonic() + seconds - 3
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        while time.monotonic() < end:
            started = time.perf_counter()
            try:
                late = await join(url, "agent", "late", f"office-late-{tag}-{len(took)}", session)
            except socketio.exceptions.ConnectionError:
                refused += 1
            else:
                took.append((time.perf_counter() - started) * 1000)
                await late.disconnect()
            await asyncio.sleep(3)
    return took, refused


def summary(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def refused_so_far(http: httpx.AsyncClient, url: str) -> float:
    found = REFUSED.search((await http.get(f"{url}/metrics")).text)
    return float(found.group(1)) if found else 0.0


def start_server(port: int, log_file: Any, flags: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [bin_path("a2c-server"), "--port", str(port), *flags],
        env={**os.environ, "A2C_SERVER_AUTH_TOKEN": TOKEN},
        stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
    )  # fmt: skip


async def main(args: argparse.Namespace) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        with log_path.open("wb") as log_file, (Path(tmp) / "other.log").open("wb") as other:
            procs.append(start_server(port, log_file, args.server_flag))
            flood_port = port
            if args.separate:  # the control: the same flood, on a Server of its own
                flood_port = free_port()
                procs.append(start_server(flood_port, other, args.server_flag))
        try:
            await _run(args, url, flood_port, procs[-1].pid, procs[0].pid, log_path)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=30)


async def _wait_healthy(http: httpx.AsyncClient, url: str) -> None:
    for _ in range(600):
        try:
            if (await http.get(f"{url}/healthz")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)


class Phase:
    """CPU and run-queue figures of the flooded Server and of the honest pair over a phase."""

    def __init__(self, pid: int, log_path: Path) -> None:
        self.pid, self.log_path = pid, log_path
        self.log, self.cpu = log_path.stat().st_size, cpu_seconds(pid)
        self.waits = runqueue_seconds(pid), runqueue_seconds(os.getpid())
        self.started = time.monotonic()

    def end(self) -> None:
        self.elapsed = time.monotonic() - self.started
        self.cpu = cpu_seconds(self.pid) - self.cpu
        self.log = self.log_path.stat().st_size - self.log
        self.server_wait = runqueue_seconds(self.pid) - self.waits[0]
        self.pair_wait = runqueue_seconds(os.getpid()) - self.waits[1]

    def describe(self, latencies: list[float]) -> str:
        p50, p99 = summary(latencies)
        return (f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  ({len(latencies)} calls)  "
                f"log +{self.log} B  server CPU {100 * self.cpu / self.elapsed:3.0f} %  "
                f"waiting for a CPU: server {100 * self.server_wait / self.elapsed:3.0f} %, "
                f"honest pair {100 * self.pair_wait / self.elapsed:3.0f} %")  # fmt: skip


async def _run(
    args: argparse.Namespace, url: str, flood_port: int, pid: int, honest_pid: int,
    log_path: Path,
) -> None:  # fmt: skip
    async with httpx.AsyncClient(timeout=30) as http:
        flood_url = f"http://127.0.0.1:{flood_port}"
        await _wait_healthy(http, url)
        await _wait_healthy(http, flood_url)
        computer = await join(url, "computer", "box-h")
        agent = await join(url, "agent", "agent-h")
        argv = [sys.executable, __file__, "--flood", str(flood_port), str(args.lanes),
                args.transports, str(args.flooder_nice)]  # fmt: skip
        flooders = [
            subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(args.flooders)
        ]
        for flood in flooders:  # a Python start takes seconds here: wait for all of them
            assert flood.stdout is not None
            await asyncio.to_thread(flood.stdout.readline)
        await honest_calls(agent, 1.0, args.rate)  # warm up
        ratios = []
        for round_ in range(1, args.rounds + 1):
            base = Phase(pid, log_path)
            baseline = await honest_calls(agent, args.baseline, args.rate)
            base.end()
            refused_before = await refused_so_far(http, flood_url)
            for flood in flooders:
                assert flood.stdin is not None
                flood.stdin.write(f"{args.seconds}\n")
                flood.stdin.flush()
            phase = Phase(pid, log_path)
            late = asyncio.create_task(
                newcomers(url, args.seconds, str(round_), args.newcomer_source)
            )
            during = await honest_calls(agent, args.seconds, args.rate)
            phase.end()
            joined, turned_away = await late
            refused = await refused_so_far(http, flood_url) - refused_before
            outs = [json.loads(await asyncio.to_thread(p.stdout.readline))  # type: ignore[union-attr]
                    for p in flooders]  # fmt: skip
            totals = {k: sum(o[k] for o in outs) for k in outs[0]}
            net_cpu = phase.cpu - base.cpu / base.elapsed * phase.elapsed
            ratio = summary(during)[1] / summary(baseline)[1]
            ratios.append(ratio)
            print(f"round {round_}\n  baseline {base.describe(baseline)}\n"
                  f"  flood    {phase.describe(during)}\n"
                  f"  p99 x{ratio:.2f} of baseline (goal < 3x); log +{phase.log / 1024:.1f} KiB "
                  f"in {phase.elapsed:.0f} s (goal < 100 KB)\n"
                  f"  flooders: {totals}; {refused:.0f} refused ({refused / phase.elapsed:.0f}/s); "
                  f"server CPU per refused connect {1e6 * net_cpu / max(refused, 1):.0f} µs\n"
                  f"  a new Agent connected and joined {len(joined)} times during the flood "
                  f"in {', '.join(f'{t:.0f}' for t in joined)} ms; refused {turned_away} times",
                  flush=True)  # fmt: skip
        print(
            f"p99 ratio per round: {', '.join(f'x{r:.2f}' for r in ratios)}; "
            f"median x{statistics.median(ratios):.2f}"
        )
        for flood in flooders:
            assert flood.stdin is not None
            flood.stdin.close()
            flood.wait(timeout=60)
        await agent.disconnect()
        await computer.disconnect()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--flood":
        # On one machine the flooders would otherwise take CPU from the honest clients'
        # process and the Server; by default they run at the lowest priority, taking what
        # the Server and the honest pair leave (--flooder-nice 0 measures them as peers).
        os.nice(int(sys.argv[5]))
        asyncio.run(flooder(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each flood lasts")
    parser.add_argument("--baseline", type=float, default=10.0, help="seconds of baseline")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="baseline + flood rounds, alternating (the machine's other load "
        "changes: each flood is compared with the baseline just before it)",
    )
    parser.add_argument("--flooders", type=int, default=3, help="flooding processes")
    parser.add_argument("--lanes", type=int, default=8, help="attempts in flight per flooder")
    parser.add_argument(
        "--flooder-nice",
        type=int,
        default=19,
        help="the flooders' nice value (19: lowest priority; 0: as the Server)",
    )
    parser.add_argument(
        "--transports",
        choices=("both", "polling", "websocket"),
        default="both",
        help="how the flooders connect",
    )
    parser.add_argument(
        "--separate",
        action="store_true",
        help="control: flood a second Server process, not the honest pair's "
        "(what is left is the flood's CPU contention on this machine alone)",
    )
    parser.add_argument("--newcomer-source", default="127.0.0.1",
                        help="the address the newcomers connect from (127.0.0.2: another "
                        "address than the flooders', whose handshakes wait in a share of "
                        "their own)")  # fmt: skip
    parser.add_argument("--rate", type=float, default=50.0, help="honest calls per second")
    parser.add_argument("--server-flag", action="append", default=[],
                        help="extra a2c-server flag (repeatable)")  # fmt: skip
    asyncio.run(main(parser.parse_args()))
