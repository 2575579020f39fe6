"""Memory of idle connections: one ``a2c-server`` holding N offices of an Agent and a Computer.

Run: ``uv run python tools/bench/bench_idle.py [--offices 500]``.

Every client is a plain python-socketio client (see ``_benchkit``) that connects polling
first, upgrades to websocket and joins its office, then stays idle. The figure is the
server process's resident set size once all are in and after a few ping intervals, against
its size before the first client, which gives the bytes each connection costs.
"""

from __future__ import annotations

import argparse
import asyncio

import socketio
from _benchkit import join, rss_bytes, server


async def main_async(offices: int, settle: float) -> None:
    clients: list[socketio.AsyncClient] = []
    async with server("a2c") as (url, pid):
        await asyncio.sleep(1.0)
        empty = rss_bytes(pid)

        async def office(index: int) -> None:
            for role in ("agent", "computer"):
                client = socketio.AsyncClient(reconnection=False, handle_sigint=False)
                await join(client, url, "a2c", role, f"{role}-{index}", f"office-{index}")
                clients.append(client)

        batch = 25  # connect in batches: a storm of handshakes measures the storm, not idling
        for first in range(0, offices, batch):
            await asyncio.gather(*(office(i) for i in range(first, min(first + batch, offices))))
        await asyncio.sleep(settle)
        held = rss_bytes(pid)
        connected = sum(1 for c in clients if c.connected)
        for client in clients:
            await client.disconnect()
    per = (held - empty) / max(connected, 1)
    print(f"{connected} idle clients in {offices} offices (Agent + Computer each)")
    print(f"server RSS empty   {empty / 2**20:8.1f} MiB")
    print(f"server RSS held    {held / 2**20:8.1f} MiB")
    print(f"per connection     {per / 1024:8.1f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offices", type=int, default=500)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds idle before measuring")
    args = parser.parse_args()
    asyncio.run(main_async(args.offices, args.settle))


if __name__ == "__main__":
    main()
