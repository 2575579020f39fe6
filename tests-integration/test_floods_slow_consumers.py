"""Clients that stop reading, against a real ``a2c-server`` process.

Each non-reader is a hand-made WebSocket client with a 4 KB receive buffer that asks for
big answers (``server:list_room`` echoes its ``req_id``) and never reads them: the Server's
send buffer fills, then its queue for that client, until the client's cap drops it. The
drop must cut the TCP connection at once (no ESTABLISHED connection left on the Server's
side) and free what was queued (the process's RSS comes back near its baseline).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

import httpx
import pytest

from a2c_testkit.rawws import RawWs, server_connections, server_rss
from a2c_testkit.triangle import server_process

pytestmark = pytest.mark.asyncio

NON_READERS = 25
ID = 200_000  # each list_room answer carries a req_id this long


async def metric(http: httpx.AsyncClient, url: str, name: str) -> float:
    text = (await http.get(f"{url}/metrics")).text
    found = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


async def until(check: object, timeout: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await check()  # type: ignore[operator]
        if value:
            return
        assert loop.time() < deadline, what
        await asyncio.sleep(0.2)


async def non_reader(port: int, i: int) -> RawWs:
    ws = await RawWs.open(port)
    assert (await ws.connect("agent")).startswith("40/smcp,")
    assert "true" in await ws.join("agent", f"a{i}", f"slow-{i}")
    return ws


async def ask(clients: list[RawWs], n: int) -> None:
    for i, ws in enumerate(clients):
        for _ in range(n):
            ws.emit(
                "server:list_room", {"agent": f"a{i}", "office_id": f"slow-{i}", "req_id": "0" * ID}
            )
        with contextlib.suppress(ConnectionError):  # dropped already
            await ws.drain()


async def test_dropped_slow_consumers_lose_their_connection_and_memory(procs: Any) -> None:
    args = ["--max-outgoing-bytes", "6000000", "--max-id-length", str(ID)]
    async with (
        server_process(procs.log_dir, extra_args=args, track=procs.track) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        pid = server.process.popen.pid
        await metric(http, server.url, "a2c_server_queued_output_bytes")  # warm the path
        baseline = server_rss(pid)
        clients = [await non_reader(server.port, i) for i in range(NON_READERS)]
        assert server_connections(server.port) >= NON_READERS
        # 8 MB of answers each: the kernel's send buffer on loopback takes up to ~4 MB,
        # the rest waits in the Server's queue (the cap is 6 MB): all queues fill at once.
        await ask(clients, 40)
        queued: list[float] = []

        async def settled() -> bool:
            queued.append(await metric(http, server.url, "a2c_server_queued_output_bytes"))
            return len(queued) > 3 and queued[-1] == queued[-2] == queued[-3]

        await until(settled, 60, "the queues never settled")
        held = server_rss(pid)
        peak = held
        await ask(clients, 15)  # now every one of them goes over its cap
        drops = 'a2c_server_slow_consumer_drops_total{cause="client_limit"}'

        peak = baseline

        async def all_dropped() -> bool:
            nonlocal peak
            peak = max(peak, server_rss(pid))
            return await metric(http, server.url, drops) >= NON_READERS

        await until(all_dropped, 60, "not every non-reader was dropped")

        async def cut() -> bool:
            return server_connections(server.port) <= 1  # at most our own /metrics client

        await until(cut, 10, "a dropped client's TCP connection stayed ESTABLISHED")
        for ws in clients:
            assert await ws.closed_by_server(10), "the client never saw its connection end"
        assert await metric(http, server.url, "a2c_server_queued_output_bytes") == 0
        returned: list[int] = []

        async def released() -> bool:
            returned.append(server_rss(pid))
            return returned[-1] <= 2 * baseline

        await until(released, 30, f"RSS stayed high: baseline {baseline}, peak {peak}, "
                                  f"now {returned[-1] if returned else '?'}")  # fmt: skip
        for ws in clients:
            ws.close()
        log = server.process.logs()
        assert "outgoing queue over its limit" in log
        assert "Traceback" not in log
        print(
            f"RSS baseline {baseline >> 20} MB, queues full {held >> 20} MB "
            f"({int(queued[-1]) >> 20} MB queued), peak {peak >> 20} MB, "
            f"after {returned[-1] >> 20} MB"
        )


async def test_a_session_that_stops_answering_pings_is_cut_while_it_keeps_sending(
    procs: Any,
) -> None:
    args = ["--ping-interval", "1", "--ping-timeout", "1", "--max-id-length", str(ID)]
    async with (
        server_process(procs.log_dir, extra_args=args, track=procs.track) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        ws = await non_reader(server.port, 0)
        await ask([ws], 30)  # its send buffer full, ~2 MB queued behind it (the cap is 16)
        cause = 'a2c_server_slow_consumer_drops_total{cause="ping_timeout"}'

        async def cut() -> bool:
            # It keeps sending (so it is never idle) but never reads, so never pongs.
            ws.emit("server:list_room", {"agent": "a0", "office_id": "slow-0", "req_id": "r"})
            with contextlib.suppress(ConnectionError):
                await ws.drain()
            return await metric(http, server.url, cause) >= 1

        await until(cut, 30, "the session outlived its ping timeout")

        async def gone() -> bool:
            return server_connections(server.port) <= 1  # our own /metrics client

        await until(gone, 10, "its TCP connection stayed ESTABLISHED")

        async def freed() -> bool:
            # Leaving ESTABLISHED is not enough: the queue behind its full send buffer
            # (~2-3 MB here) stayed in memory until the cut freed it.
            return await metric(http, server.url, "a2c_server_queued_output_bytes") == 0

        await until(freed, 10, "its queued output was never freed")
        ws.close()
        assert "Traceback" not in server.process.logs()
