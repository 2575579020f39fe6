"""Landing-dir benchmark: many small uploads (``client:put_blob``) into one Computer.

Run: ``uv run python tools/bench/bench_landing.py [--uploads 4000] [--total-bytes 1000000]``.

Everything runs on loopback in one process: the real Server app under uvicorn, a real
``a2c_computer.Computer`` with a landing dir (no MCP servers) and the real
``AsyncAgent.put_blob``, uploading ``--size`` bytes (default 1) ``--uploads`` times under the
same name, one after the other. It prints the time per upload at the first and the last
ones (and windows of 10 around them), what was accepted and what refused (reason and
message of the first refusal), what the landing dir holds on disk afterwards (files and
allocated bytes) and the longest stall of the event loop seen by a 5 ms ticker.

To compare builds, point ``PYTHONPATH`` at another build's ``a2c_computer`` sources
(``git archive`` of ``packages/a2c-computer/src``, see README.md): only settings that build
knows are passed (``--max-files``, ``--agent-max-bytes`` are left out unless given).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _loopback import free_port, serve

from a2c_agent import AsyncAgent
from a2c_computer import Computer
from a2c_computer._landing import LandingSettings
from a2c_protocol import BlobWriteError
from a2c_server import ServerSettings, create_app


async def _ticker(stalls: list[float]) -> None:
    """The longest lateness of a 5 ms sleep: how long the loop was kept busy at once."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(0.005)
        stalls.append(time.perf_counter() - started - 0.005)


def _on_disk(directory: Path) -> tuple[int, int]:
    files = allocated = 0
    for root, dirs, names in os.walk(directory):
        for name in names + dirs:
            st = os.lstat(os.path.join(root, name))
            files += 1
            allocated += st.st_blocks * 512
    return files, allocated


async def run(args: argparse.Namespace, landing: Path) -> None:
    settings: dict[str, Any] = {"landing_dir": landing, "max_total_bytes": args.total_bytes}
    if args.max_files is not None:
        settings["max_files"] = args.max_files
    port = free_port()
    server, task = await serve(create_app(ServerSettings(host="127.0.0.1", port=port)), port)
    url = f"http://127.0.0.1:{port}"
    office = f"bench-{uuid.uuid4()}"
    times: list[float] = []
    outcomes: dict[str, int] = {}
    first_refusal: dict[int, str] = {}
    stalls: list[float] = []
    data = os.urandom(args.size)
    try:
        computer = Computer({"servers": {}}, name="bench-box", server_url=url, office_id=office,
                            landing=LandingSettings(**settings))  # fmt: skip
        async with (
            computer,
            AsyncAgent(url, name="bench-agent", tool_cache=False) as agent,
        ):
            await agent.join_office(office)
            ticker = asyncio.ensure_future(_ticker(stalls))
            for i in range(args.uploads):
                started = time.perf_counter()
                try:
                    await agent.put_blob("bench-box", data, name_hint="tiny.bin")
                    outcome = "landed"
                except BlobWriteError as exc:
                    outcome = f"refused 4019 {exc.reason}"
                    first_refusal.setdefault(i + 1, f"{exc.message} (details {exc.details})")
                times.append(time.perf_counter() - started)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
            ticker.cancel()
    finally:
        server.should_exit = True
        await task
    n = len(times)
    ms = [t * 1000 for t in times]
    print(f"{n} uploads of {args.size} byte(s), budget {args.total_bytes} bytes"
          + (f", {args.max_files} files" if args.max_files else ""))  # fmt: skip
    for label, index in (("1st", 0), (f"{n // 4}th", n // 4 - 1), (f"{n}th", n - 1)):
        window = ms[max(index - 5, 0) : index + 5]
        print(f"  upload {label:>6}: {ms[index]:7.2f} ms   (median of the 10 around it "
              f"{statistics.median(window):7.2f} ms)")  # fmt: skip
    print(f"  all: median {statistics.median(ms):.2f} ms, total {sum(times):.1f} s")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome}: {count}")
    if first_refusal:
        index, text = min(first_refusal.items())
        print(f"  first refusal at upload {index}: {text}")
    files, allocated = _on_disk(landing)
    print(f"  on disk: {files} files, {allocated} bytes allocated ({allocated / 2**20:.1f} MiB)")
    stalls.sort()
    p99 = stalls[int(len(stalls) * 0.99)] if stalls else 0.0
    print(f"  event-loop stalls (5 ms ticker): p99 {p99 * 1000:.1f} ms, "
          f"longest {max(stalls, default=0) * 1000:.1f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=4000)
    parser.add_argument("--size", type=int, default=1, help="bytes per upload")
    parser.add_argument("--total-bytes", type=int, default=1_000_000)
    parser.add_argument("--max-files", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("A2C_BENCH_TMP")) as tmp:
        landing = Path(tmp) / "landing"
        landing.mkdir()
        asyncio.run(run(args, landing))


if __name__ == "__main__":
    main()
